#include "respond.h"

#include <limits.h>
#include <string.h>
#include <inttypes.h>
#include <stdio.h>

#include "base/allowed_hosts.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/escape.h"
#include "base/say_limit.h"
#include "connection.h"
#include "connection_deadline.h"
#include "exchange.h"
#include "site/live_hook.h"
#include "progress.h"
#include "ready.h"
#include "request.h"
#include "response.h"
#include "site/rewrite.h"

enum { SCRIPT_TAG_MAX = 3 * PATH_MAX / 2 + 64 };

/* Whether libmicrohttpd will close conn after resp: a response queued before
 * the request's headers were all seen (it then skips the rest of the request,
 * see handle_request) or one that says Connection: close. */
static void note_last_on_connection(struct exchange *ex, struct MHD_Response *resp)
{
    ex->last_on_connection = !ex->headers_seen ||
        request_lists_token(MHD_get_response_header(resp, MHD_HTTP_HEADER_CONNECTION), "close");
}

/* Whether resp is an event stream: chunked, and meant to last. */
static bool is_stream(struct MHD_Response *resp)
{
    const char *type = MHD_get_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE);
    return type && strncmp(type, "text/event-stream", 17) == 0;
}

/* A response of bytes is going out: a big one (PROGRESS_MARK_MIN, with a
 * mark) is held to --send-rate by the bytes its client acknowledges per
 * --timeout window; a smaller one gets --header-timeout plus the time
 * --send-rate allows for its size; an event stream, which is meant to
 * last, none. Any body sent from file_fd (-1: from memory), which must
 * hold file_end bytes, ends as soon as the file is cut short, however
 * small: the file may be cut (an editor's or cp's rewrite in place) before
 * the library's sendfile runs, or while a slow client keeps the rest of
 * the body in it, and that sendfile would then wait for ever (library.h). */
static void expect_sending(const struct exchange *ex, struct MHD_Connection *conn, bool stream,
                           uint64_t bytes, int file_fd, uint64_t file_end)
{
    const struct config *c = ex->config;
    if (!stream && file_fd >= 0 && bytes > 0) {
        connection_watch_file(conn, file_fd, file_end);
    }
    int64_t allowed = (int64_t)c->header_timeout * 1000;
    if (c->send_rate) {
        allowed += (int64_t)(bytes / c->send_rate) * 1000;
    }
    if (!stream && c->send_rate && ex->measurable && bytes >= PROGRESS_MARK_MIN && c->timeout) {
        /* a big body: held to the floor by what its client acknowledges */
        connection_expect_progress(conn, c->send_rate, c->timeout, c->header_timeout, ex->sent_mark);
        return;
    }
    connection_set_deadline(conn, stream || !c->send_rate ? 0 : clock_now_ms() + allowed);
}

/* Prepares ex for a cut of resp to log how far it got (progress.h): the
 * mark is the connection's running total, no syscall; where that is
 * unknown, the kernel's count, for a body of PROGRESS_MARK_MIN or more (and
 * for an event stream, which may send any amount). head: resp's header
 * block when already measured, else NULL. */
static void note_progress_mark(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                               struct MHD_Response *resp, bool stream, const struct progress_head *head)
{
    ex->measurable = false;
    ex->stream = stream;
    const struct connection *c = connection_of(conn);
    if (!c || (stream && strcmp(ex->protocol, MHD_HTTP_VERSION_1_1) != 0)) {
        return; /* an HTTP/1.0 stream is not chunked: its block is not derived */
    }
    if (stream) {
        head = NULL;
        ex->body_bytes_queued = PROGRESS_CHUNKED;
    }
    if (!c->sent_unknown && !ex->interim) {
        ex->sent_mark = c->sent_before;
    } else if ((ex->bytes < PROGRESS_MARK_MIN && !progress_measure_all() && !stream) ||
               !progress_kernel_bytes(c->fd, &ex->sent_mark)) {
        return;
    }
    ex->head = head ? *head : progress_head_length(resp, status, ex->body_bytes_queued);
    ex->measurable = true;
}

/* Queues resp as it is, recording status and bytes for the log line; the
 * caller keeps its reference; head: resp's header block if measured. The
 * one way a response goes out. file_fd: the file its body is sent from, up
 * to offset file_end; -1 for none. */
