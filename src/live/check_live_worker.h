/* check_live_worker — the live check (check_live.h) off the watcher thread.
 *
 * A check of a big page takes a while (thousands of anchors, "did you
 * mean"), and a save's reload waited for it on the watcher thread, then
 * every save after it waited too. Now the watcher hands each batch to a
 * thread of its own and sends the batch's reload events at once; that
 * thread checks what the batches handed to it since its last check touched
 * (merged: one check for a burst of saves) and broadcasts as
 * check_live_batch does.
 *
 * A batch handed over while the thread is idle is waited for at most
 * @wait_ms before its reload events go: a quick check's event then still
 * comes first, so a page that reloads has it (reload.js keeps it across the
 * reload); a slow one's comes after them (a page loaded meanwhile asks for
 * check_live_state). A batch handed over while an earlier one is being
 * checked is not waited for at all: no reload waits behind another save's
 * check.
 *
 * Thread-safe: submit from the watcher thread, stop once it is gone.
 */
#ifndef FOLIO_CHECK_LIVE_WORKER_H
#define FOLIO_CHECK_LIVE_WORKER_H

#include <stdio.h>

#include "watch.h"

struct routes;
struct sse_hub;
struct check_live_worker;

/* Starts the thread for the routes @r, @hub and @out (check_live_batch's;
 * all outlive it); NULL when it cannot (out of memory, no thread): call
 * check_live_batch instead. */
struct check_live_worker *check_live_worker_start(const struct routes *r, struct sse_hub *hub, FILE *out);

/* From the watcher thread: hands @b's changes over, as said above. */
void check_live_worker_submit(struct check_live_worker *cl, const struct watch_batch *b, unsigned wait_ms);

/* Waits for the check in progress, if any, and ends the thread; what was
 * handed over and not yet checked is dropped. Accepts NULL. */
void check_live_worker_stop(struct check_live_worker *cl);

#endif
