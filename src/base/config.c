#include "config.h"

#include "serve/rewrite.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <ini.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FOLIO_VERSION
#define FOLIO_VERSION "unknown"
#endif

enum setting_kind { KIND_STRING, KIND_UINT, KIND_BYTES, KIND_BOOL, KIND_TRISTATE, KIND_LOG_FORMAT, KIND_CHOICE };

/* One row per setting: the single source for the INI key, the FOLIO_*
 * variable, the flag and the --help text. */
static const struct setting {
    const char *name;
    enum setting_kind kind;
    size_t offset;
    unsigned min, max;
    const char *arg, *help;
} settings[] = {
#define AT(field) offsetof(struct config, field)
    {"root", KIND_STRING, AT(root), 0, 0, "DIR", "article folder holding www/, fragments/, assets/ (.)"},
    {"host", KIND_STRING, AT(host), 0, 0, "ADDR", "address to listen on (127.0.0.1; 0.0.0.0 or :: for all)"},
    {"port", KIND_UINT, AT(port), 0, 65535, "N", "TCP port, 0 picks a free one (8000)"},
    {"threads", KIND_UINT, AT(threads), 0, 256, "N", "worker threads (number of CPUs)"},
    {"production", KIND_BOOL, AT(production), 0, 0, NULL, "production mode: caching headers, no live reload"},
    {"live-reload", KIND_TRISTATE, AT(live_reload), 0, 0, NULL, "watch files and reload browsers (on in preview)"},
    {"base-path", KIND_STRING, AT(base_path), 0, 0, "PATH", "URL prefix a proxy strips, e.g. /article (none)"},
    {"trust-proxy", KIND_BOOL, AT(trust_proxy), 0, 0, NULL, "believe X-Forwarded-For and X-Forwarded-Prefix"},
    {"log-format", KIND_LOG_FORMAT, AT(log_format), 0, 0, "FMT", "access log: common, combined or json (common)"},
    {"quiet", KIND_BOOL, AT(quiet), 0, 0, NULL, "no access log"},
    {"max-age", KIND_UINT, AT(max_age), 0, 315360000, "S", "production Cache-Control max-age for non-HTML (3600)"},
    {"timeout", KIND_UINT, AT(timeout), 1, 86400, "S", "idle connection timeout (30)"},
    {"grace", KIND_UINT, AT(grace), 0, 3600, "S", "on SIGTERM, wait this long for requests in flight (10)"},
    {"connection-limit", KIND_UINT, AT(connection_limit), 1, 1000000, "N", "concurrent connections (1024)"},
    {"per-ip-limit", KIND_UINT, AT(per_ip_limit), 0, 1000000, "N", "connections from one address, 0 for none (256)"},
    {"header-limit", KIND_BYTES, AT(header_limit), 4096, 16u << 20, "BYTES", "request line and headers (32K)"},
    {"cache-size", KIND_BYTES, AT(cache_size), 0, 4095u << 20, "BYTES", "memory for compressed bodies (64M)"},
    {"gzip-level", KIND_UINT, AT(gzip_level), 1, 9, "N", "gzip level (6)"},
    {"header-timeout", KIND_UINT, AT(header_timeout), 1, 86400, "S", "whole request line and headers (60)"},
    {"send-rate", KIND_BYTES, AT(send_rate), 0, 1u << 30, "BYTES", "slowest response, per second; 0 for none (1K)"},
    {"event-stream-limit", KIND_UINT, AT(event_stream_limit), 1, 100000, "N", "live-reload event streams, 503 past it (200)"},
    {"watch", KIND_CHOICE, AT(watch), 0, 2, "MODE", "how live reload sees edits: auto, inotify or poll (auto)"},
    {"poll-interval", KIND_UINT, AT(poll_interval), 50, 60000, "MS", "with --watch poll, milliseconds between two looks (500)"},
#undef AT
};
#define SETTING_COUNT (sizeof(settings) / sizeof(settings[0]))

/* The words a KIND_CHOICE setting takes, min..max; the field gets the index.
 * watch: enum watch_mode's order. */
static const char *const watch_choices[] = {"auto", "inotify", "poll"};

