/* hash: FNV-1a, folio's one hash for its own tables and names.
 *
 * Fast and stable across runs and machines (an ETag's tag built from one
 * is the same on every replica). Not for a table a client could flood:
 * where a client names what is hashed, the table bounds the chain (the
 * cache's variants per path) or the count (flight's slots). Pure and
 * thread-safe.
 */
#ifndef FOLIO_HASH_H
#define FOLIO_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Where a hash starts: FNV-1a's 64-bit offset basis. */
#define HASH_START UINT64_C(14695981039346656037)

/* h continued over len bytes of data. */
static inline uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * UINT64_C(1099511628211);
    }
    return h;
}

/* h continued over the C string s, its NUL too: "a" then "bc" is not "ab"
 * then "c". */
static inline uint64_t hash_string(uint64_t h, const char *s)
{
    do {
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    } while (*s++);
    return h;
}

#endif
