/* config_table: the settings table, shared by the three config files and
 * the man pages' generator (docs/man/man.c) only (config.h is the module's
 * interface). One row per setting is the single source for its INI key,
 * FOLIO_* variable, flag, bounds, --help text and man page entries.
 */
#ifndef FOLIO_CONFIG_TABLE_H
#define FOLIO_CONFIG_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

enum setting_kind { KIND_STRING, KIND_UINT, KIND_BYTES, KIND_BOOL, KIND_TRISTATE, KIND_CHOICE };

struct setting {
    const char *name;
    enum setting_kind kind;
    size_t offset;
    unsigned min, max;          /* KIND_CHOICE: indexes into choices */
    const char *arg, *help;
    const char *const *choices; /* KIND_CHOICE: the words it takes */
    bool live;                  /* a SIGHUP applies it to the next request */
};

/* How many settings there may be: the config file's and getopt's tables
 * are sized by it (config_table.c asserts the table fits). */
#define CONFIG_SETTINGS_MAX 64

extern const struct setting config_settings[];
extern const size_t config_setting_count;

/* The options that are no setting (--config, --health-check, --help,
 * --version), as --help lists them: those marked first before the
 * settings, the rest after. */
struct command_option {
    char short_name;  /* '\0': none */
    const char *name, *arg;
    bool arg_optional; /* --health-check [URL] */
    const char *help;
    bool first;
};

extern const struct command_option config_command_options[];
extern const size_t config_command_option_count;

/* The size n as a user writes it, with the largest unit that divides it
 * ("16K", "64M", "0"). */
void config_bytes_text(unsigned n, char *out, size_t size);

/* s's value in c as a user would write it ("8000", "16K", "on", "json",
 * "on in preview" for a yes/no that follows the mode, "none" for an empty
 * string). Of a config_init'd c, the default --help and the man pages
 * state. */
void config_value_text(const struct config *c, const struct setting *s, char *out, size_t size);

/* The row for key ("live_reload", "LIVE_RELOAD" and "live-reload" are one),
 * or NULL. */
const struct setting *config_find_setting(const char *key);

/* The setting key is two slips (an edit each) or fewer away from, or NULL:
 * for a hint when key is none. */
const struct setting *config_nearest_setting(const char *key);

/* True for a yes/no setting (--x and --no-x). */
bool config_setting_is_yes_no(const struct setting *s);

/* Writes the reason (printf-style) into err and returns false. */
bool config_fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Remembers where the setting named key was set last (root and host are the
 * ones the start-up checks name). */
void config_note_source(struct config *c, const char *key, const char *name, int line);

/* [routes] "/prefix/ = folder[, fragments]": adds, replaces or (empty
 * folder) removes a mount; line: where the file set it. */
bool config_set_route(struct config *c, const char *prefix, const char *value, int line, char *err,
                      size_t err_size);

/* Copies text into a source's name (cut if it must be). */
void config_source_set(struct config_source *s, const char *name, int line);

#endif
