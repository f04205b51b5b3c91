/* config_options: the layers above the table (the file, the environment, the
 * flags, in that order), --help, and the start-up checks of the world. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "build_config.h"
#include "config_table.h"
#include "escape.h"


/* Sets err to "source[:line]: message"-to-be and returns CONFIG_INVALID. */
static enum config_result invalid(struct config_error *err, const char *source, int line,
                                  const char *message)
{
    config_source_set(&err->source, source, line);
    if (message != err->message) { /* a reason config_set wrote there already stays */
        snprintf(err->message, sizeof(err->message), "%s", message);
    }
    return CONFIG_INVALID;
}

/* Appends text to err's message. */
static void add_hint(struct config_error *err, const char *text)
{
    size_t used = strlen(err->message);
    snprintf(err->message + used, sizeof(err->message) - used, "%s", text);
}

void config_error_format(const struct config_error *err, char *out, size_t size)
{
    const struct config_source *s = &err->source;
    if (!s->name[0]) {
        snprintf(out, size, "%s", err->message);
    } else if (s->line > 0) {
        snprintf(out, size, "%s:%d: %s", s->name, s->line, err->message);
    } else {
        snprintf(out, size, "%s: %s", s->name, err->message);
    }
}

/* A control byte of a value (an escape sequence in --base-path, say) goes out
 * as \xHH (base/escape.h): the line must neither drive a terminal nor break
 * in two. */
void config_error_print(const struct config_error *err, FILE *out)
{
    char line[sizeof(err->source.name) + sizeof(err->message) + 32];
    config_error_format(err, line, sizeof(line));
    fputs("folio: ", out);
    escape_fputs(line, out);
    fputc('\n', out);
}

/* The whole file at path, NUL-terminated, in *text (the caller frees). */
static bool read_file(const char *path, char **text, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return config_fail(err, err_size, "%s", strerror(errno));
    }
    size_t cap = 4096, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *grown = cap < (1u << 20) ? array_grow(buf, &cap, cap + 1, 1, 0) : NULL;
            if (!grown) {
                free(buf);
                fclose(f);
                return config_fail(err, err_size, "larger than 1 MiB, not a config file");
            }
            buf = grown;
        }
    }
    int read_errno = ferror(f) ? errno : 0; /* EISDIR: a folder was named */
    fclose(f);
    if (!buf || read_errno || memchr(buf, '\0', len)) {
        free(buf);
        return config_fail(err, err_size, "%s", !buf ? "out of memory" : read_errno ? strerror(read_errno)
                                                                        : "holds NUL bytes, not a config file");
    }
    buf[len] = '\0';
    *text = buf;
    return true;
}

const struct command_option config_command_options[] = {
    {'c', "config", "FILE", false, "INI file with [server] and [routes] (ROOT/config/folio.conf if present)", true},
    {'\0', "health-check", "URL", true, "exit 0 if the server (or URL) answers /__folio/health with 200, else 1",
     false},
    {'h', "help", NULL, false, "print this help", false},
    {'V', "version", NULL, false, "print the version", false},
};
const size_t config_command_option_count = sizeof(config_command_options) / sizeof(config_command_options[0]);

/* One --help line for an option that is no setting. */
static void print_command_option(FILE *out, const struct command_option *o)
{
    char flag[64], shortname[8] = "    ";
    if (o->short_name) {
        snprintf(shortname, sizeof(shortname), "-%c, ", o->short_name);
    }
    snprintf(flag, sizeof(flag), "%s--%s%s%s%s%s", shortname, o->name, o->arg ? " " : "",
             o->arg_optional ? "[" : "", o->arg ? o->arg : "", o->arg_optional ? "]" : "");
    fprintf(out, "  %-24s  %s\n", flag, o->help);
}

