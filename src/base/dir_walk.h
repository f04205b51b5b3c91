/*
 * dir_walk — a depth-first walk of a folder tree that holds a bounded number
 * of descriptors whatever the depth, and never follows a symlink below the
 * folder it starts from (so it cannot leave the tree nor loop).
 *
 * A folder is listed whole, then closed for listing; its subfolders are
 * walked from names kept in memory. Only the deepest DIR_WALK_WINDOW folders
 * of the current path stay open (and the start): a folder closed for want
 * of room is opened again from its nearest open ancestor, one name at a time
 * with O_NOFOLLOW, and must still be the same folder (device and inode).
 * Paths are built in memory, never given to the kernel whole, so no
 * PATH_MAX bounds the depth either.
 *
 * Used by the watcher's two backends (src/live) and by folio check's walk
 * (src/check). Thread-safe: all state is the caller's stack and heap.
 */
#ifndef FOLIO_DIR_WALK_H
#define FOLIO_DIR_WALK_H

#include <stdbool.h>

/* Folders held open below the start: enough to make re-opening rare in a
 * real article, few enough that a server near its descriptor limit walks. */
#define DIR_WALK_WINDOW 16

struct dir_walk_ops {
    /* A folder reached: @fd is open for this call only, @rel its path from
     * the start ("" for the start). False: what it holds is not listed.
     * May be NULL (every folder is listed). */
    bool (*folder)(void *ctx, int fd, const char *rel);
    /* One entry of a listed folder, "." and ".." aside: @dirfd the folder
     * holding it, @name its name, @rel its path from the start, @type a
     * DT_* value (never DT_UNKNOWN: resolved with fstatat, no follow). True
     * on a DT_DIR: walk into it. */
    bool (*entry)(void *ctx, int dirfd, const char *name, const char *rel, unsigned char type);
    /* A folder that could not be opened or listed for a reason other than
     * being gone or not a folder any more (EACCES, EMFILE, ...). May be NULL. */
    void (*failed)(void *ctx, const char *rel, int err);
};

/* Walks the tree of the folder open as @fd (taken: closed before return),
 * named @rel ("" for a root). Returns 0, or ENOMEM when memory ran out (the
 * walk stopped early). */
int dir_walk(int fd, const char *rel, const struct dir_walk_ops *ops, void *ctx);

/* Opens the folder @rel ("a/b/c", "" for @fd's own) below folder @fd one
 * name at a time, following no symlink. Returns the descriptor, or -1 with
 * errno set (ELOOP or ENOTDIR where a name is a symlink or a file). */
int dir_walk_open(int fd, const char *rel);

#endif
