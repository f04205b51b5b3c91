/* config_table: the settings, their defaults, the form of their values, and
 * which of them a SIGHUP may change under running requests. */
#include "config_table.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "edits.h"
#include "allowed_hosts.h"
#include "url_prefix.h"

/* The words a KIND_CHOICE setting takes, min..max; the field gets the index. */
static const char *const log_choices[] = {"common", "combined", "json"}; /* enum log_format's order */
static const char *const watch_choices[] = {"auto", "inotify", "poll"};  /* enum watch_mode's order */

/* live: read on each request (through the snapshot it holds), so a new value
 * shows on the next one. Everything else is bound into the daemon, the
 * watcher or the cache at start-up and needs a restart. A help text says
 * no default: --help and the man pages add config_init's
 * (config_value_text), the one place defaults are written. */
const struct setting config_settings[] = {
#define AT(field) offsetof(struct config, field)
    {"root", KIND_STRING, AT(root), 0, 0, "DIR", "article folder holding www/, fragments/, assets/", NULL, false},
    {"host", KIND_STRING, AT(host), 0, 0, "ADDR", "address to listen on, 0.0.0.0 or :: for all", NULL, false},
    {"port", KIND_UINT, AT(port), 0, 65535, "N", "TCP port, 0 picks a free one", NULL, false},
    {"threads", KIND_UINT, AT(threads), 0, 256, "N", "worker threads, 0 for one per CPU", NULL, false},
    {"production", KIND_BOOL, AT(production), 0, 0, NULL, "production mode: caching headers, no live reload", NULL, false},
    {"live-reload", KIND_TRISTATE, AT(live_reload), 0, 0, NULL, "watch files and reload browsers", NULL, false},
    {"base-path", KIND_STRING, AT(base_path), 0, 0, "PATH", "URL prefix a proxy strips, e.g. /article", NULL, true},
    {"allowed-hosts", KIND_STRING, AT(allowed_hosts), 0, 0, "NAMES", "preview: host names answered besides IPs and localhost, e.g. box.local,.example.org (* any)", NULL, true},
    {"trust-proxy", KIND_BOOL, AT(trust_proxy), 0, 0, NULL, "believe X-Forwarded-For and X-Forwarded-Prefix", NULL, true},
    {"log-format", KIND_CHOICE, AT(log_format), 0, 2, "FMT", "access log: common, combined or json", log_choices, true},
    {"quiet", KIND_BOOL, AT(quiet), 0, 0, NULL, "no access log", NULL, true},
    {"preload-fragments", KIND_BOOL, AT(preload_fragments), 0, 0, NULL, "Link headers preloading the fragments a page names", NULL, false},
    {"max-age", KIND_UINT, AT(max_age), 0, 315360000, "S", "production Cache-Control max-age for non-HTML", NULL, true},
    {"timeout", KIND_UINT, AT(timeout), 1, 86400, "S", "idle connection timeout", NULL, false},
    {"grace", KIND_UINT, AT(grace), 0, 3600, "S", "on SIGTERM, wait this long for requests in flight", NULL, true},
    {"connection-limit", KIND_UINT, AT(connection_limit), 1, 1000000, "N", "concurrent connections", NULL, false},
    {"per-ip-limit", KIND_UINT, AT(per_ip_limit), 0, 1000000, "N", "connections from one address (503 past it), 0 for none", NULL, false},
    {"header-limit", KIND_BYTES, AT(header_limit), 4096, 16u << 20, "BYTES", "connection memory; a request head of about half is taken", NULL, false},
    {"file-idle", KIND_UINT, AT(file_idle), 1, 86400, "S", "close a held file unused this long", NULL, false},
    {"cache-size", KIND_BYTES, AT(cache_size), 0, 4095u << 20, "BYTES", "memory for compressed bodies", NULL, false},
    {"gzip-level", KIND_UINT, AT(gzip_level), 1, 9, "N", "gzip level", NULL, true},
    {"brotli-quality", KIND_UINT, AT(brotli_quality), 1, 11, "N", "brotli quality at most N; big files and preview use less", NULL, true},
    {"zstd-level", KIND_UINT, AT(zstd_level), 1, 19, "N", "zstd level at most N; big files and preview use less", NULL, true},
    {"header-timeout", KIND_UINT, AT(header_timeout), 1, 86400, "S", "whole request line and headers", NULL, false},
    {"send-rate", KIND_BYTES, AT(send_rate), 0, 1u << 30, "BYTES", "slowest response, per second; 0 for none", NULL, false},
    {"event-stream-limit", KIND_UINT, AT(event_stream_limit), 1, 100000, "N", "live-reload event streams, 503 past it", NULL, false},
    {"watch", KIND_CHOICE, AT(watch), 0, 2, "MODE", "how live reload sees edits: auto, inotify or poll", watch_choices, false},
    {"poll-interval", KIND_UINT, AT(poll_interval), 50, 60000, "MS", "with --watch poll, milliseconds between two looks", NULL, false},
    {"follow", KIND_BOOL, AT(follow), 0, 0, NULL, "preview: every tab and device shows where the last one scrolled", NULL, false},
    {"qr", KIND_BOOL, AT(qr), 0, 0, NULL, "QR code of the network URL on a terminal", NULL, false},
#undef AT
};
const size_t config_setting_count = sizeof(config_settings) / sizeof(config_settings[0]);
_Static_assert(sizeof(config_settings) / sizeof(config_settings[0]) <= CONFIG_SETTINGS_MAX,
               "more settings than CONFIG_SETTINGS_MAX: raise it");

