/* compress: one-shot content codings into a body: gzip (zlib), brotli
 * (libbrotlienc) and zstd (libzstd), behind one call.
 *
 * brotli and zstd are optional at build time (meson options "brotli" and
 * "zstd", auto): compress_available says which this binary has, and a
 * binary without them negotiates gzip only. Thread-safe: every call has its
 * own encoder state.
 */
#ifndef FOLIO_COMPRESS_H
#define FOLIO_COMPRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "encoding.h"

struct body;

/* The levels of the slow codings. Preview, where a save must reach the
 * screen within the live-reload figures, takes levels about as fast as gzip
 * -6 that still beat it (the 643 KB fragment: br 5 in 27 ms, zstd 3 in 12,
 * gzip 6 in 26). Production takes the best a browser decodes where its cost
 * stays about a quarter of a second on the first request (br 11 and zstd
 * 19 cost 2 and 1 us a byte here: 310 and 126 ms for the 166 KB page), and
 * takes preview's levels for bigger bodies (br 11 on a 2.3 MB fragment:
 * 11.9 s, br 5 0.14 s; zstd 19 7.2 s, zstd 3 17 ms and smaller than 9-12)
 * until the best are made in the background. No level between: br 7-9's
 * bucket tables grow with the level and the input scatters over their
 * pages (the 166 KB page at peak: br 7 9.6 MiB, br 8 17.7, br 9 32 MiB and
 * 23 ms; br 5 2.4 MiB and 4 ms, 3 % more bytes than br 9, for the second or
 * so until br 11 replaces it). */
#define COMPRESS_BR_PREVIEW 5
#define COMPRESS_BR_PRODUCTION 11
#define COMPRESS_ZSTD_PREVIEW 3
#define COMPRESS_ZSTD_PRODUCTION 19

/* The level of brotli or zstd for a body of len bytes (see above). */
int compress_level(enum encoding e, bool production, size_t len);

/* True when this binary can produce coding e (identity: always). */
bool compress_available(enum encoding e);

/* Compresses len bytes into coding e (not identity) at level (gzip 1-9,
 * brotli 0-11, zstd 1-19: compress_level). Returns a new body (one reference), or NULL when
 * e is not built in, memory ran out, the encoder failed, or the result would
 * not save at least a twentieth of the size: identity is then the better
 * answer. */
struct body *compress_body(enum encoding e, const void *data, size_t len, int level);

/* compress_body for brotli and zstd in steps of 64 KiB of input, giving up
 * (NULL) once *stop is set: a best level made in the background (best.c)
 * must not hold shutdown for a 12 s brotli. Same bytes as compress_body. */
struct body *compress_body_until(enum encoding e, const void *data, size_t len, int level,
                                 const atomic_bool *stop);

#endif
