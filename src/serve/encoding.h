/* encoding: content negotiation on Accept-Encoding (RFC 9110 12.5.3).
 *
 * Pure and thread-safe. folio knows three content codings (gzip, and zstd
 * and brotli when built with them, compress.h) beside identity; this module
 * only reads what a client accepts: which representation answers is
 * entry.c's choice (the smallest acceptable one, encoding_better).
 */
#ifndef FOLIO_ENCODING_H
#define FOLIO_ENCODING_H

#include <stdbool.h>
#include <stdint.h>

/* Ties between equally small bodies go to the higher value: br (RFC 7932),
 * then zstd (RFC 8878), then gzip, identity last. */
enum encoding {
    ENCODING_IDENTITY,
    ENCODING_GZIP,
    ENCODING_ZSTD,
    ENCODING_BR,
    ENCODING_COUNT,
};

/* What a client accepts: each coding's q-value in thousandths, 0 refused.
 * identity, unless named or weighed by "*", is acceptable at the lowest
 * weight, 1: the fallback, never preferred over a coding the client named
 * (RFC 9110 12.5.3: "acceptable by default"). */
struct encoding_accept {
    uint16_t q[ENCODING_COUNT];
};

/* Reads header (may be NULL: no Accept-Encoding, identity only, as today's
 * browsers always send one). A coding named twice takes its highest q; "*"
 * gives its q to every coding not named; items with a malformed q are
 * ignored; "x-gzip" is gzip (RFC 9110 8.4.1.3). */
struct encoding_accept encoding_parse(const char *header);

/* The token sent in Content-Encoding for e; NULL for identity. */
const char *encoding_name(enum encoding e);

/* True when a body of coding a, size_a bytes, answers better than one of
 * coding b, size_b: an acceptable coding beats a refused one, then fewer
 * bytes win, then the order of enum encoding. Any q above 0 makes a coding
 * acceptable, no more: q-values are weights the server may balance against
 * its own (RFC 9110 12.4.2), and what a reader waits for is bytes, so the
 * smallest acceptable body answers ("identity, gzip;q=0.5" gets gzip, as it
 * always did). A refused coding is never better. */
bool encoding_better(const struct encoding_accept *acc, enum encoding a, uint64_t size_a,
                     enum encoding b, uint64_t size_b);

/* What the client accepts as one character per coding, '1' acceptable,
 * '0' refused, written into out[0..ENCODING_COUNT-1] without a NUL: clients
 * whose characters agree get the same answer for every file, so a whole
 * response may be shared by them. */
void encoding_rank(const struct encoding_accept *acc, char out[ENCODING_COUNT]);

#endif
