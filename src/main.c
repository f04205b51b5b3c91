/* folio: serves one article and, in preview, keeps browsers in step with it.
 *
 * main only wires the modules together: settings (base/config*.c, held as
 * snapshots by base/settings.c), folders (site/startup.c), the cache, the
 * live-reload watcher and event hub, and the HTTP server; then it waits for
 * a signal (SIGHUP publishes a new snapshot) and takes everything down in
 * reverse.
 * Exit status: 0 after a clean stop, 2 for a bad configuration, 1 when the
 * server cannot start (e.g. the port is taken).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <malloc.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "serve/cache.h"
#include "check/check_cli.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/cpus.h"
#include "base/io.h"
#include "base/settings.h"
#include "serve/health.h"
#include "serve/http.h"
#include "live/livereload.h"
#include "live/check_live.h"
#include "live/preview.h"
#include "live/report.h"
#include "live/qr.h"
#include "serve/mime.h"
#include "site/resolve.h"
#include "site/routes.h"
#include "live/sse.h"
#include "site/startup.h"

extern char **environ;

static void invalidate_path(void *cache, const char *path)
{
    cache_invalidate(cache, path);
}

static void invalidate_all(void *cache)
{
    cache_clear(cache);
}

/* threads = 0 means one per CPU this process may use. */
static unsigned worker_threads(unsigned threads)
{
    if (threads == 0) {
        unsigned cpus = cpus_available(); /* the container's share, not the node's (cpus.h) */
        threads = cpus < 64 ? cpus : 64;
    }
    return threads;
}

/* The config file again, with the same flags and environment: true when it
 * loads whole and its folders exist (else err says why). A file that was
 * read at start-up and is gone now is such a failure, not a return to the
 * defaults: a missing file is one that does not load. */
static bool reload_config(struct config *fresh, const struct config *running, int argc, char **argv,
                          struct config_error *err)
{
    enum config_result r = config_load(fresh, argc, argv, environ, err);
    if (r == CONFIG_OK && running->config_path && !fresh->config_path) {
        snprintf(err->source.name, sizeof(err->source.name), "config %s", running->config_path);
        err->source.line = 0;
        snprintf(err->message, sizeof(err->message), "No such file or directory");
        return false;
    }
    if (r == CONFIG_EXIT) {
        snprintf(err->message, sizeof(err->message), "the settings did not load");
    }
    return r == CONFIG_OK && config_check_routes(fresh, err, NULL); /* said at start-up */
}

/* SIGHUP: a whole new snapshot of the settings, or nothing. A bad file
 * changes nothing; a good one applies what can change under running
 * requests (config_settle names the rest) to the next request, and empties
 * the cache: its bodies were made with the old gzip level and prefix. A
 * request still running keeps the snapshot it started with. */
static void on_sighup(struct settings *settings, struct cache *cache, int argc, char **argv)
{
    struct config fresh;
    struct config_error err;
    char why[sizeof(err.source.name) + sizeof(err.message) + 32], restart[512], file[PATH_MAX];
    const struct config *running = settings_acquire(settings);
    bool loaded = reload_config(&fresh, running, argc, argv, &err);
    snprintf(file, sizeof(file), "%s", running->config_path ? running->config_path : "(no config file)");
    if (loaded) {
        fresh.threads = worker_threads(fresh.threads); /* as the running one was */
        if (!config_settle(&fresh, running, restart, sizeof(restart))) {
            loaded = false;
            snprintf(err.message, sizeof(err.message), "out of memory");
        }
    }
    settings_release(settings, running);
    if (!loaded) {
        config_error_format(&err, why, sizeof(why));
        fprintf(stderr, "folio: SIGHUP: %s; still serving with the previous settings\n", why);
        config_finish(&fresh);
        return;
    }
    if (!settings_publish(settings, &fresh)) {
        fprintf(stderr, "folio: SIGHUP: out of memory; still serving with the previous settings\n");
        return;
    }
    cache_clear(cache);
    fprintf(stderr, "folio: SIGHUP: re-read %s%s%s%s\n", file, restart[0] ? "; needs a restart: " : "",
            restart, restart[0] ? " (kept as they were)" : "");
}

/* Signals are taken synchronously by this thread alone: every thread started
 * later inherits the blocked mask, so no handler runs in a worker. SIGHUP
 * reloads and waits on. */
