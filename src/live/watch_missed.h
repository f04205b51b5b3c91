/*
 * watch_missed — the folders a watcher could not watch (the kernel's
 * inotify limit, the descriptor limit, a folder it may not read), counted
 * and said once on stderr: how many, the first, why, and what folio does
 * instead. Not a line per folder: a deep or wide tree would flood the log.
 *
 * Not thread-safe: it belongs to the watcher (its thread, or watch_create).
 */
#ifndef FOLIO_WATCH_MISSED_H
#define FOLIO_WATCH_MISSED_H

#include <stdbool.h>
#include <stddef.h>

struct watch_missed {
    size_t n;    /* folders not watched, since the watcher started */
    char *first; /* the first of them, as a path; NULL when memory ran out */
    int err;     /* why that one was not */
    size_t limit; /* of them, refused by the kernel's watch limit (ENOSPC) */
    bool said;   /* the line went out: none again */
};

/* Counts folder @rel of the root at @root (a path) as not watched for @err. */
void watch_missed_note(struct watch_missed *m, const char *root, const char *rel, int err);

/* What folio does about the folders it missed. */
enum watch_missed_then {
    WATCH_MISSED_POLLING,   /* --watch auto: it polls instead of inotify */
    WATCH_MISSED_AUTO,      /* --watch auto: it misses changes there */
    WATCH_MISSED_MISSES,    /* it misses changes there (the mode was chosen) */
};

/* If folders were missed and nothing was said yet: one line on stderr
 * naming how many, the first, why, and @then (with the sysctl to raise the
 * watch limit when that was the reason). True if it said it now. */
bool watch_missed_say(struct watch_missed *m, enum watch_missed_then then);

/* Pure: the words for why a folder was not watched ("the inotify watch
 * limit (fs.inotify.max_user_watches)" for ENOSPC, and so on). */
const char *watch_missed_why(int err);

/* Frees what it holds; the count stays. */
void watch_missed_finish(struct watch_missed *m);

#endif
