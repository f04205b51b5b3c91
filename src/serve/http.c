#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/body.h"
#include "cache.h"
#include "base/clock.h"
#include "deadline.h"
#include "base/config.h"
#include "connection.h"
#include "encoding.h"
#include "entry.h"
#include "live/livereload.h"
#include "log.h"
#include "precondition.h"
#include "range.h"
#include "request.h"
#include "resolve.h"
#include "rewrite.h"
#include "routes.h"
#include "live/sse.h"

#ifndef FOLIO_VERSION
#define FOLIO_VERSION "unknown"
#endif

#define RESERVED_PREFIX ROUTES_RESERVED_PREFIX
/* A body on GET or HEAD means nothing (RFC 9110 9.3.1) but must be read to
 * find the next request: up to this much is read and dropped, more is a 413. */
#define IGNORED_BODY_MAX (64u << 10)

struct http_server {
    struct MHD_Daemon *daemon;
    struct http_context ctx;
    const struct route *root_route; /* the "/" route, home of 404.html; may be NULL */
    struct entry_server entries;
    atomic_uint ready_fds; /* descriptors held by ready responses (READY_FDS_MAX) */
    pthread_mutex_t start_lock; /* guards the two below */
    bool starting;              /* MHD's messages are kept only while it starts */
    char start_error[256];
    time_t started;
    atomic_uint in_flight;
    atomic_bool quiesced;    /* http_server_quiesce ran: new connections are closed at once */
    struct deadline_watch *deadlines; /* slow clients: see deadline.h */
};

/* Per request, from the URI-log callback (the first thing MHD tells us,
 * with the target still undecoded) to the completion callback. */
struct request {
    struct http_server *server;
    struct timespec start_real, start_mono;
    const char *method, *protocol; /* MHD's strings, valid until completion */
    const char *prefix;            /* the proxy's path prefix, or NULL: see request_prefix */
    const char *sent_uri;          /* MHD's pointer into the request line, for the target's length */
    char *sent_target;             /* an absolute-form target as sent, for the log; else NULL */
    unsigned status;
    uint64_t bytes, body_bytes;
    bool headers_seen, checked;
    bool last_on_connection;       /* our response ends the connection (see kept_alive) */
    char protocol_buf[16];         /* the version as sent, for a request MHD refuses itself */
    char prefix_buf[REWRITE_PREFIX_MAX];
    char target[]; /* percent-encoded, with the query: as received, but in origin form
                    * (check_request) and with its folders as served (settle_target) */
};

/* Adds one header; a failure (out of memory) leaves the response without it. */
static void add_header(struct MHD_Response *r, const char *name, const char *value)
{
    MHD_add_response_header(r, name, value);
}

/* folio's record of conn (its socket context, see connection.h), or NULL. */
static struct connection *connection_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* The deadline entry of conn, or NULL. */
static struct deadline_entry *connection_deadline(struct MHD_Connection *conn)
{
    struct connection *c = connection_of(conn);
    return c ? c->deadline : NULL;
}

/* Whether libmicrohttpd will close conn after resp: a response queued before
 * the request's headers were all seen (it then skips the rest of the request,
 * see handle_request) or one that says Connection: close. */
static void note_last_on_connection(struct request *req, struct MHD_Response *resp)
{
    req->last_on_connection = !req->headers_seen ||
        request_lists_token(MHD_get_response_header(resp, MHD_HTTP_HEADER_CONNECTION), "close");
}

/* From now on the connection waits for a request's line and headers: all of
 * them within --header-timeout, however slowly they trickle in (nginx's
 * client_header_timeout), whatever the idle timeout says. */
static void expect_headers(const struct http_server *s, struct MHD_Connection *conn)
{
    deadline_set(connection_deadline(conn),
                 clock_now_ms() + (int64_t)s->ctx.config->header_timeout * 1000);
}

/* A response of bytes is going out: it gets --header-timeout plus the time
 * --send-rate allows for its size; an event stream, which is meant to last,
 * none. */
static void expect_sending(const struct http_server *s, struct MHD_Connection *conn,
                           struct MHD_Response *resp, uint64_t bytes)
{
    const char *type = MHD_get_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE);
    const struct config *c = s->ctx.config;
    int64_t allowed = (int64_t)c->header_timeout * 1000;
    if (c->send_rate) {
        allowed += (int64_t)(bytes / c->send_rate) * 1000;
    }
    bool stream = type && strncmp(type, "text/event-stream", 17) == 0;
    deadline_set(connection_deadline(conn), stream || !c->send_rate ? 0 : clock_now_ms() + allowed);
}

/* Queues resp (NULL: out of memory, the connection is closed) with nosniff, records
 * status and bytes for the log line, and drops our reference. */
static enum MHD_Result queue(struct MHD_Connection *conn, struct request *req, unsigned status,
                             struct MHD_Response *resp, uint64_t body_bytes)
{
    if (!resp) {
        return MHD_NO;
    }
    add_header(resp, "X-Content-Type-Options", "nosniff");
    req->status = status;
    req->bytes = strcmp(req->method, "HEAD") == 0 || status == 304 ? 0 : body_bytes;
    expect_sending(req->server, conn, resp, req->bytes);
    note_last_on_connection(req, resp);
    enum MHD_Result ok = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* A response sending len bytes of b from offset; takes the reference, even on failure. */
static struct MHD_Response *response_from_body(struct body *b, uint64_t offset, uint64_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
        (size_t)len, b->data + offset, body_unref_cb, b);
    if (!r) {
        body_unref(b);
    }
    return r;
}

/* The body reader of a 304: never called, as no 304 has a body. */
static ssize_t never_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* A 304 for a representation of size bytes. RFC 9110 8.6: its Content-Length,
 * if any, is the one the 200 would have had; libmicrohttpd 0.9.75 always
 * writes one from the response's size, and never sends a 304's body, so the
 * response is that size with a reader that is never called. */
static struct MHD_Response *response_not_modified(uint64_t size)
{
    return MHD_create_response_from_callback(size, 4096, never_read, NULL, NULL);
}

/* A response with a copy of text; NULL when out of memory. */
static struct MHD_Response *response_from_text(const char *text)
{
    struct body *b = body_from(text, strlen(text));
    return b ? response_from_body(b, 0, b->len) : NULL;
}

