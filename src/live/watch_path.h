/*
 * watch_path — pure helpers on the names the watcher sees: which are never
 * reported nor watched, and how a relative path is built. Shared by both
 * backends (watch_inotify.c, watch_poll.c); thread-safe.
 */
#ifndef FOLIO_WATCH_PATH_H
#define FOLIO_WATCH_PATH_H

#include <stdbool.h>

/* Pure: true if a file or folder named @name (one path component) is never
 * reported nor watched: dotfiles and dot-folders, editors' scratch files
 * (`*.swp`, `*.swx`, `*.swo`, `*~`, `4913`, `#name#`, JetBrains
 * `*___jb_tmp___`/`*___jb_old___`). */
bool watch_ignored_name(const char *name);

/* "a" + "b" -> "a/b", "" + "b" -> "b". Returns NULL when memory runs out. */
char *watch_join(const char *a, const char *b);

#endif
