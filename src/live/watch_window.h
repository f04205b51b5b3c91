/*
 * watch_window — the watcher's coalescing window: the changes heard since the
 * last flush, and when to hand them over, on an injected clock (the real one
 * reads CLOCK_MONOTONIC; tests step a fake one). Knows no backend and no
 * folder: the backends note changes into it, the root tracker opens it for a
 * swap and says whether a swapped root is still missing.
 *
 * The rules: a window opens at its first change and closes @debounce_ms after
 * the last one (trailing edge), or at the latest max(8 x debounce_ms, 100 ms)
 * after the first, so a continuous stream of writes still flushes. A file
 * still open for writing holds it (WATCH_WRITE_IDLE_MS, WATCH_WRITE_CAP_MS);
 * a root swap holds it while the root is missing (WATCH_SWAP_CAP_MS) and,
 * for a folder made in place, until WATCH_SWAP_QUIET_MS without events.
 *
 * Not thread-safe: one window belongs to the watcher thread.
 */
#ifndef FOLIO_WATCH_WINDOW_H
#define FOLIO_WATCH_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/clock.h"

#include "watch_batch.h"

/* A batch bigger than this (a git checkout, an unpacked archive) is sent as
 * an overflow: the consumer reloads everything anyway, and deduplication
 * stays cheap (it is a linear scan). */
#define WATCH_MAX_BATCH 2048u

/* A file written but not yet closed (a big asset being copied, a generator
 * writing a figure in pieces) is not announced half-written: the window
 * stays open until its writer closes it, unless the writer pauses longer
 * than WATCH_WRITE_IDLE_MS (mmap writes, truncate(2): no close comes) or
 * the window has lasted WATCH_WRITE_CAP_MS. */
#define WATCH_WRITE_IDLE_MS 1000u
#define WATCH_WRITE_CAP_MS 5000u

/* A route folder replaced at its path (deleted and built again, moved away,
 * a symlink swapped) opens a window that waits for the new one: while it is
 * missing the window is held open, up to WATCH_SWAP_CAP_MS after the swap,
 * so a rebuild costs the browsers one reload, not a 404 and a reload. A
 * folder made at the path (mkdir, cp -r: it is being filled), or one seen
 * by a poll, closes the window only after WATCH_SWAP_QUIET_MS without
 * events (a slow copy is announced once, after it settled); one renamed
 * into place (mv, ln -sfn) is complete: the usual debounce. */
#define WATCH_SWAP_CAP_MS 5000u
#define WATCH_SWAP_QUIET_MS 200u

/* One changed path in the current window. */
struct watch_pending {
    int id;
    char *rel;
    bool appeared_first; /* the window's first event for it was a create */
    bool gone;           /* its latest event was a delete or move-out */
    bool writing;        /* modified and not yet closed by its writer */
};

struct watch_window {
    const struct clock *clock; /* borrowed; NULL: CLOCK_MONOTONIC (base/clock.h) */
    unsigned debounce_ms;
    unsigned max_wait_ms;
    struct watch_pending *pending;
    size_t npending, cap_pending;
    bool overflow;
    uint64_t first_ms, last_ms; /* of the current window; 0: no window */
    uint64_t swap_ms;           /* the window's latest root swap; 0: none */
    bool swap_filling;          /* a root folder was made in place: wait for quiet */
};

/* Sets up an empty window closing @debounce_ms (> 0) after its last change,
 * reading @clock (NULL: CLOCK_MONOTONIC), which must outlive it. */
void watch_window_init(struct watch_window *win, unsigned debounce_ms, const struct clock *clock);

/* Frees the pending changes (dropped, not flushed). */
void watch_window_finish(struct watch_window *win);

/* The window's clock, now. */
uint64_t watch_window_now(const struct watch_window *win);

/* True while changes (or an overflow) wait for a flush. */
bool watch_window_is_open(const struct watch_window *win);

/* Records one event for (root id, rel). @appear: a create or move-in;
 * @gone: a delete or move-out; @writing: 1 a write, 0 the writer closed it
 * (or it moved or went), -1 neither. Takes ownership of @rel (NULL: out of
 * memory, an overflow). */
void watch_window_note(struct watch_window *win, int id, char *rel, bool appear, bool gone,
                       int writing);

/* Opens the window as an overflow (events lost, a root gone, a walk that
 * failed): the consumer will reload everything. */
void watch_window_overflow(struct watch_window *win);

/* A root was swapped (or went, or came back): an overflow the swap rules
 * hold. */
void watch_window_swap(struct watch_window *win);

/* The swapped root is being made in place (mkdir, cp -r): wait for quiet. */
void watch_window_filling(struct watch_window *win);

/* When the current window must be flushed at the latest. */
uint64_t watch_window_cap(const struct watch_window *win);

/* True while the window waits for a swapped root to come back (@missing:
 * some root is, as the root tracker says). */
bool watch_window_held(const struct watch_window *win, bool missing);

/* Event-driven backends (inotify): when the open window is to be flushed. */
uint64_t watch_window_due(const struct watch_window *win, bool missing);

/* Walking backends (poll), after a walk that found news (@changed) or not:
 * whether to flush now. A walk finding nothing is the trailing edge; after a
 * swap only WATCH_SWAP_QUIET_MS without news is (a poll cannot tell a folder
 * renamed into place from one being filled). */
bool watch_window_settled(const struct watch_window *win, bool changed, bool missing);

/* Hands the window's changes to @fn as one deduplicated batch (none when
 * only temp files came and went) and closes it. */
void watch_window_flush(struct watch_window *win, watch_fn fn, void *ctx);

#endif
