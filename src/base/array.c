/* array — see array.h. */
#include "array.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

/* See array.h. */
void *array_grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    assert(size > 0 && (items != NULL || *cap == 0));
    if (need <= *cap) {
        return items;
    }
    if (need > SIZE_MAX / size) {
        return NULL;
    }
    size_t grown = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
    grown = grown < need ? need : grown;
    grown = grown < first ? first : grown;
    if (grown > SIZE_MAX / size) {
        grown = need; /* twice would overflow: just what was asked */
    }
    void *bigger = realloc(items, grown * size);
    if (bigger) {
        *cap = grown;
    }
    return bigger;
}
