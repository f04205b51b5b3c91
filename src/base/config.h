/* config: folio's settings, from four layers.
 *
 * Defaults < config file (INI, via inih) < environment (PORT, FOLIO_*) <
 * command-line flags. Every setting has one name used in all layers: the key
 * `live-reload` in [server] is FOLIO_LIVE_RELOAD in the environment and
 * --live-reload / --no-live-reload on the command line. A bad value anywhere
 * comes back as one struct config_error naming where it came from (file and
 * line, variable or flag) and loading fails: nothing starts half-configured.
 *
 * Three files, one concern each: config_table.c (the table of settings, their
 * values and what may change at run time), config_file.c (the INI adapter),
 * config_options.c (flags, environment, --help, and the start-up checks).
 * Parsing is pure: no look-up of names, no touching of the disk but the file
 * asked for. The checks that need the world (folders exist, the host
 * resolves) are config_check_routes' and config_check_host's, on the start-up path.
 *
 * A struct config is filled once and then never written: at run time it is
 * shared as an immutable snapshot (settings.h), and a SIGHUP builds a whole
 * new one. Not thread-safe while being filled; the struct owns every string
 * in it, config_finish frees them.
 */
#ifndef FOLIO_CONFIG_H
#define FOLIO_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct config_route {
    char *prefix; /* URL prefix, starts and ends with "/" */
    char *dir;    /* folder, relative to root unless absolute */
    bool fragments; /* its HTML is fetched by script, never a page: "dir, fragments"; /fragments/ always */
    int line;     /* where the config file set it, 0: a default */
};

/* Where a value came from: "--host", "FOLIO_HOST", "PORT", a file's path
 * (with its line), or "" for a default. */
struct config_source {
    char name[PATH_MAX];
    int line; /* in the file named, 0: not a file */
};

/* Why loading or checking failed, as a value: printed by config_error_print
 * as "folio: SOURCE:LINE: MESSAGE" (the parts that are set). */
struct config_error {
    struct config_source source;
    char message[2 * PATH_MAX + 512]; /* room for a route, a folder's path and why */
};

struct config {
    char *root;        /* the article: holds www/, fragments/, assets/ */
    char *config_path; /* the file that was read, or NULL */
    char *host;
    char *base_path;   /* URL prefix a proxy strips, "" when none */
    char *allowed_hosts; /* preview: Host names answered besides IPs and localhost (allowed_hosts.h); "" none */
    unsigned port, threads;
    bool production, quiet, trust_proxy;
    bool preload_fragments; /* Link headers preloading the fragments a page names */
    int live_reload;   /* -1: follows the mode (on in preview, off in production) */
    unsigned log_format;       /* enum log_format's order: common, combined, json */
    unsigned max_age;          /* s, Cache-Control for non-HTML in production */
    unsigned timeout;          /* s, idle connection timeout */
    unsigned grace;            /* s, how long SIGTERM waits for requests in flight */
    unsigned connection_limit; /* concurrent connections */
    unsigned per_ip_limit;     /* concurrent connections from one address, 0: none */
    unsigned header_limit;     /* bytes of request line + headers per connection */
    unsigned cache_size;       /* bytes of compressed and rewritten bodies kept */
    unsigned file_idle; /* s a ready response may hold a file unused */
    unsigned gzip_level;
    unsigned brotli_quality; /* ceilings on the levels compress_level picks by mode and size */
    unsigned zstd_level;
    unsigned header_timeout;     /* s, the whole request line and headers */
    unsigned send_rate;          /* bytes/s a response may not fall below, 0: no floor */
    unsigned event_stream_limit; /* open live-reload event streams */
    unsigned watch;            /* 0 auto, 1 inotify, 2 poll: enum watch_mode's order */
    unsigned poll_interval;    /* ms between two looks of --watch poll */
    bool follow;               /* preview: tabs follow the one scrolled last, unless a tab turns it off */
    bool qr;                   /* preview on all addresses: the network URL as a QR code on a terminal */
    struct config_route *routes;
    size_t route_count;
    bool health_check; /* --health-check: ask a running server, serve nothing */
    char *health_url;  /* its URL, NULL: from host and port */
    struct config_source root_from, host_from; /* for the start-up checks' messages */
    char notes[512]; /* what loading found worth a word but not an error (a FOLIO_ typo), or "" */
};

enum config_result {
    CONFIG_OK,
    CONFIG_EXIT,    /* --help or --version was printed: exit 0 */
    CONFIG_INVALID, /* the reason is in the error: exit 2 */
};

/* Fills c from all four layers (environ-style envp, NULL-terminated). On
 * CONFIG_INVALID, err says why; c is still to be finished. */
enum config_result config_load(struct config *c, int argc, char **argv, char **envp,
                               struct config_error *err);

/* Just the defaults. False when out of memory: c is then empty
 * (config_finish'd). */
bool config_init(struct config *c);

/* Sets one [server] key from text; on failure writes the reason to err.
 * Pure: checks the form of a value, never the world. */
bool config_set(struct config *c, const char *key, const char *value, char *err, size_t err_size);

/* Applies INI text (a whole config file) on top of c. On failure, err has
 * the line and the reason (its source's name is left for the caller). Used
 * by config_load and by the fuzzer. */
bool config_apply_ini(struct config *c, const char *text, struct config_error *err);

/* Whether live reload is on, once the mode is known. */
bool config_live_reload(const struct config *c);

void config_finish(struct config *c); /* accepts a zeroed struct */

/* Whether the root and every route folder exist. A default route other
 * than "/" whose folder is absent is not mounted (an article may be www/
 * alone): it is dropped from c, with one line on notes when notes is not
 * NULL. Any other missing folder is an error: err names the folder and
 * where it came from (flag, variable or file:line; for the default "/",
 * --root first, the usual fix). */
bool config_check_routes(struct config *c, struct config_error *err, FILE *notes);

/* Whether the host resolves to an address to listen on: a name is looked
 * up here, on the server's start-up path, never while parsing. */
bool config_check_host(const struct config *c, struct config_error *err);

/* After SIGHUP, fresh (loaded and checked) becomes the next snapshot: every
 * setting that only applies at start-up and changed is set back to its
 * running value (the running server still has it), and its name is listed
 * in restart (comma separated, "" if none). The live ones stay as loaded.
 * False when out of memory: fresh is then only to be finished. */
bool config_settle(struct config *fresh, const struct config *running, char *restart,
                   size_t restart_size);

/* Prints err as one line: "folio: " then its source, line and message. */
void config_error_print(const struct config_error *err, FILE *out);

/* The same line without "folio: " and the newline, into out. */
void config_error_format(const struct config_error *err, char *out, size_t size);

#endif
