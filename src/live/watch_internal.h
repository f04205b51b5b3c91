/*
 * watch_internal — what watch.c (the window, the batch, inotify) and
 * watch_poll.c (the stat walk) share; not part of watch.h's interface.
 * Unit tests include it for watch_ignored_name().
 *
 * All state except `count` belongs to the watcher thread once it runs
 * (watch_create fills it before starting the thread), so there is no lock:
 * the only cross-thread traffic is the stop eventfd and the atomic count.
 */
#ifndef FOLIO_WATCH_INTERNAL_H
#define FOLIO_WATCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "watch.h"

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

/* One watched directory; indexed by its watch descriptor. */
struct watch_node {
    char *rel;  /* relative to its root, "" for the root; NULL: slot unused */
    size_t root;
};

/* One changed path in the current window. */
struct watch_pending {
    int id;
    char *rel;
    bool appeared_first; /* the window's first event for it was a create */
    bool gone;           /* its latest event was a delete or move-out */
    bool writing;        /* modified and not yet closed by its writer */
};

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

/* inotify: how often each root's path is looked at (one stat) for a swap no
 * watch can hear: a symlink further up its path, or in a chain of them. */
#define WATCH_RECHECK_MS 1000u

/* inotify: a folder watched for one entry's name (a root's parent). */
struct watch_parent {
    int wd;     /* -1: not watched */
    char *dir;  /* the folder, and the name in it; NULL: none */
    char *name;
};

/* A root folder: borrowed from the caller's routes, plus our own state. */
struct watch_root {
    const char *path;           /* the route's configured path (symlinks unresolved) */
    const struct route *route;  /* borrowed: re-opened (routes_check) when swapped */
    int wd;       /* inotify: the root's watch, -1 when it has none */
    bool missing; /* it went away (a swap under way) and is not back */
    int fd;       /* inotify: the folder watched there, held open; -1: none */
    dev_t dev;    /* and which one it is */
    ino_t ino;
    /* inotify: [0] the path's parent folder, [1] its symlink target's
     * (when the path is a symlink: a target built again is heard there) */
    struct watch_parent parents[2];
};

struct watch_poll;

struct watch {
    enum watch_mode mode; /* WATCH_INOTIFY or WATCH_POLL once created */
    bool auto_mode;       /* chosen by --watch auto: hints say how to switch */
    int ifd;              /* inotify, -1 when polling */
    int stopfd;
    pthread_t thread;
    watch_fn fn;
    void *ctx;
    unsigned debounce_ms;
    unsigned max_wait_ms;
    unsigned poll_ms;

    struct watch_root *roots;
    size_t nroots;
    struct watch_node *nodes;
    size_t nnodes; /* capacity, indexed by wd */
    atomic_size_t count;
    struct watch_poll *poll; /* the last walk's snapshot, when polling */

    struct watch_pending *pending;
    size_t npending, cap_pending;
    bool overflow;
    uint64_t first_ms, last_ms; /* of the current window; 0: no window */
    uint64_t swap_ms;           /* the window's latest root swap; 0: none */
    bool swap_filling;          /* a root folder was made in place: wait for quiet */
    uint64_t recheck_ms;        /* inotify: when the roots' paths are looked at next */
};

/* Pure: true if a file or folder named @name (one path component) is never
 * reported nor watched. */
bool watch_ignored_name(const char *name);

/* Milliseconds on the monotonic clock. */
uint64_t watch_now_ms(void);

/* "a" + "b" -> "a/b", "" + "b" -> "b". Returns NULL when memory runs out. */
char *watch_join(const char *a, const char *b);

/* Records one event for (root id, rel) in the current window. @appear: a
 * create or move-in; @gone: a delete or move-out; @writing: 1 a write, 0
 * the writer closed it (or it moved or went), -1 neither. Takes ownership
 * of @rel (NULL: out of memory, an overflow). */
void watch_note(struct watch *w, int id, char *rel, bool appear, bool gone, int writing);

/* Root @r's folder was replaced, went away (@there false) or came back:
 * re-opens its route (routes_check) so serving and watching agree, opens
 * the window as an overflow the swap rules hold (WATCH_SWAP_CAP_MS), and
 * says on stderr which folder is watched now. */
void watch_root_swapped(struct watch *w, size_t r, bool there);

/* When the current window must be flushed at the latest. */
uint64_t watch_window_cap(const struct watch *w);

/* True while the window waits for a swapped root to come back. */
bool watch_window_held(const struct watch *w);

/* Hands the window's changes to the callback as one batch and closes it. */
void watch_flush(struct watch *w);

/* Polling: takes the first snapshot (nothing reported); false when memory
 * runs out. */
bool watch_poll_init(struct watch *w);

/* Polling: the watcher thread (one stat walk per interval). */
void *watch_poll_thread(void *arg);

/* Polling: frees the snapshot. Accepts w->poll == NULL. */
void watch_poll_free(struct watch *w);

#endif
