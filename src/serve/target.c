#include "target.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "base/config.h"
#include "base/escape.h"
#include "base/say_limit.h"
#include "best.h"
#include "cache.h"
#include "entry.h"
#include "exchange.h"
#include "site/live_hook.h"
#include "log.h"
#include "precondition.h"
#include "range.h"
#include "ready.h"
#include "request.h"
#include "site/resolve.h"
#include "respond.h"
#include "response.h"
#include "health_probe.h"
#include "site/routes.h"
#include "savings.h"


#define RESERVED_PREFIX ROUTES_RESERVED_PREFIX

/* /__folio/health: status, versions (folio's, the libmicrohttpd linked),
 * mode, uptime and counters as one JSON object, and the prefix this request
 * was served under (--base-path, or a trusted X-Forwarded-Prefix), to see
 * what a proxy says. A prefix is a clean path (url_prefix.h) and a version
 * digits and dots: nothing in them needs a JSON escape. */
static enum MHD_Result respond_health(struct MHD_Connection *conn, struct exchange *ex)
{
    const struct exchange_server *s = ex->server;
    size_t watched = 0, streams = 0;
    if (s->live) {
        s->live->counts(s->live->ctx, &watched, &streams);
    }
    char json[640 + 2 * URL_PREFIX_MAX], saved[160];
    savings_json(saved, sizeof(saved));
    struct cache_stats cached = cache_stats(s->cache);
    snprintf(json, sizeof(json),
             "{\"status\":\"ok\",\"version\":\"%s\",\"libmicrohttpd\":\"%s\",\"mode\":\"%s\",\"uptime_s\":%lld,"
             "\"folders_watched\":%zu,\"cache_bytes\":%zu,\"cache_too_small\":%s,\"cache_refaults\":%llu,\"best_levels_made\":%lu,"
             "\"event_stream_connections\":%zu,"
             "\"bytes_saved\":%s,\"base_path\":\"%s\",\"trust_proxy\":%s,\"prefix\":\"%s\"}\n",
             FOLIO_VERSION, MHD_get_version(), ex->config->production ? "production" : "preview",
             (long long)(time(NULL) - s->started), watched, cached.bytes,
             cached.too_small ? "true" : "false", (unsigned long long)cached.refaults,
             best_made(s->entries.best), streams, saved,
             ex->config->base_path, ex->config->trust_proxy ? "true" : "false", ex->prefix ? ex->prefix : "");
    struct MHD_Response *resp = response_from_text(json);
    if (!resp) {
        return MHD_NO;
    }
    response_add(resp, "Content-Type", "application/json");
    response_add(resp, "Cache-Control", "no-store");
    ex->unlogged = health_probe_is_own(conn);
    return respond_queue(conn, ex, 200, resp, strlen(json));
}

/* Answers folio's own addresses under /__folio/: health, then what the live
 * hook serves (events, reload.js), else 404. */
static enum MHD_Result respond_reserved(struct MHD_Connection *conn, struct exchange *ex,
                                        const char *path)
{
    const struct serve_live_hook *live = ex->server->live;
    const char *name = path + strlen(RESERVED_PREFIX);
    if (strcmp(name, "health") == 0) {
        return respond_health(conn, ex);
    }
    unsigned status = 404;
    uint64_t bytes = 0;
    struct MHD_Response *resp = live ? live->reserved(live->ctx, conn, name, strcmp(ex->method, "HEAD") == 0, &status, &bytes,
                                                        &ex->unlogged) : NULL;
    if (resp) {
        return respond_queue(conn, ex, status, resp, bytes);
    }
    return status ? respond_error(conn, ex, status) : MHD_NO;
}

/* The status the validators and Range of a request with facts f give rep
 * (RFC 9110 13.2.2, then 14.2 under If-Range); for 206, *first and *last
 * are the range. */
static unsigned choose_status(const struct facts *f, const struct entry_rep *rep, uint64_t *first,
                              uint64_t *last)
{
    time_t now = time(NULL);
    switch (precondition_evaluate(&f->conditionals, rep->etag, &rep->times, now)) {
    case PRECONDITION_FAILED: return 412;
    case PRECONDITION_NOT_MODIFIED: return 304;
    case PRECONDITION_PASS: break;
    }
    if (!f->range || !precondition_if_range(f->if_range, rep->etag, &rep->times, now)) {
        return 200;
    }
    switch (range_parse(f->range, rep->size, first, last)) {
    case RANGE_SATISFIABLE: return 206;
    case RANGE_UNSATISFIABLE: return 416;
    case RANGE_NONE: break;
    }
    return 200;
}

