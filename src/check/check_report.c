/* check_report — see check_report.h. */
#include "check_report.h"

#include <stdbool.h>

void check_summary(const struct check_report *r, char *out, size_t size)
{
    snprintf(out, size,
             "folio check: %zu error%s, %zu warning%s in %zu files (%zu references, %zu external, "
             "not fetched); URLs built by scripts are not seen",
             r->errors, r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s", r->files,
             r->references, r->externals);
}

void check_print_text(const struct check_report *r, FILE *out)
{
    static const char *const label[] = {"error", "warning"};
    for (size_t i = 0; i < r->count; i++) {
        const struct check_problem *p = &r->problems[i];
        if (p->severity == CHECK_EXTERNAL) {
            continue;
        }
        fprintf(out, "%s:%u:%u: %s: %s", p->file, p->line, p->column, label[p->severity], p->message);
        fprintf(out, p->resolved[0] ? " (%s)\n" : "\n", p->resolved);
    }
    char summary[512];
    check_summary(r, summary, sizeof(summary));
    fprintf(out, "%s\n", summary);
}

void check_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fputc('"', out);
}

void check_print_problem_json(const struct check_problem *p, FILE *out)
{
    static const char *const label[] = {"error", "warning", "external"};
    fprintf(out, "{\"severity\":\"%s\",\"file\":", label[p->severity]);
    check_json_string(out, p->file);
    fprintf(out, ",\"line\":%u,\"column\":%u,\"message\":", p->line, p->column);
    check_json_string(out, p->message);
    fputs(",\"reference\":", out);
    check_json_string(out, p->reference);
    fputs(",\"resolved\":", out);
    check_json_string(out, p->resolved);
    fputc('}', out);
}

void check_print_json(const struct check_report *r, FILE *out)
{
    fputs("{\"root\":", out);
    check_json_string(out, r->root);
    fputs(",\"base_path\":", out);
    check_json_string(out, r->base_path);
    fprintf(out, ",\"files\":%zu,\"references\":%zu,\"errors\":%zu,\"warnings\":%zu,\"problems\":[",
            r->files, r->references, r->errors, r->warnings);
    bool first = true;
    for (size_t i = 0; i < r->count; i++) {
        if (r->problems[i].severity != CHECK_EXTERNAL) {
            fputs(first ? "" : ",", out);
            check_print_problem_json(&r->problems[i], out);
            first = false;
        }
    }
    fputs("],\"external\":[", out);
    first = true;
    for (size_t i = 0; i < r->count; i++) {
        const struct check_problem *p = &r->problems[i];
        if (p->severity == CHECK_EXTERNAL) {
            fprintf(out, "%s{\"file\":", first ? "" : ",");
            check_json_string(out, p->file);
            fprintf(out, ",\"line\":%u,\"column\":%u,\"url\":", p->line, p->column);
            check_json_string(out, p->reference);
            fputc('}', out);
            first = false;
        }
    }
    char summary[512];
    check_summary(r, summary, sizeof(summary));
    fputs("],\"not_seen\":[\"URLs built by scripts\",\"<base href>\"],\"summary\":", out);
    check_json_string(out, summary);
    fputs("}\n", out);
}

