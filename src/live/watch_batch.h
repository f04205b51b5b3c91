/*
 * watch_batch — what the watcher hands its consumer: one flushed window's
 * changes (the types only, shared by watch.h and the coalescer that builds
 * them, watch_window.h, and the root tracker that reports swaps,
 * watch_roots.h, so none includes another).
 */
#ifndef FOLIO_WATCH_BATCH_H
#define FOLIO_WATCH_BATCH_H

#include <stdbool.h>
#include <stddef.h>

struct watch_change {
    int id;              /* the root's index in the array given to watch_create */
    const char *relpath; /* relative to that dir, '/'-separated, no leading / */
};

struct watch_batch {
    const struct watch_change *changes;
    size_t n;
    bool overflow;
};

typedef void (*watch_fn)(void *ctx, const struct watch_batch *batch);

/* Root @id's folder went (@there false), came back, or another folder is
 * at its path now: called at once, before the swap's batch. */
typedef void (*watch_swap_fn)(void *ctx, int id, bool there);

#endif