static const struct config_route default_routes[] = {
    {"/", "www", false, 0},
    {"/fragments/", "fragments", true, 0},
    {"/assets/", "assets", false, 0},
};
#define DEFAULT_ROUTE_COUNT (sizeof(default_routes) / sizeof(default_routes[0]))

/* Out of memory while settings are made is one more reason they are not:
 * each function here that allocates says so (false, NULL, "out of memory"),
 * so start-up exits as for a bad value and SIGHUP keeps the running
 * settings, as for a bad file (main.c). Nothing exits here. */

/* See config.h: the strings and routes made first, the numbers then. */
bool config_init(struct config *c)
{
    *c = (struct config){
        .root = strdup("."),
        .host = strdup("127.0.0.1"),
        .base_path = strdup(""),
        .allowed_hosts = strdup(""),
        .port = 8000,
        .live_reload = -1,
        .preload_fragments = true,
        .max_age = 3600,
        .timeout = 30,
        .grace = 8, /* under Docker's and compose's 10 s stop timeout, so folio ends its own connections */
        .connection_limit = 1024,
        .per_ip_limit = 256,
        .header_limit = 16 * 1024,
        .cache_size = 64u << 20,
        .file_idle = 60, /* nginx's open_file_cache inactive */
        .gzip_level = 6,
        .brotli_quality = 11,
        .zstd_level = 19,
        .header_timeout = 60,
        .send_rate = 1024,
        .event_stream_limit = 200,
        .poll_interval = 500,
        .qr = true,
    };
    c->routes = calloc(DEFAULT_ROUTE_COUNT, sizeof(*c->routes));
    bool made = c->root && c->host && c->base_path && c->allowed_hosts && c->routes;
    for (size_t i = 0; made && i < DEFAULT_ROUTE_COUNT; i++) {
        c->routes[i] = (struct config_route){strdup(default_routes[i].prefix), strdup(default_routes[i].dir),
                                             default_routes[i].fragments, 0};
        c->route_count = i + 1; /* freed by config_finish, whole or not */
        made = c->routes[i].prefix && c->routes[i].dir;
    }
    if (!made) {
        config_finish(c);
    }
    return made;
}

static void routes_free(struct config *c)
{
    for (size_t i = 0; i < c->route_count; i++) {
        free(c->routes[i].prefix);
        free(c->routes[i].dir);
    }
    free(c->routes);
    c->routes = NULL;
    c->route_count = 0;
}

void config_finish(struct config *c)
{
    free(c->root);
    free(c->config_path);
    free(c->host);
    free(c->base_path);
    free(c->allowed_hosts);
    routes_free(c);
    free(c->health_url);
    *c = (struct config){0};
}

bool config_live_reload(const struct config *c)
{
    return c->live_reload < 0 ? !c->production : c->live_reload;
}

const struct setting *config_find_setting(const char *key)
{
    char name[64];
    size_t n = strlen(key);
    if (n >= sizeof(name)) {
        return NULL;
    }
    for (size_t i = 0; i <= n; i++) { /* live_reload, LIVE_RELOAD and live-reload are one key */
        name[i] = key[i] == '_' ? '-' : (char)tolower((unsigned char)key[i]);
    }
    for (size_t i = 0; i < config_setting_count; i++) {
        if (strcmp(config_settings[i].name, name) == 0) {
            return &config_settings[i];
        }
    }
    return NULL;
}

