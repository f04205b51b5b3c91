/* config: folio's settings, from four layers.
 *
 * Defaults < config file (INI, via inih) < environment (PORT, FOLIO_*) <
 * command-line flags. Every setting has one name used in all layers: the key
 * `live-reload` in [server] is FOLIO_LIVE_RELOAD in the environment and
 * --live-reload / --no-live-reload on the command line. A bad value anywhere
 * is reported as one line on stderr naming where it came from (file:line,
 * variable or flag) and loading fails: nothing starts half-configured.
 *
 * Not thread-safe; loaded once on the start-up path. The struct owns every
 * string in it; config_finish frees them.
 */
#ifndef FOLIO_CONFIG_H
#define FOLIO_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "serve/log.h"

struct config_route {
    char *prefix; /* URL prefix, starts and ends with "/" */
    char *dir;    /* folder, relative to root unless absolute */
    bool fragments; /* its HTML is fetched by script, never a page: "dir, fragments"; /fragments/ always */
    int line;     /* where the config file set it, 0: a default */
};

struct config {
    char *root;        /* the article: holds www/, fragments/, assets/ */
    char *config_path; /* the file that was read, or NULL */
    char *host;
    char *base_path;   /* URL prefix a proxy strips, "" when none */
    unsigned port, threads;
    bool production, quiet, trust_proxy;
    int live_reload;   /* -1: follows the mode (on in preview, off in production) */
    enum log_format log_format;
    unsigned max_age;          /* s, Cache-Control for non-HTML in production */
    unsigned timeout;          /* s, idle connection timeout */
    unsigned grace;            /* s, how long SIGTERM waits for requests in flight */
    unsigned connection_limit; /* concurrent connections */
    unsigned per_ip_limit;     /* concurrent connections from one address, 0: none */
    unsigned header_limit;     /* bytes of request line + headers per connection */
    unsigned cache_size;       /* bytes of compressed and rewritten bodies kept */
    unsigned gzip_level;
    unsigned header_timeout;     /* s, the whole request line and headers */
    unsigned send_rate;          /* bytes/s a response may not fall below, 0: no floor */
    unsigned event_stream_limit; /* open live-reload event streams */
    unsigned watch;            /* 0 auto, 1 inotify, 2 poll: enum watch_mode's order */
    unsigned poll_interval;    /* ms between two looks of --watch poll */
    struct config_route *routes;
    size_t route_count;
    bool health_check; /* --health-check: ask a running server, serve nothing */
    char *health_url;  /* its URL, NULL: from host and port */
    char **retired;    /* strings a reload replaced: workers may still read them */
    size_t retired_count;
    char *root_source; /* the layer that set root ("--root", "FOLIO_ROOT", file:line), or NULL */
};

enum config_result {
    CONFIG_OK,
    CONFIG_EXIT,    /* --help or --version was printed: exit 0 */
    CONFIG_INVALID, /* the reason is on stderr: exit 2 */
};

/* Fills c from all four layers. environ-style envp, NULL-terminated. */
enum config_result config_load(struct config *c, int argc, char **argv, char **envp);

/* Just the defaults. */
void config_init(struct config *c);

/* Sets one [server] key from text; on failure writes the reason to err. */
bool config_set(struct config *c, const char *key, const char *value, char *err, size_t err_size);

/* Applies INI text (a whole config file) on top of c. On failure, err holds
 * "line N: reason". Used by config_load and by the fuzzer. */
bool config_apply_ini(struct config *c, const char *text, char *err, size_t err_size);

/* Whether live reload is on, once the mode is known. */
bool config_live_reload(const struct config *c);

void config_finish(struct config *c); /* accepts a zeroed struct */

/* Whether the root and every route folder exist, once all layers are in.
 * If not, one line on stderr names the folder and where it came from
 * (flag, variable or file:line; for a default route, how to drop it). */
bool config_check_routes(const struct config *c);

/* After SIGHUP: copies into running the settings that take effect on the
 * next request (quiet, log-format, max-age, gzip-level, trust-proxy,
 * base-path, grace), and lists in restart (comma
 * separated, "" if none) the ones that changed but only apply at start-up.
 * Replaced strings are kept until config_finish: a worker may hold one. */
void config_apply_live(struct config *running, const struct config *fresh, char *restart,
                       size_t restart_size);

#endif
