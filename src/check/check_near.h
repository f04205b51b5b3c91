/* check_near — "did you mean": the id of a page a typo away from an anchor
 * that names none of them.
 *
 * A typo is at most two edits (base/edits.h: an insertion, a deletion, a
 * change, or a swap of two neighbours) and at most a third of the anchor's
 * length. Asked for every anchor that misses against every id of a page, a
 * full edit-distance table per pair grows with the square of the page: a
 * generated table of contents whose id scheme changed took seconds
 * (bench/README.md, folio check). So the ids are indexed once per
 * page: by length (only those within the limit of the anchor's are looked
 * at), and by the bytes they hold, as a set and as counts, which two edits
 * change by at most four, so most are passed over in a few instructions;
 * the rest are measured in a band of the table that stops as soon as the
 * limit cannot be met. And the work per index is capped (NEAR_BUDGET), so a
 * page of ids alike enough to pass those filters in the millions costs a
 * bounded time: anchors asked about past the cap get no suggestion.
 *
 * No I/O; an index is its caller's, and searched by one thread at a time.
 */
#ifndef FOLIO_CHECK_NEAR_H
#define FOLIO_CHECK_NEAR_H

#include <stddef.h>

struct check_near;

/* An index of the n ids (the list is copied; each NUL-terminated id is
 * borrowed and must outlive the index); NULL when out of memory. */
struct check_near *check_near_index(const char *const *ids, size_t n);

/* The indexed id nearest to id, a typo away (of the nearest, the first in
 * the order given), or NULL when none is (or the cap was reached). */
const char *check_near_find(struct check_near *x, const char *id);

void check_near_free(struct check_near *x); /* accepts NULL */

#endif
