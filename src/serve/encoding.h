/* encoding: content negotiation on Accept-Encoding (RFC 9110 12.5.3).
 *
 * Pure and thread-safe. folio knows one coding, gzip; the question is only
 * whether the client accepts it.
 */
#ifndef FOLIO_ENCODING_H
#define FOLIO_ENCODING_H

#include <stdbool.h>

/* True when header (may be NULL) gives gzip (or its alias x-gzip) a q-value
 * above 0, explicitly or through "*" when gzip is not named. */
bool encoding_accepts_gzip(const char *header);

#endif
