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
