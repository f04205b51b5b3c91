#pragma once
/* Single-flight: one build at a time of one (file version, variant), so a
 * burst of first requests for a big file compresses it once; the others wait
 * for that build and then take what it left in the cache. */

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"

/* A build's name: the hash of its key, variant and file version. */
uint64_t flight_name(const char *key, const char *variant, const struct file_id *id);

enum flight {
    FLIGHT_LEAD,    /* the caller builds name, then calls flight_end(name) */
    FLIGHT_ALONE,   /* the caller builds, unnamed: every slot was taken; no flight_end */
    FLIGHT_WAITED,  /* another thread built name and has ended: look in the cache again */
};

/* Begins a build of name, or waits for the one in progress. */
enum flight flight_begin(uint64_t name);

/* Ends the caller's build of name (FLIGHT_LEAD) and wakes those waiting for it. */
void flight_end(uint64_t name);
