#include "say_limit.h"

#include <stdatomic.h>
#include <stdio.h>

/* See say_limit.h. */
bool say_limit_pass(struct say_limit *l, unsigned every_s, char *more, size_t more_size)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    time_t said = atomic_load(&l->said_at), t = now.tv_sec ? now.tv_sec : 1;
    if ((said == 0 || t - said >= (time_t)every_s) && atomic_compare_exchange_strong(&l->said_at, &said, t)) {
        unsigned long withheld = atomic_exchange(&l->withheld, 0);
        if (more && more_size) {
            more[0] = '\0';
            if (withheld) {
                snprintf(more, more_size, " (%lu more not said since the last such line)", withheld);
            }
        }
        return true;
    }
    atomic_fetch_add(&l->withheld, 1);
    return false;
}
