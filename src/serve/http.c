#include "http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "acceptor.h"
#include "address_limit.h"
#include "admission.h"
#include "best.h"
#include "base/config.h"
#include "base/inflight.h"
#include "base/settings.h"
#include "cache.h"
#include "connection.h"
#include "connection_daemon.h"
#include "connection_deadline.h"
#include "deadline.h"
#include "exchange.h"
#include "library.h"
#include "site/live_hook.h"
#include "log.h"
#include "progress.h"
#include "respond.h"
#include "site/routes.h"
#include "target.h"

struct http_server {
    struct MHD_Daemon *daemon;
    struct acceptor *acceptor;       /* accepts for the daemon's workers (acceptor.h) */
    struct http_context ctx;
    struct exchange_server shared;   /* what every request reads (exchange.h) */
    struct connection_daemon conns;  /* the connection and logger callbacks' (connection_daemon.h) */
    struct ready_sweeper *sweeper;   /* closes held descriptors unused or of files gone */
    struct inflight requests;        /* under way, from their first callback to their last */
    atomic_bool quiesced; /* http_server_quiesce ran: new connections are closed at once */
};

/* The handler's first call for ex: its head checked (exchange_admit), then
 * its connection's place under --per-ip-limit (address_limit.h), which a
 * request refused for its head does not need. True when refused, with
 * *queued the refusal's result. */
static bool refused_first(struct http_server *s, struct MHD_Connection *conn, struct exchange *ex,
                          const char *version, enum MHD_Result *queued)
{
    ex->checked = true;
    /* kept: the library may hand its read buffer to an answer of its own */
    snprintf(ex->protocol_buf, sizeof(ex->protocol_buf), "%s", version);
    struct connection *c = connection_of(conn);
    connection_head_checked(c);
    unsigned refused = exchange_admit(conn, ex, ex->method, version);
    bool over = !refused && c && !address_limit_admit(s->conns.addresses, &c->address);
    if (!refused && !over) {
        return false;
    }
    connection_request_whole(c);
    *queued = over ? respond_too_many(conn, ex) : respond_error(conn, ex, refused);
    return true;
}

/* libmicrohttpd's handler: checks the request, then routes it to a file, a
 * redirect, folio's own addresses or an error. A request whose record could
 * not be made (out of memory in on_request_start) is closed. */
static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_size, void **req_cls)
{
    (void)upload_data; (void)url; /* libmicrohttpd's signature */
    struct exchange *ex = *req_cls;
    if (!ex) {
        return MHD_NO;
    }
    ex->method = method;
    enum MHD_Result refusal;
    if (!ex->checked && refused_first(cls, conn, ex, version, &refusal)) {
        return refusal;
    }
    bool get = strcmp(method, "GET") == 0, head = strcmp(method, "HEAD") == 0;
    if ((get || head) && !ex->headers_seen) {
        /* libmicrohttpd closes the connection after a response queued on
         * this first call (library.h: it cannot know the request has no
         * body yet); answering on the second call keeps it alive. */
        ex->headers_seen = true;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        /* A body on GET or HEAD: read and dropped. A declared length past
         * the limit was refused up front; a chunked body can only be
         * measured, and libmicrohttpd takes no response while one is coming
         * in (MHD_queue_response: its state is neither), so it is read to
         * its end (within --header-timeout, which still runs) and refused
         * then. */
        ex->body_bytes += *upload_size;
        *upload_size = 0;
        return MHD_YES;
    }
    /* The head and any body are in: answering now, no longer evictable
     * (a body still coming was: connection_request_whole). */
    connection_request_whole(connection_of(conn));
    if (ex->body_bytes > ADMISSION_BODY_MAX) {
        return respond_error(conn, ex, 413);
    }
    if (!exchange_prefix(conn, ex)) { /* the proxy's fault: say which header, for its operator */
        return respond_error_why(conn, ex, 400, "The proxy's X-Forwarded-Prefix is not a URL path such as "
                                                "/article (folio believes it: --trust-proxy).");
    }
    /* A preview answers its own names only (DNS rebinding); production, the
     * name its proxy or operator chose. */
    if (!ex->config->production && !exchange_host_allowed(conn, ex)) {
        return respond_host_refused(conn, ex);
    }
    if (strcmp(method, "OPTIONS") == 0) {
        return respond_options(conn, ex);
    }
    if (!get && !head) {
        return respond_error(conn, ex, 405);
    }
    return target_serve(conn, ex);
}

/* The URI-log callback: the request's record, with the target as sent;
 * NULL when out of memory (handle_request then closes the connection). */
