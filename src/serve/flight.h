#pragma once
/* Single-flight: one build at a time of one (file version, variant), so a
 * burst of first requests for a big file compresses it once; the others wait
 * for that build and then take what it left in the cache. */

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"

/* A build's name: the hash of its key, variant and file version. */
uint64_t flight_name(const char *key, const char *variant, const struct file_id *id);

/* True: the caller builds name and must call flight_end(name) after
 * storing what it built. False: another thread was building name; this
 * call returned once it had ended, so the caller looks in the cache again. */
bool flight_begin(uint64_t name);

/* Ends the caller's build of name and wakes those waiting for it. */
void flight_end(uint64_t name);