const struct setting *config_nearest_setting(const char *key)
{
    char name[64];
    size_t n = strlen(key);
    if (n >= sizeof(name)) {
        return NULL;
    }
    for (size_t i = 0; i <= n; i++) {
        name[i] = key[i] == '_' ? '-' : (char)tolower((unsigned char)key[i]);
    }
    const struct setting *nearest = NULL;
    size_t best = 3; /* two slips at most: beyond that it is another's variable */
    for (size_t i = 0; i < config_setting_count; i++) {
        const char *known = config_settings[i].name;
        size_t d = edits_count(name, n, known, strlen(known), best - 1);
        if (d < best) {
            best = d;
            nearest = &config_settings[i];
        }
    }
    return nearest;
}

bool config_setting_is_yes_no(const struct setting *s)
{
    return s->kind == KIND_BOOL || s->kind == KIND_TRISTATE;
}

bool config_fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return false;
}

void config_source_set(struct config_source *s, const char *name, int line)
{
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->line = line;
}

void config_note_source(struct config *c, const char *key, const char *name, int line)
{
    const struct setting *s = config_find_setting(key);
    if (s && strcmp(s->name, "root") == 0) {
        config_source_set(&c->root_from, name, line);
    } else if (s && strcmp(s->name, "host") == 0) {
        config_source_set(&c->host_from, name, line);
    }
}

static bool parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0 || strcasecmp(v, no[i]) == 0) {
            *out = strcasecmp(v, yes[i]) == 0;
            return true;
        }
    }
    return false;
}

/* Whether end is a unit's rest after its letter: nothing, "B" or "iB" (any case), so
 * 16K, 16KB, 16KiB and 16kib are one size, as users write it (all 1024s, as nginx's k). */
static bool unit_rest(const char *end)
{
    return end[0] == '\0' || strcasecmp(end, "B") == 0 || strcasecmp(end, "iB") == 0;
}

/* Digits with an optional K, M or G unit (powers of 1024; unit_rest). */
static bool parse_unsigned(const char *v, bool with_suffix, unsigned long long *out)
{
    if (!isdigit((unsigned char)v[0])) {
        return false;
    }
    errno = 0;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno) {
        return false;
    }
    if (with_suffix && *end) {
        const char *units = "KMG";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u || !unit_rest(end + 1) || n > (ULLONG_MAX >> 30)) {
            return false;
        }
        n <<= 10 * (u - units + 1);
        end += strlen(end);
    }
    *out = n;
    return *end == '\0';
}

void config_bytes_text(unsigned n, char *out, size_t size)
{
    unsigned shift = n == 0 ? 0 : n % (1u << 30) == 0 ? 30 : n % (1u << 20) == 0 ? 20 : n % 1024 == 0 ? 10 : 0;
    snprintf(out, size, "%u%s", n >> shift, shift == 30 ? "G" : shift == 20 ? "M" : shift == 10 ? "K" : "");
}

/* See config_table.h. */
void config_value_text(const struct config *c, const struct setting *s, char *out, size_t size)
{
    const void *field = (const char *)c + s->offset;
    switch (s->kind) {
    case KIND_STRING:
        snprintf(out, size, "%s", **(char *const *)field ? *(char *const *)field : "none");
        return;
    case KIND_UINT:
        snprintf(out, size, "%u", *(const unsigned *)field);
        return;
    case KIND_BYTES:
        config_bytes_text(*(const unsigned *)field, out, size);
        return;
    case KIND_BOOL:
        snprintf(out, size, "%s", *(const bool *)field ? "on" : "off");
        return;
    case KIND_TRISTATE: /* -1 follows the mode: live reload is the only one */
        snprintf(out, size, "%s", *(const int *)field < 0 ? "on in preview" : *(const int *)field ? "on" : "off");
        return;
    case KIND_CHOICE:
        snprintf(out, size, "%s", s->choices[*(const unsigned *)field]);
        return;
    }
    out[0] = '\0';
}

/* A size out of its range, or not a size: says both the range and how sizes are written. */
static bool bytes_fail(char *err, size_t err_size, const char *value, unsigned min, unsigned max)
{
    char lo[16], hi[16];
    config_bytes_text(min, lo, sizeof(lo));
    config_bytes_text(max, hi, sizeof(hi));
    return config_fail(err, err_size, "'%s' is not a byte size from %s to %s (bytes, or with K, M or G: 1024s)",
                       value, lo, hi);
}

