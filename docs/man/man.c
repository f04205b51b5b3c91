/* man: writes folio's man pages from their templates and the settings table.
 *
 *   folio-man TEMPLATE OUTPUT VERSION
 *
 * A template is roff holding the prose a table cannot (description,
 * signals, exit status, examples). Two lines in it stand for what the table
 * knows, so a setting added to src/base/config_table.c reaches both pages
 * as it reaches --help: "@OPTIONS@" (every option in --help's order, with
 * its variable, config key, values and default) and "@KEYS@" (every
 * [server] key). "@VERSION@" anywhere is folio's version. Defaults are read
 * from config_init, the ones the server starts with (config_value_text, as
 * --help states them). Run by meson at build
 * time (docs/man/meson.build); exits 1 with a line on stderr if it cannot
 * read or write.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/config_table.h"

enum entry_form { FORM_OPTION, FORM_KEY };

/* Writes text as roff running text: '\' and '-' escaped, a '.' or '\''
 * that would start a line made plain. */
static void roff_text(FILE *out, const char *text)
{
    if (text[0] == '.' || text[0] == '\'') {
        fputs("\\&", out);
    }
    for (const char *p = text; *p; p++) {
        if (*p == '\\') {
            fputs("\\e", out);
        } else if (*p == '-') {
            fputs("\\-", out);
        } else {
            fputc(*p, out);
        }
    }
}

/* What values the setting takes, or "" when it is a flag alone. */
static void value_form(const struct setting *s, enum entry_form form, char *out, size_t size)
{
    char lo[16], hi[16];
    out[0] = '\0';
    switch (s->kind) {
    case KIND_UINT:
        snprintf(out, size, "a number from %u to %u", s->min, s->max);
        return;
    case KIND_BYTES:
        config_bytes_text(s->min, lo, sizeof(lo));
        config_bytes_text(s->max, hi, sizeof(hi));
        snprintf(out, size, "a size from %s to %s", lo, hi);
        return;
    case KIND_BOOL:
    case KIND_TRISTATE:
        if (form == FORM_KEY) {
            snprintf(out, size, "yes or no (true, false, on, off, 1, 0)");
        }
        return;
    case KIND_CHOICE: {
        size_t used = (size_t)snprintf(out, size, "one of");
        for (unsigned i = s->min; i <= s->max && used < size; i++) {
            used += (size_t)snprintf(out + used, size - used, "%s %s", i > s->min ? "," : "", s->choices[i]);
        }
        return;
    }
    case KIND_STRING:
        return;
    }
}

/* "FOLIO_" and the name in capitals, '-' as '_'. */
static void variable_name(const char *name, char *out, size_t size)
{
    size_t i = (size_t)snprintf(out, size, "FOLIO_");
    for (; *name && i + 1 < size; name++, i++) {
        out[i] = *name == '-' ? '_' : (char)toupper((unsigned char)*name);
    }
    out[i] = '\0';
}

/* One sentence: text with a capital and a full stop. */
static void sentence(FILE *out, const char *text)
{
    char first[2] = {(char)toupper((unsigned char)text[0]), '\0'};
    roff_text(out, first);
    roff_text(out, text + 1);
    fputs(".\n", out);
}

/* The tag line of a setting's entry: its flags, or its key. */
static void setting_tag(FILE *out, const struct setting *s, enum entry_form form)
{
    fputs(".TP\n", out);
    if (form == FORM_KEY) {
        fputs("\\fB", out);
        roff_text(out, s->name);
        fputs(" =\\fR \\fI", out);
        roff_text(out, config_setting_is_yes_no(s) ? "yes|no" : s->arg);
        fputs("\\fR\n", out);
    } else if (config_setting_is_yes_no(s)) {
        fputs("\\fB\\-\\-", out);
        roff_text(out, s->name);
        fputs("\\fR, \\fB\\-\\-no\\-", out);
        roff_text(out, s->name);
        fputs("\\fR\n", out);
    } else {
        fputs("\\fB\\-\\-", out);
        roff_text(out, s->name);
        fputs("\\fR \\fI", out);
        roff_text(out, s->arg);
        fputs("\\fR\n", out);
    }
}

