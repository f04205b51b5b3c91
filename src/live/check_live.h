/* check_live — `folio check` while editing (preview only).
 *
 * After each batch of saves (on a thread of its own: check_live_worker.h),
 * check_live_batch checks the HTML and CSS files the batch touched (a
 * fragment from the pages that load it); a fragment or any other change (a
 * deleted image, say) also re-checks the pages and, for each file whose
 * list of errors differs from the one the browsers were last sent,
 * broadcasts a `check` event (reload.js shows a panel):
 *
 *   {"server":"<hello's instance id>",
 *    "files":[{"file":"www/index.html","url":"/index.html",
 *              "problems":[{"severity":"error","file":...,"line":3,...}]}]}
 *
 * An empty "problems" list clears that file. A batch that changes nothing
 * the browsers were told sends nothing, so a clean article never hears of
 * it. What was last sent is kept per event hub (one per server), guarded by
 * a mutex; it lives as long as the process.
 *
 * The terminal hears of it too: at start, check's errors and summary
 * (check_live_start, which also makes them what the browsers know, so a
 * page's first load shows them: check_live_state); after a save, one line
 * for what it broke and one for what it fixed (an anchor only a script may
 * make is left to the browser, which sees the rendered page).
 */
#ifndef FOLIO_CHECK_LIVE_H
#define FOLIO_CHECK_LIVE_H

#include <stddef.h>
#include <stdio.h>

#include "watch.h"

struct routes;
struct sse_hub;

/* Checks what @b touched beneath the routes @r (the server's own: their
 * folders as the server holds them) and tells @hub what changed, and @out
 * (NULL: nobody) what the batch broke and what it fixed, a line each:
 *   folio: check: this save broke 1: www/index.html: img src "a.png" not found
 *   folio: check: this save fixed 2: www/index.html: ...; fragments/x.html: ...
 * naming three at most, then "; and N more". */
void check_live_batch(const struct routes *r, const struct watch_batch *b, struct sse_hub *hub, FILE *out);

/* Checks the whole article before the server takes its first request:
 * prints on @out the errors `folio check` finds (ten, then how many more)
 * and its summary line, each after "folio: ", and keeps the strict findings
 * as what @hub's browsers know. */
void check_live_start(const struct routes *r, const struct sse_hub *hub, FILE *out);

/* What @hub's browsers know now, every file with errors, as a `check`
 * event's data with "full":true (a page takes it instead of what it had):
 * malloc'd, NULL out of memory. A page's first load asks for it. */
char *check_live_state(const struct sse_hub *hub);

/* What check_live_batch broadcasts for @b: the `check` event's data
 * (malloc'd), or NULL when no file's errors differ from what @hub's
 * browsers were last told. Either way, what it returns counts as told.
 * check_live_batch's first half, apart so a test reads the event. */
char *check_live_event(const struct routes *r, const struct watch_batch *b, const struct sse_hub *hub);

#endif
