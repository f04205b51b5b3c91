/* watch_window — see watch_window.h. */
#include "watch_window.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/array.h"
#include "base/clock.h"

/* See watch_window.h. */
void watch_window_init(struct watch_window *win, unsigned debounce_ms, const struct clock *clock)
{
    *win = (struct watch_window){
        .clock = clock,
        .debounce_ms = debounce_ms,
        .max_wait_ms = debounce_ms * 8 > 100 ? debounce_ms * 8 : 100,
    };
}

/* Frees the pending paths and empties the list. */
static void watch_window_clear(struct watch_window *win)
{
    for (size_t i = 0; i < win->npending; i++) {
        free(win->pending[i].rel);
    }
    win->npending = 0;
}

/* See watch_window.h. */
void watch_window_finish(struct watch_window *win)
{
    watch_window_clear(win);
    free(win->pending);
    win->pending = NULL;
    win->cap_pending = 0;
}

/* See watch_window.h. */
uint64_t watch_window_now(const struct watch_window *win)
{
    return (uint64_t)clock_read(win->clock);
}

/* See watch_window.h. */
bool watch_window_is_open(const struct watch_window *win)
{
    return win->first_ms != 0;
}

/* Marks an event now: opens the window if none is, and restarts the quiet. */
static uint64_t watch_window_touch(struct watch_window *win)
{
    uint64_t now = watch_window_now(win);
    if (win->first_ms == 0) {
        win->first_ms = now;
    }
    win->last_ms = now;
    return now;
}

/* Makes room for one more pending change; false (an overflow) if memory or
 * the batch's bound runs out. */
static bool watch_window_reserve(struct watch_window *win)
{
    if (win->npending >= WATCH_MAX_BATCH) {
        return false;
    }
    struct watch_pending *p = array_grow(win->pending, &win->cap_pending, win->npending + 1, sizeof *p, 16);
    if (p == NULL) {
        return false;
    }
    win->pending = p;
    return true;
}

/* See watch_window.h: merges into the window's entry for the path, if any. */
void watch_window_note(struct watch_window *win, int id, char *rel, bool appear, bool gone,
                       int writing)
{
    if (rel == NULL) {
        win->overflow = true; /* out of memory: we cannot say what changed */
        return;
    }
    watch_window_touch(win);
    for (size_t i = 0; i < win->npending; i++) {
        struct watch_pending *p = &win->pending[i];
        if (p->id == id && strcmp(p->rel, rel) == 0) {
            p->gone = gone;
            if (writing >= 0) {
                p->writing = writing != 0;
            }
            free(rel);
            return;
        }
    }
    if (!watch_window_reserve(win)) {
        win->overflow = true;
        free(rel);
        return;
    }
    assert(win->npending < win->cap_pending && win->npending < WATCH_MAX_BATCH); /* reserved */
    win->pending[win->npending++] = (struct watch_pending){
        .id = id, .rel = rel, .appeared_first = appear, .gone = gone,
        .writing = writing > 0};
}

/* See watch_window.h. */
void watch_window_overflow(struct watch_window *win)
{
    win->overflow = true;
    watch_window_touch(win);
}

/* See watch_window.h. */
void watch_window_swap(struct watch_window *win)
{
    win->overflow = true; /* the whole page may have changed */
    win->swap_ms = watch_window_touch(win);
}

/* See watch_window.h. */
void watch_window_filling(struct watch_window *win)
{
    win->swap_filling = true;
}

/* See watch_window.h. */
uint64_t watch_window_cap(const struct watch_window *win)
{
    return win->swap_ms != 0 ? win->swap_ms + WATCH_SWAP_CAP_MS
                             : win->first_ms + win->max_wait_ms;
}

/* See watch_window.h. */
bool watch_window_held(const struct watch_window *win, bool missing)
{
    return win->swap_ms != 0 && missing && watch_window_now(win) < watch_window_cap(win);
}

/* True while some changed file is still open for writing. */
static bool watch_window_writing(const struct watch_window *win)
{
    for (size_t i = 0; i < win->npending; i++) {
        if (win->pending[i].writing && !win->pending[i].gone) {
            return true;
        }
    }
    return false;
}

/* See watch_window.h. */
uint64_t watch_window_due(const struct watch_window *win, bool missing)
{
    uint64_t due = win->last_ms + win->debounce_ms;
    uint64_t cap = watch_window_cap(win);
    if (win->swap_ms != 0) {
        /* A rebuild: wait for the folder, then (made in place) for quiet. */
        uint64_t quiet = win->swap_filling && win->debounce_ms < WATCH_SWAP_QUIET_MS
                             ? WATCH_SWAP_QUIET_MS
                             : win->debounce_ms;
        due = watch_window_held(win, missing) ? cap : win->last_ms + quiet;
    } else if (!win->overflow && watch_window_writing(win)) {
        due = win->last_ms + WATCH_WRITE_IDLE_MS;
        cap = win->first_ms + WATCH_WRITE_CAP_MS;
    }
    return cap < due ? cap : due;
}

/* See watch_window.h. */
bool watch_window_settled(const struct watch_window *win, bool changed, bool missing)
{
    if (win->first_ms == 0 || watch_window_held(win, missing)) {
        return false;
    }
    uint64_t now = watch_window_now(win);
    bool quiet = !changed && (win->swap_ms == 0 || now - win->last_ms >= WATCH_SWAP_QUIET_MS);
    return quiet || now >= watch_window_cap(win);
}

/* See watch_window.h. */
void watch_window_flush(struct watch_window *win, watch_fn fn, void *ctx)
{
    struct watch_change *ch = NULL;
    size_t n = 0;
    if (win->npending > 0) {
        ch = malloc(win->npending * sizeof *ch);
        if (ch == NULL) {
            win->overflow = true;
        }
    }
    for (size_t i = 0; ch != NULL && i < win->npending; i++) {
        const struct watch_pending *p = &win->pending[i];
        if (p->appeared_first && p->gone) {
            continue; /* a temp file that came and went: never visible */
        }
        ch[n++] = (struct watch_change){.id = p->id, .relpath = p->rel};
    }
    if (n > 0 || win->overflow) {
        struct watch_batch b = {.changes = ch, .n = n, .overflow = win->overflow};
        fn(ctx, &b);
    }
    free(ch);
    watch_window_clear(win);
    win->overflow = false;
    win->first_ms = win->last_ms = win->swap_ms = 0;
    win->swap_filling = false;
}
