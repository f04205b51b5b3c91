#include "savings.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

/* Each on its own cache line: threads sending different codings do not
 * bounce one line between them. */
static struct {
    _Alignas(64) atomic_uint_fast64_t bytes;
} saved_by[ENCODING_COUNT];

/* See savings.h. */
void savings_count(enum encoding e, uint64_t saved)
{
    if (e > ENCODING_IDENTITY && e < ENCODING_COUNT && saved > 0) {
        atomic_fetch_add_explicit(&saved_by[e].bytes, saved, memory_order_relaxed);
    }
}

/* See savings.h. */
uint64_t savings_of(enum encoding e)
{
    return e < ENCODING_COUNT ? atomic_load_explicit(&saved_by[e].bytes, memory_order_relaxed) : 0;
}

/* See savings.h. */
int savings_json(char *out, size_t size)
{
    return snprintf(out, size, "{\"gzip\":%" PRIu64 ",\"zstd\":%" PRIu64 ",\"br\":%" PRIu64 "}",
                    savings_of(ENCODING_GZIP), savings_of(ENCODING_ZSTD), savings_of(ENCODING_BR));
}
