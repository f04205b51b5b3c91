#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "body.h"
#include "cache.h"
#include "deadline.h"
#include "config.h"
#include "encoding.h"
#include "gzip.h"
#include "html.h"
#include "livereload.h"
#include "log.h"
#include "mime.h"
#include "precondition.h"
#include "range.h"
#include "request.h"
#include "resolve.h"
#include "rewrite.h"
#include "routes.h"
#include "sse.h"

#ifndef FOLIO_VERSION
#define FOLIO_VERSION "unknown"
#endif

/* Files up to this size are kept in memory and sent with their headers in one
 * write: libmicrohttpd 0.9.75 sends headers and a sendfile body apart (two
 * syscalls, two packets), which costs small files a quarter of their speed
 * (bench/README.md). */
#define SMALL_FILE_BYTES (16u << 10)
/* Bodies below this are not worth a gzip header and a Vary-split cache. */
#define GZIP_MIN_BYTES 512
/* Files above this are sent as they are rather than read into memory. */
#define GZIP_MAX_BYTES (32u << 20)
#define DOCUMENT_MAX_BYTES (16u << 20)
#define RESERVED_PREFIX "/__folio/"
/* A body on GET or HEAD means nothing (RFC 9110 9.3.1) but must be read to
 * find the next request: up to this much is read and dropped, more is a 413. */
#define IGNORED_BODY_MAX (64u << 10)

struct http_server {
    struct MHD_Daemon *daemon;
    struct http_context ctx;
    const struct route *root_route; /* the "/" route, home of 404.html; may be NULL */
    time_t started;
    atomic_uint in_flight;
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
    char protocol_buf[16];         /* the version as sent, for a request MHD refuses itself */
    char prefix_buf[256];
    char target[]; /* percent-encoded, with the query: as received, but in origin form
                    * (check_request) and with its folders as served (settle_target) */
};

static void add_header(struct MHD_Response *r, const char *name, const char *value)
{
    MHD_add_response_header(r, name, value);
}