static int wait_for_stop_signal(struct settings *settings, struct cache *cache, int argc, char **argv)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    int sig = 0;
    while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
        on_sighup(settings, cache, argc, argv);
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
static void wait_for_unsent(unsigned port, int64_t deadline_ms)
{
    struct timespec tick = {0, 20 * 1000 * 1000};
    while (unsent_bytes(port) > 0 && clock_now_ms() < deadline_ms) {
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

/* Loads the settings and runs the checks that come before serving: a
 * status to exit with, or -1 to go on with config filled in. */
static int load_settings(struct config *config, int argc, char **argv)
{
    int status = startup_config(config, argc, argv, environ);
    if (status >= 0) {
        return status;
    }
    if (config->health_check) {
        status = run_health_check(config);
        config_finish(config);
        return status;
    }
    struct config_error err;
    if (!config_check_host(config, &err)) {
        config_error_print(&err, stderr);
        config_finish(config);
        return 2;
    }
    config->threads = worker_threads(config->threads);
    return -1;
}

/* Raises the soft limit on open files to the hard one: 1,024 connections,
 * 256 held files, memfd bodies and the watcher's folders exceed the usual
 * soft 1,024, and running out shows as refused connections or folders not
 * watched. nginx's worker_rlimit_nofile does this by hand. */
static void raise_file_limit(void)
{
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &files) != 0) {
            perror("folio: cannot raise the open-file limit");
        }
    }
}

/* malloc as a long-running server needs it, unless the environment says
 * otherwise (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_).
 *
 * One arena for the whole process: glibc gives each thread an arena of its
 * own, and each keeps the high-water mark of what its thread built: the
 * cache's entries are made on one worker thread and evicted by another, so
 * with two workers RSS settled at twice --cache-size (test_entry_faults,
 * ManySmallFiles, holds it to one). The hot path barely allocates, and what
 * it does, small blocks, comes from each thread's tcache without the
 * arena's lock.
 *
 * A fixed mmap threshold (glibc's initial 128 KiB): by default glibc raises
 * it to the size of each mmapped block freed, up to 32 MiB, so after the
 * first brotli 11 or zstd 19 every later encoder's tables come from the heap
 * and stay resident once freed, until a malloc_trim (best.c) that a
 * request-path compression never gets. Big blocks are then mmapped and
 * unmapped each time; none is made per request once a body is kept (strace
 * of every class at steady state shows no mmap). The figures:
 * bench/README.md, Measurements behind the code. */
static void tune_malloc(void)
{
#ifdef M_ARENA_MAX
    if (!getenv("MALLOC_ARENA_MAX")) {
        mallopt(M_ARENA_MAX, 1);
    }
#endif
#ifdef M_MMAP_THRESHOLD
    if (!getenv("MALLOC_MMAP_THRESHOLD_")) {
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
    }
#endif
}

/* Blocks the signals main waits for, in this thread and every later one. */
static void block_signals(void)
{
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN); /* a closed stdout must not kill the server */
}

/* Every address of this machine's interfaces that a reader elsewhere could
 * use, one line each: what 0.0.0.0 (IPv4) or :: (both families) listen on.
 * The first one's URL goes into first ("" when there is none). */
static void print_network_urls(bool v6_too, unsigned port, char *first, size_t first_size)
{
    first[0] = '\0';
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0) {
        return;
    }
    for (const struct ifaddrs *i = all; i; i = i->ifa_next) {
        const struct sockaddr *a = i->ifa_addr;
        char text[INET6_ADDRSTRLEN];
        if (!a || (i->ifa_flags & IFF_LOOPBACK) || (a->sa_family != AF_INET && !(v6_too && a->sa_family == AF_INET6))) {
            continue;
        }
        const void *bytes = a->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)a)->sin_addr
                                                    : (const void *)&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr;
        if (a->sa_family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)bytes)) {
            continue; /* needs a zone to be reached: no URL a browser takes */
        }
        if (inet_ntop(a->sa_family, bytes, text, sizeof(text))) {
            bool v6 = a->sa_family == AF_INET6;
            char url[INET6_ADDRSTRLEN + 16];
            snprintf(url, sizeof(url), "http://%s%s%s:%u/", v6 ? "[" : "", text, v6 ? "]" : "", port);
            fprintf(stderr, "folio: on the network at %s (%s)\n", url, i->ifa_name);
            if (!first[0]) {
                snprintf(first, first_size, "%s", url);
            }
        }
    }
    freeifaddrs(all);
}

/* True when host (an address or a name) is this machine's alone. */
static bool host_is_loopback(const char *host)
{
    struct in6_addr a6;
    return !strcmp(host, "localhost") || !strncmp(host, "127.", 4) ||
           (inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6));
}

/* A preview others can open: says so in one line and, on a terminal, draws
 * url as a QR code for a phone (qr.h), unless --qr=no. */
static void print_preview_reach(const struct config *boot, const char *url)
{
    fprintf(stderr, "folio: this preview is open to everyone on that network, not just this machine "
                    "(--host 127.0.0.1 keeps it here)\n");
    char *code = boot->qr && isatty(STDERR_FILENO) ? qr_terminal(url) : NULL;
    if (code) {
        fprintf(stderr, "folio: scan to open %s on a phone (--qr=no hides this)\n%s", url, code);
    }
    free(code);
}

/* The start-up lines, on stderr with folio's other words (stdout is the
 * access log's alone): the local URL first, then, when bound to all
 * addresses, the network URLs (as vite prints them); in preview on an
 * address others reach, a word about that and the first such URL's QR code. */
