/* edits: how many typing slips apart two short strings are.
 *
 * The one measure behind every "did you mean": a setting's name in the
 * config file or environment (config_table.c), an anchor of the article
 * (check_near.c). An edit is an insertion, a deletion, a change or a swap
 * of two neighbours (Damerau's optimal string alignment), and a caller
 * asks only whether two strings are within a few: the table is filled in
 * a band around its diagonal and given up as soon as the limit cannot be
 * met. Pure; no allocation; thread-safe.
 */
#ifndef FOLIO_EDITS_H
#define FOLIO_EDITS_H

#include <stddef.h>

/* The longest string measured; a longer one is past every limit. */
#define EDITS_MAX_LEN 63

/* Edits from a (n bytes) to b (m bytes), or limit + 1 once they are past
 * limit (or either is longer than EDITS_MAX_LEN). */
size_t edits_count(const char *a, size_t n, const char *b, size_t m, size_t limit);

#endif