static void print_help(FILE *out)
{
    struct config defaults;
    bool known = config_init(&defaults); /* out of memory: the defaults go unsaid */
    fprintf(out, "usage: folio [options]\n"
                 "usage: folio check [--format text|json] [--strict] [options]\n"
                 "Serves an article (www/ at /, fragments/ at /fragments/, assets/ at /assets/)\n"
                 "and, in preview, reloads browsers when its files change. `folio check` finds\n"
                 "its broken references instead (see folio check --help).\n\n");
    for (size_t i = 0; i < config_command_option_count; i++) {
        if (config_command_options[i].first) {
            print_command_option(out, &config_command_options[i]);
        }
    }
    for (size_t i = 0; i < config_setting_count; i++) {
        const struct setting *s = &config_settings[i];
        char flag[64];
        if (config_setting_is_yes_no(s)) {
            snprintf(flag, sizeof(flag), "    --[no-]%s", s->name);
        } else {
            snprintf(flag, sizeof(flag), "    --%s %s", s->name, s->arg);
        }
        char def[64] = "";
        if (known) {
            config_value_text(&defaults, s, def, sizeof(def));
        }
        fprintf(out, "  %-24s  %s%s%s%s\n", flag, s->help, known ? " (" : "", def, known ? ")" : "");
    }
    config_finish(&defaults);
    for (size_t i = 0; i < config_command_option_count; i++) {
        if (!config_command_options[i].first) {
            print_command_option(out, &config_command_options[i]);
        }
    }
    fprintf(out, "\n");
    fprintf(out, "Every setting can also come from the config file's [server] section (same name)\n"
                 "or the environment (FOLIO_<NAME>, e.g. FOLIO_LIVE_RELOAD=off; PORT as well).\n"
                 "A yes/no flag also takes its value: --qr=no is --no-qr.\n"
                 "Flags override the environment, which overrides the file.\n");
}

/* getopt_long's table: each setting, and a --no- twin for the yes/no ones.
 * val indexes config_settings; the twin is val + CONFIG_SETTINGS_MAX; then
 * config, help, version. */
enum { OPT_CONFIG = 2 * CONFIG_SETTINGS_MAX, OPT_HELP, OPT_VERSION, OPT_HEALTH_CHECK };

static const struct option *options_table(void)
{
    static struct option options[2 * CONFIG_SETTINGS_MAX + 5];
    static char no_names[CONFIG_SETTINGS_MAX][72];
    size_t n = 0;
    for (size_t i = 0; i < config_setting_count; i++) {
        const struct setting *s = &config_settings[i];
        /* a yes/no flag alone means yes; --qr=no says the value (no --qr no: that is an argument) */
        options[n++] = (struct option){s->name, config_setting_is_yes_no(s) ? optional_argument : required_argument,
                                       NULL, (int)i};
        if (config_setting_is_yes_no(s)) {
            snprintf(no_names[i], sizeof(no_names[i]), "no-%s", s->name);
            options[n++] = (struct option){no_names[i], no_argument, NULL, (int)(i + CONFIG_SETTINGS_MAX)};
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
            return (*e)[len + 1] ? *e + len + 1 : NULL; /* empty: unset */
        }
    }
    return NULL;
}

/* What pass 1 finds before any file is read. */
struct first_pass {
    const char *config_path, *root;
    bool exit; /* --help or --version was printed */
};

/* Pass 1: only --config, --root, --help, --version and --health-check
 * (mako's two passes), so the file can be read before the flags that
 * override it. */
static struct first_pass scan_first(struct config *c, int argc, char **argv, char **envp)
{
    struct first_pass p = {env_lookup(envp, "FOLIO_CONFIG"), env_lookup(envp, "FOLIO_ROOT"), false};
    opterr = 0;
    optind = 1;
    for (int opt; (opt = getopt_long(argc, argv, "c:hV", options_table(), NULL)) != -1;) {
        if (opt == 'c' || opt == OPT_CONFIG) {
            p.config_path = optarg;
        } else if (opt == 'h' || opt == OPT_HELP || opt == 'V' || opt == OPT_VERSION) {
            if (opt == 'h' || opt == OPT_HELP) {
                print_help(stdout);
            } else {
                printf("folio %s\n", FOLIO_VERSION);
            }
            p.exit = true;
            return p;
        } else if (opt == OPT_HEALTH_CHECK) {
            c->health_check = true;
            free(c->health_url);
            c->health_url = optarg ? strdup(optarg) : NULL;
        } else if (opt >= 0 && opt < (int)config_setting_count && strcmp(config_settings[opt].name, "root") == 0) {
            p.root = optarg;
        }
    }
    return p;
}

/* The file layer: the one named, else ROOT/config/folio.conf if present,
 * wherever folio was started from (root comes from the flag or FOLIO_ROOT). */
