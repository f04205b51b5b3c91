/* check_live — `folio check` while editing (preview only).
 *
 * After each batch of saves, the watcher thread calls check_live_batch: it
 * checks the HTML and CSS files the batch touched (a fragment from the pages
 * that load it); a fragment or any other change (a deleted image, say) also
 * re-checks the pages
 * and, for each file whose list of errors differs from the one the browsers
 * were last sent, broadcasts a `check` event (reload.js shows a panel):
 *
 *   {"server":"<hello's instance id>",
 *    "files":[{"file":"www/index.html","url":"/index.html",
 *              "problems":[{"severity":"error","file":...,"line":3,...}]}]}
 *
 * An empty "problems" list clears that file. A batch that changes nothing
 * the browsers were told sends nothing, so a clean article never hears of
 * it. What was last sent is kept per event hub (one per server), guarded by
 * a mutex; it lives as long as the process.
 */
#ifndef FOLIO_CHECK_LIVE_H
#define FOLIO_CHECK_LIVE_H

#include <stddef.h>

#include "watch.h"

struct routes;
struct sse_hub;

/* Checks what @b touched beneath the routes @r (the server's own: their
 * folders as the server holds them) and tells @hub what changed. */
void check_live_batch(const struct routes *r, const struct watch_batch *b, struct sse_hub *hub);

/* What check_live_batch broadcasts for @b: the `check` event's data
 * (malloc'd), or NULL when no file's errors differ from what @hub's
 * browsers were last told. Either way, what it returns counts as told.
 * check_live_batch's first half, apart so a test reads the event. */
char *check_live_event(const struct routes *r, const struct watch_batch *b, const struct sse_hub *hub);

#endif
