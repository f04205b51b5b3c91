#include "preview.h"

#include <microhttpd.h>
#include <stdint.h>
#include <string.h>

#include "livereload.h"
#include "sse.h"

/* See live_hook.h: livereload_client_tag. */
static void preview_script_tag(void *ctx, size_t depth, char *out, size_t size)
{
    (void)ctx; /* the hook's signature: no state */
    livereload_client_tag(depth, out, size);
}

/* See live_hook.h: the event stream and the client script. */
static struct MHD_Response *preview_reserved(void *ctx, struct MHD_Connection *conn, const char *name,
                                             bool head, unsigned *status, uint64_t *bytes)
{
    const struct preview *p = ctx;
    *bytes = 0;
    if (strcmp(name, "events") == 0) {
        /* A HEAD learns the stream's headers without becoming a stream. */
        struct MHD_Response *resp = head ? sse_hub_head(p->hub) : sse_hub_attach(p->hub, conn);
        *status = resp ? 200 : 503;
        return resp;
    }
    if (strcmp(name, "reload.js") == 0) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            reload_js_len, (void *)(uintptr_t)reload_js, MHD_RESPMEM_PERSISTENT);
        if (!resp) {
            *status = 0;
            return NULL;
        }
        MHD_add_response_header(resp, "Content-Type", "text/javascript; charset=utf-8");
        MHD_add_response_header(resp, "Cache-Control", "no-cache");
        *status = 200;
        *bytes = reload_js_len;
        return resp;
    }
    *status = 404;
    return NULL;
}

/* See live_hook.h. */
static void preview_counts(void *ctx, size_t *folders_watched, size_t *event_streams)
{
    const struct preview *p = ctx;
    *folders_watched = livereload_watch_count(p->lr);
    *event_streams = sse_hub_client_count(p->hub);
}

/* See live_hook.h: the streams get two seconds to end. */
static void preview_stop(void *ctx)
{
    const struct preview *p = ctx;
    sse_hub_close(p->hub, 2000);
}

/* See preview.h. */
const struct serve_live_hook *preview_hook(struct preview *p, struct sse_hub *hub,
                                           struct livereload *lr, size_t stream_limit)
{
    if (!hub) {
        return NULL;
    }
    sse_hub_set_limit(hub, stream_limit);
    *p = (struct preview){
        .hub = hub,
        .lr = lr,
        .hook = {
            .ctx = p,
            .script_tag = preview_script_tag,
            .reserved = preview_reserved,
            .counts = preview_counts,
            .stop = preview_stop,
        },
    };
    return &p->hook;
}