/* The reason phrase of an error status, for the error page. */
static const char *status_text(unsigned status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 416: return "Range Not Satisfiable";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

/* True when the browser will load this HTML as a page (so it gets the
 * live-reload client), false when a script fetches it (a fragment). Browsers
 * say which with Sec-Fetch-Dest; without it, only fragments/ is assumed to be
 * fetched by script. */
static bool loads_as_document(struct MHD_Connection *conn, const struct route *route)
{
    const char *dest = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Dest");
    if (!dest) {
        return !route->is_fragments;
    }
    return strcmp(dest, "document") == 0 || strcmp(dest, "iframe") == 0 ||
           strcmp(dest, "frame") == 0 || strcmp(dest, "embed") == 0 || strcmp(dest, "object") == 0;
}

/* The facts entry.c needs of this request, for a file of route. */
static struct entry_facts request_facts(struct MHD_Connection *conn, const struct request *req,
                                        const struct route *route)
{
    return (struct entry_facts){
        .accepts_gzip = encoding_accepts_gzip(
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding")),
        .has_range = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Range") != NULL,
        .document = route && loads_as_document(conn, route),
        .prefix = req->prefix,
        .target = req->target,
    };
}

/* A response carrying len bytes of rep from offset, which takes the bytes
 * (body reference or fd) out of rep; NULL when out of memory. */
static struct MHD_Response *response_from_rep(struct entry_rep *rep, uint64_t offset, uint64_t len)
{
    if (rep->body) {
        struct body *b = rep->body;
        rep->body = NULL;
        return response_from_body(b, offset, len);
    }
    if (len == 0) {
        return MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    /* sendfile: the response owns the fd from here, and only if it exists. */
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(len, rep->fd, (int64_t)offset);
    if (r) {
        rep->fd = -1;
    }
    return r;
}

static bool serve_not_found_ready(struct MHD_Connection *conn, struct request *req,
                                  const struct entry_facts *f, enum MHD_Result *done);

enum { ERROR_PAGE_MAX = 512, SCRIPT_TAG_MAX = 3 * PATH_MAX / 2 + 64 };

/* Writes folio's own page for status into buf, with script (a tag, or "")
 * before its end; returns its length. */
static size_t error_page(unsigned status, const char *script, char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     "<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>%u %s</title>\n"
                     "<h1>%u %s</h1>\n<p>folio could not serve this address.</p>\n%s</html>\n",
                     status, status_text(status), status, status_text(status), script);
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* A small HTML error page; for 404, www/404.html when the article has one,
 * prepared for the address that was not found (its references resolve
 * against it). */
static enum MHD_Result respond_error(struct MHD_Connection *conn, struct request *req, unsigned status)
{
    const struct http_server *s = req->server;
    struct MHD_Response *resp = NULL;
    uint64_t len = 0;
    struct entry_facts facts = request_facts(conn, req, s->root_route);
    enum MHD_Result done;
    if (status == 404 && serve_not_found_ready(conn, req, &facts, &done)) {
        return done;
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
        char script[SCRIPT_TAG_MAX] = "", text[ERROR_PAGE_MAX + SCRIPT_TAG_MAX];
        if (s->entries.live_reload && facts.document) {
            livereload_script_tag(req->target, script, sizeof(script));
        }
        len = error_page(status, script, text, sizeof(text));
        resp = response_from_text(text);
    }
    if (!resp) {
        return MHD_NO;
    }
    add_header(resp, "Content-Type", "text/html; charset=utf-8");
    /* A missing fragment must never be cached as if it were one (no SPA fallback either). */
    add_header(resp, "Cache-Control", "no-store");
    if (status == 405) {
        add_header(resp, "Allow", "GET, HEAD, OPTIONS");
    }
    if (status == 400) {
        add_header(resp, "Connection", "close"); /* whatever follows a bad request is suspect too */
    }
    if (status == 503) {
        add_header(resp, "Retry-After", "2"); /* RFC 9110 10.2.3: a moment, not a failure */
    }
    return queue(conn, req, status, resp, len);
}

/* A 301 to location, a relative reference: it stays right behind any proxy
 * prefix (PEERS.md theme I). */
static enum MHD_Result respond_moved(struct MHD_Connection *conn, struct request *req,
                                     const char *location)
{
    char page[] = "<!doctype html>\n<title>301 Moved Permanently</title>\n";
    struct MHD_Response *resp = response_from_text(page);
    if (!resp) {
        return MHD_NO;
    }
    add_header(resp, "Location", location);
    add_header(resp, "Content-Type", "text/html; charset=utf-8");
    add_header(resp, "Cache-Control", "no-cache");
    return queue(conn, req, 301, resp, strlen(page));
}

/* A folder asked for without its slash: its last segment, encoded again
 * (the path is decoded by now: "dir%20sp" must not come back as "dir sp"). */
static enum MHD_Result respond_redirect(struct MHD_Connection *conn, struct request *req,
                                        const char *path, const char *query)
{
    const char *last = strrchr(path, '/') + 1;
    char location[3 * PATH_MAX + 16];
    if (!request_folder_location(last, strlen(last), query, location, sizeof(location))) {
        return respond_error(conn, req, 404);
    }
    return respond_moved(conn, req, location);
}

/* /__folio/health: status, mode, uptime and counters as one JSON object. */
static enum MHD_Result respond_health(struct MHD_Connection *conn, struct request *req)
{
    const struct http_server *s = req->server;
    char json[512];
    snprintf(json, sizeof(json),
             "{\"status\":\"ok\",\"version\":\"%s\",\"mode\":\"%s\",\"uptime_s\":%lld,"
             "\"folders_watched\":%zu,\"cache_bytes\":%zu,\"event_stream_connections\":%zu}\n",
             FOLIO_VERSION, s->ctx.config->production ? "production" : "preview",
             (long long)(time(NULL) - s->started),
             s->ctx.files_watched ? s->ctx.files_watched(s->ctx.watch) : 0,
             cache_bytes(s->ctx.cache), s->ctx.hub ? sse_hub_client_count(s->ctx.hub) : 0);
    struct MHD_Response *resp = response_from_text(json);
    if (!resp) {
        return MHD_NO;
    }
    add_header(resp, "Content-Type", "application/json");
    add_header(resp, "Cache-Control", "no-store");
    return queue(conn, req, 200, resp, strlen(json));
}

/* Answers folio's own addresses under /__folio/: health, events, reload.js, else 404. */
static enum MHD_Result respond_reserved(struct MHD_Connection *conn, struct request *req,
                                        const char *path)
{
    struct http_server *s = req->server;
    const char *name = path + strlen(RESERVED_PREFIX);
    if (strcmp(name, "health") == 0) {
        return respond_health(conn, req);
    }
    if (s->ctx.hub && strcmp(name, "events") == 0) {
        struct MHD_Response *resp = sse_hub_attach(s->ctx.hub, conn);
        if (!resp) {
            return respond_error(conn, req, 503);
        }
        return queue(conn, req, 200, resp, 0);
    }
    if (s->ctx.hub && strcmp(name, "reload.js") == 0) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            reload_js_len, (void *)(uintptr_t)reload_js, MHD_RESPMEM_PERSISTENT);
        if (!resp) {
            return MHD_NO;
        }
        add_header(resp, "Content-Type", "text/javascript; charset=utf-8");
        add_header(resp, "Cache-Control", "no-cache");
        return queue(conn, req, 200, resp, reload_js_len);
    }
    return respond_error(conn, req, 404);
}

/* The request's conditional headers (RFC 9110 13.1). */
static struct precondition_headers conditionals(struct MHD_Connection *conn)
{
    return (struct precondition_headers){
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Match"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Modified-Since"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Unmodified-Since"),
    };
}

/* The status the validators and Range give rep (RFC 9110 13.2.2, then
 * 14.2 under If-Range); for 206, *first and *last are the range. */
static unsigned choose_status(struct MHD_Connection *conn, const struct entry_rep *rep,
                              uint64_t *first, uint64_t *last)
{
    struct precondition_headers pre = conditionals(conn);
    switch (precondition_evaluate(&pre, rep->etag, rep->mtime)) {
    case PRECONDITION_FAILED: return 412;
    case PRECONDITION_NOT_MODIFIED: return 304;
    case PRECONDITION_PASS: break;
    }
    const char *range = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Range");
    if (!range || !precondition_if_range(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Range"),
                                         rep->etag, rep->mtime)) {
        return 200;
    }
    switch (range_parse(range, rep->size, first, last)) {
    case RANGE_SATISFIABLE: return 206;
    case RANGE_UNSATISFIABLE: return 416;
    case RANGE_NONE: break;
    }
    return 200;
}

/* The headers of a representation: type, validators, caching by mode,
 * Vary, coding and, for 206, the range. */
static void add_rep_headers(const struct http_server *s, struct MHD_Response *resp,
                            const struct entry_rep *rep, unsigned status, uint64_t first, uint64_t last)
{
    char last_modified[30];
    precondition_date_format(rep->mtime, last_modified);
    if (status != 304) {
        add_header(resp, "Content-Type", rep->type);
    }
    add_header(resp, "ETag", rep->etag);
    add_header(resp, "Last-Modified", last_modified);
    if (s->ctx.config->production && strncmp(rep->type, "text/html", 9) != 0) {
        char cc[48];
        snprintf(cc, sizeof(cc), "public, max-age=%u", s->ctx.config->max_age);
        add_header(resp, "Cache-Control", cc);
    } else {
        add_header(resp, "Cache-Control", "no-cache");
    }
    add_header(resp, "Accept-Ranges", "bytes");
    if (rep->compressible) {
        add_header(resp, "Vary", "Accept-Encoding");
    }
    if (rep->gzip && status != 304) {
        add_header(resp, "Content-Encoding", "gzip");
    }
    if (status == 206) {
        char range[96];
        snprintf(range, sizeof(range), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, rep->size);
        add_header(resp, "Content-Range", range);
    }
}

/* 416 with the size a range must fit (RFC 9110 15.5.17). */
static enum MHD_Result respond_unsatisfiable(struct MHD_Connection *conn, struct request *req,
                                             uint64_t size)
{
    char range[64];
    snprintf(range, sizeof(range), "bytes */%" PRIu64, size);
    struct MHD_Response *resp = response_from_text("");
    if (resp) {
        add_header(resp, "Content-Range", range);
        add_header(resp, "Cache-Control", "no-store");
    }
    return queue(conn, req, 416, resp, 0);
}

/* Ready responses. A representation served whole (200 or 304, no Range) has
 * its two MHD_Responses, every header set, built once and queued on every
 * later request for the same version of the file and the same kind of
 * client: libmicrohttpd reference-counts responses and may queue one on many
 * connections, and a shared fd is sent with explicit offsets. They live in
 * the cache beside the bodies, under the file's key, so an edit (and
 * livereload's invalidation) drops them too. A hit costs one fstatat (the
 * version check: only bytes once validated beneath the folder are sent, so a
 * path swapped meanwhile gives a miss, never another file) instead of open,
 * fstat and close, and builds no header. */
#define READY_FDS_MAX 256 /* descriptors ready responses may hold open */
#define READY_VARIANT_MAX (PATH_MAX + REWRITE_PREFIX_MAX + 16)
/* What two MHD responses and their headers take: measured as RSS over 3,000
 * small files, 2.8 KB a file with a ready entry against 0.3 KB without. */
#define READY_COST 2560

struct ready {
    struct MHD_Response *full, *not_modified; /* 200 and 304, shared, never changed */
    uint64_t size;
    time_t mtime;
    char etag[80];
    atomic_uint *fds; /* the server's count of descriptors held, when this holds one */
};

/* The last reference to a ready entry went: its responses and descriptor go
 * once the connections still sending them are done. */
static void ready_free(void *data)
{
    struct ready *r = data;
    MHD_destroy_response(r->full);
    if (r->not_modified) {
        MHD_destroy_response(r->not_modified);
    }
    if (r->fds) {
        atomic_fetch_sub(r->fds, 1);
    }
}

/* The cache variant of a ready entry: every fact its representation depends
 * on (the target's path sets the depth of the client's src and of rewrites). */
static bool ready_variant(const struct entry_facts *f, char *out, size_t size)
{
    const char *prefix = f->prefix ? f->prefix : "";
    size_t prefix_len = strlen(prefix), path_len = strcspn(f->target, "?#");
    if (6 + prefix_len + 1 + path_len + 1 > size) { /* on every request: no snprintf */
        return false;
    }
    memcpy(out, "r:0:0:", 6);
    out[2] += f->accepts_gzip;
    out[4] += f->document;
    memcpy(out + 6, prefix, prefix_len);
    out[6 + prefix_len] = ':';
    memcpy(out + 7 + prefix_len, f->target, path_len);
    out[7 + prefix_len + path_len] = '\0';
    return true;
}

/* Queues a shared response as it is (its headers, nosniff included, were set
 * when it was built), recording status and bytes for the log line. */
static enum MHD_Result queue_shared(struct MHD_Connection *conn, struct request *req, unsigned status,
                                    struct MHD_Response *resp, uint64_t body_bytes)
{
    req->status = status;
    req->bytes = strcmp(req->method, "HEAD") == 0 || status == 304 ? 0 : body_bytes;
    expect_sending(req->server, conn, resp, req->bytes);
    note_last_on_connection(req, resp);
    return MHD_queue_response(conn, status, resp);
}

/* A new reference to the ready entry (route, rel, variant) when the file is
 * still the version it was made from; NULL otherwise. */
static struct body *ready_find(struct http_server *s, const struct route *route, const char *rel,
                               const char *variant)
{
    struct stat st;
    char key[2 * PATH_MAX];
    if (fstatat(route->dir_fd, rel, &st, 0) != 0 || !S_ISREG(st.st_mode) ||
        !entry_key(route->dir, rel, key, sizeof(key))) {
        return NULL;
    }
    struct file_id id;
    file_id_from_stat(&id, &st);
    return cache_get(s->ctx.cache, key, variant, &id);
}

/* Answers from a ready entry of rel when there is one for this version of
 * the file and this kind of client, and the preconditions pass or give 304;
 * false to take the long way (no entry, another version, a Range, a 412). */
static bool serve_ready(struct MHD_Connection *conn, struct request *req, const struct route *route,
                        const char *rel, enum MHD_Result *done)
{
    struct entry_facts f = request_facts(conn, req, route);
    char variant[READY_VARIANT_MAX];
    struct body *b = !f.has_range && ready_variant(&f, variant, sizeof(variant))
        ? ready_find(req->server, route, rel, variant) : NULL;
    if (!b) {
        return false;
    }
    const struct ready *r = (const void *)b->data;
    struct precondition_headers pre = conditionals(conn);
    enum precondition_result pc = precondition_evaluate(&pre, r->etag, r->mtime);
    if (pc != PRECONDITION_FAILED) {
        bool fresh = pc == PRECONDITION_NOT_MODIFIED;
        *done = queue_shared(conn, req, fresh ? 304 : 200, fresh ? r->not_modified : r->full, r->size);
    }
    body_unref(b);
    return pc != PRECONDITION_FAILED;
}

/* A ready entry made from rep, whose bytes it takes; NULL when the
 * descriptors ready entries may hold are all taken (rep untouched) or memory
 * ran out (rep's bytes may be gone: the request fails). */
static struct body *ready_create(struct http_server *s, struct entry_rep *rep, bool *out_of_memory)
{
    bool holds_fd = !rep->body && rep->size > 0;
    *out_of_memory = false;
    if (holds_fd && atomic_fetch_add(&s->ready_fds, 1) >= READY_FDS_MAX) {
        atomic_fetch_sub(&s->ready_fds, 1);
        return NULL;
    }
    struct body *b = body_create(sizeof(struct ready));
    struct ready *r = b ? (struct ready *)(void *)b->data : NULL;
    if (r) {
        *r = (struct ready){.size = rep->size, .mtime = rep->mtime, .fds = holds_fd ? &s->ready_fds : NULL};
        memcpy(r->etag, rep->etag, sizeof(r->etag));
        b->weight = READY_COST + (rep->body ? rep->size : 0);
        r->not_modified = response_not_modified(rep->size);
        r->full = r->not_modified ? response_from_rep(rep, 0, rep->size) : NULL;
    }
    if (!r || !r->full) {
        if (r && r->not_modified) {
            MHD_destroy_response(r->not_modified);
        }
        free(b);
        if (holds_fd) {
            atomic_fetch_sub(&s->ready_fds, 1);
        }
        *out_of_memory = true;
        return NULL;
    }
    add_header(r->full, "X-Content-Type-Options", "nosniff");
    add_header(r->not_modified, "X-Content-Type-Options", "nosniff");
    b->on_free = ready_free;
    return b;
}

/* Keeps ready entry b for (route, rel, variant), made from source. */
static void ready_keep(struct http_server *s, const struct route *route, const char *rel,
                       const char *variant, const struct file_id *source, struct body *b,
                       uint64_t generation)
{
    char key[2 * PATH_MAX];
    if (entry_key(route->dir, rel, key, sizeof(key))) {
        cache_put(s->ctx.cache, key, variant, source, b, generation);
    }
}

/* Makes rep (status 200 or 304) a ready entry, keeps it and answers from it;
 * false (rep untouched) when it cannot hold another descriptor. */
static bool serve_made_ready(struct MHD_Connection *conn, struct request *req, const struct route *route,
                             const char *rel, const struct entry_facts *f, struct entry_rep *rep,
                             unsigned status, enum MHD_Result *done)
{
    struct http_server *s = req->server;
    char variant[READY_VARIANT_MAX];
    if (!ready_variant(f, variant, sizeof(variant))) {
        return false;
    }
    uint64_t generation = cache_generation(s->ctx.cache);
    bool out_of_memory;
    struct body *b = ready_create(s, rep, &out_of_memory);
    if (!b) {
        *done = MHD_NO;
        return out_of_memory;
    }
    add_rep_headers(s, ((struct ready *)(void *)b->data)->full, rep, 200, 0, 0);
    add_rep_headers(s, ((struct ready *)(void *)b->data)->not_modified, rep, 304, 0, 0);
    ready_keep(s, route, rel, variant, &rep->source, b, generation);
    const struct ready *r = (const void *)b->data;
    *done = queue_shared(conn, req, status, status == 304 ? r->not_modified : r->full, r->size);
    body_unref(b);
    return true;
}

/* The article's 404 page as a ready entry, when it is the same for every
 * address: no live-reload client and no prefix to put in (the two depend on
 * where the missing address is). False when that is not so or there is no
 * 404.html; respond_error then builds it. */
static bool serve_not_found_ready(struct MHD_Connection *conn, struct request *req,
                                  const struct entry_facts *f, enum MHD_Result *done)
{
    struct http_server *s = req->server;
    const struct route *root = s->root_route;
    if (!root || s->entries.live_reload || f->prefix) {
        return false;
    }
    struct body *b = ready_find(s, root, "404.html", "n");
    struct entry_rep page = {.fd = -1}; /* released even when entry_not_found finds none */
    if (!b) {
        uint64_t generation = cache_generation(s->ctx.cache);
        bool out_of_memory = false;
        if (!entry_not_found(&s->entries, root, f, &page) ||
            !(b = ready_create(s, &page, &out_of_memory))) {
            entry_rep_release(&page);
            *done = MHD_NO;
            return out_of_memory;
        }
        struct MHD_Response *full = ((struct ready *)(void *)b->data)->full;
        add_header(full, "Content-Type", "text/html; charset=utf-8");
        add_header(full, "Cache-Control", "no-store"); /* see respond_error */
        ready_keep(s, root, "404.html", "n", &page.source, b, generation);
        entry_rep_release(&page);
    }
    const struct ready *r = (const void *)b->data;
    *done = queue_shared(conn, req, 404, r->full, r->size);
    body_unref(b);
    return true;
}

/* Answers with the open regular file fd (st its fstat) at rel beneath
 * route: facts, representation, validators and range, response, headers.
 * Takes fd. */
static enum MHD_Result serve_file(struct MHD_Connection *conn, struct request *req,
                                  const struct route *route, const char *rel, int fd,
                                  const struct stat *st)
{
    struct http_server *s = req->server;
    struct entry_facts facts = request_facts(conn, req, route);
    struct entry_rep rep;
    if (!entry_represent(&s->entries, route, rel, fd, st, &facts, &rep)) {
        return respond_error(conn, req, 503);
    }
    uint64_t first = 0, last = 0;
    unsigned status = choose_status(conn, &rep, &first, &last);
    if (status == 412 || status == 416) {
        uint64_t size = rep.size;
        entry_rep_release(&rep);
        return status == 412 ? respond_error(conn, req, 412) : respond_unsatisfiable(conn, req, size);
    }
    enum MHD_Result done;
    if ((status == 200 || status == 304) && !facts.has_range &&
        serve_made_ready(conn, req, route, rel, &facts, &rep, status, &done)) {
        entry_rep_release(&rep);
        return done;
    }
    uint64_t len = status == 206 ? last - first + 1 : status == 200 ? rep.size : 0;
    struct MHD_Response *resp = status == 304 ? response_not_modified(rep.size)
                                              : response_from_rep(&rep, first, len);
    if (resp) {
        add_rep_headers(s, resp, &rep, status, first, last);
    }
    entry_rep_release(&rep);
    return queue(conn, req, status, resp, len);
}

/* The path prefix a proxy serves us under: X-Forwarded-Prefix when the proxy
 * is trusted, else --base-path, else none (NULL). False when the header is
 * not a clean path, which is a misconfigured proxy or a forgery: 400. */
static bool request_prefix(struct MHD_Connection *conn, struct request *req)
{
    const struct config *c = req->server->ctx.config;
    const char *sent = c->trust_proxy
        ? MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Forwarded-Prefix") : NULL;
    req->prefix = c->base_path[0] ? c->base_path : NULL;
    if (!sent) {
        return true;
    }
    if (!rewrite_prefix_clean(sent, req->prefix_buf, sizeof(req->prefix_buf))) {
        return false;
    }
    req->prefix = req->prefix_buf[0] ? req->prefix_buf : NULL; /* "/": the proxy says none */
    return true;
}

/* Makes req->target the path as served plus the query, when the path as
 * sent climbs differently (runs of "/", dot segments): the client script's
 * relative src and the prefix rewriting count its folders, so neither can be
 * inflated into a truncated tag or a cached variant per spelling. The log
 * keeps the target as sent. path is normalised (never longer than the path
 * sent, and decoding makes no "/"). Returns the query, or NULL. */
static const char *settle_target(struct request *req, const char *path, size_t sent_path_len,
                                 const char *query)
{
    size_t sent_slashes = 0, slashes = 0;
    for (size_t i = 0; i < sent_path_len; i++) {
        sent_slashes += req->target[i] == '/';
    }
    for (const char *p = path; *p; p++) {
        slashes += *p == '/';
    }
    if (sent_slashes == slashes) {
        return query;
    }
    if (!req->sent_target) {
        req->sent_target = strdup(req->target);
    }
    size_t n = strlen(path);
    for (size_t i = 0; i < n; i++) { /* only its folders count: no byte may end it early */
        req->target[i] = path[i] == '?' || path[i] == '#' ? '_' : path[i];
    }
    if (!query) {
        req->target[n] = '\0';
        return NULL;
    }
    memmove(req->target + n, query, strlen(query) + 1);
    return req->target + n;
}

/* The file path names beneath route (a folder's address already made its
 * index.html, folder says so): from a ready response, else opened and
 * served, or the redirect, 404 or error it calls for. moved: where a "//"
 * spelling of an address that exists is sent, or NULL. */
static enum MHD_Result serve_in_route(struct MHD_Connection *conn, struct request *req,
                                      const struct route *route, const char *path, bool folder,
                                      const char *query, const char *moved)
{
    const char *rel = path + route->prefix_len;
    int fd, err;
    struct stat st;
    /* A representation kept whole answers at once (one fstatat checks it is
     * still that file); a spelling with "//" is redirected first. */
    enum MHD_Result ready;
    if (!moved && serve_ready(conn, req, route, rel, &ready)) {
        return ready;
    }
    enum resolve_status found = resolve_open(route->dir_fd, rel, &fd, &st, &err);
    if (found == RESOLVED_NOT_FOUND && routes_check(route, true) == ROUTE_REOPENED) {
        found = resolve_open(route->dir_fd, rel, &fd, &st, &err); /* the folder was swapped */
    }
    if (moved && (found == RESOLVED_FILE || found == RESOLVED_DIRECTORY)) {
        close(fd);
        return respond_moved(conn, req, moved);
    }
    switch (found) {
    case RESOLVED_FILE:
        return serve_file(conn, req, route, rel, fd, &st);
    case RESOLVED_DIRECTORY:
        close(fd);
        if (folder) { /* ".../index.html/" is a folder: nothing to serve */
            return respond_error(conn, req, 404);
        }
        return respond_redirect(conn, req, path, query);
    case RESOLVED_NOT_FOUND:
        return respond_error(conn, req, 404);
    case RESOLVED_FORBIDDEN:
        return respond_error(conn, req, 403);
    case RESOLVED_ERROR:
        break;
    }
    fprintf(stderr, "folio: %s: %s\n", path, strerror(err));
    return respond_error(conn, req, err == EMFILE || err == ENFILE ? 503 : 500);
}

/* A GET or HEAD past its checks: the reserved paths, then the routes. */
static enum MHD_Result serve_target(struct MHD_Connection *conn, struct request *req)
{
    /* The target as sent, not MHD's decoded url: we decode exactly once, and
     * an escaped NUL or "/" must be seen to be refused. */
    const char *target = req->target;
    const char *query = strchr(target, '?');
    size_t path_len = query ? (size_t)(query - target) : strlen(target);
    char path[PATH_MAX];
    if (path_len >= sizeof(path) || !resolve_normalize(target, path_len, path, sizeof(path))) {
        return respond_error(conn, req, 400);
    }
    /* "//" in a path: one address, one cached variant, and a client script
     * whose relative src is right: a browser is sent to the path served. */
    char moved[3 * PATH_MAX + 16];
    size_t moved_len = request_slash_location(target, path_len, path, query ? query + 1 : NULL,
                                              moved, sizeof(moved));
    query = settle_target(req, path, path_len, query);
    if (strncmp(path, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0) {
        return respond_reserved(conn, req, path);
    }
    if (resolve_has_dot_segment(path)) {
        return respond_error(conn, req, 404);
    }
    bool bare_prefix;
    const struct route *route = routes_match(req->server->ctx.routes, path, &bare_prefix);
    if (!route || routes_check(route, false) == ROUTE_GONE) {
        return respond_error(conn, req, 404);
    }
    if (bare_prefix) {
        return respond_redirect(conn, req, path, query ? query + 1 : NULL);
    }

    /* A folder's address ends in "/" and means its index.html: one open
     * beneath the route, not the folder and then the file (three syscalls
     * fewer on the most requested page). No listings: no index, a 404. */
    size_t len = strlen(path);
    bool folder = path[len - 1] == '/';
    if (folder && len + strlen("index.html") >= sizeof(path)) {
        return respond_error(conn, req, 404);
    }
    if (folder) {
        strcpy(path + len, "index.html");
    }
    return serve_in_route(conn, req, route, path, folder, query ? query + 1 : NULL,
                          moved_len ? moved : NULL);
}

/* What the checks of the request's fields found, header by header. */
struct field_scan {
    unsigned status;      /* 0 while every field is acceptable */
    unsigned hosts;
    const char *host;
    size_t host_len;
    bool length_seen, chunked, other_coding;
    uint64_t length;
    const char *cursor, *end; /* the header block not yet accounted for; NULL: unknown */
};

/* True when [from, to) holds only what libmicrohttpd leaves between the
 * parts of a header block: whitespace around values, and at most ends line
 * ends or colons (which it overwrites with NULs: one for ':' or a bare LF,
 * two for CRLF). */
static bool only_separators(const char *from, const char *to, unsigned ends)
{
    unsigned seen = 0;
    for (; from < to; from++) {
        if (*from == '\0' || *from == '\r' || *from == '\n') {
            seen++;
        } else if (*from != ' ' && *from != '\t') {
            return false;
        }
    }
    return seen <= ends;
}

/* Every byte of the header block must belong to a field libmicrohttpd
 * reports. 0.9.75 hands names and values over cut at a NUL, and ends the
 * block early at a line that starts with ':' (what follows becomes a second
 * request: two responses to one); a byte no field covers is either. */
static void account_bytes(struct field_scan *f, const char *from, size_t len, unsigned ends)
{
    if (!f->cursor || from < f->cursor || from + len > f->end) {
        return; /* not inside the block (an empty value may be a constant) */
    }
    if (!only_separators(f->cursor, from, ends)) {
        f->status = 400;
    }
    f->cursor = from + len;
}

/* One request field, for check_request: a token name, Host counted and kept,
 * lengths merged, codings noted; MHD_NO stops at the first refusal. */
static enum MHD_Result scan_field(void *cls, enum MHD_ValueKind kind, const char *name,
                                  size_t name_len, const char *value, size_t value_len)
{
    struct field_scan *f = cls;
    account_bytes(f, name, name_len, 2);   /* the line end before it */
    account_bytes(f, value, value_len, 1); /* the colon */
    if (!request_is_token(name, name_len)) {
        f->status = 400; /* RFC 9112 5.1: field-name is a token */
    } else if (strcasecmp(name, "Host") == 0) {
        f->hosts++;
        f->host = value;
        f->host_len = value_len;
        while (f->host_len > 0 && (value[f->host_len - 1] == ' ' || value[f->host_len - 1] == '\t')) {
            f->host_len--; /* trailing OWS is not part of the value (RFC 9110 5.5) */
        }
    } else if (strcasecmp(name, "Content-Length") == 0 &&
               !request_content_length(value, value_len, &f->length_seen, &f->length)) {
        f->status = 400; /* RFC 9112 6.3: disagreeing lengths are unrecoverable */
    } else if (strcasecmp(name, "Transfer-Encoding") == 0) {
        bool chunked = value_len == 7 && strncasecmp(value, "chunked", 7) == 0;
        f->chunked = f->chunked || chunked;
        f->other_coding = f->other_coding || !chunked;
    }
    return f->status ? MHD_NO : MHD_YES;
}

/* The length of the target as the client sent it. libmicrohttpd 0.9.75 hands
 * it over as a C string, so a NUL inside cuts it short; but it parses the
 * request line in place and ends the target with the NUL it writes over the
 * space before the version (parse_initial_message_line), so the version
 * string starts one byte after the target's true end. Anything else (a
 * libmicrohttpd that copies) falls back to the C string's length. */
static size_t sent_target_length(const struct request *req, const char *version, size_t limit)
{
    size_t copied = strlen(req->target);
    uintptr_t uri = (uintptr_t)req->sent_uri, ver = (uintptr_t)version;
    if (ver > uri && ver - uri - 1 >= copied && ver - uri - 1 <= limit) {
        return ver - uri - 1;
    }
    return copied;
}

/* RFC 9112 and 9110 on the request line and the fields, before anything is
 * looked up: the status to refuse the request with, or 0. An absolute-form
 * target is turned into its origin form here (its authority replaces Host). */
static unsigned check_request(struct MHD_Connection *conn, struct request *req,
                              const char *method, const char *version)
{
    enum request_method m = request_method_classify(method, strlen(method));
    size_t sent_len = sent_target_length(req, version, req->server->ctx.config->header_limit);
    struct request_target t;
    if (m == REQUEST_METHOD_INVALID || sent_len != strlen(req->target) ||
        !request_target_parse(req->target, sent_len, &t)) {
        return 400; /* a NUL, a space or a control in the target, or no target at all */
    }
    if ((t.form == REQUEST_FORM_ASTERISK && m != REQUEST_METHOD_OPTIONS) ||
        (t.form == REQUEST_FORM_AUTHORITY) != (m == REQUEST_METHOD_CONNECT)) {
        return 400; /* "*" is for OPTIONS, host:port for CONNECT, and only them (3.2.3, 3.2.4) */
    }
    struct field_scan f = {0};
    const union MHD_ConnectionInfo *size =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (size && size->header_size > 0) { /* measured from the method (connection.c) */
        f.cursor = version + strlen(version);
        f.end = method + size->header_size;
        f.cursor = f.end > f.cursor ? f.cursor : NULL;
    }
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_field, &f);
    if (f.cursor && !f.status && !only_separators(f.cursor, f.end, 4)) { /* last line, blank line */
        f.status = 400;
    }
    bool http11 = strcmp(version, MHD_HTTP_VERSION_1_1) == 0;
    if (f.status) {
        return f.status;
    }
    if (f.hosts > 1 || (http11 && f.hosts == 0) ||
        (f.hosts == 1 && t.form != REQUEST_FORM_ABSOLUTE && !request_host_valid(f.host, f.host_len))) {
        return 400; /* RFC 9112 3.2: MUST; an absolute form's Host is ignored (3.2.2) */
    }
    if ((f.chunked || f.other_coding) && (f.length_seen || !http11)) {
        return 400; /* RFC 9112 6.1, 6.3: both framings at once is a smuggling attempt */
    }
    if (f.other_coding) {
        return 501; /* RFC 9112 6.1: a transfer coding we do not know */
    }
    if (m == REQUEST_METHOD_UNKNOWN || m == REQUEST_METHOD_CONNECT) {
        return 501; /* RFC 9110 9.1; folio is no proxy, so no tunnel either */
    }
    if ((m == REQUEST_METHOD_GET || m == REQUEST_METHOD_HEAD) && f.length > IGNORED_BODY_MAX) {
        return 413;
    }
    if (t.form == REQUEST_FORM_ABSOLUTE) {
        req->sent_target = strdup(req->target);
        memmove(req->target, t.path_len ? t.path : "/", t.path_len ? t.path_len : 1);
        req->target[t.path_len ? t.path_len : 1] = '\0';
    }
    return 0;
}

/* OPTIONS (any target, "*" too): 204 and what is allowed (RFC 9110 9.3.7). */
static enum MHD_Result respond_options(struct MHD_Connection *conn, struct request *req)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (resp) {
        add_header(resp, "Allow", "GET, HEAD, OPTIONS");
    }
    return queue(conn, req, 204, resp, 0);
}

