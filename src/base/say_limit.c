#include "say_limit.h"

#include <stdatomic.h>

/* See say_limit.h. */
bool say_limit_pass(struct say_limit *l, unsigned every_s, unsigned long *withheld)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    time_t said = atomic_load(&l->said_at), t = now.tv_sec ? now.tv_sec : 1;
    if ((said == 0 || t - said >= (time_t)every_s) && atomic_compare_exchange_strong(&l->said_at, &said, t)) {
        *withheld = atomic_exchange(&l->withheld, 0);
        return true;
    }
    atomic_fetch_add(&l->withheld, 1);
    return false;
}
