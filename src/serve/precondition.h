/* precondition: conditional requests (RFC 9110 section 13) and HTTP dates.
 *
 * Pure functions over header strings; thread-safe, no allocation. A header
 * that is absent is passed as NULL. Malformed validators are ignored, as the
 * RFC asks, never answered with an error.
 */
#ifndef FOLIO_PRECONDITION_H
#define FOLIO_PRECONDITION_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct precondition_headers {
    const char *if_match;
    const char *if_none_match;
    const char *if_modified_since;
    const char *if_unmodified_since;
};

enum precondition_result {
    PRECONDITION_PASS,         /* serve the representation */
    PRECONDITION_NOT_MODIFIED, /* 304 */
    PRECONDITION_FAILED,       /* 412 */
};

/* Evaluates the preconditions in the order of RFC 9110 13.2.2 for a GET or
 * HEAD of a representation with this strong etag (quoted, e.g. "\"a-b\"")
 * and last-modified time. */
enum precondition_result precondition_evaluate(const struct precondition_headers *h,
                                               const char *etag, time_t last_modified);

/* True when a Range request may be honoured under If-Range (RFC 9110 13.1.5):
 * no If-Range, or one that strongly matches the etag, or a date equal to the
 * last-modified time. */
bool precondition_if_range(const char *if_range, const char *etag, time_t last_modified);

/* Parses an HTTP-date in any of its three forms (IMF-fixdate, RFC 850,
 * asctime). Returns false when text is not one. */
bool precondition_date_parse(const char *text, time_t *out);

/* Writes an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"); buf needs 30 bytes.
 * Times gmtime cannot represent are clamped instead of crashing (the
 * darkhttpd CVE-2020-25691 lesson). */
void precondition_date_format(time_t t, char buf[30]);

#endif
