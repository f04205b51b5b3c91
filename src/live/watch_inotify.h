/*
 * watch_inotify — the inotify backend: one watch per folder of every root
 * (a table indexed by watch descriptor), events turned into notes in the
 * window, folders created or moved in watched (and their files reported:
 * they may predate the watch), folders moved out dropped, and every root's
 * path looked at on its parent's events and once a WATCH_RECHECK_MS (a
 * symlink further up its path, or a chain of them, no watch hears).
 *
 * Owns the inotify descriptor and the table; reports through the core
 * (watch_core.h). Folders are walked with bounded descriptors whatever the
 * depth (base/dir_walk.h). Folders it cannot watch (the kernel's watch
 * limit, ENOSPC; the descriptor limit; no permission) are counted in
 * core->missed: with --watch auto and the watch limit hit, watch.c polls
 * instead (at start-up or after any turn); otherwise a turn says once what
 * is missed.
 */
#ifndef FOLIO_WATCH_INOTIFY_H
#define FOLIO_WATCH_INOTIFY_H

#include "watch_core.h"

/* inotify: how often each root's path is looked at (one stat) for a swap no
 * watch can hear: a symlink further up its path, or in a chain of them. */
#define WATCH_RECHECK_MS 1000u

struct watch_inotify;

/* Starts inotify and watches every root of @core (borrowed, must outlive
 * it). Returns NULL, errno set and one line on stderr, if inotify cannot be
 * had at all. */
struct watch_inotify *watch_inotify_create(struct watch_core *core);

/* The descriptor that becomes readable when events wait. */
int watch_inotify_fd(const struct watch_inotify *ino);

/* One turn, never blocking: reads the events queued, looks at the roots'
 * paths if that is due, flushes the window if it is due. Returns the
 * milliseconds until the next thing due. */
int watch_inotify_turn(struct watch_inotify *ino);

/* Closes the descriptor and frees the table. Accepts NULL. */
void watch_inotify_destroy(struct watch_inotify *ino);

#endif