/* Answers with the open regular file fd (st its fstat) at rel beneath
 * route, for a client with facts (ex's for route): representation,
 * validators and range, response, headers; a whole answer becomes a ready
 * one. Takes fd. */
static enum MHD_Result serve_file(struct MHD_Connection *conn, struct exchange *ex,
                                  const struct route *route, const char *rel, int fd,
                                  const struct stat *st, const struct entry_facts *facts)
{
    struct exchange_server *s = ex->server;
    struct entry_rep rep;
    if (!entry_represent(&s->entries, route, rel, fd, st, facts, &rep)) {
        return respond_error(conn, ex, 503);
    }
    uint64_t first = 0, last = 0;
    unsigned status = choose_status(&ex->facts, &rep, &first, &last);
    if (status == 412 || status == 416) {
        uint64_t size = rep.size;
        entry_rep_release(&rep);
        return status == 412 ? respond_error(conn, ex, 412) : respond_unsatisfiable(conn, ex, size);
    }
    struct ready_answer ready;
    bool out_of_memory = false;
    if ((status == 200 || status == 304) && !facts->has_range &&
        ready_make(&s->ready, ex->config, &s->entries, route, rel, facts, &rep, status, &ready,
                   &out_of_memory)) {
        entry_rep_release(&rep);
        return respond_ready(conn, ex, &ready);
    }
    if (out_of_memory) {
        entry_rep_release(&rep);
        return MHD_NO;
    }
    uint64_t len = status == 206 ? last - first + 1 : status == 200 ? rep.size : 0;
    savings_count(status == 200 ? rep.coding : ENCODING_IDENTITY, rep.saved);
    int file_fd = status == 304 || rep.body || rep.sealed ? -1 : rep.fd; /* resp's once made */
    struct MHD_Response *resp = status == 304 ? response_not_modified(rep.size)
                                              : response_from_rep(&rep, first, len);
    if (resp) {
        response_add_rep_headers(resp, ex->config, &rep, status, first, last);
    }
    entry_rep_release(&rep);
    return respond_queue_file(conn, ex, status, resp, len, file_fd, first);
}

/* Makes ex->target the path as served plus the query, when the path as
 * sent climbs differently (runs of "/", dot segments): the client script's
 * relative src and the prefix rewriting count its folders, so neither can be
 * inflated into a truncated tag or a cached variant per spelling. The log
 * keeps the target as sent. path is normalised (never longer than the path
 * sent, and decoding makes no "/"). Returns the query, or NULL. */
static const char *settle_target(struct exchange *ex, const char *path, size_t sent_path_len,
                                 const char *query)
{
    size_t sent_slashes = 0, slashes = 0;
    for (size_t i = 0; i < sent_path_len; i++) {
        sent_slashes += ex->target[i] == '/';
    }
    for (const char *p = path; *p; p++) {
        slashes += *p == '/';
    }
    if (sent_slashes == slashes) {
        return query;
    }
    if (!ex->sent_target) {
        ex->sent_target = strdup(ex->target);
    }
    size_t n = strlen(path);
    for (size_t i = 0; i < n; i++) { /* only its folders count: no byte may end it early */
        ex->target[i] = path[i] == '?' || path[i] == '#' ? '_' : path[i];
    }
    if (!query) {
        ex->target[n] = '\0';
        return NULL;
    }
    memmove(ex->target + n, query, strlen(query) + 1);
    return ex->target + n;
}

/* The error a failed open calls for, said on stderr with the path escaped
 * (base/escape.h; it is decoded: "%0a" or "%1b" in it must not forge
 * a line or reach a terminal), a line a minute at most: a client repeating a
 * request that fails (out of descriptors, say) must not flood it. */
static enum MHD_Result respond_open_failed(struct MHD_Connection *conn, struct exchange *ex,
                                           const char *path, int err)
{
    static struct say_limit open_failures;
    char more[64];
    if (say_limit_pass(&open_failures, 60, more, sizeof(more))) {
        char shown[ESCAPE_PATH_SIZE];
        escape_text(path, shown, sizeof(shown));
        fprintf(stderr, "folio: %s: %s%s\n", shown, strerror(err), more);
    }
    return respond_error(conn, ex, err == EMFILE || err == ENFILE ? 503 : 500);
}

/* The file path names beneath route (a folder's address already made its
 * index.html, folder says so): from a ready response, else opened and
 * served, or the redirect, 404 or error it calls for. moved: where a "//"
 * spelling of an address that exists is sent, or NULL. */
