/* check_internal — check's internal header: the state one run of `folio
 * check` shares between its passes (check.c runs them): the walked files,
 * what each holds once read, and the problems noted so far. Types only; the
 * walk (check_walk.c) fills the files, the rules (check_rules.c) note the
 * problems, check.c turns them into the report. The walk and the rules are
 * check's own parts, as check.c is (livereload_internal.h's pattern): they
 * include check.h's types through this header, and nothing outside
 * src/check/ includes it or them.
 */
#ifndef FOLIO_CHECK_INTERNAL_H
#define FOLIO_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "check.h"
#include "check_refs.h"

struct check_near;
struct route;
struct routes;

enum check_type { CHECK_OTHER, CHECK_HTML, CHECK_CSS };

/* An id an in-page anchor may name, and where it is written. */
struct check_anchor {
    const char *id;
    const struct check_file *file;
    size_t offset, seq;
    bool is_name;
};

/* One file of a route, found by the walk. */
struct check_file {
    char *url;   /* the URL path folio serves it at, decoded: "/assets/a b.png" */
    char *name;  /* relative to the root: "assets/a b.png" */
    const struct route *route;
    enum check_type type;
    bool fragment;   /* HTML in the fragments route */
    bool referenced; /* some reference resolved to it */
    bool loaded;     /* some page loads it as a fragment */
    bool focus;      /* live: its problems are wanted */
    bool anchors_built;
    int status;      /* an enum resolve_status, or -1 before it was opened */
    char *text;      /* HTML and CSS: the bytes read */
    size_t len;
    struct check_doc doc;
    struct check_file **frags; /* pages: the fragments they load */
    size_t nfrags;
    struct check_anchor *anchors; /* HTML: the ids an anchor may name, sorted */
    size_t nanchors;
    struct check_near *near; /* their index for "did you mean" (check_near.h), once asked */
};

/* A problem before it is sorted and given a line. */
struct check_pending {
    enum check_severity severity;
    enum check_code code;
    const struct check_file *file;
    size_t offset;
    char *message, *reference, *resolved;
};

/* One run: its inputs, the walked files (sorted by URL path once walked)
 * and the problems noted. */
struct check_run {
    const struct routes *routes;
    const struct check_options *o;
    const char *prefix; /* NULL: no --base-path */
    struct check_file *files;
    size_t nfiles, files_cap;
    struct check_pending *pending;
    size_t npending, pending_cap;
    size_t references;
    bool focus;  /* only the files marked focus are reported */
    bool failed; /* out of memory */
};

#endif