static const struct config_route default_routes[] = {
    {"/", "www", false, 0},
    {"/fragments/", "fragments", true, 0},
    {"/assets/", "assets", false, 0},
};

static char *xstrdup(const char *s)
{
    char *copy = strdup(s);
    if (!copy) {
        fprintf(stderr, "folio: out of memory\n");
        exit(1);
    }
    return copy;
}

void config_init(struct config *c)
{
    *c = (struct config){
        .root = xstrdup("."),
        .host = xstrdup("127.0.0.1"),
        .base_path = xstrdup(""),
        .port = 8000,
        .threads = 0,
        .live_reload = -1,
        .log_format = LOG_FORMAT_COMMON,
        .max_age = 3600,
        .timeout = 30,
        .grace = 10,
        .connection_limit = 1024,
        .per_ip_limit = 256,
        .header_limit = 32 * 1024,
        .cache_size = 64u << 20,
        .gzip_level = 6,
        .header_timeout = 60,
        .send_rate = 1024,
        .event_stream_limit = 200,
        .poll_interval = 500,
    };
    c->routes = calloc(sizeof(default_routes) / sizeof(default_routes[0]), sizeof(*c->routes));
    if (!c->routes) {
        exit(1);
    }
    for (size_t i = 0; i < sizeof(default_routes) / sizeof(default_routes[0]); i++) {
        c->routes[i].prefix = xstrdup(default_routes[i].prefix);
        c->routes[i].dir = xstrdup(default_routes[i].dir);
        c->routes[i].fragments = default_routes[i].fragments;
    }
    c->route_count = sizeof(default_routes) / sizeof(default_routes[0]);
}

void config_finish(struct config *c)
{
    free(c->root);
    free(c->config_path);
    free(c->host);
    free(c->base_path);
    for (size_t i = 0; i < c->route_count; i++) {
        free(c->routes[i].prefix);
        free(c->routes[i].dir);
    }
    free(c->routes);
    free(c->health_url);
    free(c->root_source);
    for (size_t i = 0; i < c->retired_count; i++) {
        free(c->retired[i]);
    }
    free(c->retired);
    *c = (struct config){0};
}

bool config_live_reload(const struct config *c)
{
    return c->live_reload < 0 ? !c->production : c->live_reload;
}

static const struct setting *find_setting(const char *key)
{
    char name[64];
    size_t n = strlen(key);
    if (n >= sizeof(name)) {
        return NULL;
    }
    for (size_t i = 0; i <= n; i++) { /* live_reload, LIVE_RELOAD and live-reload are one key */
        name[i] = key[i] == '_' ? '-' : (char)tolower((unsigned char)key[i]);
    }
    for (size_t i = 0; i < SETTING_COUNT; i++) {
        if (strcmp(settings[i].name, name) == 0) {
            return &settings[i];
        }
    }
    return NULL;
}

static bool fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return false;
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

/* Digits with an optional K, M or G suffix (powers of 1024). */
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
        if (!u || end[1] != '\0' || n > (ULLONG_MAX >> 30)) {
            return false;
        }
        n <<= 10 * (u - units + 1);
        end++;
    }
    *out = n;
    return *end == '\0';
}

/* An address or a name the resolver knows, as the server will bind it. */
static bool host_valid(const char *host)
{
    struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, "0", &hints, &res) != 0) {
        return false;
    }
    freeaddrinfo(res);
    return true;
}

static bool set_string(char **field, const char *name, const char *value, char *err,
                       size_t err_size)
{
    if (strcmp(name, "base-path") == 0) {
        char tidy[REWRITE_PREFIX_MAX];
        if (!rewrite_prefix_clean(value, tidy, sizeof(tidy))) {
            return fail(err, err_size, "'%s' is not a URL path like /article", value);
        }
        free(*field);
        *field = xstrdup(tidy);
        return true;
    }
    if (!value[0]) {
        return fail(err, err_size, "needs a value");
    }
    if (strcmp(name, "host") == 0 && !host_valid(value)) {
        return fail(err, err_size, "'%s' is not an address to listen on (e.g. 127.0.0.1, 0.0.0.0, ::)",
                    value);
    }
    free(*field);
    *field = xstrdup(value);
    return true;
}