static void print_banner(const struct config *boot, const char *root, bool live, unsigned port)
{
    const char *host = boot->host;
    bool any = !strcmp(host, "0.0.0.0") || !strcmp(host, "::");
    bool v6 = strchr(host, ':') != NULL;
    char network[INET6_ADDRSTRLEN + 16] = "";
    /* --watch poll is said here; auto says so itself when it falls back to polling */
    fprintf(stderr, "folio: serving %s (%s%s) at http://%s%s%s:%u/\n", root,
            boot->production ? "production" : "preview",
            !live ? "" : (enum watch_mode)boot->watch == WATCH_POLL ? ", live reload by polling" : ", live reload",
            v6 && !any ? "[" : "", any ? "127.0.0.1" : host, v6 && !any ? "]" : "", port);
    if (any) {
        print_network_urls(v6, port, network, sizeof(network));
    } else if (!host_is_loopback(host)) {
        snprintf(network, sizeof(network), "http://%s%s%s:%u/", v6 ? "[" : "", host, v6 ? "]" : "", port);
    }
    if (!boot->production && network[0]) {
        print_preview_reach(boot, network);
    }
}

/* The server's life from its start to its stop: 0 after a clean stop, 1 when it cannot start. */
static int serve(struct settings *settings, const struct config *boot, struct routes *routes,
                 struct cache *cache, int argc, char **argv)
{
    bool live = config_live_reload(boot);
    struct sse_hub *hub = live ? sse_hub_create(0, 0) : NULL;
    struct livereload *lr = hub ? start_live_reload(boot, routes, hub, cache) : NULL;
    struct report *report = hub ? report_create(hub, stderr) : NULL;
    if (live && (!hub || !lr || !report)) {
        fprintf(stderr, "folio: cannot start live reload\n");
        report_destroy(report);
        livereload_destroy(lr);
        sse_hub_destroy(hub);
        return 1;
    }
    /* The article's faults: found before the server starts, said right after
     * its banner (the first line, which scripts read for the port). */
    struct io_text faults_text;
    FILE *faults_out = live ? io_text_open(&faults_text) : NULL;
    char *faults = NULL;
    if (faults_out) {
        check_live_start(routes, hub, faults_out);
        faults = io_text_close(&faults_text, faults_out);
    }
    struct preview preview;
    struct http_context ctx = {
        .settings = settings,
        .routes = routes,
        .cache = cache,
        .live = preview_hook(&preview, hub, lr, report, boot->event_stream_limit, boot->follow),
    };
    char err[512];
    struct http_server *server = http_server_start(&ctx, err, sizeof(err));
    int status = 1;
    if (!server) {
        fprintf(stderr, "folio: %s\n", err);
    } else {
        print_banner(boot, routes->root, live, http_server_port(server));
        fputs(faults ? faults : "", stderr);
        int sig = wait_for_stop_signal(settings, cache, argc, argv);
        unsigned port = http_server_port(server);
        http_server_quiesce(server); /* first, so that the line below means it */
        fprintf(stderr, "folio: %s, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        const struct config *now = settings_acquire(settings); /* grace is live */
        unsigned grace = now->grace;
        settings_release(settings, now);
        int64_t deadline_ms = clock_now_ms() + (int64_t)grace * 1000;
        http_server_stop(server, grace);
        wait_for_unsent(port, deadline_ms);
        status = 0;
    }
    free(faults);
    report_destroy(report);
    livereload_destroy(lr);
    sse_hub_destroy(hub);
    return status;
}

int main(int argc, char **argv)
{
    tune_malloc();
    if (argc > 1 && strcmp(argv[1], "check") == 0) { /* `folio check ...`: check.h */
        return check_main(argc - 1, argv + 1, environ);
    }
    struct config config;
    int early = load_settings(&config, argc, argv);
    if (early >= 0) {
        return early;
    }
    struct routes routes;
    bool openat2;
    if (!startup_routes(&routes, &config, "folio", &openat2)) {
        config_finish(&config);
        return 2;
    }
    if (!openat2) {
        fprintf(stderr, "folio: openat2 is unavailable; symlinks will not be followed\n");
    }
    block_signals();
    raise_file_limit();
    mime_init();
    struct cache *cache = cache_create(config.cache_size);
    struct settings *settings = settings_create(&config); /* config is the first snapshot now */
    const struct config *boot = settings ? settings_acquire(settings) : NULL;
    int status = 1;
    if (!cache || !settings) {
        fprintf(stderr, "folio: cannot start: out of memory\n");
    } else {
        status = serve(settings, boot, &routes, cache, argc, argv);
    }
    routes_close(&routes); /* before the snapshot it was opened from goes */
    settings_release(settings, boot);
    settings_destroy(settings);
    cache_destroy(cache);
    mime_finish();
    return status;
}
