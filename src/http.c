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
#include "config.h"
#include "encoding.h"
#include "gzip.h"
#include "html.h"
#include "livereload.h"
#include "log.h"
#include "mime.h"
#include "precondition.h"
#include "range.h"
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

struct http_server {
    struct MHD_Daemon *daemon;
    struct http_context ctx;
    const struct route *root_route; /* the "/" route, home of 404.html; may be NULL */
    time_t started;
    atomic_uint in_flight;
};

/* Per request, from the URI-log callback (the first thing MHD tells us,
 * with the target still undecoded) to the completion callback. */
struct request {
    struct http_server *server;
    struct timespec start_real, start_mono;
    const char *method, *protocol; /* MHD's strings, valid until completion */
    const char *prefix;            /* the proxy's path prefix, or NULL: see request_prefix */
    unsigned status;
    uint64_t bytes;
    bool headers_seen;
    char prefix_buf[256];
    char target[]; /* as received: percent-encoded, with the query */
};

static void add_header(struct MHD_Response *r, const char *name, const char *value)
{
    MHD_add_response_header(r, name, value);
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
    case 416: return "Range Not Satisfiable";
    case 500: return "Internal Server Error";
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
    return queue(conn, req, status, resp, len);
}

static enum MHD_Result respond_redirect(struct MHD_Connection *conn, struct request *req,
                                        const char *path, const char *query)
{
    /* Relative, so it stays right behind any proxy prefix (PEERS.md theme I). */
    const char *last = strrchr(path, '/');
    char location[PATH_MAX + 16];
    int n = snprintf(location, sizeof(location), "%s/%s%s", last + 1, query ? "?" : "",
                     query ? query : "");
    if (n < 0 || (size_t)n >= sizeof(location)) {
        return respond_error(conn, req, 404);
    }
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
    if (rep.body) {
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

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_size, void **req_cls)
{
    struct request *req = *req_cls;
    req->method = method;
    req->protocol = version;
    bool get = strcmp(method, "GET") == 0, head = strcmp(method, "HEAD") == 0;
    if ((get || head) && !req->headers_seen) {
        /* libmicrohttpd 0.9.75 closes the connection after a response queued
         * on this first call (it cannot know the request has no body yet);
         * answering on the second call keeps the connection alive. */
        req->headers_seen = true;
        return MHD_YES;
    }
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
        !MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)) {
        return respond_error(conn, req, 400); /* RFC 9112 3.2: MUST */
    }
    if (!request_prefix(conn, req)) {
        return respond_error(conn, req, 400);
    }
    if (strcmp(method, "OPTIONS") == 0) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (resp) {
            add_header(resp, "Allow", "GET, HEAD, OPTIONS");
        }
        return queue(conn, req, 204, resp, 0);
    }
    if (!get && !head) {
        return respond_error(conn, req, 405);
    }

    /* The target as sent, not MHD's decoded url: we decode exactly once, and
     * an escaped NUL or "/" must be seen to be refused. */
    const char *target = req->target;
    const char *query = strchr(target, '?');
    size_t path_len = query ? (size_t)(query - target) : strlen(target);
    char path[PATH_MAX];
    if (path_len >= sizeof(path) || !resolve_normalize(target, path_len, path, sizeof(path))) {
        return respond_error(conn, req, 400);
    }
    if (strncmp(path, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0) {
        return respond_reserved(conn, req, path);
    }
    if (resolve_has_dot_segment(path)) {
        return respond_error(conn, req, 404);
    }
    bool bare_prefix;
    const struct route *route = routes_match(req->server->ctx.routes, path, &bare_prefix);
    if (!route) {
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
    switch (resolve_open(route->dir_fd, rel, &fd, &st, &err)) {
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

static void *on_request_start(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct http_server *s = cls;
    size_t len = strlen(uri);
    struct request *req = malloc(sizeof(*req) + len + 1);
    if (!req) {
        return NULL;
    }
    *req = (struct request){.server = s};
    memcpy(req->target, uri, len + 1);
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

static void on_request_done(void *cls, struct MHD_Connection *conn, void **req_cls,
                            enum MHD_RequestTerminationCode why)
{
    struct http_server *s = cls;
    struct request *req = *req_cls;
    if (!req) {
        return;
    }
    *req_cls = NULL;
    /* Requests libmicrohttpd refused before our handler ran (a malformed line,
     * headers over the limit) have no status we know; MHD answered them. */
    if (req->status && !s->ctx.config->quiet) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        char remote[INET6_ADDRSTRLEN + 64];
        client_address(conn, s->ctx.config->trust_proxy, remote, sizeof(remote));
        struct log_record rec = {
            .remote = remote,
            .time = req->start_real,
            .method = req->method,
            .target = req->target,
            .protocol = req->protocol,
            .status = req->status,
            .bytes = why == MHD_REQUEST_TERMINATED_COMPLETED_OK || req->bytes == 0 ? req->bytes : 0,
            .referer = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Referer"),
            .user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent"),
            .duration_ms = (double)(now.tv_sec - req->start_mono.tv_sec) * 1e3 +
                           (double)(now.tv_nsec - req->start_mono.tv_nsec) / 1e6,
        };
        log_write(s->ctx.config->log_format, &rec);
    }
    free(req);
    atomic_fetch_sub(&s->in_flight, 1);
}

static char mhd_last_error[256];

static void on_mhd_message(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void on_mhd_message(void *cls, const char *fmt, va_list ap)
{
    /* Kept for the start-up error; at run time MHD speaks of clients that
     * misbehave, which is not worth a line on stderr each. */
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
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_message, s,
        MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, err_size, "cannot listen on %s port %u: %s", c->host, c->port,
                 mhd_last_error[0] ? mhd_last_error : "libmicrohttpd refused to start");
        size_t n = strlen(err);
        while (n && (err[n - 1] == '\n' || err[n - 1] == '.')) {
            err[--n] = '\0';
        }
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
    if (listener != MHD_INVALID_SOCKET) {
        close(listener);
    }
    free(s);
}
