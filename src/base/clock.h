/* clock: the one monotonic clock every timeout and deadline is measured on.
 *
 * CLOCK_MONOTONIC in milliseconds: never steps with the wall clock (NTP, an
 * operator's date), so a deadline set now means the same span later.
 * Header-only and thread-safe (clock_gettime is).
 */
#ifndef FOLIO_CLOCK_H
#define FOLIO_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC since an unspecified start. */
static inline int64_t clock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
