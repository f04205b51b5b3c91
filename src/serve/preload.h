/* preload: the Link headers that start a page's fragments on their way with
 * the page.
 *
 * A page's script fetches `fragments/<name>.html` for each element whose id
 * is "fragment-<name>", often one after another from DOMContentLoaded on, so
 * on a real link every fragment costs a round trip nothing overlaps. folio
 * knows the names when it serves the page: for each one whose file exists in
 * the fragment route it sends
 *
 *     Link: <fragments/<name>.html>; rel=preload; as=fetch; crossorigin=anonymous;
 *           fetchpriority=low
 *
 * (RFC 8288; the HTML spec's preload), and the browser fetches them all as
 * soon as the response head arrives; the page's own fetch() takes the
 * preloaded response. Every word counts: a preload without crossorigin is
 * fetched without CORS, which a fetch() never matches (the fragment comes
 * twice), and Chromium drops a header link whose crossorigin has no value.
 * fetchpriority=low lets the browser hold the fragments back while what
 * the page cannot render without is still coming, instead of sharing the
 * link with it from the first byte on (the page's loader asks for them only
 * at DOMContentLoaded anyway).
 * The URL is relative to the page, as the page's own fetch() is, so it
 * holds under any proxy prefix. Before them go preloads of what
 * DOMContentLoaded waits for (the page's stylesheets and classic scripts,
 * html_blocking_resources), when their URLs are relative too: else the
 * fragments take the browser's connections first and the page is ready
 * later than without hints (bench/README.md, "Preload hints").
 *
 * Which hints a page gets is a fact of the page's version and of the
 * fragment folder's (a fragment added or removed changes the folder's mtime
 * and ctime), decided once for each pair (preload_decide, from entry.c) and
 * kept in the cache; a whole response kept with them checks the folder
 * (ready.c). Thread-safe.
 */
#ifndef FOLIO_PRELOAD_H
#define FOLIO_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "cache.h"

struct body;
struct entry_rep;
struct entry_server;
struct route;
struct routes;

/* At most this many hints, the first in document order. */
#define PRELOAD_MAX 32

/* The fragment route a page at rel beneath route finds its "fragments/"
 * in (the page's folder + "fragments/" is that route's prefix), or NULL
 * when there is none: fragments themselves, a page whose relative
 * "fragments/" is no fragment route's. Its folder's identity goes to *id
 * and the cache variant the page's hints are kept under, which names that
 * identity, to variant; NULL too when either cannot be had. */
const struct route *preload_folder(const struct routes *routes, const struct route *route,
                                   const char *rel, struct file_id *id, char *variant, size_t size);

/* The Link header values (one a line, each ending in '\n') of the page
 * html (len bytes): its own stylesheets and scripts (at most 8), then the
 * fragments it names whose "<name>.html" is a file folio serves beneath
 * folder, in document order, at most PRELOAD_MAX in all and budget bytes.
 * An empty body when no fragment is hinted: none named, a page whose base
 * URL is set by <base href> (its fetches resolve elsewhere), a name that
 * some loader may spell otherwise (plain are letters, digits, '-', '_', '.'
 * and well-formed UTF-8 beyond ASCII, hinted as %XX; no leading '.'). NULL
 * when out of memory. */
struct body *preload_links(const char *html, size_t len, const struct route *folder, size_t budget);

/* For entry.c: when rep, being chosen for the file at rel beneath route
 * (cache key key; its fd still the file's, at offset 0), is a page and s
 * gives hints (a budget, the routes), its hints into rep->links and what
 * they depend on into rep->links_folder and links_folder_id: kept in s's
 * cache for each version of the page and of the folder, so a page is
 * scanned once per pair (a burst of first requests may scan it more than
 * once: a millisecond or two each). Nothing when memory runs out. */
void preload_decide(const struct entry_server *s, const struct route *route, const char *rel, const char *key,
                    struct entry_rep *rep);

/* Calls add(arg, value) for each Link value in links (preload_links's
 * body; NULL: none), its line ending dropped. */
void preload_each(const struct body *links, void (*add)(void *arg, const char *value), void *arg);

#endif
