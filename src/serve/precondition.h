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

/* When a representation's file changed, as Last-Modified and the date
 * conditionals see it. */
struct precondition_times {
    time_t modified; /* the file's mtime: a build machine's clock or an archive may put it
                      * in the future */
    time_t changed;  /* its ctime: when this machine last changed the file (no archive or
                      * touch sets it) */
};

/* The Last-Modified of a message sent at now: the mtime, or now when that
 * is later (RFC 9110 8.8.2.1: an origin MUST NOT send a date later than the
 * message's Date, and sends the Date instead). */
time_t precondition_last_modified(const struct precondition_times *t, time_t now);

/* Evaluates the preconditions in the order of RFC 9110 13.2.2 for a GET or
 * HEAD, at now, of a representation with this strong etag (quoted, e.g.
 * "\"a-b\"") whose file changed at t. A date is "not modified since" when
 * the file's Last-Modified is not after it and, unless it is that very
 * Last-Modified, this machine has not changed the file since it either: a
 * version put in place with an older mtime (a redeploy, an archive) is seen.
 * A file whose mtime is in the future counts as changed when it last
 * changed here. An If-Modified-Since later than now is no date folio sent:
 * ignored, as Apache ignores it (a client holding a future Last-Modified from
 * before would be answered 304 for ever). */
enum precondition_result precondition_evaluate(const struct precondition_headers *h, const char *etag,
                                               const struct precondition_times *t, time_t now);

/* True when a Range request may be honoured under If-Range (RFC 9110 13.1.5):
 * no If-Range, or one that strongly matches the etag, or a date equal to the
 * file's mtime, unless that is in the future (the Last-Modified sent was a
 * stand-in, which names no version). */
bool precondition_if_range(const char *if_range, const char *etag, const struct precondition_times *t,
                           time_t now);

/* Parses an HTTP-date in any of its three forms (IMF-fixdate, RFC 850,
 * asctime). Returns false when text is not one. */
bool precondition_date_parse(const char *text, time_t *out);

/* Writes an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"); buf needs 30 bytes.
 * Times gmtime cannot represent are clamped instead of crashing (the
 * darkhttpd CVE-2020-25691 lesson). */
void precondition_date_format(time_t t, char buf[30]);

#endif
