/* array: room in a growable array, by doubling.
 *
 * libxkbcommon's darray as one function: a caller keeps its own pointer,
 * count and capacity, and asks for room before it appends, so n appends
 * cost O(n) copies in all. Pure but for the allocation; thread-safe.
 */
#ifndef FOLIO_ARRAY_H
#define FOLIO_ARRAY_H

#include <stddef.h>

/* items (*cap elements of size bytes; NULL with *cap 0 before the first
 * call) with room for at least need elements: items itself when it has
 * them, else items reallocated to the largest of twice *cap, need and
 * first (the first allocation's count), with *cap updated. NULL when
 * memory runs out or the bytes would overflow a size_t: items and *cap
 * are then unchanged, and items is still the caller's to free. */
void *array_grow(void *items, size_t *cap, size_t need, size_t size, size_t first);

#endif