bool config_set(struct config *c, const char *key, const char *value, char *err, size_t err_size)
{
    const struct setting *s = find_setting(key);
    if (!s) {
        return fail(err, err_size, "unknown setting '%s'", key);
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
            return fail(err, err_size, "'%s' is not a%s number from %u to %u", value,
                        s->kind == KIND_BYTES ? " byte" : "", s->min, s->max);
        }
        *(unsigned *)field = (unsigned)n;
        return true;
    case KIND_BOOL:
    case KIND_TRISTATE:
        if (!parse_bool(value, &b)) {
            return fail(err, err_size, "'%s' is not a yes/no value (true, false, on, off, 1, 0)", value);
        }
        if (s->kind == KIND_BOOL) {
            *(bool *)field = b;
        } else {
            *(int *)field = b;
        }
        return true;
    case KIND_LOG_FORMAT:
        if (!log_format_parse(value, field)) {
            return fail(err, err_size, "'%s' is not a log format (common, combined, json)", value);
        }
        return true;
    case KIND_CHOICE:
        for (unsigned i = s->min; i <= s->max; i++) {
            if (strcasecmp(value, watch_choices[i]) == 0) {
                *(unsigned *)field = i;
                return true;
            }
        }
        return fail(err, err_size, "'%s' is not auto, inotify or poll", value);
    }
    return false;
}

/* Splits "folder, fragments" into the folder (a new string) and the mark. */
static char *route_folder(const char *value, bool *fragments)
{
    const char *comma = strrchr(value, ',');
    const char *mark = comma ? comma + 1 + strspn(comma + 1, " \t") : NULL;
    *fragments = mark && strcmp(mark, "fragments") == 0;
    size_t len = *fragments ? (size_t)(comma - value) : strlen(value);
    while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t')) {
        len--;
    }
    char *dir = strndup(value, len);
    if (!dir) {
        exit(1);
    }
    return dir;
}

/* set_route once the folder and the mark are apart; line: where the file set it. */
static bool set_route_folder(struct config *c, const char *prefix, const char *dir, bool fragments,
                             int line, char *err, size_t err_size)
{
    size_t len = strlen(prefix);
    if (prefix[0] != '/' || strstr(prefix, "//") || strstr(prefix, "/.") || strpbrk(prefix, "?#%\\ ")) {
        return fail(err, err_size, "route '%s' is not a URL path like /assets/", prefix);
    }
    if (strncmp(prefix, "/__folio", 8) == 0) {
        return fail(err, err_size, "route '%s' is inside /__folio/, which folio keeps for itself", prefix);
    }
    char *normal = malloc(len + 2);
    if (!normal) {
        exit(1);
    }
    memcpy(normal, prefix, len + 1);
    if (normal[len - 1] != '/') {
        strcpy(normal + len, "/");
    }
    size_t i = 0;
    while (i < c->route_count && strcmp(c->routes[i].prefix, normal) != 0) {
        i++;
    }
    if (!dir[0]) {
        if (i < c->route_count) {
            free(c->routes[i].prefix);
            free(c->routes[i].dir);
            c->routes[i] = c->routes[--c->route_count];
        }
        free(normal);
        return true;
    }
    if (i == c->route_count) {
        struct config_route *grown = realloc(c->routes, (c->route_count + 1) * sizeof(*grown));
        if (!grown) {
            exit(1);
        }
        c->routes = grown;
        c->routes[c->route_count++] = (struct config_route){
            normal, xstrdup(dir), fragments || strcmp(normal, "/fragments/") == 0, line};
        return true;
    }
    c->routes[i].fragments = fragments || strcmp(normal, "/fragments/") == 0;
    free(normal);
    free(c->routes[i].dir);
    c->routes[i].dir = xstrdup(dir);
    c->routes[i].line = line;
    return true;
}

/* [routes] "/prefix/ = folder": adds or replaces a mount; an empty folder
 * removes it; "folder, fragments" marks a route whose HTML the page's script
 * fetches (no live-reload client, references resolved one folder up). */
