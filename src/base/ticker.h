/* ticker: a thread that calls one function at a steady interval until it is
 * stopped, for the housekeeping that has no event of its own to wait on (the
 * send deadlines, the held-descriptor sweep). A stop wakes it at once; the
 * function never runs after ticker_stop returns. */
#ifndef FOLIO_TICKER_H
#define FOLIO_TICKER_H

struct ticker;

/* Starts calling tick(arg) every interval_ms (at least 1), the first after
 * one interval; NULL when the thread cannot start. */
struct ticker *ticker_start(unsigned interval_ms, void (*tick)(void *arg), void *arg);

/* Stops the thread, waiting for a tick in progress. Accepts NULL. */
void ticker_stop(struct ticker *t);

#endif