/* A setting's entry: what it does, its default and values, its other
 * names, and whether SIGHUP applies it. */
static void write_setting(FILE *out, const struct config *c, const struct setting *s, enum entry_form form)
{
    char def[256], values[160], variable[80];
    config_value_text(c, s, def, sizeof(def));
    value_form(s, form, values, sizeof(values));
    variable_name(s->name, variable, sizeof(variable));
    setting_tag(out, s, form);
    sentence(out, s->help);
    fputs("Default: \\fB", out);
    roff_text(out, def);
    fputs("\\fR", out);
    if (values[0]) {
        fputs("; ", out);
        roff_text(out, values);
    }
    fputs(".\n", out);
    if (form == FORM_OPTION) {
        fprintf(out, "Environment: \\fB\\%%%s\\fR%s; config file: \\fB\\%%", variable,
                strcmp(s->name, "port") == 0 ? " (or \\fBPORT\\fR)" : "");
        roff_text(out, s->name);
        fputs("\\fR in [server].\n", out);
    } else {
        fputs("Also \\fB\\%\\-\\-", out);
        roff_text(out, s->name);
        fprintf(out, "\\fR and \\fB\\%%%s\\fR%s.\n", variable, strcmp(s->name, "port") == 0 ? " (or \\fBPORT\\fR)" : "");
    }
    fputs(s->live ? "A SIGHUP applies it.\n" : "Read at start\\-up only.\n", out);
}

/* An option that is no setting: --config, --health-check, --help, --version. */
static void write_command_option(FILE *out, const struct command_option *o)
{
    fputs(".TP\n", out);
    if (o->short_name) {
        fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
    }
    fputs("\\fB\\-\\-", out);
    roff_text(out, o->name);
    fputs("\\fR", out);
    if (o->arg) {
        fputs(o->arg_optional ? " [\\fI" : " \\fI", out);
        roff_text(out, o->arg);
        fputs(o->arg_optional ? "\\fR]" : "\\fR", out);
    }
    fputs("\n", out);
    sentence(out, o->help);
    if (strcmp(o->name, "config") == 0) {
        fputs("Environment: \\fBFOLIO_CONFIG\\fR.\n", out);
    }
}

/* Every option, in --help's order. */
static void write_options(FILE *out, const struct config *c)
{
    for (size_t i = 0; i < config_command_option_count; i++) {
        if (config_command_options[i].first) {
            write_command_option(out, &config_command_options[i]);
        }
    }
    for (size_t i = 0; i < config_setting_count; i++) {
        write_setting(out, c, &config_settings[i], FORM_OPTION);
    }
    for (size_t i = 0; i < config_command_option_count; i++) {
        if (!config_command_options[i].first) {
            write_command_option(out, &config_command_options[i]);
        }
    }
}

/* Copies the template at in to out, the placeholders filled in. */
static int expand(FILE *in, FILE *out, const char *version)
{
    struct config c;
    if (!config_init(&c)) {
        fputs("folio-man: out of memory\n", stderr);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) != -1) {
        if (strcmp(line, "@OPTIONS@\n") == 0) {
            write_options(out, &c);
            continue;
        }
        if (strcmp(line, "@KEYS@\n") == 0) {
            for (size_t i = 0; i < config_setting_count; i++) {
                write_setting(out, &c, &config_settings[i], FORM_KEY);
            }
            continue;
        }
        for (char *p = line, *at; *p; p = at + strlen("@VERSION@")) {
            at = strstr(p, "@VERSION@");
            if (!at) {
                fputs(p, out);
                break;
            }
            fprintf(out, "%.*s%s", (int)(at - p), p, version);
        }
    }
    free(line);
    config_finish(&c);
    return ferror(in) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fputs("usage: folio-man TEMPLATE OUTPUT VERSION\n", stderr);
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    FILE *out = in ? fopen(argv[2], "w") : NULL;
    int failed = !in || !out || expand(in, out, argv[3]);
    if (in) {
        fclose(in);
    }
    if (out && fclose(out) != 0) {
        failed = 1;
    }
    if (failed) {
        fprintf(stderr, "folio-man: cannot make %s from %s\n", argv[2], argv[1]);
        remove(argv[2]);
    }
    return failed;
}