static bool set_string(char **field, const char *name, const char *value, char *err,
                       size_t err_size)
{
    char tidy[URL_PREFIX_MAX];
    if (strcmp(name, "base-path") == 0) {
        if (!url_prefix_clean(value, tidy, sizeof(tidy))) {
            return config_fail(err, err_size, "'%s' is not a URL path like /article", value);
        }
        value = tidy;
    } else if (strcmp(name, "allowed-hosts") == 0 && !allowed_hosts_valid(value)) {
        return config_fail(err, err_size, "'%s' is not a list of host names like mybox.local,.example.org (or *)",
                           value);
    } else if (!value[0]) {
        return config_fail(err, err_size, "needs a value");
    }
    char *copy = strdup(value);
    if (!copy) {
        return config_fail(err, err_size, "out of memory");
    }
    free(*field);
    *field = copy;
    return true;
}

static bool set_choice(unsigned *field, const struct setting *s, const char *value, char *err,
                       size_t err_size)
{
    for (unsigned i = s->min; i <= s->max; i++) {
        if (strcasecmp(value, s->choices[i]) == 0) {
            *field = i;
            return true;
        }
    }
    return config_fail(err, err_size, "'%s' is not %s", value,
                       s->choices == log_choices ? "a log format (common, combined, json)"
                                                 : "auto, inotify or poll");
}

bool config_set(struct config *c, const char *key, const char *value, char *err, size_t err_size)
{
    const struct setting *s = config_find_setting(key);
    if (!s) {
        return config_fail(err, err_size, "unknown setting '%s'", key);
    }
    void *field = (char *)c + s->offset;
    bool b;
    unsigned long long n;
    switch (s->kind) {
    case KIND_STRING:
        return set_string(field, s->name, value, err, err_size);
    case KIND_UINT:
    case KIND_BYTES:
        if (!parse_unsigned(value, s->kind == KIND_BYTES, &n) || n < s->min || n > s->max) {
            return s->kind == KIND_UINT
                ? config_fail(err, err_size, "'%s' is not a number from %u to %u", value, s->min, s->max)
                : bytes_fail(err, err_size, value, s->min, s->max);
        }
        *(unsigned *)field = (unsigned)n;
        return true;
    case KIND_BOOL:
    case KIND_TRISTATE:
        if (!parse_bool(value, &b)) {
            return config_fail(err, err_size, "'%s' is not a yes/no value (true, false, on, off, 1, 0)",
                               value);
        }
        if (s->kind == KIND_BOOL) {
            *(bool *)field = b;
        } else {
            *(int *)field = b;
        }
        return true;
    case KIND_CHOICE:
        return set_choice(field, s, value, err, err_size);
    }
    return false;
}

/* Splits "folder, fragments" into the folder (a new string; NULL when out
 * of memory) and the mark. */
static char *route_folder(const char *value, bool *fragments)
{
    const char *comma = strrchr(value, ',');
    const char *mark = comma ? comma + 1 + strspn(comma + 1, " \t") : NULL;
    *fragments = mark && strcmp(mark, "fragments") == 0;
    size_t len = *fragments ? (size_t)(comma - value) : strlen(value);
    while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t')) {
        len--;
    }
    return strndup(value, len);
}

/* The index of the route mounted at prefix ("/x/"), or route_count. */
static size_t route_index(const struct config *c, const char *prefix)
{
    size_t i = 0;
    while (i < c->route_count && strcmp(c->routes[i].prefix, prefix) != 0) {
        i++;
    }
    return i;
}

/* config_set_route once the prefix is whole ("/x/", taken) and the folder
 * (taken) and the mark apart. False when out of memory (both freed). */
static bool put_route(struct config *c, char *prefix, char *dir, bool fragments, int line)
{
    size_t i = route_index(c, prefix);
    if (!dir[0]) { /* "/x/ =": unmount */
        if (i < c->route_count) {
            free(c->routes[i].prefix);
            free(c->routes[i].dir);
            c->routes[i] = c->routes[--c->route_count];
        }
        free(prefix);
        free(dir);
        return true;
    }
    fragments = fragments || strcmp(prefix, "/fragments/") == 0;
    if (i == c->route_count) {
        struct config_route *grown = realloc(c->routes, (c->route_count + 1) * sizeof(*c->routes));
        if (!grown) {
            free(prefix);
            free(dir);
            return false;
        }
        c->routes = grown;
        c->routes[c->route_count++] = (struct config_route){prefix, dir, fragments, line};
        return true;
    }
    free(prefix);
    free(c->routes[i].dir);
    c->routes[i] = (struct config_route){c->routes[i].prefix, dir, fragments, line};
    return true;
}