/* libmicrohttpd's handler: checks the request, then routes it to a file, a
 * redirect, folio's own addresses or an error. */
static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_size, void **req_cls)
{
    struct request *req = *req_cls;
    req->method = method;
    req->protocol = version;
    if (!req->checked) {
        req->checked = true;
        unsigned refused = check_request(conn, req, method, version);
        if (refused) {
            return respond_error(conn, req, refused);
        }
    }
    bool get = strcmp(method, "GET") == 0, head = strcmp(method, "HEAD") == 0;
    if ((get || head) && !req->headers_seen) {
        /* libmicrohttpd 0.9.75 closes the connection after a response queued
         * on this first call (it cannot know the request has no body yet);
         * answering on the second call keeps the connection alive. */
        req->headers_seen = true;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        /* A body on GET or HEAD: read and dropped. A declared length past
         * the limit was refused up front; a chunked body can only be
         * measured, and libmicrohttpd 0.9.75 takes no response while one is
         * coming in, so it is read to its end (within --header-timeout,
         * which still runs) and refused then. */
        req->body_bytes += *upload_size;
        *upload_size = 0;
        return MHD_YES;
    }
    if (req->body_bytes > IGNORED_BODY_MAX) {
        return respond_error(conn, req, 413);
    }
    if (!request_prefix(conn, req)) {
        return respond_error(conn, req, 400);
    }
    if (strcmp(method, "OPTIONS") == 0) {
        return respond_options(conn, req);
    }
    if (!get && !head) {
        return respond_error(conn, req, 405);
    }

    return serve_target(conn, req);
}

