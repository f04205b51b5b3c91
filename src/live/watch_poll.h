/*
 * watch_poll — the polling backend: one stat walk of every root per
 * interval (fstatat() on each entry: mtime, ctime, size, inode: a write, a
 * touch, an atomic save), compared with the last walk's snapshot. A walk
 * that finds changes opens the window; the window is walked again every
 * debounce_ms until a walk finds nothing new (watch_window_settled), then
 * flushes: the same batch and events as inotify. Each root's folder is
 * looked at through the root tracker before its walk, so a root that
 * vanishes, comes back or is another folder is a swap, as with inotify.
 *
 * Owns the two snapshots; reports through the core (watch_core.h).
 */
#ifndef FOLIO_WATCH_POLL_H
#define FOLIO_WATCH_POLL_H

#include "watch_core.h"

struct watch_poll;

/* Takes the first snapshot of @core's roots (borrowed; nothing reported,
 * a missing root named on stderr). NULL when memory runs out. */
struct watch_poll *watch_poll_create(struct watch_core *core);

/* One turn, never blocking: if a walk is due, walks, compares and flushes
 * the window if it settled. Returns the milliseconds until the next walk. */
int watch_poll_turn(struct watch_poll *p);

/* Frees the snapshots. Accepts NULL. */
void watch_poll_destroy(struct watch_poll *p);

#endif
