/* check — `folio check`: every broken reference of the article, found the
 * way a browser would meet it, before a reader does.
 *
 * A run walks every route folder (routes.c), reads each HTML and CSS file
 * through resolve.c (the server's own boundary), takes its references from
 * check_refs.c, resolves each one as a browser does from the document's URL
 * (a fragment's from each page that loads it) and then as folio does: the
 * route, the dot-segment rule, resolve_open (exists, readable, beneath the
 * folder), a folder's index.html. It also finds in-page anchors that name
 * no element, duplicate ids, references that work at "/" but leave the
 * prefix under --base-path once rewrite.c has done what it does, and files in
 * the other routes (assets/, fragments/) that nothing references. External
 * URLs are listed, never fetched.
 *
 * Not thread-safe within a run; runs share nothing, so two threads may each
 * run one. A report owns all its strings.
 */
#ifndef FOLIO_CHECK_H
#define FOLIO_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct routes;

enum check_severity {
    CHECK_ERROR,
    CHECK_WARNING,
    CHECK_EXTERNAL, /* not a problem: an external URL, listed in JSON */
};

struct check_problem {
    enum check_severity severity;
    char *file;      /* relative to the root: "www/index.html" */
    char *url;       /* the URL path folio serves that file at: "/index.html" */
    unsigned line, column;
    char *message;   /* "img src \"a.png\" not found" */
    char *reference; /* as written (decoded), or "" */
    char *resolved;  /* the file or URL it comes to, or "" */
};

struct check_options {
    const char *base_path; /* "/article", or NULL/"" for none */
    bool unreferenced;     /* warn about files nothing references */
    /* Live checks: only the problems of these files (URL paths, "/style.css")
     * and, with focus_pages, of every page; only what they need is read.
     * None of either: the whole article. */
    const char *const *focus;
    size_t nfocus;
    bool focus_pages;
};

struct check_report {
    struct check_problem *problems; /* errors, then warnings, then external */
    size_t count, errors, warnings, externals;
    size_t files, references;
    char *root;
    char *base_path; /* "" for none */
};

/* Checks the article behind @routes. NULL only when memory runs out or a
 * folder cannot be read; then a reason goes to @err. */
struct check_report *check_run(const struct routes *routes, const struct check_options *o,
                               char *err, size_t err_size);

/* Compiler-style lines (errors, then warnings) and one summary line. */
void check_print_text(const struct check_report *r, FILE *out);

/* The whole report as one JSON object (schema in the README). */
void check_print_json(const struct check_report *r, FILE *out);

/* @s as a JSON string (RFC 8259 7), quotes included. */
void check_json_string(FILE *out, const char *s);

/* One problem as a JSON object, for the live event stream too. */
void check_print_problem_json(const struct check_problem *p, FILE *out);

/* The summary line, without a newline, into @out. */
void check_summary(const struct check_report *r, char *out, size_t size);

void check_report_free(struct check_report *r); /* accepts NULL */

/* `folio check [--root DIR] [--base-path /prefix] [--format text|json]` and
 * every other setting as the server reads it (config file, environment):
 * exit status 0 clean, 1 errors, 2 could not run. @argv[0] is "check". */
int check_main(int argc, char **argv, char **envp);

#endif