static enum MHD_Result serve_in_route(struct MHD_Connection *conn, struct exchange *ex,
                                      const struct route *route, const char *path, bool folder,
                                      const char *query, const char *moved)
{
    const char *rel = path + route->prefix_len;
    int fd, err;
    struct stat st;
    /* A representation kept whole answers at once (one fstatat checks it is
     * still that file); a spelling with "//" is redirected first. */
    /* A miss may be a folder swapped under the route: opened again when it
     * was re-opened since the first look, which a miss looks for at most
     * every 50 ms and without a lock's wait (routes_missed), so a 404 flood
     * costs no more than hits do. */
    uint64_t generation = routes_generation(route);
    struct ready_answer ready;
    bool missing = false; /* the ready look found nothing there: no open either */
    struct entry_facts facts = facts_for_route(facts_of(conn, ex), route);
    if (!moved && ready_lookup(&ex->server->ready, &ex->server->entries, route, rel, &facts,
                               &ex->facts.conditionals, &ready, &missing)) {
        return respond_ready(conn, ex, &ready);
    }
    enum resolve_status found = missing ? RESOLVED_NOT_FOUND
                                        : resolve_open(route->dir_fd, rel, &fd, &st, &err);
    if (found == RESOLVED_NOT_FOUND && routes_missed(route, generation)) {
        found = resolve_open(route->dir_fd, rel, &fd, &st, &err); /* the folder was swapped */
    }
    if (moved && (found == RESOLVED_FILE || found == RESOLVED_DIRECTORY)) {
        close(fd);
        return respond_moved(conn, ex, moved);
    }
    switch (found) {
    case RESOLVED_FILE:
        return serve_file(conn, ex, route, rel, fd, &st, &facts);
    case RESOLVED_DIRECTORY:
        close(fd);
        if (folder) { /* ".../index.html/" is a folder: nothing to serve */
            return respond_error(conn, ex, 404);
        }
        return respond_redirect(conn, ex, path, query);
    case RESOLVED_NOT_FOUND:
        return respond_error(conn, ex, 404);
    case RESOLVED_FORBIDDEN:
        return respond_error(conn, ex, 403);
    case RESOLVED_ERROR:
        break;
    }
    return respond_open_failed(conn, ex, path, err);
}

/* See target.h: the reserved paths, then the routes. */
enum MHD_Result target_serve(struct MHD_Connection *conn, struct exchange *ex)
{
    /* The target as sent, not MHD's decoded url: we decode exactly once, and
     * an escaped NUL or "/" must be seen to be refused. */
    const char *target = ex->target;
    const char *query = strchr(target, '?');
    size_t path_len = query ? (size_t)(query - target) : strlen(target);
    char path[PATH_MAX];
    if (path_len >= sizeof(path)) {
        return respond_error(conn, ex, 414); /* no file's path is longer (RFC 9110 15.5.15) */
    }
    if (!resolve_normalize(target, path_len, path, sizeof(path))) {
        return respond_error(conn, ex, 400);
    }
    /* "//" in a path: one address, one cached variant, and a client script
     * whose relative src is right: a browser is sent to the path served.
     * A Location past half the connection's memory (thousands of slashes:
     * a "../" each) would not fit beside the request in libmicrohttpd's
     * pool, a 431: that spelling is served as it is, as nginx's
     * merge_slashes serves every one. */
    char moved[3 * PATH_MAX + 16];
    size_t room = ex->config->header_limit / 2 < sizeof(moved) ? ex->config->header_limit / 2 : sizeof(moved);
    size_t moved_len = request_slash_location(target, path_len, path, query ? query + 1 : NULL, moved, room);
    query = settle_target(ex, path, path_len, query);
    if (strncmp(path, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0) {
        return respond_reserved(conn, ex, path);
    }
    if (resolve_has_dot_segment(path)) {
        return respond_error(conn, ex, 404);
    }
    bool bare_prefix;
    const struct route *route = routes_match(ex->server->routes, path, &bare_prefix);
    if (!route || routes_check(route, false) == ROUTE_GONE) {
        return respond_error(conn, ex, 404);
    }
    if (bare_prefix) {
        return respond_redirect(conn, ex, path, query ? query + 1 : NULL);
    }

    /* A folder's address ends in "/" and means its index.html: one open
     * beneath the route, not the folder and then the file (three syscalls
     * fewer on the most requested page). No listings: no index, a 404. */
    size_t len = strlen(path);
    bool folder = path[len - 1] == '/';
    if (folder && len + strlen("index.html") >= sizeof(path)) {
        return respond_error(conn, ex, 404);
    }
    if (folder) {
        strcpy(path + len, "index.html");
    }
    return serve_in_route(conn, ex, route, path, folder, query ? query + 1 : NULL,
                          moved_len ? moved : NULL);
}
