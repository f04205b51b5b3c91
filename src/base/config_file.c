/* config_file: the INI adapter. inih parses; this file feeds it one line at a
 * time (so every error knows its line), sends [server] keys to config_set and
 * [routes] to config_set_route, and keeps the first error as a value. */
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
    char error[300];    /* the first handler error; later ones are usually its echoes */
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
    char err[256];
    bool ok;
    if (strcmp(section, "server") == 0) {
        ok = config_set(st->config, name, value, err, sizeof(err));
        if (ok) {
            config_note_source(st->config, name, st->source, st->line);
        }
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
        snprintf(st->error, sizeof(st->error), "%s%s%s", named ? name : "", named ? ": " : "", err);
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
