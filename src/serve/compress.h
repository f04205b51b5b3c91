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
 * -6 that still beat it. Production takes the best a browser decodes where
 * its cost stays about a quarter of a second on the first request, and
 * preview's levels for bigger bodies until the best are made in the
 * background. No level between: br 7-9's bucket tables grow with the level
 * and the input scatters over their pages, many times br 5's memory for a
 * few percent of bytes, for the second or so until br 11 replaces it. The
 * figures: bench/README.md, Measurements behind the code. */
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
 * must not hold shutdown for a brotli of seconds. Same bytes as compress_body. */
struct body *compress_body_until(enum encoding e, const void *data, size_t len, int level,
                                 const atomic_bool *stop);

#endif
