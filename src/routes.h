/* routes: which folder serves which URL prefix.
 *
 * Built once from the config at start-up and read-only afterwards, so it is
 * shared by every thread without locking. Each route holds an open directory
 * fd: files are opened beneath it (resolve.c), never by path, so renaming or
 * replacing the folder's parents cannot redirect us elsewhere.
 */
#ifndef FOLIO_ROUTES_H
#define FOLIO_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

struct config;

struct route {
    char *prefix;      /* "/", "/fragments/", ...: starts and ends with "/" */
    size_t prefix_len;
    char *dir;         /* absolute, canonical */
    int dir_fd;
    bool is_fragments; /* marked in [routes] (/fragments/ always): HTML here is fetched by script, never a page */
};

struct routes {
    struct route *items; /* longest prefix first */
    size_t count;
    char *root;          /* canonical article root */
};

/* Resolves the root and every route folder and opens them. On failure writes
 * one line (what and why) to err and returns false; r is then empty. */
bool routes_open(struct routes *r, const struct config *c, char *err, size_t err_size);

/* The route whose prefix is the longest one path starts with, or NULL. For
 * the prefix without its slash ("/assets") *is_bare_prefix is set, so the
 * caller can redirect to "/assets/". */
const struct route *routes_match(const struct routes *r, const char *path, bool *is_bare_prefix);

void routes_close(struct routes *r); /* accepts a zeroed struct */

#endif
