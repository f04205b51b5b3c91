/*
 * livereload — turns file changes into cache invalidations and browser events.
 *
 * Owns: a watch (watch.h) over every route folder.
 * Borrows: the routes (routes.h: the one list of folders, read-only, must
 * outlive livereload_destroy()), the sse_hub (likewise) and the
 * invalidation callbacks' context.
 *
 * For each debounced batch, on the watcher thread:
 *   1. invalidate(ctx, abs_path) for every changed file (abs_path = route dir
 *      + '/' + relpath; a folder's path when a folder changed), or
 *      invalidate_all(ctx) when the batch overflowed;
 *   2. only then the events go out, so a browser that refetches at once never
 *      gets bytes older than the file:
 *        `css`      data: the stylesheet's URL path (e.g. /style.css)
 *        `fragment` data: the name (fragments route + <name>.html)
 *        `page`     data: an HTML page's URL path (the page, or an iframe's)
 *        `image`    data: an image or media file's URL path
 *        `reload`   data: the URL path that forced it, or "*" on overflow
 *      Any reload in a batch replaces the batch's other events by one reload.
 *      What the browser does with each is reload.js's business: a page edit
 *      is patched in place where that is safe, an image swapped.
 * The callbacks run on the watcher thread, never concurrently with
 * themselves; they must be thread-safe against the HTTP threads.
 *
 * Also here: the client embedded in the binary (reload_js and early_js,
 * generated from live/reload.js and live/early.js by live/embed.py) and the
 * tags that load it.
 *
 * The pure planning functions (which event a change asks for) are in
 * livereload_internal.h.
 *
 * Thread-safety: create/destroy from one thread; the pure functions from any.
 */
#ifndef FOLIO_LIVERELOAD_H
#define FOLIO_LIVERELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "watch.h"

struct routes;
struct sse_hub;
struct livereload;

/* The client script, served at /__folio/reload.js as
 * `text/javascript; charset=utf-8` (generated file reload_js.c). */
extern const char reload_js[];
extern const size_t reload_js_len;
/* The client's first part (early.js: it hears a page's errors from its first
 * byte on), served at /__folio/early.js; its version, a digest of its bytes,
 * is in the URL pages load it by, so a browser may keep it (early_js.c). */
extern const char early_js[];
extern const size_t early_js_len;
extern const char early_js_version[];

/*
 * Pure: writes into @out (NUL-terminated, truncated to @size) the tag that
 * loads the client into a page requested as @target (the request target as
 * the browser sent it, query included or not):
 * `<script src="../../__folio/reload.js" defer></script>`, one "../" per
 * folder, so the src is relative to the page and stays right under any
 * proxy prefix without the server knowing the prefix. Returns that number of
 * folders: the injected bytes depend on it, so the cache keys pages by it.
 */
size_t livereload_script_tag(const char *target, char *out, size_t size);

/* Pure: the same tag for a page depth folders deep (site/rewrite.h's
 * rewrite_depth of its target). */
void livereload_client_tag(size_t depth, char *out, size_t size);

/* Pure: the tag of the client's first part for a page depth folders deep,
 * `<script src="../__folio/early.js?v=VERSION" data-folio></script>`: a
 * classic script, run before the parser goes on (html_early_offset puts it
 * before the page's scripts); data-folio marks it as no part of the page. */
void livereload_early_tag(size_t depth, char *out, size_t size);

/*
 * Starts watching every route's folder, the way @opt says (NULL: inotify,
 * with hints). @invalidate and @invalidate_all may be NULL. Returns NULL if
 * the watcher cannot start (errno set).
 */
struct livereload *livereload_create(const struct routes *routes,
                                     const struct watch_options *opt, struct sse_hub *hub,
                                     void (*invalidate)(void *ctx, const char *abs_path),
                                     void (*invalidate_all)(void *ctx),
                                     void *ctx);

/* Folders watched, for the health endpoint. */
size_t livereload_watch_count(const struct livereload *lr);

/* Stops watching and frees everything. Call before destroying the hub.
 * Accepts NULL. */
void livereload_destroy(struct livereload *lr);

#endif
