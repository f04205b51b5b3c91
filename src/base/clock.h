/* clock: the one monotonic clock every timeout and deadline is measured on,
 * and the injected clock a module that times things reads instead.
 *
 * CLOCK_MONOTONIC in milliseconds: never steps with the wall clock (NTP, an
 * operator's date), so a deadline set now means the same span later. A
 * module whose decisions depend on time (the watcher's window, the
 * deadline watcher, the ticker's calls) reads a struct clock it is handed,
 * NULL meaning this one, so a test can hand it a clock it moves itself and
 * never wait on the real one. Header-only and thread-safe (clock_gettime
 * is; an injected clock's own safety is its maker's).
 */
#ifndef FOLIO_CLOCK_H
#define FOLIO_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC since an unspecified start. */
static inline int64_t clock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The moment @ms from now on clock @id, as pthread_cond_timedwait takes it:
 * CLOCK_MONOTONIC for a condition variable made by clock_cond_init,
 * CLOCK_REALTIME for one made with default attributes. */
static inline struct timespec clock_deadline(clockid_t id, unsigned ms)
{
    struct timespec t;
    clock_gettime(id, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* Makes @cv a condition variable whose timed waits count on CLOCK_MONOTONIC
 * (clock_deadline(CLOCK_MONOTONIC, ...)), so a wall-clock step neither
 * shortens nor stretches them; false when it could not be made. */
static inline bool clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0) {
        return false;
    }
    bool made = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(cv, &attr) == 0;
    pthread_condattr_destroy(&attr);
    return made;
}

/* A clock a module reads: now_ms(ctx), milliseconds that never go back. */
struct clock {
    int64_t (*now_ms)(void *ctx);
    void *ctx;
};

/* The time on c, or on CLOCK_MONOTONIC (clock_now_ms) when c is NULL. */
static inline int64_t clock_read(const struct clock *c)
{
    return c ? c->now_ms(c->ctx) : clock_now_ms();
}

#endif
