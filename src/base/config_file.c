/* config_file: the INI adapter. inih parses; this file feeds it one line at a
 * time (so every error knows its line), sends [server] keys to config_set and
 * [routes] to config_set_route, and keeps the first error as a value.
 *
 * Two of inih's INI habits are not folio's: a key given twice (inih hands
 * both; the last would win unseen) is an error, as nginx and lighttpd make
 * it; and an indented line after a key (inih continues that key's value
 * with it, as Python's configparser does) is a key line of its own, since
 * no folio value spans lines: users indent the keys under a section. */
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

#include "config_table.h"

struct ini_state {
    struct config *config;
    const char *source; /* the file's name, for where a setting came from */
    const char *next;   /* the text still to hand to inih */
    int line;           /* the line inih was handed last */
    int error_line;     /* where the first handler error was, 0: none */
    int long_line;      /* the first line too long for inih, 0: none */
    bool after_key;     /* inih's state: a key line came since the last section line */
    int continuation;   /* the line inih takes for a continuation (indented, after a key), 0: none */
    int key_line[CONFIG_SETTINGS_MAX]; /* per [server] setting (config_settings' index): the line that set it, 0: none */
    char error[300];    /* the first handler error; later ones are usually its echoes */
};

/* Tracks what inih will take the line at text (len bytes) for: a section
 * line ends a key's run, a key line starts one, and an indented line within
 * one is taken for its continuation (blank and comment lines change nothing). */
static void note_line_kind(struct ini_state *st, const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t')) {
        i++;
    }
    if (i == len || text[i] == '\n' || text[i] == '\r' || text[i] == ';' || text[i] == '#') {
        return;
    }
    if (text[i] == '[') {
        st->after_key = false;
    } else if (i > 0 && st->after_key) {
        st->continuation = st->line;
    } else {
        st->after_key = true;
    }
}

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
    note_line_kind(st, st->next, len);
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

/* A continuation's text "key = value ; comment" (or "key: value", as inih
 * splits a key line) cut into its key and value, in place, the comment
 * dropped as inih drops it from a key line (a ';' after a space; inih 55
 * keeps it on a continuation); false when it has no delimiter. */
static bool split_key_line(char *text, char **key, char **value)
{
    for (char *c = text + 1; *c; c++) {
        if (*c == ';' && (c[-1] == ' ' || c[-1] == '\t')) {
            *c = '\0';
            break;
        }
    }
    for (size_t n = strlen(text); n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'); n--) {
        text[n - 1] = '\0';
    }
    char *at = text + strcspn(text, "=:");
    if (!*at) {
        return false;
    }
    char *end = at;
    while (end > text && (end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }
    *end = '\0';
    *value = at + 1 + strspn(at + 1, " \t");
    *key = text;
    return true;
}

/* [server] key = value on the current line: set once per file. */
static bool set_server_key(struct ini_state *st, const char *name, const char *value, char *err, size_t size)
{
    const struct setting *s = config_find_setting(name);
    size_t k = s ? (size_t)(s - config_settings) : 0;
    if (!config_set(st->config, name, value, err, size)) { /* a bad value says so first */
        return false;
    }
    if (s && st->key_line[k]) {
        return config_fail(err, size, "is given twice (first on line %d)", st->key_line[k]);
    }
    if (s) {
        st->key_line[k] = st->line;
    }
    config_note_source(st->config, name, st->source, st->line);
    return true;
}

static int on_ini_entry(void *user, const char *section, const char *name, const char *value)
{
    struct ini_state *st = user;
    char err[256];
    char line[INI_MAX_LINE];
    bool ok;
    if (st->continuation == st->line) { /* indented: a key line of its own (see the top) */
        char *key, *own;
        snprintf(line, sizeof(line), "%s", value);
        if (!split_key_line(line, &key, &own)) {
            if (!st->error_line) {
                st->error_line = st->line;
                snprintf(st->error, sizeof(st->error), "an indented line that is not key = value");
            }
            return 0;
        }
        name = key;
        value = own;
    }
    if (strcmp(section, "server") == 0) {
        ok = set_server_key(st, name, value, err, sizeof(err));
    } else if (strcmp(section, "routes") == 0) {
        ok = config_set_route(st->config, name, value, st->line, err, sizeof(err));
    } else if (!section[0]) {
        ok = config_fail(err, sizeof(err), "'%s' is outside any section: put it under [server] (or [routes])", name);
    } else {
        ok = config_fail(err, sizeof(err), "unknown section [%s] (expected [server] or [routes])", section);
    }
    if (!ok && !st->error_line) {
        st->error_line = st->line;
        bool named = strcmp(section, "server") == 0;
        snprintf(st->error, sizeof(st->error), "%.40s%s%s", named ? name : "", named ? ": " : "", err);
    }
    return ok;
}

/* Fills err's line and message; returns false. */
static bool ini_error(struct config_error *err, int line, const char *message)
{
    err->source.line = line;
    snprintf(err->message, sizeof(err->message), "%s", message);
    return false;
}

bool config_apply_ini(struct config *c, const char *text, struct config_error *err)
{
    struct ini_state st = {.config = c, .source = c->config_path ? c->config_path : "config", .next = text};
    *err = (struct config_error){0};
    int first = ini_parse_stream(read_line, &st, on_ini_entry, &st);
    if (first < 0) {
        return ini_error(err, 0, "out of memory");
    }
    if (st.long_line && (first == 0 || st.long_line < first)) {
        char why[80];
        snprintf(why, sizeof(why), "longer than the %d characters a line may have", INI_MAX_LINE - 2);
        return ini_error(err, st.long_line, why);
    }
    if (first == 0) {
        return true;
    }
    return ini_error(err, first, first == st.error_line ? st.error : "not a [section] or key = value");
}
