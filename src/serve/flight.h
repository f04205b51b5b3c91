#pragma once
/* Single-flight: one build at a time of one (file version, variant), so a
 * burst of first requests for a big file compresses it once; the others wait
 * for that build and then take what it left in the cache. */

#include <stdbool.h>
#include <stdint.h>

enum flight {
    FLIGHT_LEAD,    /* the caller builds name, then calls flight_end(name) */
    FLIGHT_ALONE,   /* the caller builds, unnamed: every slot was taken; no flight_end */
    FLIGHT_WAITED,  /* another thread built name and has ended: look in the cache again */
};

/* Begins a build of name (cache_version_name of what it makes), or waits
 * for the one in progress. */
enum flight flight_begin(uint64_t name);

/* Ends the caller's build of name (FLIGHT_LEAD) and wakes those waiting for it. */
void flight_end(uint64_t name);

/* Threads waiting in flight_begin for a build in progress, for tests. */
unsigned flight_waiting(void);
