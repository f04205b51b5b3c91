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
#include <time.h>
#include <unistd.h>

#include "serve/cache.h"
#include "check/check_cli.h"
#include "base/config.h"
#include "health.h"
#include "serve/http.h"
#include "live/livereload.h"
#include "serve/mime.h"
#include "serve/resolve.h"
#include "serve/routes.h"
#include "live/sse.h"
#include "startup.h"

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

/* threads = 0 means one per CPU. */
static unsigned worker_threads(unsigned threads)
{
    if (threads == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 && cpus < 64 ? (unsigned)cpus : 4;
    }
    return threads;
}

/* Runs config_load once more with the same flags and environment, with its
 * stderr caught so a failure is one line that says what happened; returns
 * what config_load did. */
static enum config_result reload_config(struct config *fresh, int argc, char **argv, char *why,
                                        size_t why_size)
{
    int pipefd[2], saved = -1;
    fflush(stderr);
    if (pipe2(pipefd, O_CLOEXEC) == 0) {
        saved = dup(STDERR_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[1]);
    }
    enum config_result result = config_load(fresh, argc, argv, environ);
    if (result == CONFIG_OK && !config_check_routes(fresh)) {
        result = CONFIG_INVALID;
    }
    why[0] = '\0';
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, STDERR_FILENO); /* closes the pipe's write end: the read ends */
        close(saved);
        ssize_t n = read(pipefd[0], why, why_size - 1); /* one line, far below the pipe's 64 KiB */
        why[n > 0 ? n : 0] = '\0';
        close(pipefd[0]);
    }
    why[strcspn(why, "\n")] = '\0';
    if (strncmp(why, "folio: ", 7) == 0) {
        memmove(why, why + 7, strlen(why + 7) + 1);
    }
    return result;
}

/* SIGHUP: the config file again. A bad one changes nothing; a good one
 * applies what can change under running requests and names the rest, and
 * empties the cache: its ready responses carry headers of the old settings
 * (max-age, say), its bodies the old gzip level and prefix. */
static void on_sighup(struct config *running, struct cache *cache, int argc, char **argv)
{
    struct config fresh;
    char why[512], restart[512];
    const char *file = running->config_path ? running->config_path : "(no config file)";
    if (reload_config(&fresh, argc, argv, why, sizeof(why)) != CONFIG_OK) {
        fprintf(stderr, "folio: SIGHUP: %s; still serving with the previous settings\n",
                why[0] ? why : "the settings did not load");
        config_finish(&fresh);
        return;
    }
    fresh.threads = worker_threads(fresh.threads); /* as the running one was */
    config_apply_live(running, &fresh, restart, sizeof(restart));
    cache_clear(cache);
    fprintf(stderr, "folio: SIGHUP: re-read %s%s%s%s\n", file, restart[0] ? "; needs a restart: " : "",
            restart, restart[0] ? " (kept as they were)" : "");
    config_finish(&fresh);
}

/* Signals are taken synchronously by this thread alone: every thread started
 * later inherits the blocked mask, so no handler runs in a worker. SIGHUP
 * reloads and waits on. */
static int wait_for_stop_signal(struct config *config, struct cache *cache, int argc, char **argv)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    int sig = 0;
    while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
        on_sighup(config, cache, argc, argv);
    }
    return sig;
}

/* Bytes the kernel still holds for clients of the server on port: the
 * tx_queue of every socket with that local port in /proc/net/tcp and tcp6
 * (closed sockets stay listed until their data is acknowledged). */
static unsigned long unsent_bytes(unsigned port)
{
    unsigned long total = 0;
    const char *const tables[] = {"/proc/self/net/tcp", "/proc/self/net/tcp6"};
    for (size_t t = 0; t < 2; t++) {
        FILE *f = fopen(tables[t], "r");
        char line[512];
        while (f && fgets(line, sizeof(line), f)) {
            char local[64];
            unsigned state;
            unsigned long tx;
            /* "  0: 0100007F:1F40 0100007F:D2A4 01 00000000:00000000 ..." */
            if (sscanf(line, " %*d: %63s %*s %x %lx:", local, &state, &tx) != 3) {
                continue;
            }
            const char *colon = strrchr(local, ':');
            if (colon && strtoul(colon + 1, NULL, 16) == port && state != 0x0A /* LISTEN */) {
                total += tx;
            }
        }
        if (f) {
            fclose(f);
        }
    }
    return total;
}

/* After the last response left folio, its tail may still sit in the kernel's
 * send buffers. In a container that is lost when folio exits: the engine
 * removes the network namespace's interface at once, and a slow client never
 * gets the rest. So, until the deadline, wait for those buffers to drain. */
static void wait_for_unsent(unsigned port, const struct timespec *deadline)
{
    struct timespec now, tick = {0, 20 * 1000 * 1000};
    while (unsent_bytes(port) > 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > deadline->tv_sec ||
            (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec)) {
            return;
        }
        nanosleep(&tick, NULL);
    }
}

/* --health-check [URL]: 0 when the server answers 200, 1 otherwise. */
static int run_health_check(const struct config *config)
{
    char url[300], err[512];
    if (!config->health_url && !health_default_url(config, url, sizeof(url), err, sizeof(err))) {
        fprintf(stderr, "folio: --health-check: %s\n", err);
        return 2;
    }
    const char *target = config->health_url ? config->health_url : url;
    int status = health_check(target, 2000, err, sizeof(err));
    if (status != 0) {
        fprintf(stderr, "folio: --health-check %s: %s\n", target, err);
    }
    return status;
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
    if (argc > 1 && strcmp(argv[1], "check") == 0) { /* `folio check ...`: check.h */
        return check_main(argc - 1, argv + 1, environ);
    }
    struct config config;
    int exit_status = startup_config(&config, argc, argv, environ);
    if (exit_status >= 0) {
        return exit_status;
    }
    if (config.health_check) {
        int health = run_health_check(&config);
        config_finish(&config);
        return health;
    }
    config.threads = worker_threads(config.threads);

    char err[512];
    struct routes routes;
    bool openat2;
    if (!startup_routes(&routes, &config, "folio", &openat2)) {
        config_finish(&config);
        return 2;
    }
    if (!openat2) {
        fprintf(stderr, "folio: openat2 is unavailable; symlinks will not be followed\n");
    }

    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
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
        int sig = wait_for_stop_signal(&config, cache, argc, argv);
        unsigned port = http_server_port(server);
        http_server_quiesce(server); /* first, so that the line below means it */
        fprintf(stderr, "folio: %s, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += config.grace;
        http_server_stop(server, config.grace);
        wait_for_unsent(port, &deadline);
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
