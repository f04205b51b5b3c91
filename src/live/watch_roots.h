/*
 * watch_roots — the root tracker: which folder each watched root path names
 * (held open, compared by device and inode), its parent folders' watches
 * (inotify: a root's name coming and going is heard there), and the verdict
 * when a root was swapped (rm -rf and built again, moved away and replaced,
 * `ln -sfn` pointing its symlink elsewhere, its target built again).
 *
 * A swap is reported once, here: to the consumer's swap callback (livereload
 * re-opens the route; the watcher knows no routes) and to the window, which
 * it opens as an overflow the swap rules hold. The backends ask and act on
 * the verdict (drop the old tree's watches, add the new one's); this module
 * calls no backend. The tree's own watch table is asked through @in_tree,
 * because inotify gives a parent folder that is also a watched folder the
 * same watch descriptor.
 *
 * Not thread-safe: it belongs to the watcher thread.
 */
#ifndef FOLIO_WATCH_ROOTS_H
#define FOLIO_WATCH_ROOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "watch_window.h"

struct inotify_event;

/* inotify: a folder watched for one entry's name (a root's parent). */
struct watch_parent {
    int wd;     /* -1: not watched */
    char *dir;  /* the folder, and the name in it; NULL: none */
    char *name;
};

/* One root path, and what we know of the folder it names. */
struct watch_root {
    const char *path; /* borrowed: the configured path (symlinks unresolved) */
    int wd;       /* inotify: the root's tree watch, -1 when it has none (set by the backend) */
    bool missing; /* it went away (a swap under way) and is not back */
    int fd;       /* the folder last seen there, held open; -1: none */
    dev_t dev;    /* and which one it is */
    ino_t ino;
    /* inotify: [0] the path's parent folder, [1] its symlink target's
     * (when the path is a symlink: a target built again is heard there) */
    struct watch_parent parents[2];
};

struct watch_roots {
    struct watch_root *items;
    size_t n;
    struct watch_window *window; /* borrowed: a swap opens it */
    watch_swap_fn swapped;       /* may be NULL */
    void *ctx;
    int ifd;                     /* inotify, for parent watches; -1 when polling */
    bool (*in_tree)(void *tree, int wd); /* is @wd one of the tree's watches */
    void *tree;
};

/* What a look at a root's path found. */
enum watch_root_state {
    WATCH_ROOT_SAME,    /* the folder held */
    WATCH_ROOT_ABSENT,  /* none, as before */
    WATCH_ROOT_SWAPPED, /* another, none now, or one again: reported */
    WATCH_ROOT_UNKNOWN, /* cannot tell now (out of descriptors) */
};

/* Sets up @n roots at @paths (borrowed, must outlive the tracker), none held
 * yet, reporting swaps to @swapped(@ctx) and @window. False when memory runs
 * out (then finish it all the same). */
bool watch_roots_init(struct watch_roots *roots, const char *const *paths, size_t n,
                      struct watch_window *window, watch_swap_fn swapped, void *ctx);

/* Closes what is held, forgets the parents (their watches go with the
 * inotify descriptor). Accepts a tracker whose init failed. */
void watch_roots_finish(struct watch_roots *roots);

/* Start-up: holds whatever folder root @r's path names now, reporting
 * nothing. Returns 1 a folder is there, 0 none is, -1 cannot tell. */
int watch_roots_hold(struct watch_roots *roots, size_t r);

/* Looks at root @r's path again. A different folder (or none, or one
 * again) is reported as a swap, and then held. */
enum watch_root_state watch_roots_look(struct watch_roots *roots, size_t r);

/* True while some swapped root has not come back. */
bool watch_roots_missing(const struct watch_roots *roots);

/* inotify: watches root @r's parent folders (the path's, and its symlink
 * target's, looked up again each time: ln -sfn changes it). False when the
 * kernel's watch limit was hit (ENOSPC): the caller warns. */
bool watch_roots_parent_add(struct watch_roots *roots, size_t r);

/* inotify: true if @wd is some root's parent watch. */
bool watch_roots_is_parent(const struct watch_roots *roots, int wd);

/* inotify: an event @ev on some root's parent watch: that root's name came
 * or went (a folder made in place tells the window to wait for quiet), or
 * the parent itself went (its watch is forgotten, added again later).
 * @recheck(ctx, r) is called for each root whose path must be looked at. */
void watch_roots_parent_event(struct watch_roots *roots, const struct inotify_event *ev,
                              void (*recheck)(void *ctx, size_t r), void *ctx);

#endif