static enum MHD_Result send_response(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                                     struct MHD_Response *resp, uint64_t body_bytes,
                                     const struct progress_head *head, int file_fd, uint64_t file_end)
{
    ex->status = status;
    ex->bytes = strcmp(ex->method, "HEAD") == 0 || status == 304 ? 0 : body_bytes;
    ex->body_bytes_queued = body_bytes;
    note_last_on_connection(ex, resp);
    bool stream = is_stream(resp);
    note_progress_mark(conn, ex, status, resp, stream, head);
    expect_sending(ex, conn, stream, ex->bytes, file_fd, file_end);
    connection_note_queued(conn);
    return MHD_queue_response(conn, status, resp);
}

/* See respond.h. */
enum MHD_Result respond_queue_file(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                                   struct MHD_Response *resp, uint64_t body_bytes, int fd, uint64_t first)
{
    if (!resp) {
        return MHD_NO;
    }
    response_add_common(resp);
    enum MHD_Result ok = send_response(conn, ex, status, resp, body_bytes, NULL, fd, first + body_bytes);
    MHD_destroy_response(resp);
    return ok;
}

/* See respond.h. */
enum MHD_Result respond_queue(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                              struct MHD_Response *resp, uint64_t body_bytes)
{
    return respond_queue_file(conn, ex, status, resp, body_bytes, -1, 0);
}

/* See respond.h. */
enum MHD_Result respond_ready(struct MHD_Connection *conn, struct exchange *ex, struct ready_answer *a)
{
    enum MHD_Result ok = send_response(conn, ex, a->status, a->resp, a->size, &a->head, a->fd, a->size);
    ready_answer_release(a);
    return ok;
}

/* See respond.h. */
enum MHD_Result respond_error(struct MHD_Connection *conn, struct exchange *ex, unsigned status)
{
    return respond_error_why(conn, ex, status, NULL);
}

/* See respond.h. */
enum MHD_Result respond_error_why(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                                  const char *why)
{
    const struct exchange_server *s = ex->server;
    struct MHD_Response *resp = NULL;
    uint64_t len = 0;
    struct entry_facts facts = facts_for_route(facts_of(conn, ex), s->root_route);
    struct ready_answer ready;
    bool out_of_memory = false;
    if (status == 404 && ready_not_found(&ex->server->ready, &s->entries, s->root_route, &facts, &ready,
                                         &out_of_memory)) {
        return respond_ready(conn, ex, &ready);
    }
    if (out_of_memory) {
        return MHD_NO;
    }
    struct entry_rep page;
    if (status == 404 && entry_not_found(&s->entries, s->root_route, &facts, &page)) {
        len = page.size;
        resp = response_from_rep(&page, 0, len);
        entry_rep_release(&page);
    }
    if (!resp) {
        /* In preview a page loaded in the browser gets the client, as
         * every page does: a folder that is gone while it rebuilds must not
         * leave the reader on a page that never reloads again. */
        char script[SCRIPT_TAG_MAX] = "", text[RESPONSE_PAGE_MAX + SCRIPT_TAG_MAX];
        if (s->live && facts.document) {
            s->live->script_tag(s->live->ctx, rewrite_depth(ex->target), script, sizeof(script));
        }
        len = response_error_page(status, why, script, text, sizeof(text));
        resp = response_from_text(text);
    }
    if (!resp) {
        return MHD_NO;
    }
    response_add_error_headers(resp, status);
    return respond_queue(conn, ex, status, resp, len);
}

/* See respond.h: the connection ends with it, so the client's next try is
 * a new connection, counted anew. */
enum MHD_Result respond_too_many(struct MHD_Connection *conn, struct exchange *ex)
{
    char text[RESPONSE_PAGE_MAX];
    size_t len = response_error_page(503, "Too many connections from your address at once.", "", text,
                                     sizeof(text));
    struct MHD_Response *resp = response_from_text(text);
    if (!resp) {
        return MHD_NO;
    }
    response_add_error_headers(resp, 503); /* Retry-After */
    response_add(resp, "Connection", "close");
    return respond_queue(conn, ex, 503, resp, len);
}

