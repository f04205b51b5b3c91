/* check — `folio check`: every broken reference of the article, found the
 * way a browser would meet it, before a reader does. This header is the
 * subsystem's face: a run and the report it returns. The report is printed
 * by check_report.h; the command line is check_cli.h.
 *
 * A run walks every route folder (routes.c; check_walk.c), reads each HTML
 * and CSS file through resolve.c (the server's own boundary), takes its
 * references from check_refs.c, and (check_rules.c) resolves each one as
 * a browser does from the document's URL (a fragment's from each page that
 * loads it) and then as folio does: the route, the dot-segment rule,
 * resolve_open (exists, readable, beneath the folder), a folder's
 * index.html. It also finds in-page anchors that name
 * no element (unverified, not broken, when the page runs a script that may
 * make the id), duplicate ids, references that work at "/" but leave the
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

struct routes;

enum check_severity {
    CHECK_ERROR,
    CHECK_WARNING,
    CHECK_EXTERNAL, /* not a problem: an external URL, listed in JSON */
};

/* What kind of finding a problem is, where one kind needs telling apart. */
enum check_code {
    CHECK_CODE_NONE,
    /* An in-page anchor no source names, into a page that runs scripts: a
     * script may make the id (distill's template ids its headings from
     * their text), so without running it the check cannot know. A warning;
     * an error under --strict. JSON "unverified-anchor". */
    CHECK_CODE_UNVERIFIED_ANCHOR,
};

struct check_problem {
    enum check_severity severity;
    char *file;      /* relative to the root: "www/index.html" */
    char *url;       /* the URL path folio serves that file at: "/index.html" */
    unsigned line, column;
    char *message;   /* "img src \"a.png\" not found" */
    char *reference; /* as written (decoded), or "" */
    char *resolved;  /* the file or URL it comes to, or "" */
    enum check_code code;
};

struct check_options {
    const char *base_path; /* "/article", or NULL/"" for none */
    bool unreferenced;     /* warn about files nothing references */
    bool strict;           /* unverified anchors are errors (ids all written by hand) */
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
    size_t unverified; /* CHECK_CODE_UNVERIFIED_ANCHOR warnings, which warnings does not
                          count (under --strict they are errors, and counted there) */
};

/* Checks the article behind @routes. NULL only when memory runs out or a
 * folder cannot be read; then a reason goes to @err. */
struct check_report *check_run(const struct routes *routes, const struct check_options *o,
                               char *err, size_t err_size);

void check_report_free(struct check_report *r); /* accepts NULL */

#endif
