/* say_limit: at most one line on stderr a period for a kind of message that
 * clients can cause (a file that cannot be opened, a connection lost before
 * its first request), with a count of those not said. A flood of them then
 * costs a line a minute, never a worker blocked on a stderr nobody reads
 * (a pipe holds about 1,500 lines), and the operator still sees the first.
 * Thread-safe, lock-free; a zeroed struct is ready. */
#ifndef FOLIO_SAY_LIMIT_H
#define FOLIO_SAY_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct say_limit {
    _Atomic time_t said_at;         /* CLOCK_MONOTONIC seconds of the last line said; 0: none yet */
    _Atomic unsigned long withheld; /* lines not said since then */
};

/* Whether a line may be said now (the first, then one each every_s
 * seconds); when it may, more (unless NULL) gets the line's end that counts
 * those not said before it (" (N more not said since the last such line)",
 * or ""), else the one asked about is counted. */
bool say_limit_pass(struct say_limit *l, unsigned every_s, char *more, size_t more_size);

#endif