static bool set_route(struct config *c, const char *prefix, const char *value, int line, char *err,
                      size_t err_size)
{
    bool fragments;
    char *folder = route_folder(value, &fragments);
    bool ok = set_route_folder(c, prefix, folder, fragments, line, err, err_size);
    free(folder);
    return ok;
}

/* Remembers which layer set root last, for config_check_routes' message. */
static void note_root_source(struct config *c, const char *key, const char *source)
{
    const struct setting *s = find_setting(key);
    if (s && strcmp(s->name, "root") == 0) {
        free(c->root_source);
        c->root_source = xstrdup(source);
    }
}

struct ini_state {
    struct config *config;
    const char *next; /* the text still to hand to inih */
    int line;         /* the line inih was handed last */
    int error_line;   /* where the first handler error was, 0: none */
    int long_line;    /* the first line too long for inih, 0: none */
    char error[256];  /* the first handler error; later ones are usually its echoes */
};

/* inih's reader: one line a call, so the handler knows which line it is on
 * (inih itself tells only the first error's line, of whatever kind). A line
 * longer than inih's buffer would be split into two bogus ones: it is handed
 * over empty and reported instead. */
static char *read_line(char *str, int size, void *stream)
{
    struct ini_state *st = stream;
    if (!*st->next) {
        return NULL;
    }
    const char *newline = strchr(st->next, '\n');
    size_t len = newline ? (size_t)(newline - st->next + 1) : strlen(st->next);
    st->line++;
    if (len + 1 > (size_t)size) {
        st->long_line = st->long_line ? st->long_line : st->line;
        len = 0;
    } else {
        memcpy(str, st->next, len);
    }
    str[len] = '\0';
    st->next += newline ? (size_t)(newline - st->next + 1) : strlen(st->next);
    return str;
}

static int on_ini_entry(void *user, const char *section, const char *name, const char *value)
{
    struct ini_state *st = user;
    char err[200];
    bool ok;
    if (strcmp(section, "server") == 0) {
        ok = config_set(st->config, name, value, err, sizeof(err));
        if (ok) {
            char where[PATH_MAX + 16];
            snprintf(where, sizeof(where), "%s:%d",
                     st->config->config_path ? st->config->config_path : "config", st->line);
            note_root_source(st->config, name, where);
        }
    } else if (strcmp(section, "routes") == 0) {
        ok = set_route(st->config, name, value, st->line, err, sizeof(err));
    } else {
        ok = fail(err, sizeof(err), "unknown section [%s] (expected [server] or [routes])", section);
    }
    if (!ok && !st->error_line) {
        st->error_line = st->line;
        if (strcmp(section, "server") == 0) {
            snprintf(st->error, sizeof(st->error), "%s: %s", name, err);
        } else {
            snprintf(st->error, sizeof(st->error), "%s", err);
        }
    }
    return ok;
}

bool config_apply_ini(struct config *c, const char *text, char *err, size_t err_size)
{
    struct ini_state st = {.config = c, .next = text};
    int first = ini_parse_stream(read_line, &st, on_ini_entry, &st);
    if (first < 0) {
        return fail(err, err_size, "out of memory");
    }
    if (st.long_line && (first == 0 || st.long_line < first)) {
        return fail(err, err_size, "line %d: longer than the %d characters a line may have",
                    st.long_line, INI_MAX_LINE - 2);
    }
    if (first == 0) {
        return true;
    }
    if (first == st.error_line) {
        return fail(err, err_size, "line %d: %s", first, st.error);
    }
    return fail(err, err_size, "line %d: not a [section] or key = value", first);
}

static bool read_file(const char *path, char **text, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return fail(err, err_size, "%s", strerror(errno));
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *grown = cap < (1u << 20) ? realloc(buf, cap *= 2) : NULL;
            if (!grown) {
                free(buf);
                fclose(f);
                return fail(err, err_size, "larger than 1 MiB, not a config file");
            }
            buf = grown;
        }
    }
    bool failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        free(buf);
        return fail(err, err_size, "%s", failed ? "read error" : "out of memory");
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        free(buf);
        return fail(err, err_size, "holds NUL bytes, not a config file");
    }
    *text = buf;
    return true;
}

