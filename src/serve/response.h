/* response: libmicrohttpd responses and the headers folio gives them.
 *
 * Constructors for every kind of body folio sends (a body reference, a copy
 * of text, a representation's bytes or descriptor, a 304), the headers of a
 * representation and of an error, and folio's own error page. Nothing here
 * queues a response or knows a request (respond.c does). Every constructor
 * returns NULL when out of memory; thread-safe.
 */
#ifndef FOLIO_RESPONSE_H
#define FOLIO_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct MHD_Response;
struct body;
struct config;
struct entry_rep;

enum { RESPONSE_PAGE_MAX = 512 }; /* an error page, without the script tag */

/* A response sending len bytes of b from offset; takes the reference, even on failure. */
struct MHD_Response *response_from_body(struct body *b, uint64_t offset, uint64_t len);

/* A response with a copy of text. */
struct MHD_Response *response_from_text(const char *text);

/* A response carrying len bytes of rep from offset, which takes the bytes
 * (body reference or fd) out of rep; rep keeps them on failure. */
struct MHD_Response *response_from_rep(struct entry_rep *rep, uint64_t offset, uint64_t len);

/* A 304 for a representation of size bytes: without Content-Length, or
 * with the one the 200 would have had (RFC 9110 8.6), as the library can
 * (library_not_modified). */
struct MHD_Response *response_not_modified(uint64_t size);

/* Adds one header; a failure (out of memory) leaves the response without it. */
void response_add(struct MHD_Response *r, const char *name, const char *value);

/* The headers every response of folio carries (nosniff). */
void response_add_common(struct MHD_Response *r);

/* The headers of a representation: type, validators, caching by mode
 * (config's production and max_age, read now), Vary, coding and, for 206,
 * the range first-last. */
void response_add_rep_headers(struct MHD_Response *r, const struct config *config,
                              const struct entry_rep *rep, unsigned status, uint64_t first,
                              uint64_t last);

/* The headers of an error page for status: type, no-store, and what 400,
 * 405 and 503 call for. */
void response_add_error_headers(struct MHD_Response *r, unsigned status);

/* The reason phrase of a status folio sends as an error. */
const char *response_status_text(unsigned status);

/* Writes folio's own page for status into buf, saying why (a sentence of
 * ours, never the client's bytes; NULL: that folio could not serve the
 * address), with script (a tag, or "") before its end; returns its length. */
size_t response_error_page(unsigned status, const char *why, const char *script, char *buf, size_t size);

#endif