static void *on_request_start(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct http_server *s = cls;
    size_t len = strlen(uri);
    struct exchange *ex = malloc(sizeof(*ex) + len + 1);
    connection_request_started(connection_of(conn), ex);
    if (!ex) {
        return NULL;
    }
    *ex = (struct exchange){.server = &s->shared, .config = settings_acquire(s->ctx.settings), .sent_uri = uri};
    memcpy(ex->target, uri, len + 1);
    ex->protocol = ex->protocol_buf; /* "" until the handler says it (a head the library refuses: never) */
    clock_gettime(CLOCK_REALTIME, &ex->start_real);
    clock_gettime(CLOCK_MONOTONIC, &ex->start_mono);
    inflight_enter(&s->requests);
    return ex;
}

/* The length of the header block ex's response went out with on conn
 * (progress.h): libmicrohttpd said Connection: close where it would not
 * have kept the connection had the response completed. */
static uint64_t head_sent(struct MHD_Connection *conn, const struct exchange *ex)
{
    bool closing = !library_kept_alive(conn, ex->status, ex->last_on_connection, ex->protocol,
                                       MHD_REQUEST_TERMINATED_COMPLETED_OK);
    return ex->head.bytes + (closing ? ex->head.close_adds : 0);
}

/* The body bytes of ex's response the kernel took on c's socket (progress.h),
 * at most the body's length (unbounded under the test hook, so a test sees
 * a header block derived too short); 0 when that cannot be told. */
static uint64_t bytes_handed(struct MHD_Connection *conn, const struct connection *c, const struct exchange *ex)
{
    uint64_t total, head = ex->measurable ? head_sent(conn, ex) : 0;
    if (!c || !ex->measurable || !progress_kernel_bytes(c->fd, &total) || total < ex->sent_mark + head) {
        return 0;
    }
    uint64_t body = total - ex->sent_mark - head;
    return body < ex->bytes || progress_measure_all() || ex->stream ? body : ex->bytes;
}

/* The access-log line of a completed request (see log_request_line). */
static void log_exchange(struct MHD_Connection *conn, const struct exchange *ex, unsigned status,
                         uint64_t bytes, bool incomplete)
{
    if (ex->config->quiet || (ex->unlogged && !incomplete)) {
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct log_record rec = {
        .time = ex->start_real,
        .method = ex->method,
        .target = ex->sent_target ? ex->sent_target : ex->target,
        .protocol = ex->protocol,
        .status = status,
        .bytes = bytes,
        .incomplete = incomplete,
        .duration_ms = (double)(now.tv_sec - ex->start_mono.tv_sec) * 1e3 +
                       (double)(now.tv_nsec - ex->start_mono.tv_nsec) / 1e6,
    };
    /* A request refused before our handler ran may have had its read
     * buffer handed to the error response: its fields are not read. */
    log_request_line(conn, ex->config, &rec, ex->method != NULL);
}

/* The completion callback: writes the access-log line and frees the request. */
static void on_request_done(void *cls, struct MHD_Connection *conn, void **req_cls,
                            enum MHD_RequestTerminationCode why)
{
    struct http_server *s = cls;
    struct exchange *ex = *req_cls;
    if (!ex) {
        return;
    }
    *req_cls = NULL;
    /* Only a status that went out: ours, else the one libmicrohttpd queued
     * itself (431, a malformed header); none at all is "-" (the client left,
     * or the request was dropped). */
    unsigned status = ex->status;
    if (!status) {
        const union MHD_ConnectionInfo *queued = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS);
        status = queued ? queued->http_status : 0;
        library_take_request_refusal(status); /* MHD's own answer: its refusal was this one */
    }
    struct connection *c = connection_of(conn);
    /* A cut response's bytes are what the kernel took (nginx's
     * $body_bytes_sent); one that completed sent them all, with no syscall. */
    bool incomplete = why != MHD_REQUEST_TERMINATED_COMPLETED_OK && ex->status;
    uint64_t bytes = why == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ex->bytes : 0;
    if (incomplete || ex->stream || (progress_measure_all() && ex->status)) {
        bytes = bytes_handed(conn, c, ex);
    }
    uint64_t answered_bytes;
    unsigned answered = connection_answered(c, &answered_bytes);
    if (answered) { /* folio answered in MHD's stead (connection_answer_refused_head) */
        status = answered;
        bytes = answered_bytes;
        incomplete = false;
    }
    log_exchange(conn, ex, status, bytes, incomplete);
    bool kept_alive = library_kept_alive(conn, ex->status, ex->last_on_connection, ex->protocol, why);
    /* kept alive, so completed on an open connection: its head had no close line */
    connection_count_sent(c, ex->head.bytes + ex->bytes, kept_alive && ex->measurable && !ex->interim);
    connection_unwatch_file(c);
    connection_request_done(c, kept_alive);
    settings_release(s->ctx.settings, ex->config);
    free(ex->sent_target);
    free(ex->joined[0]);
    free(ex->joined[1]);
    free(ex);
    /* the next request's, on a connection kept alive */
    connection_expect_headers(conn, s->conns.header_timeout, s->conns.timeout);
    inflight_leave(&s->requests);
}

