/* preview: what live reload adds to serving, as the hook serve/ is handed.
 *
 * Fills a serve_live_hook (serve/live_hook.h) over the event hub (sse.h)
 * and the watcher (livereload.h): the client's tag for pages, the event
 * stream at /__folio/events and the client at /__folio/reload.js, the
 * health counters, and the end of the streams when the server stops. The
 * one place serving and live reload meet; live/ depends on serve/ here,
 * never the reverse. Thread-safe as the hub is.
 */
#ifndef FOLIO_PREVIEW_H
#define FOLIO_PREVIEW_H

#include <stddef.h>

#include "serve/live_hook.h"

struct livereload;
struct sse_hub;

struct preview {
    struct sse_hub *hub;   /* borrowed */
    struct livereload *lr; /* borrowed; may be NULL */
    struct serve_live_hook hook;
};

/* Fills p over hub and lr, caps the event streams at stream_limit (0: no
 * cap) and returns p's hook; NULL when hub is NULL (production: no hook).
 * hub and lr must outlive the server the hook is handed to. */
const struct serve_live_hook *preview_hook(struct preview *p, struct sse_hub *hub,
                                           struct livereload *lr, size_t stream_limit);

#endif