bool config_set_route(struct config *c, const char *prefix, const char *value, int line, char *err,
                      size_t err_size)
{
    char tidy[URL_PREFIX_MAX];
    if (prefix[0] != '/' || !url_prefix_clean(prefix, tidy, sizeof(tidy))) {
        return config_fail(err, err_size, "route '%s' is not a URL path like /assets/", prefix);
    }
    if (strncmp(prefix, "/__folio", 8) == 0) {
        return config_fail(err, err_size, "route '%s' is inside /__folio/, which folio keeps for itself",
                           prefix);
    }
    size_t len = strlen(tidy);
    char *whole = malloc(len + 2);
    if (!whole) {
        return config_fail(err, err_size, "out of memory");
    }
    memcpy(whole, tidy, len);
    memcpy(whole + len, "/", 2);
    size_t i = route_index(c, whole);
    if (line > 0 && i < c->route_count && c->routes[i].line > 0) { /* as nginx and lighttpd refuse a duplicate */
        free(whole);
        return config_fail(err, err_size, "route %s is given twice (first on line %d)", prefix, c->routes[i].line);
    }
    bool fragments;
    char *folder = route_folder(value, &fragments);
    if (!folder) {
        free(whole);
        return config_fail(err, err_size, "out of memory");
    }
    return put_route(c, whole, folder, fragments, line) || config_fail(err, err_size, "out of memory");
}

static bool routes_equal(const struct config *a, const struct config *b)
{
    if (a->route_count != b->route_count) {
        return false;
    }
    for (size_t i = 0; i < a->route_count; i++) {
        if (strcmp(a->routes[i].prefix, b->routes[i].prefix) || strcmp(a->routes[i].dir, b->routes[i].dir) ||
            a->routes[i].fragments != b->routes[i].fragments) {
            return false;
        }
    }
    return true;
}

static bool setting_equal(const struct config *a, const struct config *b, const struct setting *s)
{
    const void *x = (const char *)a + s->offset, *y = (const char *)b + s->offset;
    switch (s->kind) {
    case KIND_STRING:
        return strcmp(*(char *const *)x, *(char *const *)y) == 0;
    case KIND_UINT:
    case KIND_BYTES:
    case KIND_CHOICE:
        return *(const unsigned *)x == *(const unsigned *)y;
    case KIND_BOOL:
        return *(const bool *)x == *(const bool *)y;
    case KIND_TRISTATE:
        return *(const int *)x == *(const int *)y;
    }
    return true;
}

/* Sets fresh's value of s back to running's; false when out of memory. */
static bool keep_running(struct config *fresh, const struct config *running, const struct setting *s)
{
    void *dst = (char *)fresh + s->offset;
    const void *src = (const char *)running + s->offset;
    switch (s->kind) {
    case KIND_STRING: {
        char *copy = strdup(*(char *const *)src);
        if (!copy) {
            return false;
        }
        free(*(char **)dst);
        *(char **)dst = copy;
        return true;
    }
    case KIND_UINT:
    case KIND_BYTES:
    case KIND_CHOICE:
        *(unsigned *)dst = *(const unsigned *)src;
        return true;
    case KIND_BOOL:
        *(bool *)dst = *(const bool *)src;
        return true;
    case KIND_TRISTATE:
        *(int *)dst = *(const int *)src;
        return true;
    }
    return true;
}

/* Sets fresh's routes back to running's; false when out of memory. */
static bool keep_running_routes(struct config *fresh, const struct config *running)
{
    routes_free(fresh);
    fresh->routes = calloc(running->route_count ? running->route_count : 1, sizeof(*fresh->routes));
    for (size_t i = 0; fresh->routes && i < running->route_count; i++) {
        fresh->routes[i] = running->routes[i];
        fresh->routes[i].prefix = strdup(running->routes[i].prefix);
        fresh->routes[i].dir = strdup(running->routes[i].dir);
        fresh->route_count = i + 1; /* freed by routes_free, whole or not */
        if (!fresh->routes[i].prefix || !fresh->routes[i].dir) {
            return false;
        }
    }
    return fresh->routes != NULL;
}

/* See config.h. */
bool config_settle(struct config *fresh, const struct config *running, char *restart,
                   size_t restart_size)
{
    size_t used = 0;
    restart[0] = '\0';
    for (size_t i = 0; i < config_setting_count; i++) {
        const struct setting *s = &config_settings[i];
        if (s->live || setting_equal(fresh, running, s)) {
            continue;
        }
        if (!keep_running(fresh, running, s)) {
            return false;
        }
        if (used < restart_size) {
            used += (size_t)snprintf(restart + used, restart_size - used, "%s%s", used ? ", " : "", s->name);
        }
    }
    if (!routes_equal(fresh, running)) {
        if (!keep_running_routes(fresh, running)) {
            return false;
        }
        if (used < restart_size) {
            snprintf(restart + used, restart_size - used, "%s[routes]", used ? ", " : "");
        }
    }
    return true;
}