static void *on_request_start(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct http_server *s = cls;
    connection_request_started(connection_of(conn));
    size_t len = strlen(uri);
    struct request *req = malloc(sizeof(*req) + len + 1);
    if (!req) {
        return NULL;
    }
    *req = (struct request){.server = s, .sent_uri = uri};
    memcpy(req->target, uri, len + 1);
    /* The version follows the target in the request line (see
     * sent_target_length); copied, as MHD may reuse that memory for a 431. */
    const char *version = uri + len + 1;
    snprintf(req->protocol_buf, sizeof(req->protocol_buf), "%.*s",
             (int)strnlen(version, sizeof(req->protocol_buf) - 1), version);
    req->protocol = req->protocol_buf;
    clock_gettime(CLOCK_REALTIME, &req->start_real);
    clock_gettime(CLOCK_MONOTONIC, &req->start_mono);
    atomic_fetch_add(&s->in_flight, 1);
    return req;
}

/* The client's address for the log: the proxy's word when trusted, else the peer's. */
static void client_address(struct MHD_Connection *conn, bool trust_proxy, char *out, size_t size)
{
    const char *forwarded = trust_proxy
        ? MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Forwarded-For") : NULL;
    if (forwarded) {
        /* The rightmost entry is the one our proxy added; the rest is the client's word. */
        const char *last = strrchr(forwarded, ',');
        last = last ? last + 1 : forwarded;
        while (*last == ' ') {
            last++;
        }
        snprintf(out, size, "%.*s", (int)strcspn(last, " "), last);
        return;
    }
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = info ? info->client_addr : NULL;
    snprintf(out, size, "-");
    if (sa && sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out, (socklen_t)size);
    } else if (sa && sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out, (socklen_t)size);
    }
}

