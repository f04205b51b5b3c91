/* ticker: a thread that calls one function at a steady interval until it is
 * stopped, for the housekeeping that has no event of its own to wait on (the
 * send deadlines, the held-descriptor sweep). A stop wakes it at once; the
 * function never runs after ticker_stop returns. Each call is handed the
 * time on the ticker's clock (base/clock.h), the one its function judges
 * by, so that function can be driven by a test on a clock it moves. */
#ifndef FOLIO_TICKER_H
#define FOLIO_TICKER_H

#include <stdint.h>

struct clock;
struct ticker;

/* Starts calling tick(arg, now_ms) every interval_ms (at least 1), the
 * first after one interval, now_ms read from clock (NULL: CLOCK_MONOTONIC),
 * which must outlive the ticker; NULL when the thread cannot start. */
struct ticker *ticker_start(unsigned interval_ms, const struct clock *clock,
                            void (*tick)(void *arg, int64_t now_ms), void *arg);

/* Stops the thread, waiting for a tick in progress. Accepts NULL. */
void ticker_stop(struct ticker *t);

#endif
