/* preview: what live reload adds to serving, as the hook serve/ is handed.
 *
 * Fills a serve_live_hook (site/live_hook.h) over the event hub (sse.h),
 * the watcher (livereload.h) and the pages' reports (report.h): the
 * client's tag for pages, the event stream at /__folio/events, the client
 * at /__folio/reload.js, what a page's client learns at its first load at
 * /__folio/session (its secret, follow mode, the errors and findings so
 * far) and what it tells folio at /__folio/report (both refused to another
 * origin, the report also without the secret: 403), the health counters,
 * and the end of the streams when the server stops. The
 * one place serving and live reload meet; live/ depends on serve/ here,
 * never the reverse. Thread-safe as the hub is.
 */
#ifndef FOLIO_PREVIEW_H
#define FOLIO_PREVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "site/live_hook.h"

struct livereload;
struct report;
struct sse_hub;

struct preview {
    struct sse_hub *hub;       /* borrowed */
    struct livereload *lr;     /* borrowed; may be NULL */
    struct report *report;     /* borrowed; NULL: no session, no reports (404) */
    bool follow;               /* --follow: a page's tabs follow from its first load */
    struct serve_live_hook hook;
};

/* Fills p over hub, lr and report, caps the event streams at stream_limit
 * (0: no cap) and returns p's hook; NULL when hub is NULL (production: no
 * hook). hub, lr and report must outlive the server the hook is handed to. */
const struct serve_live_hook *preview_hook(struct preview *p, struct sse_hub *hub, struct livereload *lr,
                                           struct report *report, size_t stream_limit, bool follow);

#endif