/* Queues r's access-log line, with the client's address and strings filled
 * in; fields are read only while the request's are still there (a closed
 * connection's memory pool is gone: its socket address is all there is). */
static void write_log_line(struct http_server *s, struct MHD_Connection *conn,
                           const struct log_record *r, bool fields)
{
    char remote[INET6_ADDRSTRLEN + 64];
    client_address(conn, fields && s->ctx.config->trust_proxy, remote, sizeof(remote));
    struct log_record rec = *r;
    rec.remote = remote;
    if (fields) {
        rec.referer = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Referer");
        rec.user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");
    }
    log_write(s->ctx.config->log_format, &rec);
}

/* Whether libmicrohttpd 0.9.75 reads another request on conn after req: its
 * keepalive_possible() for what folio sends. A response of ours that did not
 * end the connection, to an HTTP/1.1 request that did not ask for the end;
 * HTTP/1.0 keep-alive counts as not kept (a wrong guess then means a silent
 * close, never a stray 400 after a response). */
static bool kept_alive(struct MHD_Connection *conn, const struct request *req,
                       enum MHD_RequestTerminationCode why)
{
    return why == MHD_REQUEST_TERMINATED_COMPLETED_OK && req->status && !req->last_on_connection &&
           strcmp(req->protocol, MHD_HTTP_VERSION_1_1) == 0 &&
           !request_lists_token(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONNECTION),
                                "close");
}

