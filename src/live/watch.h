/*
 * watch — recursive folder watcher (inotify, or a stat walk where inotify
 * hears nothing) with a trailing-edge debounce.
 *
 * Owns: one backend (an inotify instance, or the last walk's snapshot), an
 * eventfd used to stop it, one background thread. Borrows: the root paths
 * (which must outlive the watch). Each root is watched recursively by the
 * path it is configured as (symlinks unresolved); folders created (or moved
 * in) later are watched too, and files already inside such a folder are
 * reported, since they may have been written before its watch existed.
 *
 * The parts: the coalescing window on an injected clock (watch_window.h),
 * the root tracker (watch_roots.h), the inotify backend (watch_inotify.h)
 * and the poller (watch_poll.h), which report through watch_core.h.
 *
 * Swapped roots: a root folder replaced at its path (rm -rf and built
 * again, moved away and replaced, `ln -sfn` pointing its symlink
 * elsewhere, its target built again) is heard by a watch on its parent
 * folder and on a symlink target's parent (its name coming or going), by
 * its own IN_DELETE_SELF/IN_MOVE_SELF, and by a look at each root path
 * once a second (a symlink further up, or a chain of them). Then @swapped
 * is called (livereload re-opens the route, so serving and watching agree,
 * and says on stderr which folder is watched now), the old folder's
 * watches are dropped, the new one's tree is added, and the swap is one
 * overflow; the window waits while the folder is missing (up to
 * WATCH_SWAP_CAP_MS) and closes WATCH_SWAP_QUIET_MS after the last event,
 * so a rebuild is one batch. Polling compares each root's identity
 * (device, inode) per walk and does the same.
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
 * Callback contract: @fn (and @swapped) run on the watcher thread, never concurrently
 * with itself, with no watch lock held. The batch and its strings are valid
 * only during the call. @fn must not call watch_destroy() on its own watch.
 * `overflow` means events were lost (IN_Q_OVERFLOW, a root folder removed
 * or swapped, or too many changes for one batch): the consumer must drop everything it
 * cached and reload fully; `changes` may then be incomplete.
 *
 * If the kernel's watch limit is hit (ENOSPC) one line naming
 * fs.inotify.max_user_watches and the fix goes to stderr; WATCH_INOTIFY
 * keeps the folders already watched (once per process), WATCH_AUTO polls
 * instead, whether the limit is met at start-up or later (a new folder,
 * other programs taking the user's watches). WATCH_AUTO polls too when
 * inotify cannot be had at all (inotify_init1 fails); that line, and
 * one for a root on a file system inotify often hears nothing from (NFS,
 * SMB, 9p as in WSL, FUSE and virtiofs as in Docker Desktop), name
 * `--watch poll`.
 *
 * Polling (WATCH_POLL): one walk of every root per interval, fstatat() on
 * each entry (mtime, ctime, size, inode: a write, a touch, an atomic save),
 * compared with the last walk. A walk that finds changes opens the window;
 * the window is walked again every debounce_ms until a walk finds nothing
 * new (or 8 x debounce_ms have passed), then flushes: the same batch and the
 * same events as inotify, a temp file renamed away inside the window never
 * shows. A poll cannot see a writer close its file, so a write still going
 * on after the window may be announced twice. A root that vanishes, comes
 * back or is another folder is an overflow (a swap, as above).
 *
 * Thread-safety: watch_create/watch_destroy from one thread; watch_count
 * from any thread. Which names are never reported: watch_path.h.
 */
#ifndef FOLIO_WATCH_H
#define FOLIO_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "watch_batch.h"

struct watch;
struct clock;

enum watch_mode {
    WATCH_AUTO,    /* inotify, with hints on how to switch when it falls short */
    WATCH_INOTIFY,
    WATCH_POLL,
};

struct watch_options {
    enum watch_mode mode;
    unsigned debounce_ms;      /* 0: WATCH_DEBOUNCE_DEFAULT_MS */
    unsigned poll_interval_ms; /* 0: WATCH_POLL_DEFAULT_MS */
    /* Tests: the window's clock (watch_window.h; NULL: CLOCK_MONOTONIC),
     * and no thread: the test runs the turns with watch_step(). */
    const struct clock *clock;
    bool stepped;
};

#define WATCH_DEBOUNCE_DEFAULT_MS 30u
#define WATCH_POLL_DEFAULT_MS 500u

/*
 * Starts watching the folders at @paths (@n of them); a change names its
 * root by index. A root that cannot be watched is reported on stderr and
 * skipped. @swapped may be NULL; @ctx goes to both callbacks. Returns NULL
 * (errno set) if inotify or the thread cannot be created. @opt NULL:
 * WATCH_AUTO with the defaults.
 */
struct watch *watch_create(const char *const *paths, size_t n, const struct watch_options *opt,
                           watch_fn fn, watch_swap_fn swapped, void *ctx);

/* Tests (opt->stepped): one turn on the watch's clock, never blocking: reads
 * what happened, walks if a walk is due, flushes a window that is due.
 * Returns the milliseconds until its next deadline (-1: none, no backend
 * left). */
int watch_step(struct watch *w);

/* Number of directories currently watched, or walked at the last poll
 * (for the health endpoint). */
size_t watch_count(const struct watch *w);

/* Stops the thread (waiting for a running callback) and frees everything.
 * Pending, unflushed changes are dropped. Accepts NULL. */
void watch_destroy(struct watch *w);

#endif
