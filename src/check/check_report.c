/* check_report — see check_report.h. */
#include "check_report.h"

#include <stdbool.h>

#include "base/escape.h"

/* A code's name in the text and JSON output; "" for none. */
static const char *check_code_name(enum check_code code)
{
    return code == CHECK_CODE_UNVERIFIED_ANCHOR ? "unverified-anchor" : "";
}

void check_summary(const struct check_report *r, char *out, size_t size)
{
    /* Under --strict the unverified anchors are counted among the errors. */
    size_t strict = 0;
    for (size_t i = 0; i < r->count; i++) {
        strict += r->problems[i].code == CHECK_CODE_UNVERIFIED_ANCHOR && r->problems[i].severity == CHECK_ERROR;
    }
    size_t open = r->unverified;
    char why[160] = "";
    if (open > 0) {
        snprintf(why, sizeof(why), "; %zu anchor%s unverified: the id is in no source of a page that runs "
                 "scripts (--strict: errors)", open, open == 1 ? "" : "s");
    } else if (strict > 0) {
        snprintf(why, sizeof(why), "; %zu anchor%s in no source counted as errors (--strict)", strict,
                 strict == 1 ? "" : "s");
    }
    snprintf(out, size,
             "folio check: %zu error%s, %zu warning%s, %zu unverified in %zu file%s (%zu reference%s, "
             "%zu external, not fetched); URLs built by scripts are not seen%s",
             r->errors, r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s", open, r->files,
             r->files == 1 ? "" : "s", r->references, r->references == 1 ? "" : "s", r->externals, why);
}

void check_print_text(const struct check_report *r, FILE *out)
{
    static const char *const label[] = {"error", "warning"};
    for (size_t i = 0; i < r->count; i++) {
        const struct check_problem *p = &r->problems[i];
        if (p->severity == CHECK_EXTERNAL) {
            continue;
        }
        /* The article's bytes (names, references, ids) by base/escape.h's
         * rule: an href holding "\r\x1b[2K" must not erase its own line. */
        escape_fputs(p->file, out);
        fprintf(out, ":%u:%u: %s: ", p->line, p->column, label[p->severity]);
        escape_fputs(p->message, out);
        if (p->code != CHECK_CODE_NONE) {
            fprintf(out, " [%s]", check_code_name(p->code));
        }
        if (p->resolved[0]) {
            fputs(" (", out);
            escape_fputs(p->resolved, out);
            fputc(')', out);
        }
        fputc('\n', out);
    }
    char summary[512];
    check_summary(r, summary, sizeof(summary));
    fprintf(out, "%s\n", summary);
}

void check_print_problem_json(const struct check_problem *p, FILE *out)
{
    static const char *const label[] = {"error", "warning", "external"};
    fprintf(out, "{\"severity\":\"%s\",\"code\":\"%s\",\"file\":", label[p->severity],
            check_code_name(p->code));
    escape_json_fputs(p->file, out);
    fprintf(out, ",\"line\":%u,\"column\":%u,\"message\":", p->line, p->column);
    escape_json_fputs(p->message, out);
    fputs(",\"reference\":", out);
    escape_json_fputs(p->reference, out);
    fputs(",\"resolved\":", out);
    escape_json_fputs(p->resolved, out);
    fputc('}', out);
}

void check_print_json(const struct check_report *r, FILE *out)
{
    fputs("{\"root\":", out);
    escape_json_fputs(r->root, out);
    fputs(",\"base_path\":", out);
    escape_json_fputs(r->base_path, out);
    fprintf(out, ",\"files\":%zu,\"references\":%zu,\"errors\":%zu,\"warnings\":%zu,\"unverified\":%zu,"
            "\"problems\":[", r->files, r->references, r->errors, r->warnings, r->unverified);
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
            escape_json_fputs(p->file, out);
            fprintf(out, ",\"line\":%u,\"column\":%u,\"url\":", p->line, p->column);
            escape_json_fputs(p->reference, out);
            fputc('}', out);
            first = false;
        }
    }
    char summary[512];
    check_summary(r, summary, sizeof(summary));
    fputs("],\"not_seen\":[\"URLs built by scripts\",\"ids made by scripts\",\"<base href>\"],\"summary\":", out);
    escape_json_fputs(summary, out);
    fputs("}\n", out);
}

