/*
 * watch_core — what the watcher hands each backend (watch_inotify.c,
 * watch_poll.c): the one interface they report through. Changes go to the
 * window (watch_window.h), root paths are looked at through the tracker
 * (watch_roots.h), and a due window is flushed to the consumer's callback.
 * The backends know neither each other nor watch.c; watch.c runs whichever
 * was chosen, turn by turn (watch_inotify_turn, watch_poll_turn).
 *
 * All state except `count` belongs to the watcher thread once it runs
 * (watch_create fills it before starting the thread), so there is no lock:
 * the only cross-thread traffic is the stop eventfd and the atomic count.
 */
#ifndef FOLIO_WATCH_CORE_H
#define FOLIO_WATCH_CORE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "watch_batch.h"
#include "watch_missed.h"
#include "watch_roots.h"
#include "watch_window.h"

struct watch_core {
    struct watch_window window;
    struct watch_roots roots;
    watch_fn fn;          /* a flushed window goes here */
    void *ctx;
    bool auto_mode;       /* chosen by --watch auto: hints say how to switch */
    unsigned poll_ms;     /* polling: the idle interval between two walks */
    atomic_size_t count;  /* folders watched (or walked at the last poll) */
    struct watch_missed missed; /* folders that could not be, said once */
};

#endif
