#include "preview.h"

#include <microhttpd.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "check_live.h"
#include "livereload.h"
#include "report.h"
#include "sse.h"

/* A request header of conn, NULL when absent. */
static const char *preview_field(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* True when the request on conn comes from one of this server's pages, as
 * far as its Origin and Sec-Fetch-Site say (report.h). */
static bool preview_same_origin(struct MHD_Connection *conn)
{
    return report_same_origin(preview_field(conn, "Host"), preview_field(conn, "Origin"),
                              preview_field(conn, "Sec-Fetch-Site"));
}

/* A response of text (copied), typed; NULL with *status 0 out of memory. */
static struct MHD_Response *preview_text(const char *text, const char *type, unsigned *status, uint64_t *bytes)
{
    size_t len = text ? strlen(text) : 0;
    struct MHD_Response *resp = text ? MHD_create_response_from_buffer(len, (void *)(uintptr_t)text,
                                                                        MHD_RESPMEM_MUST_COPY)
                                     : NULL;
    if (!resp) {
        *status = 0;
        return NULL;
    }
    if (type) {
        MHD_add_response_header(resp, "Content-Type", type);
    }
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    *status = len ? 200 : 204;
    *bytes = len;
    return resp;
}

/* /__folio/session: what a page's client needs from its first load: the
 * secret its reports carry, the server's id, whether tabs follow, the
 * browser errors and check findings so far. Another origin's page cannot
 * read it (no CORS), and one that says it is another is refused. */
static struct MHD_Response *preview_session(const struct preview *p, struct MHD_Connection *conn,
                                            unsigned *status, uint64_t *bytes)
{
    if (!preview_same_origin(conn)) {
        *status = 403;
        return NULL;
    }
    char *faults = report_faults_json(p->report), *check = check_live_state(p->hub), *json = NULL;
    if (faults && check &&
        asprintf(&json, "{\"key\":\"%s\",\"server\":\"%s\",\"follow\":%s,\"faults\":%s,\"check\":%s}\n",
                 report_key(p->report), sse_hub_instance(p->hub), p->follow ? "true" : "false", faults, check) < 0) {
        json = NULL;
    }
    free(faults);
    free(check);
    struct MHD_Response *resp = preview_text(json, "application/json", status, bytes);
    free(json);
    return resp;
}

/* The peer of conn as "address port": a connection's own rate (report.h). */
static void preview_peer(struct MHD_Connection *conn, char *out, size_t size)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
    if (ci && ci->client_addr) {
        socklen_t len = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        getnameinfo(ci->client_addr, len, host, sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
    }
    snprintf(out, size, "%s %s", host, port);
}

/* /__folio/report: one report of a page's client (report.h), taken only
 * from this server's pages (origin and secret); a HEAD is answered, never
 * taken. 204, or the refusal's status. */
static struct MHD_Response *preview_report(const struct preview *p, struct MHD_Connection *conn, bool head,
                                           unsigned *status, uint64_t *bytes)
{
    const char *form = preview_field(conn, REPORT_FIELD);
    if (!preview_same_origin(conn) || !report_key_matches(p->report, preview_field(conn, REPORT_KEY_FIELD))) {
        *status = 403;
        return NULL;
    }
    if (!form) {
        *status = 400;
        return NULL;
    }
    char peer[NI_MAXHOST + NI_MAXSERV + 2];
    preview_peer(conn, peer, sizeof(peer));
    *status = head ? 204 : report_take(p->report, peer, form, clock_now_ms());
    if (*status != 204) {
        return NULL;
    }
    return preview_text("", NULL, status, bytes);
}

/* See live_hook.h: livereload_client_tag. */
static void preview_script_tag(void *ctx, size_t depth, char *out, size_t size)
{
    (void)ctx; /* the hook's signature: no state */
    livereload_client_tag(depth, out, size);
}

/* See live_hook.h: livereload_early_tag. */
static void preview_early_tag(void *ctx, size_t depth, char *out, size_t size)
{
    (void)ctx; /* the hook's signature: no state */
    livereload_early_tag(depth, out, size);
}

/* A script of the client, embedded in the binary; @cache its Cache-Control. */
static struct MHD_Response *preview_script(const char *js, size_t len, const char *cache, unsigned *status,
                                           uint64_t *bytes)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)js, MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        *status = 0;
        return NULL;
    }
    MHD_add_response_header(resp, "Content-Type", "text/javascript; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", cache);
    *status = 200;
    *bytes = len;
    return resp;
}

/* See live_hook.h: the event stream and the client's scripts. */
static struct MHD_Response *preview_reserved(void *ctx, struct MHD_Connection *conn, const char *name,
                                             bool head, unsigned *status, uint64_t *bytes, bool *unlogged)
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
        return preview_script(reload_js, reload_js_len, "no-cache", status, bytes);
    }
    if (strcmp(name, "early.js") == 0) {
        /* It blocks the page's parser: the URL pages name (livereload_early_tag)
         * names these bytes, so the browser keeps them and a reload asks for
         * nothing. Another version is revalidated, as reload.js is. */
        const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "v");
        bool current = v && strcmp(v, early_js_version) == 0;
        return preview_script(early_js, early_js_len, current ? "max-age=31536000, immutable" : "no-cache", status,
                              bytes);
    }
    if (strcmp(name, "session") == 0 && p->report) {
        return preview_session(p, conn, status, bytes);
    }
    if (strcmp(name, "report") == 0 && p->report) {
        struct MHD_Response *resp = preview_report(p, conn, head, status, bytes);
        *unlogged = resp != NULL; /* taken: said on stderr, or seen in the tabs; a refusal is logged */
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
const struct serve_live_hook *preview_hook(struct preview *p, struct sse_hub *hub, struct livereload *lr,
                                           struct report *report, size_t stream_limit, bool follow)
{
    if (!hub) {
        return NULL;
    }
    sse_hub_set_limit(hub, stream_limit);
    *p = (struct preview){
        .hub = hub,
        .lr = lr,
        .report = report,
        .follow = follow,
        .hook = {
            .ctx = p,
            .script_tag = preview_script_tag,
            .early_tag = preview_early_tag,
            .reserved = preview_reserved,
            .counts = preview_counts,
            .stop = preview_stop,
        },
    };
    return &p->hook;
}
