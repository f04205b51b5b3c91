/* gzip: one-shot gzip compression into a body.
 *
 * gzip framing (RFC 1952), not zlib's: deflateInit2 with windowBits 15 + 16.
 * Thread-safe: each call has its own z_stream.
 */
#ifndef FOLIO_GZIP_H
#define FOLIO_GZIP_H

#include <stddef.h>

struct body;

/* Compresses len bytes at level 1..9. Returns a new body (one reference), or
 * NULL when out of memory or when compression would not save at least a
 * twentieth of the size, in which case identity is the better answer. */
struct body *gzip_compress(const void *data, size_t len, int level);

#endif
