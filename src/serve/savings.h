#pragma once
/* The bytes each coding saved: identity bytes minus coded bytes, summed over
 * the 200s sent, for /__folio/health. Relaxed atomic counters, process-wide:
 * one add per coded response on the hot path, no lock. */

#include <stddef.h>
#include <stdint.h>

#include "encoding.h"

/* Counts one response sent in coding e that is saved bytes smaller than its
 * identity form; identity counts nothing. */
void savings_count(enum encoding e, uint64_t saved);

/* The sum so far for coding e. */
uint64_t savings_of(enum encoding e);

/* Writes {"gzip":N,"zstd":N,"br":N} into out; its length, as snprintf's. */
int savings_json(char *out, size_t size);
