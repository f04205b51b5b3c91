/* inflight: a count of the work under way, which a stop waits out.
 *
 * The last one to leave wakes the waiter, so a graceful stop ends the
 * moment its requests are done rather than at its next poll, and never
 * sleeps while none is left. Entering and leaving cost one atomic each
 * (the lock is taken only while someone waits); thread-safe.
 */
#ifndef FOLIO_INFLIGHT_H
#define FOLIO_INFLIGHT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct inflight {
    atomic_uint count;
    atomic_bool waiting; /* inflight_wait is under way: the last to leave wakes it */
    pthread_mutex_t lock;
    pthread_cond_t none_left; /* on CLOCK_MONOTONIC */
};

/* Readies f, none under way; false when its lock or condition cannot be had. */
bool inflight_init(struct inflight *f);

/* Releases what init took; none may be under way or waiting. */
void inflight_finish(struct inflight *f);

/* One more under way. */
void inflight_enter(struct inflight *f);

/* One fewer (after an inflight_enter); the last wakes a waiter. */
void inflight_leave(struct inflight *f);

/* Waits until none is under way, for timeout_ms at most; true when none is. */
bool inflight_wait(struct inflight *f, unsigned timeout_ms);

/* How many are under way now. */
unsigned inflight_count(struct inflight *f);

#endif