static enum config_result load_file(struct config *c, const struct first_pass *p, struct config_error *err)
{
    char default_path[PATH_MAX], why[256] = "";
    const char *path = p->config_path;
    snprintf(default_path, sizeof(default_path), "%s/config/folio.conf", p->root && *p->root ? p->root : ".");
    /* A link there to nothing (a mount gone wrong) is named, not taken for no file. */
    if (!path && faccessat(AT_FDCWD, default_path, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
        path = strncmp(default_path, "./", 2) == 0 ? default_path + 2 : default_path;
    }
    char *text = NULL;
    if (!path) {
        return CONFIG_OK;
    }
    struct stat link, target;
    if (lstat(path, &link) == 0 && S_ISLNK(link.st_mode) && stat(path, &target) != 0) {
        snprintf(why, sizeof(why), "a symbolic link to nothing there (%s)", strerror(errno));
    }
    if (why[0] || !read_file(path, &text, why, sizeof(why))) {
        char source[PATH_MAX + 8];
        snprintf(source, sizeof(source), "config %s", path);
        return invalid(err, source, 0, why);
    }
    c->config_path = strdup(path);
    bool ok = c->config_path && config_apply_ini(c, text, err);
    free(text);
    if (!ok) {
        config_source_set(&err->source, path, err->source.line);
        return CONFIG_INVALID;
    }
    return CONFIG_OK;
}

/* Notes in c that variable (not a setting) looks like a misspelt nearest. */
static void note_typo(struct config *c, const char *variable, const struct setting *nearest)
{
    size_t used = strlen(c->notes);
    if (!nearest || used >= sizeof(c->notes) - 1) {
        return;
    }
    char want[80];
    size_t i = 0;
    for (; nearest->name[i] && i < sizeof(want) - 1; i++) {
        want[i] = nearest->name[i] == '-' ? '_' : (char)toupper((unsigned char)nearest->name[i]);
    }
    want[i] = '\0';
    snprintf(c->notes + used, sizeof(c->notes) - used,
             "%sfolio: %s is not a setting, ignored (FOLIO_%s?)", used ? "\n" : "", variable, want);
}

/* r, with a hint on err when value is a service link's address (Kubernetes
 * gives a pod FOLIO_PORT=tcp://... for a Service named folio, as Docker's
 * --link did). */
static enum config_result service_link(enum config_result r, struct config_error *err, const char *value)
{
    if (strncmp(value, "tcp://", 6) == 0) {
        add_hint(err, " (a service link's address: Kubernetes sets FOLIO_PORT for a Service named folio; "
                      "set enableServiceLinks: false in the pod spec)");
    }
    return r;
}

/* The environment: PORT first (platforms set it), then FOLIO_* over it. An
 * empty variable counts as unset, as templated manifests leave them. */
static enum config_result load_environment(struct config *c, char **envp, struct config_error *err)
{
    const char *port = env_lookup(envp, "PORT");
    if (port && !config_set(c, "port", port, err->message, sizeof(err->message))) {
        return service_link(invalid(err, "PORT", 0, err->message), err, port);
    }
    for (char **e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "FOLIO_", 6) != 0 || !eq || !eq[1] || strncmp(*e, "FOLIO_CONFIG=", 13) == 0) {
            continue;
        }
        char key[64], name[80];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - *e - 6), *e + 6);
        snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
        if (!config_find_setting(key)) {
            /* FOLIO_* is a namespace others may share (FOLIO_BIN in our tests):
             * only a near miss of a setting is taken for a typo. */
            note_typo(c, name, config_nearest_setting(key));
            continue;
        }
        if (!config_set(c, key, eq + 1, err->message, sizeof(err->message))) {
            return service_link(invalid(err, name, 0, err->message), err, eq + 1);
        }
        config_note_source(c, key, name, 0);
    }
    return CONFIG_OK;
}

/* Pass 2: every flag, in order, over all the rest. */
static enum config_result load_flags(struct config *c, int argc, char **argv, struct config_error *err)
{
    char message[256];
    opterr = 0;
    optind = 1;
    for (int opt, index = 0; (opt = getopt_long(argc, argv, ":c:hV", options_table(), &index)) != -1;) {
        if (opt == '?' || opt == ':') {
            snprintf(message, sizeof(message), opt == ':' ? "%s needs a value (see --help)"
                                                          : "unknown option '%s' (see --help)",
                     argv[optind - 1]);
            return invalid(err, "", 0, message);
        }
        if (opt >= CONFIG_SETTINGS_MAX && opt < OPT_CONFIG) {
            config_set(c, config_settings[opt - CONFIG_SETTINGS_MAX].name, "false", message, sizeof(message));
        } else if (opt >= 0 && opt < (int)config_setting_count) {
            const struct setting *s = &config_settings[opt];
            char flag[72];
            snprintf(flag, sizeof(flag), "--%s", s->name);
            const char *value = config_setting_is_yes_no(s) && !optarg ? "true" : optarg;
            if (!config_set(c, s->name, value, message, sizeof(message))) {
                return invalid(err, flag, 0, message);
            }
            config_note_source(c, s->name, flag, 0);
        }
    }
    if (c->health_check && !c->health_url && optind < argc) {
        c->health_url = strdup(argv[optind++]); /* --health-check URL */
    }
    if (optind < argc) {
        snprintf(message, sizeof(message), "unexpected argument '%.200s' (see --help)", argv[optind]);
        return invalid(err, "", 0, message);
    }
    return CONFIG_OK;
}

