/* folio: serves one article and, in preview, keeps browsers in step with it.
 *
 * main only wires the modules together: settings (config.c), folders
 * (routes.c), the cache, the live-reload watcher and event hub, and the HTTP
 * server; then it waits for a signal and takes everything down in reverse.
 * Exit status: 0 after a clean stop, 2 for a bad configuration, 1 when the
 * server cannot start (e.g. the port is taken).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "config.h"
#include "http.h"
#include "livereload.h"
#include "mime.h"
#include "resolve.h"
#include "routes.h"
#include "sse.h"

extern char **environ;

static void invalidate_path(void *cache, const char *path)
{
    cache_invalidate(cache, path);
}

static void invalidate_all(void *cache)
{
    cache_clear(cache);
}

static size_t files_watched(void *lr)
{
    return livereload_watch_count(lr);
}

/* Signals are taken synchronously by this thread alone: every thread started
 * later inherits the blocked mask, so no handler runs in a worker. */
static int wait_for_stop_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig = 0;
    sigwait(&set, &sig);
    return sig;
}

static struct livereload *start_live_reload(const struct config *config,
                                            const struct routes *routes, struct sse_hub *hub,
                                            struct cache *cache)
{
    /* config.watch holds the index of auto, inotify, poll: enum watch_mode's order. */
    const struct watch_options opt = {
        .mode = (enum watch_mode)config->watch,
        .poll_interval_ms = config->poll_interval,
    };
    return livereload_create(routes, &opt, hub, invalidate_path, invalidate_all, cache);
}

int main(int argc, char **argv)
{
    struct config config;
    switch (config_load(&config, argc, argv, environ)) {
    case CONFIG_OK:
        break;
    case CONFIG_EXIT:
        config_finish(&config);
        return 0;
    case CONFIG_INVALID:
        config_finish(&config);
        return 2;
    }
    if (config.threads == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        config.threads = cpus > 0 && cpus < 64 ? (unsigned)cpus : 4;
    }

    char err[512];
    struct routes routes;
    if (!routes_open(&routes, &config, err, sizeof(err))) {
        fprintf(stderr, "folio: %s\n", err);
        config_finish(&config);
        return 2;
    }
    if (!resolve_init(routes.count ? routes.items[0].dir_fd : AT_FDCWD)) {
        fprintf(stderr, "folio: openat2 is unavailable; symlinks will not be followed\n");
    }

    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN); /* a closed stdout must not kill the server */

    mime_init();
    struct cache *cache = cache_create(config.cache_size);
    bool live = config_live_reload(&config);
    struct sse_hub *hub = live ? sse_hub_create(0, 0) : NULL;
    struct livereload *lr = hub ? start_live_reload(&config, &routes, hub, cache) : NULL;
    if (!cache || (live && (!hub || !lr))) {
        fprintf(stderr, "folio: cannot start %s\n", cache ? "live reload" : "the cache");
        return 1;
    }

    struct http_context ctx = {
        .config = &config,
        .routes = &routes,
        .cache = cache,
        .hub = hub,
        .files_watched = lr ? files_watched : NULL,
        .watch = lr,
    };
    struct http_server *server = http_server_start(&ctx, err, sizeof(err));
    int status = 1;
    if (!server) {
        fprintf(stderr, "folio: %s\n", err);
    } else {
        const char *host = config.host;
        bool any = !strcmp(host, "0.0.0.0") || !strcmp(host, "::");
        bool v6 = strchr(host, ':') != NULL;
        printf("folio: serving %s (%s%s) at http://%s%s%s:%u/\n", routes.root,
               config.production ? "production" : "preview", live ? ", live reload" : "",
               v6 && !any ? "[" : "", any ? "127.0.0.1" : host, v6 && !any ? "]" : "",
               http_server_port(server));
        fflush(stdout);
        int sig = wait_for_stop_signal();
        fprintf(stderr, "folio: %s, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        http_server_stop(server, config.grace);
        status = 0;
    }
    livereload_destroy(lr);
    sse_hub_destroy(hub);
    cache_destroy(cache);
    mime_finish();
    routes_close(&routes);
    config_finish(&config);
    return status;
}
