/* http: the libmicrohttpd daemon and the request handler.
 *
 * handle_request takes each request through its stages: admission
 * (exchange.c, admission.c: may the head be served at all), its facts read
 * once (facts.c), the target to an answer (target.c: a route and a file,
 * site/routes.c and site/resolve.c; a ready response, ready.c; else the
 * representation entry.c chooses, validated and ranged, precondition.c and
 * range.c), queued with its headers (respond.c, response.c); and when the
 * request completes, one access-log line (log.c). connection_daemon.c
 * holds libmicrohttpd's connection and logger callbacks.
 *
 * The daemon runs a pool of epoll threads with suspend/resume (for the event
 * streams live reload may add through its hook), so every handler runs on
 * one of those threads: all state shared between requests is in the
 * context, and each of its parts documents its own thread-safety. The context must outlive the server.
 */
#ifndef FOLIO_HTTP_H
#define FOLIO_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct cache;
struct settings;
struct routes;
struct serve_live_hook;

struct http_context {
    struct settings *settings; /* the running settings: each request reads the snapshot current at its start */
    const struct routes *routes;
    struct cache *cache;
    const struct serve_live_hook *live; /* live reload (live_hook.h); NULL when it is off */
};

struct http_server;

/* Binds and starts serving. NULL on failure, with the reason in err. */
struct http_server *http_server_start(const struct http_context *ctx, char *err, size_t err_size);

/* The port actually bound (useful with port 0). */
unsigned http_server_port(const struct http_server *s);

/* The first half of a graceful stop: serves no new connection from now on
 * (each is closed as soon as it is accepted, as nginx's closed listener
 * refuses it: a client or balancer knows at once to go elsewhere).
 * http_server_stop does it too, if this was not called. */
void http_server_quiesce(struct http_server *s);

/* Graceful stop: stops accepting (http_server_quiesce), then waits up to grace_s
 * seconds for requests in flight (ends event streams first), then stops the
 * daemon, empties the cache (ready responses in it belong to the server)
 * and frees. Accepts NULL. */
void http_server_stop(struct http_server *s, unsigned grace_s);

#endif