/* The completion callback: writes the access-log line and frees the request. */
static void on_request_done(void *cls, struct MHD_Connection *conn, void **req_cls,
                            enum MHD_RequestTerminationCode why)
{
    struct http_server *s = cls;
    struct request *req = *req_cls;
    if (!req) {
        return;
    }
    *req_cls = NULL;
    /* Only a status that went out: ours, else the one libmicrohttpd queued
     * itself (431, a malformed header); none at all is "-" (the client left,
     * or the request was dropped). */
    unsigned status = req->status;
    if (!status) {
        const union MHD_ConnectionInfo *queued = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS);
        status = queued ? queued->http_status : 0;
        connection_take_request_refusal(status); /* MHD's own answer: its refusal was this one */
    }
    if (!s->ctx.config->quiet) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        struct log_record rec = {
            .time = req->start_real,
            .method = req->method,
            .target = req->sent_target ? req->sent_target : req->target,
            .protocol = req->protocol,
            .status = status,
            .bytes = why == MHD_REQUEST_TERMINATED_COMPLETED_OK || req->bytes == 0 ? req->bytes : 0,
            .duration_ms = (double)(now.tv_sec - req->start_mono.tv_sec) * 1e3 +
                           (double)(now.tv_nsec - req->start_mono.tv_nsec) / 1e6,
        };
        /* A request refused before our handler ran may have had its read
         * buffer handed to the error response: its fields are not read. */
        write_log_line(s, conn, &rec, req->method != NULL);
    }
    connection_request_done(connection_of(conn), kept_alive(conn, req, why));
    free(req->sent_target);
    free(req);
    expect_headers(s, conn); /* the next request's, on a connection kept alive */
    atomic_fetch_sub(&s->in_flight, 1);
}