enum config_result config_load(struct config *c, int argc, char **argv, char **envp,
                               struct config_error *err)
{
    *err = (struct config_error){0};
    if (!config_init(c)) {
        return invalid(err, "", 0, "out of memory");
    }
    struct first_pass p = scan_first(c, argc, argv, envp);
    if (p.exit) {
        return CONFIG_EXIT;
    }
    enum config_result r = load_file(c, &p, err);
    if (r == CONFIG_OK) {
        r = load_environment(c, envp, err);
    }
    return r == CONFIG_OK ? load_flags(c, argc, argv, err) : r;
}

/* Fills err for a folder that is not one; errno is the stat's. */
static bool not_a_folder(struct config_error *err, const struct config_source *from, const char *what,
                         const char *path)
{
    const char *why = errno ? strerror(errno) : "not a folder";
    err->source = *from;
    snprintf(err->message, sizeof(err->message), "%s%s: %s", what, path, why);
    return false;
}

/* Drops route i of c (a default one whose folder is absent), saying so on notes. */
static void unmount(struct config *c, size_t i, const char *path, FILE *notes)
{
    if (notes) {
        char prefix[ESCAPE_PATH_SIZE], folder[ESCAPE_PATH_SIZE];
        escape_text(c->routes[i].prefix, prefix, sizeof(prefix));
        escape_text(path, folder, sizeof(folder));
        fprintf(notes, "folio: route %s: no folder %s; not mounted (a default route)\n", prefix, folder);
    }
    free(c->routes[i].prefix);
    free(c->routes[i].dir);
    memmove(&c->routes[i], &c->routes[i + 1], (c->route_count - i - 1) * sizeof(*c->routes));
    c->route_count--;
}

bool config_check_routes(struct config *c, struct config_error *err, FILE *notes)
{
    struct stat st;
    errno = 0;
    if (stat(c->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return not_a_folder(err, &c->root_from, "root ", c->root);
    }
    for (size_t i = 0; i < c->route_count;) {
        const struct config_route *r = &c->routes[i];
        char path[PATH_MAX], what[300];
        bool absolute = r->dir[0] == '/';
        snprintf(path, sizeof(path), "%s%s%s", absolute ? "" : c->root, absolute ? "" : "/", r->dir);
        errno = 0;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            i++;
            continue;
        }
        bool root_page = strcmp(r->prefix, "/") == 0;
        if (!r->line && !root_page && errno == ENOENT) {
            unmount(c, i, path, notes);
            continue;
        }
        struct config_source from = {.line = r->line};
        snprintf(from.name, sizeof(from.name), "%s", r->line ? c->config_path : "");
        snprintf(what, sizeof(what), "route %s: folder ", r->prefix);
        not_a_folder(err, &from, what, path);
        if (!r->line) {
            char hint[400], root_set[260] = "--root DIR names";
            const struct config_source *rf = &c->root_from; /* where the root came from, if not the default */
            if (rf->name[0] && rf->line) {
                snprintf(root_set, sizeof(root_set), "the root, from %.200s:%d, must be", rf->name, rf->line);
            } else if (rf->name[0]) {
                snprintf(root_set, sizeof(root_set), "the root, from %.200s, must be", rf->name);
            }
            if (root_page) {
                snprintf(hint, sizeof(hint), " (is this the article? %s the folder that holds www/; '/ =' "
                                             "under [routes] in the config file drops the route)", root_set);
            } else {
                snprintf(hint, sizeof(hint), " (a default route; '%s =' under [routes] in the config file drops it)",
                         r->prefix);
            }
            add_hint(err, hint);
        }
        return false;
    }
    return true;
}

/* An address or a name the resolver knows, as the server will bind it. */
static bool host_resolves(const char *host)
{
    struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, "0", &hints, &res) != 0) {
        return false;
    }
    freeaddrinfo(res);
    return true;
}

bool config_check_host(const struct config *c, struct config_error *err)
{
    if (!host_resolves(c->host)) {
        err->source = c->host_from;
        snprintf(err->message, sizeof(err->message),
                 "%s'%.200s' is not an address to listen on (e.g. 127.0.0.1, 0.0.0.0, ::)",
                 c->host_from.line ? "host: " : "", c->host);
        return false;
    }
    return true;
}
