/* check — see check.h. A run: the walk (check_walk.c), the rules
 * (check_rules.c) in their order, then the report, sorted and with lines. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/html.h"
#include "check_rules.h"
#include "check_internal.h"
#include "check_walk.h"
#include "site/routes.h"

/* Report order: errors, warnings, external; by file, then place. */
static int check_pending_cmp(const void *a, const void *b)
{
    const struct check_pending *x = a, *y = b;
    if (x->severity != y->severity) {
        return x->severity < y->severity ? -1 : 1;
    }
    int c = strcmp(x->file->name, y->file->name);
    if (c != 0) {
        return c;
    }
    if (x->offset != y->offset) {
        return x->offset < y->offset ? -1 : 1;
    }
    return strcmp(x->message, y->message);
}

/* Sorts the problems, drops repeats (a fragment two pages load), gives
 * each its line and column, and hands the strings to @rep. */
static bool check_finish(struct check_run *r, struct check_report *rep)
{
    if (r->npending > 1) {
        qsort(r->pending, r->npending, sizeof(*r->pending), check_pending_cmp);
    }
    rep->problems = calloc(r->npending ? r->npending : 1, sizeof(*rep->problems));
    if (rep->problems == NULL) {
        return false;
    }
    struct html_cursor c = {0};
    const struct check_file *at = NULL;
    for (size_t i = 0; i < r->npending; i++) {
        struct check_pending *p = &r->pending[i];
        if ((i > 0 && check_pending_cmp(p, p - 1) == 0) || (r->focus && !p->file->focus)) {
            continue;
        }
        if (p->file != at) {
            c = (struct html_cursor){0};
            at = p->file;
        }
        html_cursor_seek(&c, p->file->text ? p->file->text : "", p->file->text ? p->offset : 0);
        struct check_problem *q = &rep->problems[rep->count++];
        *q = (struct check_problem){p->severity, strdup(p->file->name), strdup(p->file->url), c.line,
                                    c.column, p->message, p->reference, p->resolved, p->code};
        p->message = p->reference = p->resolved = NULL;
        bool unverified = p->code == CHECK_CODE_UNVERIFIED_ANCHOR;
        rep->unverified += unverified && p->severity == CHECK_WARNING;
        rep->errors += p->severity == CHECK_ERROR;
        rep->warnings += p->severity == CHECK_WARNING && !unverified;
        rep->externals += p->severity == CHECK_EXTERNAL;
        if (q->file == NULL || q->url == NULL) {
            return false;
        }
    }
    return true;
}

/* Frees what a run holds (the report keeps only what check_finish gave it). */
static void check_run_free(struct check_run *r)
{
    check_files_free(r);
    for (size_t i = 0; i < r->npending; i++) {
        free(r->pending[i].message);
        free(r->pending[i].reference);
        free(r->pending[i].resolved);
    }
    free(r->pending);
}

/* The passes of a run after the walk, in order; false when memory ran out. */
static bool check_passes(struct check_run *r)
{
    check_mark_focus(r);
    check_read_needed(r);
    for (size_t i = 0; i < r->nfiles && !r->failed; i++) {
        if (r->files[i].type == CHECK_HTML && r->files[i].text) {
            check_build_anchors(r, &r->files[i]);
        }
    }
    for (size_t i = 0; i < r->nfiles && !r->failed; i++) {
        if (r->files[i].type == CHECK_HTML && r->files[i].text && !r->files[i].loaded) {
            check_duplicates(r, &r->files[i]);
        }
    }
    check_unreadable(r);
    check_all_refs(r);
    if (r->o->unreferenced && !r->failed) {
        check_unreferenced(r);
    }
    return !r->failed;
}

struct check_report *check_run(const struct routes *routes, const struct check_options *o,
                               char *err, size_t err_size)
{
    struct check_run r = {.routes = routes, .o = o};
    r.prefix = o->base_path && o->base_path[0] ? o->base_path : NULL;
    struct check_report *rep = calloc(1, sizeof(*rep));
    bool ok = rep != NULL;
    snprintf(err, err_size, "out of memory");
    ok = ok && check_walk_all(&r, err, err_size) && check_passes(&r);
    if (ok) {
        rep->files = r.nfiles;
        rep->references = r.references;
        rep->root = strdup(routes->root);
        rep->base_path = strdup(r.prefix ? r.prefix : "");
        ok = rep->root && rep->base_path && check_finish(&r, rep);
    }
    check_run_free(&r);
    if (!ok) {
        check_report_free(rep);
        return NULL;
    }
    return rep;
}

void check_report_free(struct check_report *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->count; i++) {
        free(r->problems[i].file);
        free(r->problems[i].url);
        free(r->problems[i].message);
        free(r->problems[i].reference);
        free(r->problems[i].resolved);
    }
    free(r->problems);
    free(r->root);
    free(r->base_path);
    free(r);
}