/* Answers 400 on c's socket for a request line libmicrohttpd dropped (see
 * connection.h), as respond_error would have; the body's length when it all
 * went out, else 0. */
static size_t answer_dropped_line(const struct connection *c)
{
    char page[ERROR_PAGE_MAX], date[30], response[ERROR_PAGE_MAX + 512];
    size_t len = error_page(400, "", page, sizeof(page));
    precondition_date_format(time(NULL), date);
    int n = snprintf(response, sizeof(response),
                     "HTTP/1.1 400 Bad Request\r\nDate: %s\r\nConnection: close\r\n"
                     "Content-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n\r\n%s",
                     date, len, page);
    bool sent = n > 0 && (size_t)n < sizeof(response) && connection_answer(c->fd, response, (size_t)n);
    return sent ? len : 0;
}

/* A connection opens: it gets its record and header deadline. It closes:
 * a request line libmicrohttpd dropped is answered here; that, a refusal of
 * a line it could not read (414, a bad version), or a deadline that ended it
 * before its request line was whole had no request of ours, so each is
 * logged here. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = fd ? connection_open(s->deadlines, fd->connect_fd,
                                               clock_now_ms() + (int64_t)s->ctx.config->header_timeout * 1000)
                             : NULL;
        return;
    }
    struct connection *c = *socket_context;
    *socket_context = NULL;
    bool dropped = c && deadline_was_expired(c->deadline);
    unsigned status = dropped ? 0 : connection_take_line_refusal(c);
    bool unread = c && connection_dropped_line(c, clock_now_ms(), s->ctx.config->timeout,
                                               connection_peer_state(c->fd), dropped);
    size_t answered = unread ? answer_dropped_line(c) : 0;
    if (answered) {
        status = 400;
    }
    connection_close(s->deadlines, c); /* before MHD closes the socket */
    if (!status && !dropped && !unread) {
        return;
    }
    struct log_record rec = {.status = status, .bytes = answered};
    if (!s->ctx.config->quiet) {
        clock_gettime(CLOCK_REALTIME, &rec.time);
        write_log_line(s, conn, &rec, false);
    }
}