static void print_help(FILE *out)
{
    fprintf(out, "usage: folio [options]\n"
                 "Serves an article (www/ at /, fragments/ at /fragments/, assets/ at /assets/)\n"
                 "and, in preview, reloads browsers when its files change.\n\n");
    fprintf(out, "  %-24s  %s\n", "-c, --config FILE",
            "INI file with [server] and [routes] (ROOT/config/folio.conf if present)");
    for (size_t i = 0; i < SETTING_COUNT; i++) {
        const struct setting *s = &settings[i];
        char flag[64];
        if (s->kind == KIND_BOOL || s->kind == KIND_TRISTATE) {
            snprintf(flag, sizeof(flag), "    --[no-]%s", s->name);
        } else {
            snprintf(flag, sizeof(flag), "    --%s %s", s->name, s->arg);
        }
        fprintf(out, "  %-24s  %s\n", flag, s->help);
    }
    fprintf(out, "  %-24s  %s\n", "    --health-check [URL]",
            "exit 0 if the server (or URL) answers /__folio/health with 200, else 1");
    fprintf(out, "  %-24s  %s\n  %-24s  %s\n\n", "-h, --help", "this text", "-V, --version",
            "the version");
    fprintf(out, "Every setting can also come from the config file's [server] section (same name)\n"
                 "or the environment (FOLIO_<NAME>, e.g. FOLIO_LIVE_RELOAD=off; PORT as well).\n"
                 "Flags override the environment, which overrides the file.\n");
}

/* getopt_long's table: each setting, and a --no- twin for the yes/no ones.
 * val indexes settings; the twin is val + SETTING_COUNT; then config, help,
 * version. */
enum { OPT_CONFIG = 2 * SETTING_COUNT, OPT_HELP, OPT_VERSION, OPT_HEALTH_CHECK };

static struct option *build_options(char names[][72])
{
    static struct option options[2 * SETTING_COUNT + 5];
    size_t n = 0;
    for (size_t i = 0; i < SETTING_COUNT; i++) {
        bool yes_no = settings[i].kind == KIND_BOOL || settings[i].kind == KIND_TRISTATE;
        options[n++] = (struct option){settings[i].name, yes_no ? no_argument : required_argument, NULL, (int)i};
        if (yes_no) {
            snprintf(names[i], 72, "no-%s", settings[i].name);
            options[n++] = (struct option){names[i], no_argument, NULL, (int)(i + SETTING_COUNT)};
        }
    }
    options[n++] = (struct option){"config", required_argument, NULL, OPT_CONFIG};
    options[n++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    options[n++] = (struct option){"version", no_argument, NULL, OPT_VERSION};
    options[n++] = (struct option){"health-check", optional_argument, NULL, OPT_HEALTH_CHECK};
    options[n] = (struct option){0};
    return options;
}

static const char *env_lookup(char **envp, const char *name)
{
    size_t len = strlen(name);
    for (char **e = envp; e && *e; e++) {
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=') {
            return *e + len + 1;
        }
    }
    return NULL;
}

enum config_result config_load(struct config *c, int argc, char **argv, char **envp)
{
    static char no_names[SETTING_COUNT][72];
    const struct option *options = build_options(no_names);
    char err[256];
    config_init(c);

    /* Pass 1: only --config, --help and --version (mako's two passes), so the
     * file can be read before the flags that override it. */
    const char *config_path = env_lookup(envp, "FOLIO_CONFIG");
    const char *root = env_lookup(envp, "FOLIO_ROOT");
    opterr = 0;
    optind = 1;
    for (int opt; (opt = getopt_long(argc, argv, "c:hV", options, NULL)) != -1;) {
        if (opt == 'c' || opt == OPT_CONFIG) {
            config_path = optarg;
        } else if (opt == 'h' || opt == OPT_HELP) {
            print_help(stdout);
            return CONFIG_EXIT;
        } else if (opt == 'V' || opt == OPT_VERSION) {
            printf("folio %s\n", FOLIO_VERSION);
            return CONFIG_EXIT;
        } else if (opt == OPT_HEALTH_CHECK) {
            c->health_check = true;
            free(c->health_url);
            c->health_url = optarg ? xstrdup(optarg) : NULL;
        } else if (opt >= 0 && opt < (int)SETTING_COUNT && strcmp(settings[opt].name, "root") == 0) {
            root = optarg;
        }
    }

