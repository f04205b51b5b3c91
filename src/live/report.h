/* report — what folio's own pages tell it, in preview: errors thrown in a
 * browser, and the place a reader scrolled to.
 *
 * The injected client (reload.js) sends each as one GET of
 * /__folio/report whose X-Folio-Report field holds the report, form-encoded
 * (kind=fault&message=...&source=...&line=..., or kind=place&from=...&place=...),
 * with the server's secret in X-Folio-Key (preview.c checks both, and the
 * origin, before report_take is called). A field, not a body: folio reads no
 * request bodies, a field's size is bounded by the request head's limit
 * (libmicrohttpd refuses a bigger head itself), and another origin's page
 * cannot send a field of its own making without a CORS preflight folio never
 * grants.
 *
 *   fault  an uncaught error, an unhandled rejection or a console.error: the
 *          first of each distinct one (kind, message, source, line, column)
 *          is one line on @out at once, and a `fault` event to the browsers
 *          (the live panel); repeats are counted, and said in one line once
 *          they pause for REPORT_QUIET_MS (or every REPORT_AGAIN_MS while they
 *          go on). At most REPORT_DISTINCT_MAX distinct ones are kept; past
 *          that, one line says the rest go unsaid.
 *   place  the place a tab in follow mode scrolled to: passed on to every
 *          browser as a `follow` event "<from> <place>", checked to be made
 *          of the characters a place is written with.
 *
 * Nothing a page sends is printed or passed on as sent: text is cut to its
 * bound (a 1 MB message keeps REPORT_TEXT_MAX bytes, "..." at the cut) and
 * written by base/escape.h's rule (the access log's), so no byte of it drives
 * the terminal; the events are JSON with that same text. Each peer (one TCP
 * connection: address and port) may send REPORT_RATE reports a second, with
 * bursts of twice that; past it a report is refused (429) and dropped.
 *
 * Thread-safety: every function may be called from any thread; a mutex
 * guards the state, and a thread of its own says the repeat counts.
 */
#ifndef FOLIO_REPORT_H
#define FOLIO_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct sse_hub;
struct report;

#define REPORT_KEY_FIELD "X-Folio-Key"
#define REPORT_FIELD "X-Folio-Report"
#define REPORT_TEXT_MAX 1024      /* bytes of a message kept, escaped */
#define REPORT_SOURCE_MAX 256     /* bytes of a source URL kept */
#define REPORT_DEVICE_MAX 80      /* bytes of "Chrome 120, 390 px" kept */
#define REPORT_PLACE_MAX 1536     /* bytes of a place; a longer one is refused */
#define REPORT_DISTINCT_MAX 100   /* distinct faults kept */
#define REPORT_RATE 120           /* reports a second per peer: a place each frame at 60 Hz, and faults */
#define REPORT_PEERS 64           /* peers whose rate is kept (the least recent one goes) */
#define REPORT_QUIET_MS 500       /* repeats that pause this long are said */
#define REPORT_AGAIN_MS 5000      /* repeats that go on are said this often */

/* Starts the thread that says repeat counts; @hub gets the events, @out the
 * lines (stderr). NULL when out of memory or the thread cannot start. */
struct report *report_create(struct sse_hub *hub, FILE *out);

/* Says the repeats not said yet, stops the thread, frees. Accepts NULL. */
void report_destroy(struct report *r);

/* The per-server secret the client sends in X-Folio-Key: 32 hex digits from
 * getrandom, made at create. */
const char *report_key(const struct report *r);

/* True when @key (NULL: none sent) is the secret; constant time. */
bool report_key_matches(const struct report *r, const char *key);

/* Pure: whether a request with these fields (NULL: absent) comes from a page
 * of this server (RFC 6454 origins, Fetch Metadata): Sec-Fetch-Site, when
 * sent, is "same-origin"; Origin, when sent, is http:// or https:// and the
 * Host field. A plain-HTTP page on a LAN address sends neither on a GET (its
 * context is not secure): the secret alone then stands. */
bool report_same_origin(const char *host, const char *origin, const char *fetch_site);

/* Pure: the value of @name in form-encoded @form (a=1&b=x%20y, '+' a space),
 * decoded into @out (NUL-terminated; cut to @size - 1 bytes, never inside a
 * UTF-8 sequence). False when @form has no such field or an escape is bad. */
bool report_form_field(const char *form, const char *name, char *out, size_t size);

/* Takes one report @form from @peer (any text naming the connection) at
 * @now_ms: 204 when taken, 400 when it is no report, 429 past the peer's rate. */
unsigned report_take(struct report *r, const char *peer, const char *form, int64_t now_ms);

/* The faults kept, as a JSON array of the `fault` events' objects, malloc'd;
 * NULL when out of memory. For a page's first load. */
char *report_faults_json(struct report *r);

#endif