/* folio's verdict on a head the library refuses itself (connection_answer.h's
 * connection_verdict): the status to answer instead, 0 for the library's. */
static unsigned refused_head(struct MHD_Connection *conn, void *request, unsigned status)
{
    (void)status; /* the library's: folio's verdict decides */
    return request ? exchange_admit(conn, request, NULL, NULL) : 0;
}

/* libmicrohttpd's accept policy: every connection, until the server quiesces. */
static enum MHD_Result accept_unless_quiesced(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addr; (void)addrlen; /* libmicrohttpd's signature */
    const struct http_server *s = cls;
    return atomic_load(&s->quiesced) ? MHD_NO : MHD_YES;
}

/* host (an address, or a name config_check_host already resolved at
 * start-up) and port as a socket address; false when host is neither. */
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

/* What every request shares, from ctx: the entry stage's settings and the
 * "/" route (home of 404.html). */
static void share(struct http_server *s, const struct http_context *ctx)
{
    s->shared = (struct exchange_server){
        .settings = ctx->settings,
        .routes = ctx->routes,
        .live = ctx->live,
        .cache = ctx->cache,
        .entries = {ctx->cache, ctx->live, routes_owns, (void *)ctx->routes, best_start()},
        .started = time(NULL),
    };
    s->shared.ready.cache = ctx->cache;
    atomic_init(&s->shared.ready.fds, 0);
    for (size_t i = 0; i < ctx->routes->count; i++) {
        if (strcmp(ctx->routes->items[i].prefix, "/") == 0) {
            s->shared.root_route = &ctx->routes->items[i];
        }
    }
}

/* Starts libmicrohttpd as c says, fed by an acceptor on addr (kept in
 * s->acceptor and s->conns); NULL with the reason in err when it will not
 * (the listening socket's, or the library's last word). */
