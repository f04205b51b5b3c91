/* range: the Range request header (RFC 9110 14.2) for byte ranges.
 *
 * Pure and thread-safe. folio answers one satisfiable range with 206 and
 * several with the whole representation (200), which RFC 9110 14.2 allows
 * ("a server MAY ignore the Range header field"); a multipart body buys an
 * article nothing and is where servers grow bugs and amplification attacks.
 */
#ifndef FOLIO_RANGE_H
#define FOLIO_RANGE_H

#include <stdint.h>

enum range_result {
    RANGE_NONE,          /* no usable Range: serve 200 (absent, malformed, other unit, several) */
    RANGE_SATISFIABLE,   /* serve 206 with *first .. *last inclusive */
    RANGE_UNSATISFIABLE, /* serve 416 with Content-Range: bytes *\/size */
};

/* Parses header (may be NULL) against a representation of size bytes. Only on
 * RANGE_SATISFIABLE are first and last written, and then first <= last < size. */
enum range_result range_parse(const char *header, uint64_t size, uint64_t *first, uint64_t *last);

#endif