/* See respond.h. */
enum MHD_Result respond_moved(struct MHD_Connection *conn, struct exchange *ex, const char *location)
{
    char page[] = "<!doctype html>\n<title>301 Moved Permanently</title>\n";
    struct MHD_Response *resp = response_from_text(page);
    if (!resp) {
        return MHD_NO;
    }
    response_add(resp, "Location", location);
    response_add(resp, "Content-Type", "text/html; charset=utf-8");
    response_add(resp, "Cache-Control", "no-cache");
    return respond_queue(conn, ex, 301, resp, strlen(page));
}

/* See respond.h: the path is decoded by now, so "dir%20sp" must not come
 * back as "dir sp". */
enum MHD_Result respond_redirect(struct MHD_Connection *conn, struct exchange *ex, const char *path,
                                 const char *query)
{
    const char *last = strrchr(path, '/') + 1;
    char location[3 * PATH_MAX + 16];
    if (!request_folder_location(last, strlen(last), query, location, sizeof(location))) {
        return respond_error(conn, ex, 404);
    }
    return respond_moved(conn, ex, location);
}

/* See respond.h. */
enum MHD_Result respond_unsatisfiable(struct MHD_Connection *conn, struct exchange *ex, uint64_t size)
{
    char range[64];
    snprintf(range, sizeof(range), "bytes */%" PRIu64, size);
    struct MHD_Response *resp = response_from_text("");
    if (resp) {
        response_add(resp, "Content-Range", range);
        response_add(resp, "Cache-Control", "no-store");
    }
    return respond_queue(conn, ex, 416, resp, 0);
}

/* See respond.h. */
enum MHD_Result respond_options(struct MHD_Connection *conn, struct exchange *ex)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (resp) {
        response_add(resp, "Allow", "GET, HEAD, OPTIONS");
    }
    return respond_queue(conn, ex, 204, resp, 0);
}

/* Writes the n bytes of s into out (size bytes) with HTML's five special
 * characters escaped, NUL-terminated, cut short where it does not fit. */
static void html_text(const char *s, size_t n, char *out, size_t size)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = s[i] == '&' ? "&amp;" : s[i] == '<' ? "&lt;" : s[i] == '>' ? "&gt;"
                      : s[i] == '"' ? "&quot;" : s[i] == '\'' ? "&#39;" : NULL;
        size_t add = e ? strlen(e) : 1;
        if (len + add >= size) {
            break;
        }
        memcpy(out + len, e ? e : s + i, add);
        len += add;
    }
    out[len] = '\0';
}

/* See respond.h. */
enum MHD_Result respond_host_refused(struct MHD_Connection *conn, struct exchange *ex)
{
    static struct say_limit refused;
    size_t sent = 0;
    const char *host = exchange_host(conn, ex, &sent);
    size_t n = host ? allowed_hosts_name_length(host, sent) : 0;
    char name[256], more[80];
    snprintf(name, sizeof(name), "%.*s", (int)n, host ? host : "");
    if (say_limit_pass(&refused, 60, more, sizeof(more))) {
        char shown[4 * sizeof(name) + 8];
        escape_text(name, shown, sizeof(shown));
        fprintf(stderr, "folio: preview refused a request for the host %s (403): a page of another site could "
                "read the preview under a name of its own (DNS rebinding); to allow it: --allowed-hosts %s%s\n",
                shown, shown, more);
    }
    char safe[6 * sizeof(name)], page[1024 + 2 * sizeof(safe)];
    html_text(name, strlen(name), safe, sizeof(safe));
    int len = snprintf(page, sizeof(page),
        "<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>403 Forbidden</title>\n"
        "<h1>403 Forbidden</h1>\n<p>This preview answers only its own addresses: IP addresses, localhost, and "
        "the names given to <code>--allowed-hosts</code>, so that a page of another site cannot read it under a "
        "name of its own (DNS rebinding).</p>\n<p>To open it as <b>%s</b>, start folio with "
        "<code>--allowed-hosts %s</code> (or <code>FOLIO_ALLOWED_HOSTS=%s</code>, or <code>allowed-hosts = %s"
        "</code> in the config file's [server] section).</p>\n</html>\n", safe, safe, safe, safe);
    struct MHD_Response *resp = len > 0 ? response_from_text(page) : NULL;
    if (!resp) {
        return MHD_NO;
    }
    response_add_error_headers(resp, 403);
    return respond_queue(conn, ex, 403, resp, (uint64_t)len);
}
