/* check_walk — the article's files as folio serves them: every file of
 * every route folder (a longer route hides what it shadows), read through
 * resolve.c as the server reads it, and any URL path followed through the
 * routes and the resolver to the file folio would answer with. Which files a
 * run reads (all, or a live check's focus and the pages it depends on) and
 * which fragments each page loads are decided here too.
 *
 * Works on one struct check_run (check_internal.h); no globals. On memory
 * exhaustion the functions set r->failed and stop early.
 */
#ifndef FOLIO_CHECK_WALK_H
#define FOLIO_CHECK_WALK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "check_internal.h"

/* Walks every route folder of r->routes into r->files, sorted by URL path.
 * False when a folder cannot be read (the reason in @err). */
bool check_walk_all(struct check_run *r, char *err, size_t err_size);

/* The walked file served at the decoded URL path @url, or NULL. */
struct check_file *check_find(struct check_run *r, const char *url);

/* Reads an HTML or CSS file through resolve_open and takes its references. */
void check_read(struct check_run *r, struct check_file *f);

/* Finds the fragments @page loads (check_internal.h: page->frags) and reads
 * those not read yet. */
void check_read_frags(struct check_run *r, struct check_file *page);

/* With a focus (live checks): marks the files whose problems are wanted. */
void check_mark_focus(struct check_run *r);

/* Reads what the run needs: every HTML and CSS file, or (live, with a
 * focus) the focused ones and the pages their problems depend on; then the
 * fragments those pages load. */
void check_read_needed(struct check_run *r);

/* The outcome of following one decoded URL path through folio. */
struct check_target {
    const char *problem;     /* NULL: folio serves a file for it */
    struct check_file *file; /* the walked file, when it is one */
    char resolved[PATH_MAX]; /* what the report shows it came to */
};

/* Follows the normalised path @path through the routes and the resolver. */
void check_follow(struct check_run *r, const char *path, struct check_target *t);

/* Frees the walked files and what each holds. */
void check_files_free(struct check_run *r);

#endif