static void on_mhd_message(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* libmicrohttpd's logger: keeps its last word while the daemon starts, for
 * the start-up error; at run time MHD speaks of clients that misbehave,
 * which is not worth a line on stderr each, and its worker threads call
 * this at once: the lock and the flag keep them off the buffer. */
static void on_mhd_message(void *cls, const char *fmt, va_list ap)
{
    /* MHD's refusals are worth an access-log line (see connection_note_refusal). */
    static const char refusal[] = "Error processing request (HTTP response code is %u";
    if (strncmp(fmt, refusal, sizeof(refusal) - 1) == 0) {
        va_list copy;
        va_copy(copy, ap);
        connection_note_refusal(va_arg(copy, unsigned));
        va_end(copy);
    }
    struct http_server *s = cls;
    pthread_mutex_lock(&s->start_lock);
    if (s->starting) {
        vsnprintf(s->start_error, sizeof(s->start_error), fmt, ap);
    }
    pthread_mutex_unlock(&s->start_lock);
}

/* libmicrohttpd's accept policy: every connection, until the server quiesces. */
static enum MHD_Result accept_unless_quiesced(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    const struct http_server *s = cls;
    return atomic_load(&s->quiesced) ? MHD_NO : MHD_YES;
}

/* A numeric host and port as a socket address; false when host is not one. */
static bool parse_address(const char *host, unsigned port, struct sockaddr_storage *addr)
{
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    char service[8];
    snprintf(service, sizeof(service), "%u", port);
    if (getaddrinfo(host, service, &hints, &res) != 0) {
        return false;
    }
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return true;
}

/* See http.h: binds, starts the daemon; NULL with the reason in err. */
struct http_server *http_server_start(const struct http_context *ctx, char *err, size_t err_size)
{
    const struct config *c = ctx->config;
    struct sockaddr_storage addr = {0};
    if (!parse_address(c->host, c->port, &addr)) {
        snprintf(err, err_size, "host '%s' is not an address to listen on", c->host);
        return NULL;
    }
    struct http_server *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    s->ctx = *ctx;
    s->started = time(NULL);
    /* Deadlines are seconds; a look four times a second is precise enough. */
    s->deadlines = deadline_watch_start(c->header_timeout > 1 ? 250 : 100);
    if (!s->deadlines) {
        snprintf(err, err_size, "cannot start the deadline watcher");
        free(s);
        return NULL;
    }
    if (ctx->hub) {
        sse_hub_set_limit(ctx->hub, c->event_stream_limit);
    }
    s->entries = (struct entry_server){ctx->cache, ctx->hub != NULL, (int)c->gzip_level, routes_owns,
                                       (void *)ctx->routes};
    for (size_t i = 0; i < ctx->routes->count; i++) {
        if (strcmp(ctx->routes->items[i].prefix, "/") == 0) {
            s->root_route = &ctx->routes->items[i];
        }
    }
    pthread_mutex_init(&s->start_lock, NULL);
    s->starting = true;
    /* MHD_USE_TURBO: see connection.h (what it changes, and why folio wants it). */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    s->daemon = MHD_start_daemon( /* the port asked for, so MHD's bind error names it */
        flags, (uint16_t)c->port, accept_unless_quiesced, s, handle_request, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)c->threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)c->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)c->per_ip_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)c->timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)c->header_limit,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_start, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_request_done, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_message, s,
        MHD_OPTION_END);
    pthread_mutex_lock(&s->start_lock);
    s->starting = false;
    pthread_mutex_unlock(&s->start_lock);
    if (!s->daemon) {
        snprintf(err, err_size, "cannot listen on %s port %u: %s", c->host, c->port,
                 s->start_error[0] ? s->start_error : "libmicrohttpd refused to start");
        size_t n = strlen(err);
        while (n && (err[n - 1] == '\n' || err[n - 1] == '.')) {
            err[--n] = '\0';
        }
        deadline_watch_stop(s->deadlines);
        pthread_mutex_destroy(&s->start_lock);
        free(s);
        return NULL;
    }
    return s;
}

/* See http.h: the port bound. */
unsigned http_server_port(const struct http_server *s)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/* See http.h: no new connections. Not MHD_quiesce_daemon: with a thread
 * pool 0.9.75 races its workers to take the listening socket out of their
 * epoll sets and panics (abort) when it loses, which a busy worker made
 * happen on SIGTERM; the accept policy below needs no such step. */
void http_server_quiesce(struct http_server *s)
{
    atomic_store(&s->quiesced, true);
}


/* See http.h: stops accepting, ends streams, waits for requests in flight,
 * empties the cache of what it made, frees. */
void http_server_stop(struct http_server *s, unsigned grace_s)
{
    if (!s) {
        return;
    }
    http_server_quiesce(s);
    if (s->ctx.hub) {
        sse_hub_close(s->ctx.hub, 2000);
    }
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (unsigned waited = 0; atomic_load(&s->in_flight) > 0 && waited < grace_s * 50; waited++) {
        nanosleep(&tick, NULL);
    }
    MHD_stop_daemon(s->daemon);
    deadline_watch_stop(s->deadlines);
    /* The last lines, unless nobody reads them; then say what was lost. */
    if (!log_flush(1000) || log_dropped() > 0) {
        fprintf(stderr, "folio: access log: %llu lines dropped, %s\n",
                (unsigned long long)log_dropped(), "stdout was not read fast enough");
    }
    /* Ready entries count their descriptors in s: they go before it does. */
    cache_clear(s->ctx.cache);
    pthread_mutex_destroy(&s->start_lock);
    free(s);
}