    /* The article's own settings: ROOT/config/folio.conf, wherever folio
     * was started from (root itself comes from the flag or FOLIO_ROOT). */
    char default_path[PATH_MAX];
    snprintf(default_path, sizeof(default_path), "%s/config/folio.conf", root && *root ? root : ".");
    if (!config_path && access(default_path, F_OK) == 0) {
        config_path = strncmp(default_path, "./", 2) == 0 ? default_path + 2 : default_path;
    }
    char *text = NULL;
    if (config_path && !read_file(config_path, &text, err, sizeof(err))) {
        fprintf(stderr, "folio: config %s: %s\n", config_path, err);
        return CONFIG_INVALID;
    }
    if (text) {
        c->config_path = xstrdup(config_path);
        bool ok = config_apply_ini(c, text, err, sizeof(err));
        free(text);
        int line = 0, skip = 0;
        if (!ok && sscanf(err, "line %d: %n", &line, &skip) == 1 && skip > 0) {
            fprintf(stderr, "folio: %s:%d: %s\n", config_path, line, err + skip);
            return CONFIG_INVALID;
        }
        if (!ok) {
            fprintf(stderr, "folio: %s: %s\n", config_path, err);
            return CONFIG_INVALID;
        }
    }

    /* The environment: PORT first (platforms set it), then FOLIO_* over it. */
    const char *port = env_lookup(envp, "PORT");
    if (port && port[0] && !config_set(c, "port", port, err, sizeof(err))) {
        fprintf(stderr, "folio: PORT: %s\n", err);
        return CONFIG_INVALID;
    }
    for (char **e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "FOLIO_", 6) != 0 || !eq || strncmp(*e, "FOLIO_CONFIG=", 13) == 0) {
            continue;
        }
        char key[64];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - *e - 6), *e + 6);
        if (!find_setting(key)) {
            continue; /* FOLIO_* is a namespace others may share (FOLIO_BIN in our tests) */
        }
        if (!config_set(c, key, eq + 1, err, sizeof(err))) {
            fprintf(stderr, "folio: %.*s: %s\n", (int)(eq - *e), *e, err);
            return CONFIG_INVALID;
        }
        note_root_source(c, key, "FOLIO_ROOT");
    }

    /* Pass 2: every flag, in order. */
    opterr = 0;
    optind = 1;
    for (int opt, index = 0; (opt = getopt_long(argc, argv, ":c:hV", options, &index)) != -1;) {
        if (opt == '?' || opt == ':') {
            const char *arg = argv[optind - 1];
            if (opt == ':') {
                fprintf(stderr, "folio: %s needs a value (see --help)\n", arg);
            } else {
                fprintf(stderr, "folio: unknown option '%s' (see --help)\n", arg);
            }
            return CONFIG_INVALID;
        }
        if (opt >= (int)SETTING_COUNT && opt < OPT_CONFIG) {
            config_set(c, settings[opt - SETTING_COUNT].name, "false", err, sizeof(err));
        } else if (opt >= 0 && opt < (int)SETTING_COUNT) {
            const struct setting *s = &settings[opt];
            bool yes_no = s->kind == KIND_BOOL || s->kind == KIND_TRISTATE;
            if (!config_set(c, s->name, yes_no ? "true" : optarg, err, sizeof(err))) {
                fprintf(stderr, "folio: --%s: %s\n", s->name, err);
                return CONFIG_INVALID;
            }
            note_root_source(c, s->name, "--root");
        }
    }
    if (c->health_check && !c->health_url && optind == argc - 1) {
        c->health_url = xstrdup(argv[optind++]); /* --health-check URL */
    }
    if (optind < argc) {
        fprintf(stderr, "folio: unexpected argument '%s' (see --help)\n", argv[optind]);
        return CONFIG_INVALID;
    }
    return CONFIG_OK;
}