/* The deadline entry of conn (its socket context), or NULL. */
static struct deadline_entry *connection_deadline(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* From now on the connection waits for a request's line and headers: all of
 * them within --header-timeout, however slowly they trickle in (nginx's
 * client_header_timeout), whatever the idle timeout says. */
static void expect_headers(const struct http_server *s, struct MHD_Connection *conn)
{
    deadline_set(connection_deadline(conn),
                 deadline_now_ms() + (int64_t)s->ctx.config->header_timeout * 1000);
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
    deadline_set(connection_deadline(conn), stream || !c->send_rate ? 0 : deadline_now_ms() + allowed);
}

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
    enum MHD_Result ok = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

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

static struct MHD_Response *response_from_text(const char *text)
{
    struct body *b = body_from(text, strlen(text));
    return b ? response_from_body(b, 0, b->len) : NULL;
}

/* Reads a whole (small) file into a new body; NULL on error. */
static struct body *read_whole(int fd, uint64_t size)
{
    struct body *b = body_create((size_t)size);
    for (size_t off = 0; b && off < size;) {
        ssize_t n = pread(fd, b->data + off, (size_t)size - off, (off_t)off);
        if (n <= 0) { /* shrank under us: the watcher will send the new one */
            if (n < 0 && errno == EINTR) {
                continue;
            }
            b->len = off;
            break;
        }
        off += (size_t)n;
    }
    return b;
}

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

/* A short, stable tag for a variant's name, for its ETag. */
static uint32_t fnv1a32(const char *text)
{
    uint32_t h = 2166136261u;
    for (const char *p = text; *p; p++) {
        h = (h ^ (unsigned char)*p) * 16777619u;
    }
    return h;
}

/* rewrite.c asks whether an absolute path is the article's: one of our routes. */
static bool is_ours(void *routes, const char *path, size_t len)
{
    char copy[PATH_MAX];
    if (len >= sizeof(copy)) {
        return false;
    }
    memcpy(copy, path, len);
    copy[len] = '\0';
    copy[strcspn(copy, "?#")] = '\0';
    bool bare;
    return routes_match(routes, copy, &bare) != NULL || strncmp(copy, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0;
}

struct representation {
    const char *type;
    bool compressible, gzip;
    struct body *body; /* NULL: the file itself, by fd */
    int fd;            /* owned; closed once a response owns it or on failure */
    uint64_t size;
    char etag[96];
};

/* Loads (cache first) the body for variant, built from the open file by
 * build(), which may return NULL when the variant is not worth having. */
static struct body *derive(struct http_server *s, const char *key, const char *variant,
                           const struct file_id *id, struct representation *rep,
                           struct body *(*build)(struct http_server *, struct representation *, void *),
                           void *arg)
{
    uint64_t generation = cache_generation(s->ctx.cache);
    struct body *b = cache_get(s->ctx.cache, key, variant, id);
    if (!b && (b = build(s, rep, arg)) != NULL) {
        cache_put(s->ctx.cache, key, variant, id, b, generation);
    }
    return b;
}

/* What a page or stylesheet needs before it is sent: the proxy prefix put
 * into its references (rewrite.c) and, for pages, the live-reload client. */
struct transform {
    const char *snippet; /* NULL: nothing injected */
    bool css;
    struct rewrite_context rewrite; /* .prefix NULL: nothing rewritten */
};

static struct body *build_transformed(struct http_server *s, struct representation *rep, void *arg)
{
    const struct transform *t = arg;
    if (rep->size > DOCUMENT_MAX_BYTES) {
        return NULL;
    }
    struct body *file = read_whole(rep->fd, rep->size);
    if (!file) {
        return NULL;
    }
    char *text = (char *)file->data;
    size_t len = file->len;
    char *rewritten = NULL, *injected = NULL;
    if (t->rewrite.prefix) {
        rewritten = t->css ? rewrite_css(text, len, &t->rewrite, &len)
                           : rewrite_html(text, len, &t->rewrite, &len);
        text = rewritten;
    }
    if (text && t->snippet) {
        injected = html_inject(text, len, t->snippet, &len);
        text = injected;
    }
    struct body *b = text ? body_from(text, len) : NULL;
    free(rewritten);
    free(injected);
    body_unref(file);
    return b;
}

static struct body *build_identity(struct http_server *s, struct representation *rep, void *unused)
{
    return read_whole(rep->fd, rep->size);
}

/* An empty body is the cached answer "identity is as good": without it, a
 * file that does not compress would be compressed again on every request. */
static struct body *build_gzip(struct http_server *s, struct representation *rep, void *unused)
{
    if (rep->size > GZIP_MAX_BYTES) {
        return NULL;
    }
    struct body *plain = rep->body ? body_ref(rep->body) : read_whole(rep->fd, rep->size);
    if (!plain) {
        return NULL;
    }
    struct body *gz = gzip_compress(plain->data, plain->len, (int)s->ctx.config->gzip_level);
    body_unref(plain);
    return gz ? gz : body_create(0);
}

/* Swaps rep's body for its gzip variant when that is worth sending. */
static bool take_gzip(struct representation *rep, struct body *gz)
{
    if (!gz || gz->len == 0) {
        body_unref(gz);
        return false;
    }
    body_unref(rep->body);
    rep->body = gz;
    rep->size = gz->len;
    rep->gzip = true;
    return true;
}

static struct body *build_mime(struct http_server *s, struct representation *rep, void *unused)
{
    char *type = mime_sniff(rep->fd);
    struct body *b = type ? body_from(type, strlen(type) + 1) : NULL;
    free(type);
    return b;
}

/* A fresh "name.gz" beside the file, compressed ahead of time, is used as is:
 * only when at least as new as the original (PEERS.md theme F). */
static bool use_sidecar(int dir_fd, const char *rel, const struct stat *orig, struct representation *rep)
{
    char name[PATH_MAX];
    if ((size_t)snprintf(name, sizeof(name), "%s.gz", rel) >= sizeof(name)) {
        return false;
    }
    int fd, err;
    struct stat st;
    if (resolve_open(dir_fd, name, &fd, &st, &err) != RESOLVE_FILE) {
        return false;
    }
    if (st.st_mtim.tv_sec < orig->st_mtim.tv_sec ||
        (st.st_mtim.tv_sec == orig->st_mtim.tv_sec && st.st_mtim.tv_nsec < orig->st_mtim.tv_nsec)) {
        close(fd);
        return false;
    }
    close(rep->fd);
    rep->fd = fd;
    rep->size = (uint64_t)st.st_size;
    rep->gzip = true;
    snprintf(rep->etag, sizeof(rep->etag), "\"%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-gzs\"",
             (uint64_t)st.st_ino, (uint64_t)st.st_size,
             (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec);
    return true;
}

/* www/404.html, prepared like any page (prefix, live-reload client) for the
 * address that was not found, which is what its references resolve against. */
static struct body *custom_404(struct MHD_Connection *conn, struct request *req)
{
    struct http_server *s = req->server;
    int fd, err;
    struct stat st;
    if (!s->root_route ||
        resolve_open(s->root_route->dir_fd, "404.html", &fd, &st, &err) != RESOLVE_FILE) {
        return NULL;
    }
    char snippet[3 * PATH_MAX / 2 + 64];
    size_t depth = livereload_script_tag(req->target, snippet, sizeof(snippet));
    struct transform t = {
        .snippet = s->ctx.hub && loads_as_document(conn, s->root_route) ? snippet : NULL,
        .rewrite = {req->prefix, depth, is_ours, (void *)s->ctx.routes},
    };
    struct representation rep = {.fd = fd, .size = (uint64_t)st.st_size};
    struct body *b = build_transformed(s, &rep, &t);
    close(fd);
    return b;
}

/* A small HTML error page; for 404, www/404.html when the article has one. */
static enum MHD_Result respond_error(struct MHD_Connection *conn, struct request *req, unsigned status)
{
    struct MHD_Response *resp = NULL;
    uint64_t len = 0;
    struct body *page = status == 404 ? custom_404(conn, req) : NULL;
    if (page) {
        len = page->len;
        resp = response_from_body(page, 0, len);
    }
    if (!resp) {
        char text[512];
        snprintf(text, sizeof(text),
                 "<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>%u %s</title>\n"
                 "<h1>%u %s</h1>\n<p>folio could not serve this address.</p>\n</html>\n",
                 status, status_text(status), status, status_text(status));
        len = strlen(text);
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

static enum MHD_Result respond_health(struct MHD_Connection *conn, struct request *req)
{
    const struct http_server *s = req->server;
    char json[512];
    snprintf(json, sizeof(json),
             "{\"status\":\"ok\",\"version\":\"%s\",\"mode\":\"%s\",\"uptime_s\":%lld,"
             "\"files_watched\":%zu,\"cache_bytes\":%zu,\"event_streams\":%zu}\n",
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

static enum MHD_Result serve_file(struct MHD_Connection *conn, struct request *req,
                                  const struct route *route, int dir_fd, const char *rel,
                                  const char *path, int fd, const struct stat *st)
{
    struct http_server *s = req->server;
    struct representation rep = {.fd = fd, .size = (uint64_t)st->st_size};
    struct file_id id;
    file_id_from_stat(&id, st);
    char key[PATH_MAX * 2];
    snprintf(key, sizeof(key), "%s/%s", route->dir, path + route->prefix_len);

    const struct mime_type *known = mime_from_extension(path);
    struct body *sniffed = NULL;
    if (known) {
        rep.type = known->name;
        rep.compressible = known->compressible;
    } else {
        sniffed = derive(s, key, "mime", &id, &rep, build_mime, NULL);
        rep.type = sniffed ? (const char *)sniffed->data : "application/octet-stream";
        rep.compressible = mime_is_compressible(rep.type);
    }
    int written = snprintf(rep.etag, sizeof(rep.etag), "\"%" PRIx64 "-%" PRIx64 "-%" PRIx64,
                           id.ino, id.size, (uint64_t)id.mtime_ns);

    const char *range_header = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Range");
    bool accepts_gzip = rep.compressible && !range_header &&
        encoding_accepts_gzip(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding"));

    /* The live-reload client goes into pages, never into fragments; the
     * proxy prefix into the references of pages, fragments and stylesheets. */
    bool html = strncmp(rep.type, "text/html", 9) == 0;
    bool css = strncmp(rep.type, "text/css", 8) == 0;
    bool page = html && loads_as_document(conn, route);
    bool inject = s->ctx.hub && page;
    bool rewrite = req->prefix && (html || css);
    if (inject || rewrite) {
        char snippet[3 * PATH_MAX / 2 + 64], variant[PATH_MAX]; /* a "../" per folder */
        size_t depth = livereload_script_tag(req->target, snippet, sizeof(snippet));
        struct transform t = {
            .snippet = inject ? snippet : NULL,
            .css = css,
            .rewrite = {
                .prefix = rewrite ? req->prefix : NULL,
                /* A fragment's references resolve against the page that
                 * fetched it as fragments/<name>.html, one folder up. */
                .depth = depth - (route->is_fragments && !page && depth > 0),
                .is_ours = is_ours,
                .arg = (void *)s->ctx.routes,
            },
        };
        snprintf(variant, sizeof(variant), "t:%d:%zu:%zu:%s", inject, depth, t.rewrite.depth,
                 t.rewrite.prefix ? t.rewrite.prefix : "");
        struct body *doc = derive(s, key, variant, &id, &rep, build_transformed, &t);
        if (doc) {
            rep.body = doc;
            rep.size = doc->len;
            written += snprintf(rep.etag + written, sizeof(rep.etag) - (size_t)written, "-t%08x",
                                fnv1a32(variant));
            if (accepts_gzip && rep.size >= GZIP_MIN_BYTES) {
                strcat(variant, ":gzip");
                if (take_gzip(&rep, derive(s, key, variant, &id, &rep, build_gzip, NULL))) {
                    written += snprintf(rep.etag + written, sizeof(rep.etag) - (size_t)written, "gz");
                }
            }
        }
    } else if (accepts_gzip && rep.size >= GZIP_MIN_BYTES) {
        struct body *gz = cache_get(s->ctx.cache, key, "gzip", &id);
        if (gz || !use_sidecar(dir_fd, rel, st, &rep)) {
            gz = gz ? gz : derive(s, key, "gzip", &id, &rep, build_gzip, NULL);
            if (take_gzip(&rep, gz)) {
                written += snprintf(rep.etag + written, sizeof(rep.etag) - (size_t)written, "-gz");
            }
        }
    }
    if (rep.etag[strlen(rep.etag) - 1] != '"') {
        strcat(rep.etag, "\"");
    }
    if (!rep.body && !rep.gzip && rep.size > 0 && rep.size <= SMALL_FILE_BYTES) {
        rep.body = derive(s, key, "identity", &id, &rep, build_identity, NULL);
        rep.size = rep.body ? rep.body->len : rep.size; /* a file cut short while read */
    }

    char last_modified[30];
    http_date_format(st->st_mtim.tv_sec, last_modified);
    struct precondition_headers pre = {
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Match"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Modified-Since"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Unmodified-Since"),
    };
    enum precondition_result pc = precondition_evaluate(&pre, rep.etag, st->st_mtim.tv_sec);
    unsigned status = 200;
    uint64_t first = 0, last = rep.size ? rep.size - 1 : 0;
    if (pc == PRECONDITION_FAILED) {
        status = 412;
    } else if (pc == PRECONDITION_NOT_MODIFIED) {
        status = 304;
    } else if (range_header &&
               precondition_if_range(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Range"),
                                     rep.etag, st->st_mtim.tv_sec)) {
        switch (range_parse(range_header, rep.size, &first, &last)) {
        case RANGE_SATISFIABLE: status = 206; break;
        case RANGE_UNSATISFIABLE: status = 416; break;
        case RANGE_NONE: break;
        }
    }

    struct MHD_Response *resp = NULL;
    uint64_t len = status == 206 ? last - first + 1 : status == 200 ? rep.size : 0;
    if (status == 412 || status == 416) {
        close(rep.fd);
        body_unref(rep.body);
        body_unref(sniffed);
        if (status == 412) {
            return respond_error(conn, req, 412);
        }
        char range[64];
        snprintf(range, sizeof(range), "bytes */%" PRIu64, rep.size);
        resp = response_from_text("");
        if (resp) {
            add_header(resp, "Content-Range", range);
            add_header(resp, "Cache-Control", "no-store");
        }
        return queue(conn, req, 416, resp, 0);
    }
    if (status == 304) {
        close(rep.fd);
        body_unref(rep.body);
        resp = response_not_modified(rep.size);
    } else if (rep.body) {
        close(rep.fd);
        resp = response_from_body(rep.body, status == 206 ? first : 0, len);
    } else if (len == 0) {
        close(rep.fd);
        resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    } else {
        /* sendfile: the response owns the fd from here, and only if it exists. */
        resp = MHD_create_response_from_fd_at_offset64(len, rep.fd, status == 206 ? first : 0);
        if (!resp) {
            close(rep.fd);
        }
    }
    if (!resp) {
        body_unref(sniffed);
        return MHD_NO;
    }
    if (status != 304) {
        add_header(resp, "Content-Type", rep.type);
    }
    body_unref(sniffed);
    add_header(resp, "ETag", rep.etag);
    add_header(resp, "Last-Modified", last_modified);
    if (s->ctx.config->production && strncmp(rep.type, "text/html", 9) != 0) {
        char cc[48];
        snprintf(cc, sizeof(cc), "public, max-age=%u", s->ctx.config->max_age);
        add_header(resp, "Cache-Control", cc);
    } else {
        add_header(resp, "Cache-Control", "no-cache");
    }
    add_header(resp, "Accept-Ranges", "bytes");
    if (rep.compressible) {
        add_header(resp, "Vary", "Accept-Encoding");
    }
    if (rep.gzip && status != 304) {
        add_header(resp, "Content-Encoding", "gzip");
    }
    if (status == 206) {
        char range[96];
        snprintf(range, sizeof(range), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, rep.size);
        add_header(resp, "Content-Range", range);
    }
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
    size_t len = strlen(sent);
    while (len > 0 && sent[len - 1] == '/') { /* "/article/" and "/article" are one prefix */
        len--;
    }
    if (len == 0) {
        req->prefix = NULL;
        return true;
    }
    if (len >= sizeof(req->prefix_buf)) {
        return false;
    }
    memcpy(req->prefix_buf, sent, len);
    req->prefix_buf[len] = '\0';
    req->prefix = req->prefix_buf;
    return rewrite_prefix_valid(req->prefix);
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
    const char *rel = path + route->prefix_len;
    int fd, err;
    struct stat st;
    enum resolve_status found = resolve_open(route->dir_fd, rel, &fd, &st, &err);
    if (found == RESOLVE_NOT_FOUND && routes_check(route, true) == ROUTE_REOPENED) {
        found = resolve_open(route->dir_fd, rel, &fd, &st, &err); /* the folder was swapped */
    }
    if (moved_len && (found == RESOLVE_FILE || found == RESOLVE_DIRECTORY)) {
        close(fd);
        return respond_moved(conn, req, moved);
    }
    switch (found) {
    case RESOLVE_FILE:
        return serve_file(conn, req, route, route->dir_fd, rel, path, fd, &st);
    case RESOLVE_DIRECTORY:
        close(fd);
        if (folder) { /* ".../index.html/" is a folder: nothing to serve */
            return respond_error(conn, req, 404);
        }
        return respond_redirect(conn, req, path, query ? query + 1 : NULL);
    case RESOLVE_NOT_FOUND:
        return respond_error(conn, req, 404);
    case RESOLVE_FORBIDDEN:
        return respond_error(conn, req, 403);
    case RESOLVE_ERROR:
        break;
    }
    fprintf(stderr, "folio: %s: %s\n", path, strerror(err));
    return respond_error(conn, req, err == EMFILE || err == ENFILE ? 503 : 500);
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
        /* A body on GET or HEAD: read and dropped (its declared length was
         * checked; a chunked one past the limit ends the connection). */
        req->body_bytes += *upload_size;
        *upload_size = 0;
        return req->body_bytes > IGNORED_BODY_MAX ? MHD_NO : MHD_YES;
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

/* The status libmicrohttpd sent on its own (414, 431, 400, 505, 413) on this
 * thread, from its log message: it tells the application no other way about
 * a request it refused before, or without, our handler. Consumed by the
 * completion of that request, or by the close of its connection when the
 * request never reached the URI callback (a request line it could not read). */
static _Thread_local unsigned refused_status;

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
        status = queued ? queued->http_status : refused_status;
    }
    refused_status = 0;
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
    free(req->sent_target);
    free(req);
    expect_headers(s, conn); /* the next request's, on a connection kept alive */
    atomic_fetch_sub(&s->in_flight, 1);
}

/* A connection opens: it gets its header deadline. It closes: a refusal of
 * a request line libmicrohttpd could not read (414, a bad version), or a
 * deadline that ended it before its request line was whole, had no request
 * of ours, so either is logged here. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = fd ? deadline_add(s->deadlines, fd->connect_fd,
                                            deadline_now_ms() + (int64_t)s->ctx.config->header_timeout * 1000)
                             : NULL;
        return;
    }
    /* A deadline that passed before a request line was whole has no request
     * of ours to log it (one that passed later was logged on completion). */
    bool dropped = deadline_was_expired(*socket_context);
    deadline_remove(s->deadlines, *socket_context); /* before MHD closes the socket */
    *socket_context = NULL;
    if (!refused_status && !dropped) {
        return;
    }
    struct log_record rec = {.status = dropped ? 0 : refused_status};
    if (!dropped) {
        refused_status = 0;
    }
    if (!s->ctx.config->quiet) {
        clock_gettime(CLOCK_REALTIME, &rec.time);
        write_log_line(s, conn, &rec, false);
    }
}

static char mhd_last_error[256];

static void on_mhd_message(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void on_mhd_message(void *cls, const char *fmt, va_list ap)
{
    /* Kept for the start-up error; at run time MHD speaks of clients that
     * misbehave, which is not worth a line on stderr each. Its refusals are
     * worth an access-log line, though (see refused_status). */
    static const char refusal[] = "Error processing request (HTTP response code is %u";
    if (strncmp(fmt, refusal, sizeof(refusal) - 1) == 0) {
        va_list copy;
        va_copy(copy, ap);
        refused_status = va_arg(copy, unsigned);
        va_end(copy);
    }
    vsnprintf(mhd_last_error, sizeof(mhd_last_error), fmt, ap);
}

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
    for (size_t i = 0; i < ctx->routes->count; i++) {
        if (strcmp(ctx->routes->items[i].prefix, "/") == 0) {
            s->root_route = &ctx->routes->items[i];
        }
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle_request, s,
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
    if (!s->daemon) {
        snprintf(err, err_size, "cannot listen on %s port %u: %s", c->host, c->port,
                 mhd_last_error[0] ? mhd_last_error : "libmicrohttpd refused to start");
        size_t n = strlen(err);
        while (n && (err[n - 1] == '\n' || err[n - 1] == '.')) {
            err[--n] = '\0';
        }
        deadline_watch_stop(s->deadlines);
        free(s);
        return NULL;
    }
    return s;
}

unsigned http_server_port(const struct http_server *s)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

void http_server_stop(struct http_server *s, unsigned grace_s)
{
    if (!s) {
        return;
    }
    /* New connections wait in the kernel's backlog and are refused when we
     * close; MHD says the socket may only be closed after the daemon stops. */
    MHD_socket listener = MHD_quiesce_daemon(s->daemon);
    if (s->ctx.hub) {
        sse_hub_close(s->ctx.hub, 2000);
    }
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (unsigned waited = 0; atomic_load(&s->in_flight) > 0 && waited < grace_s * 50; waited++) {
        nanosleep(&tick, NULL);
    }
    MHD_stop_daemon(s->daemon);
    deadline_watch_stop(s->deadlines);
    if (listener != MHD_INVALID_SOCKET) {
        close(listener);
    }
    /* The last lines, unless nobody reads them; then say what was lost. */
    if (!log_flush(1000) || log_dropped() > 0) {
        fprintf(stderr, "folio: access log: %llu lines dropped, %s\n",
                (unsigned long long)log_dropped(), "stdout was not read fast enough");
    }
    free(s);
}
