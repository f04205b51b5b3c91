/* inflight — see inflight.h. */
#include "inflight.h"

#include <assert.h>
#include <time.h>

#include "clock.h"

/* See inflight.h. */
bool inflight_init(struct inflight *f)
{
    atomic_init(&f->count, 0);
    atomic_init(&f->waiting, false);
    bool made = clock_cond_init(&f->none_left);
    if (made && pthread_mutex_init(&f->lock, NULL) != 0) {
        pthread_cond_destroy(&f->none_left);
        made = false;
    }
    return made;
}

/* See inflight.h. */
void inflight_finish(struct inflight *f)
{
    assert(atomic_load(&f->count) == 0 && !atomic_load(&f->waiting));
    pthread_cond_destroy(&f->none_left);
    pthread_mutex_destroy(&f->lock);
}

/* See inflight.h. */
void inflight_enter(struct inflight *f)
{
    atomic_fetch_add(&f->count, 1);
}

/* See inflight.h: the count falls first, then waiting is read (both
 * sequentially consistent), so either this leave sees the waiter or the
 * waiter sees the count it left. */
void inflight_leave(struct inflight *f)
{
    unsigned before = atomic_fetch_sub(&f->count, 1);
    assert(before > 0); /* a leave without its enter */
    if (before == 1 && atomic_load(&f->waiting)) {
        pthread_mutex_lock(&f->lock);
        pthread_cond_broadcast(&f->none_left);
        pthread_mutex_unlock(&f->lock);
    }
}

/* See inflight.h. */
bool inflight_wait(struct inflight *f, unsigned timeout_ms)
{
    struct timespec until = clock_deadline(CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&f->lock);
    atomic_store(&f->waiting, true);
    int rc = 0;
    while (atomic_load(&f->count) > 0 && rc == 0) {
        rc = pthread_cond_timedwait(&f->none_left, &f->lock, &until);
    }
    atomic_store(&f->waiting, false);
    pthread_mutex_unlock(&f->lock);
    return atomic_load(&f->count) == 0;
}

/* See inflight.h. */
unsigned inflight_count(struct inflight *f)
{
    return atomic_load(&f->count);
}