bool config_check_routes(const struct config *c)
{
    struct stat st;
    errno = 0;
    if (stat(c->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "folio: %s%sroot %s: %s\n", c->root_source ? c->root_source : "",
                c->root_source ? ": " : "", c->root, errno ? strerror(errno) : "not a folder");
        return false;
    }
    for (size_t i = 0; i < c->route_count; i++) {
        const struct config_route *r = &c->routes[i];
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s%s%s", r->dir[0] == '/' ? "" : c->root,
                 r->dir[0] == '/' ? "" : "/", r->dir);
        errno = 0;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            continue;
        }
        const char *why = errno ? strerror(errno) : "not a folder";
        if (r->line) {
            fprintf(stderr, "folio: %s:%d: route %s: folder %s: %s\n", c->config_path, r->line,
                    r->prefix, path, why);
        } else {
            fprintf(stderr, "folio: route %s: folder %s: %s (a default route; '%s =' under [routes] "
                            "in the config file drops it)\n", r->prefix, path, why, r->prefix);
        }
        return false;
    }
    return true;
}

/* Read on each request by http.c, so a new value shows on the next one.
 * Everything else is bound into the daemon, the watcher or the cache at
 * start-up and needs a restart. */
static const char *const live_settings[] = {
    "quiet", "log-format", "max-age", "gzip-level", "trust-proxy", "base-path", "grace",
};

static bool is_live(const char *name)
{
    for (size_t i = 0; i < sizeof(live_settings) / sizeof(live_settings[0]); i++) {
        if (strcmp(live_settings[i], name) == 0) {
            return true;
        }
    }
    return false;
}

static bool routes_equal(const struct config *a, const struct config *b)
{
    if (a->route_count != b->route_count) {
        return false;
    }
    for (size_t i = 0; i < a->route_count; i++) {
        if (strcmp(a->routes[i].prefix, b->routes[i].prefix) || strcmp(a->routes[i].dir, b->routes[i].dir)) {
            return false;
        }
    }
    return true;
}

/* Copies one setting's value; a replaced string is retired, not freed. */
static void copy_setting(struct config *to, const struct config *from, const struct setting *s)
{
    void *dst = (char *)to + s->offset;
    const void *src = (const char *)from + s->offset;
    switch (s->kind) {
    case KIND_STRING: {
        char **retired = realloc(to->retired, (to->retired_count + 1) * sizeof(*retired));
        if (!retired) {
            return; /* keep the old value rather than lose track of it */
        }
        to->retired = retired;
        to->retired[to->retired_count++] = *(char **)dst;
        *(char **)dst = xstrdup(*(char *const *)src);
        return;
    }
    case KIND_UINT:
    case KIND_BYTES:
    case KIND_CHOICE:
        *(unsigned *)dst = *(const unsigned *)src;
        return;
    case KIND_BOOL:
        *(bool *)dst = *(const bool *)src;
        return;
    case KIND_TRISTATE:
        *(int *)dst = *(const int *)src;
        return;
    case KIND_LOG_FORMAT:
        *(enum log_format *)dst = *(const enum log_format *)src;
        return;
    }
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
    case KIND_LOG_FORMAT:
        return *(const enum log_format *)x == *(const enum log_format *)y;
    }
    return true;
}

void config_apply_live(struct config *running, const struct config *fresh, char *restart,
                       size_t restart_size)
{
    size_t used = 0;
    restart[0] = '\0';
    for (size_t i = 0; i < SETTING_COUNT; i++) {
        const struct setting *s = &settings[i];
        if (setting_equal(running, fresh, s)) {
            continue;
        }
        if (is_live(s->name)) {
            copy_setting(running, fresh, s);
        } else if (used < restart_size) {
            used += (size_t)snprintf(restart + used, restart_size - used, "%s%s", used ? ", " : "", s->name);
        }
    }
    if (!routes_equal(running, fresh) && used < restart_size) {
        snprintf(restart + used, restart_size - used, "%s[routes]", used ? ", " : "");
    }
}
