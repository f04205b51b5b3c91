/* check_rules — what makes a reference broken: each reference of a
 * document resolved as a browser does (check_refs.c) and then followed as
 * folio serves it (check_walk.c): not found, a case-only near miss, hidden,
 * outside the folders, a folder without index.html, an in-page anchor that
 * names no element, a path that leaves or changes under --base-path once
 * rewrite.c has rewritten it; duplicate ids; files nothing references.
 * Each finding is noted in the run (check_internal.h: r->pending).
 *
 * Works on one struct check_run; no globals. On memory exhaustion the
 * functions set r->failed and stop early.
 */
#ifndef FOLIO_CHECK_RULES_H
#define FOLIO_CHECK_RULES_H

#include "check_internal.h"

/* The ids an anchor into the HTML file @f may name: its own and, for a page,
 * its fragments', sorted. */
void check_build_anchors(struct check_run *r, struct check_file *f);

/* Duplicate ids among @f's anchors (a page and the fragments it loads). */
void check_duplicates(struct check_run *r, const struct check_file *f);

/* Every document's references, each against the URL it resolves from (a
 * fragment's from each page that loads it). */
void check_all_refs(struct check_run *r);

/* Pages and stylesheets that cannot be read (folio's 403). */
void check_unreadable(struct check_run *r);

/* Files of the routes other than "/" that nothing references. */
void check_unreferenced(struct check_run *r);

#endif
