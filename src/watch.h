/*
 * watch — recursive inotify watcher with a trailing-edge debounce.
 *
 * Owns: one inotify instance, an eventfd used to stop it, one background
 * thread, and the table of watched directories. Each root directory is
 * watched recursively; folders created (or moved in) later are watched too,
 * and files already inside such a folder are reported, since they may have
 * been written before its watch existed.
 *
 * What counts as a change: writes (IN_MODIFY, IN_CLOSE_WRITE), creates,
 * deletes and moves in or out (IN_CREATE, IN_DELETE, IN_MOVED_FROM,
 * IN_MOVED_TO), which together cover editors' atomic saves (write a temp
 * file, rename it over the target). Never reported: dotfiles and
 * dot-folders, editor scratch files (`*.swp`, `*.swx`, `*~`, `4913`,
 * `#name#`, JetBrains `*___jb_tmp___`/`*___jb_old___`), and any file that
 * appeared and vanished again inside one window (sed -i's `sedXXXXXX`).
 *
 * Coalescing: changes are collected until @debounce_ms pass without a new
 * one (trailing edge), or until 8 x debounce_ms (at least 100 ms) after the
 * first one, so a continuous stream of writes still flushes. One flush is
 * one callback with a deduplicated batch.
 *
 * Callback contract: @fn runs on the watcher thread, never concurrently
 * with itself, with no watch lock held. The batch and its strings are valid
 * only during the call. @fn must not call watch_destroy() on its own watch.
 * `overflow` means events were lost (IN_Q_OVERFLOW, a root folder removed,
 * or too many changes for one batch): the consumer must drop everything it
 * cached and reload fully; `changes` may then be incomplete.
 *
 * If the kernel's watch limit is hit (ENOSPC) one line naming
 * fs.inotify.max_user_watches and the fix goes to stderr, once per process;
 * the folders already watched keep working.
 *
 * Thread-safety: watch_create/watch_destroy from one thread; watch_count
 * from any thread.
 */
#ifndef FOLIO_WATCH_H
#define FOLIO_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct watch;

/* A root to watch. @path is copied; @id is handed back with its changes. */
struct watch_dir {
    const char *path;
    int id;
};

struct watch_change {
    int id;              /* the watch_dir's id */
    const char *relpath; /* relative to that dir, '/'-separated, no leading / */
};

struct watch_batch {
    const struct watch_change *changes;
    size_t n;
    bool overflow;
};

typedef void (*watch_fn)(void *ctx, const struct watch_batch *batch);

#define WATCH_DEBOUNCE_DEFAULT_MS 30u

/*
 * Starts watching @n roots. A root that cannot be watched is reported on
 * stderr and skipped. Returns NULL (errno set) if inotify or the thread
 * cannot be created. @debounce_ms 0 means WATCH_DEBOUNCE_DEFAULT_MS.
 */
struct watch *watch_create(const struct watch_dir *dirs, size_t n,
                           unsigned debounce_ms, watch_fn fn, void *ctx);

/* Number of directories currently watched (for the health endpoint). */
size_t watch_count(const struct watch *w);

/* Stops the thread (waiting for a running callback) and frees everything.
 * Pending, unflushed changes are dropped. Accepts NULL. */
void watch_destroy(struct watch *w);

/* Pure: true if a file or folder named @name (one path component) is never
 * reported nor watched. Exposed for tests. */
bool watch_ignored_name(const char *name);

#endif
