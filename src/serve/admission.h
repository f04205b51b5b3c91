/* admission: whether a request's head may be served at all (RFC 9112, 9110).
 *
 * The checks made on the request line and the header fields before anything
 * is looked up: a token method, a target in the one form its method allows,
 * token field names, one valid Host (none for HTTP/1.0 is fine), one framing
 * (never Content-Length with Transfer-Encoding: a smuggling attempt), no
 * transfer coding we do not know, no body worth refusing, and every byte of
 * the header block accounted for by a field, where the library says where
 * the block is (library_header_block: a parser that cuts names and values
 * at a NUL and ends the block early at a line starting with ':' leaves such
 * bytes). The answer is the status to refuse with, or 0.
 *
 * Pure: plain bytes in, a verdict out; the libmicrohttpd side (where the
 * bytes are, the field iteration) is exchange.c's. Fuzzed by
 * tests/fuzz/fuzz_admission.c. No I/O, no allocation, thread-safe.
 */
#ifndef FOLIO_ADMISSION_H
#define FOLIO_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "request.h"

/* A body on GET or HEAD means nothing (RFC 9110 9.3.1) but must be read to
 * find the next request: up to this much is read and dropped, more is a 413. */
#define ADMISSION_BODY_MAX (64u << 10)

/* A request's line, as the HTTP library hands it over. */
struct admission_head {
    const char *method;  /* a C string; NULL when the library did not say it (see admission_finish) */
    const char *version; /* a C string, "HTTP/1.1" or "HTTP/1.0"; NULL: not said, taken as HTTP/1.1 */
    const char *target;  /* target_len bytes as sent */
    size_t target_len;   /* the target's length as sent (library_target_length) */
    size_t copied_len;   /* strlen(target): shorter when a NUL cut it */
};

/* The scan of the header fields, one admission_field call each. */
struct admission {
    bool refused;
    unsigned hosts;
    const char *host;
    size_t host_len;
    bool length_seen, chunked, other_coding;
    bool expect; /* an Expect field: libmicrohttpd may write 100 Continue first */
    uint64_t length;
    const char *cursor, *end; /* the header block not yet accounted for; NULL: unknown */
};

/* Starts a scan. The header block is [from, to): from the end of the
 * request line's version to the end of the head; NULL or to <= from when
 * its bounds are not known (nothing is then accounted for). */
void admission_start(struct admission *a, const char *from, const char *to);

/* Takes one field (name and value as the library reports them, pointing
 * into the header block when it was given); false once the head is refused
 * (the rest need not be scanned). */
bool admission_field(struct admission *a, const char *name, size_t name_len, const char *value,
                     size_t value_len);

/* The verdict on head with the fields scanned into a: the status to refuse
 * the request with (400, 413, 501), or 0 with *t the parsed target (an
 * absolute form's path replaces it as the origin form, "/" when empty
 * (see admission_origin_form); its authority replaces Host). With no
 * method (a head the library refused before saying it), the checks of the
 * method itself and of a body on GET are left out and the target is held
 * to the forms GET may use. */
unsigned admission_finish(const struct admission *a, const struct admission_head *head,
                          struct request_target *t);

/* Rewrites target (a C string, the absolute form t was parsed from) in
 * place as the origin form of t: its path and query, with the "/" an empty
 * path stands for (RFC 9112 3.2.2, RFC 9110 4.2.3: "http://h?q" is "/?q").
 * It fits: the scheme and authority it drops are longer than that "/". */
void admission_origin_form(char *target, const struct request_target *t);

#endif