static struct MHD_Daemon *start_daemon(struct http_server *s, const struct config *c,
                                       const struct sockaddr_storage *addr, char *err, size_t err_size)
{
    int listen_fd = acceptor_listen(addr);
    s->acceptor = listen_fd >= 0 ? acceptor_create(listen_fd, (unsigned)c->connection_limit) : NULL;
    if (!s->acceptor) {
        snprintf(err, err_size, "cannot listen on %s port %u: %s", c->host, c->port, strerror(errno));
        return NULL;
    }
    s->conns.acceptor = s->acceptor;
    s->conns.addresses = address_limit_create((unsigned)c->per_ip_limit);
    if (!s->conns.addresses) {
        snprintf(err, err_size, "out of memory");
        acceptor_destroy(s->acceptor);
        s->acceptor = s->conns.acceptor = NULL;
        return NULL;
    }
    s->conns.refused_head = refused_head;
    /* MHD_USE_TURBO: see connection_daemon.h (what it changes, and why folio
     * wants it). The connection limit is the acceptor's, the per-address one
     * folio's (address_limit.h: the library's refuses with a reset, and below
     * the limit); the library's own, the pool and the parsing are
     * library_daemon_options'. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;
    struct MHD_OptionItem library[LIBRARY_OPTIONS_MAX];
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, accept_unless_quiesced, s, handle_request, s,
        MHD_OPTION_ARRAY, library_daemon_options(library, (unsigned)c->connection_limit, (unsigned)c->threads),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)c->timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)c->header_limit,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_start, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_request_done, s,
        MHD_OPTION_NOTIFY_CONNECTION, connection_on_notify, &s->conns,
        MHD_OPTION_EXTERNAL_LOGGER, connection_on_mhd_message, &s->conns,
        MHD_OPTION_END);
    connection_daemon_started(&s->conns);
    deadline_set_room(s->conns.deadlines, acceptor_waiting, s->acceptor);
    if (!d || !acceptor_start(s->acceptor, d)) {
        deadline_set_room(s->conns.deadlines, NULL, NULL);
        snprintf(err, err_size, "cannot listen on %s port %u: %s", c->host, c->port,
                 s->conns.start_error[0] ? s->conns.start_error : "libmicrohttpd refused to start");
        if (d) {
            MHD_stop_daemon(d);
        }
        acceptor_destroy(s->acceptor);
        s->acceptor = s->conns.acceptor = NULL;
        address_limit_destroy(s->conns.addresses);
        s->conns.addresses = NULL;
        return NULL;
    }
    return d;
}

static struct http_server *start_with(const struct http_context *ctx, const struct config *c, char *err,
                                      size_t err_size);

/* See http.h: binds, starts the daemon; NULL with the reason in err. */
struct http_server *http_server_start(const struct http_context *ctx, char *err, size_t err_size)
{
    library_verified(MHD_get_version(), stderr); /* another: said, not refused (library.h) */
    const struct config *c = settings_acquire(ctx->settings); /* what the daemon is bound to */
    struct http_server *s = start_with(ctx, c, err, err_size);
    settings_release(ctx->settings, c);
    return s;
}

/* http_server_start with the start-up settings c. */
static struct http_server *start_with(const struct http_context *ctx, const struct config *c, char *err,
                                      size_t err_size)
{
    struct sockaddr_storage addr = {0};
    if (!parse_address(c->host, c->port, &addr)) {
        snprintf(err, err_size, "host '%s' is not an address to listen on", c->host);
        return NULL;
    }
    struct http_server *s = calloc(1, sizeof(*s));
    if (!s || !inflight_init(&s->requests)) {
        snprintf(err, err_size, "out of memory");
        free(s);
        return NULL;
    }
    s->ctx = *ctx;
    /* Deadlines are seconds, but a send stalled on a file rewritten in place
     * (deadline.h) is seen from one look to the next: ten a second end it
     * well within a second. */
    struct deadline_watch *deadlines = deadline_watch_start(100, NULL);
    if (!deadlines) {
        snprintf(err, err_size, "cannot start the deadline watcher");
        inflight_finish(&s->requests);
        free(s);
        return NULL;
    }
    share(s, ctx);
    s->shared.entries.routes = ctx->routes;
    /* A response's head is built in the connection's memory with the request's: */
    s->shared.entries.preload_budget = c->preload_fragments ? c->header_limit / 4 : 0;
    connection_daemon_init(&s->conns, deadlines, ctx->settings, c);
    s->daemon = start_daemon(s, c, &addr, err, err_size);
    if (!s->daemon) {
        size_t n = strlen(err);
        while (n && (err[n - 1] == '\n' || err[n - 1] == '.')) {
            err[--n] = '\0';
        }
        deadline_watch_stop(deadlines);
        connection_daemon_finish(&s->conns);
        best_stop(s->shared.entries.best);
        inflight_finish(&s->requests);
        free(s);
        return NULL;
    }
    s->sweeper = ready_sweeper_start(&s->shared.ready, c->file_idle);
    return s;
}

/* See http.h: the port bound. */
unsigned http_server_port(const struct http_server *s)
{
    return acceptor_port(s->acceptor);
}

/* See http.h: no new connections. Not MHD_quiesce_daemon: with a thread
 * pool 0.9.75 races its workers to take the listening socket out of their
 * epoll sets and panics (abort) when it loses, which a busy worker made
 * happen on SIGTERM (library.h); the accept policy above needs no such step. */
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
    if (s->ctx.live) {
        s->ctx.live->stop(s->ctx.live->ctx);
    }
    deadline_end_reads(s->conns.deadlines); /* idle connections close now; busy ones after their answer */
    if (!inflight_wait(&s->requests, grace_s * 1000)) {
        deadline_expire_all(s->conns.deadlines); /* the grace is over: what is left is reset now */
    }
    deadline_set_room(s->conns.deadlines, NULL, NULL); /* it asks the acceptor: before it goes */
    acceptor_stop(s->acceptor); /* it adds to the daemon: first */
    MHD_stop_daemon(s->daemon);
    acceptor_destroy(s->acceptor); /* the daemon's closes count down in it: after */
    address_limit_destroy(s->conns.addresses); /* and in this */
    ready_sweeper_stop(s->sweeper);
    best_stop(s->shared.entries.best); /* its jobs hold cache bodies: before the clear */
    deadline_watch_stop(s->conns.deadlines);
    /* The last lines, unless nobody reads them; then say what was lost. */
    if (!log_flush(1000) || log_dropped() > 0) {
        unsigned long long dropped = log_dropped();
        fprintf(stderr, "folio: access log: %llu line%s dropped, %s\n", dropped, dropped == 1 ? "" : "s",
                "stdout was not read fast enough");
    }
    /* Ready entries count their descriptors in s: they go before it does. */
    cache_clear(s->ctx.cache);
    connection_daemon_finish(&s->conns);
    inflight_finish(&s->requests);
    free(s);
}
