/* resolve: turns a request target into an open file beneath a route's folder.
 *
 * This is folio's security boundary. It has a pure half (resolve_normalize:
 * bytes in, bytes out, no I/O, fuzzed) and an I/O half (resolve_open: opens a
 * relative path beneath a directory fd so that no symlink or ".." can leave
 * it). Both are thread-safe; resolve_open only reads the probe result that
 * resolve_init wrote once at start-up.
 */
#ifndef FOLIO_RESOLVE_H
#define FOLIO_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Percent-decodes the path of a request target once, merges repeated slashes
 * and removes dot segments (RFC 3986 5.2.4, clamped at "/" as browsers do).
 * raw is the path without its query. out receives a NUL-terminated path that
 * starts with "/" and holds no "." or ".." segment; it needs len + 1 bytes.
 * Returns false (a 400) when raw does not start with "/", holds a malformed
 * escape, an escaped NUL or an escaped "/" (which would smuggle a separator
 * into a segment), or a raw NUL. */
bool resolve_normalize(const char *raw, size_t len, char *out, size_t out_size);

/* True when any segment of a normalised path starts with "." (dotfiles such as
 * .git or .env are never served). */
bool resolve_has_dot_segment(const char *path);

/* Where the kernel offers openat2(RESOLVE_BENEATH), use it; otherwise (old
 * kernel, or a seccomp profile that refuses it) fall back to a component walk
 * that refuses every symlink. Call once before serving; returns true when
 * openat2 is in use. */
bool resolve_init(int probe_dir_fd);

/* For tests: true forces the component walk, false returns to the probe's
 * choice. Not for production code. */
bool resolve_force_walk_for_tests(bool walk);

/* RESOLVED_, not RESOLVE_: <linux/openat2.h>'s flags (RESOLVE_BENEATH, ...)
 * own that prefix, and resolve.c includes it. */
enum resolve_status {
    RESOLVED_FILE,      /* *fd is a regular file, *st filled */
    RESOLVED_DIRECTORY, /* *fd is a directory, *st filled */
    RESOLVED_NOT_FOUND, /* missing, outside the folder, a symlink escaping it, not a file */
    RESOLVED_FORBIDDEN, /* exists but the server may not read it */
    RESOLVED_ERROR,     /* anything else: errno is kept in *err */
};

/* Opens rel (no leading "/", may be "" for the folder itself) beneath dir_fd,
 * read-only and close-on-exec. On RESOLVED_FILE or RESOLVED_DIRECTORY the caller
 * owns *fd and must close it; otherwise *fd is -1. */
enum resolve_status resolve_open(int dir_fd, const char *rel, int *fd, struct stat *st, int *err);

#endif
