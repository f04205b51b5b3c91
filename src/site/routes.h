/* routes: which folder serves which URL prefix.
 *
 * Built once from the config at start-up and read-only afterwards (but for
 * what routes_check changes, atomically), so it is shared by every thread
 * without locking. Each route holds an open directory fd: files are opened
 * beneath it (resolve.c), never by path, so renaming or replacing the
 * folder's parents cannot redirect us elsewhere. A folder that is replaced
 * at its configured path (deleted and built again, a symlink swapped) is
 * re-opened by that path when routes_check sees it (on a request, or when
 * the live-reload watcher hears the swap): the new folder's fd is put in
 * the old one's place (dup3), so a request in flight never sees a closed
 * descriptor, and the route's generation goes up, so a request that missed
 * on the old folder knows to look again.
 */
#ifndef FOLIO_ROUTES_H
#define FOLIO_ROUTES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;

/* What the looks at a route's configured path keep: the one part of a
 * route any thread writes after start-up (routes_check, routes_missed),
 * so a route itself is read-only and handed around const. */
struct route_watch {
    _Atomic int64_t checked_ms; /* CLOCK_MONOTONIC ms of the last timed look at configured */
    _Atomic int64_t missed_ms;  /* ... and of the last look a miss asked for */
    atomic_uint_fast64_t generation; /* up by one each time dir_fd names another folder, or gone changes */
    atomic_uint_fast64_t looks;      /* looks at configured so far (stat + fstat): for tests and benches */
    pthread_mutex_t lock; /* one look at a time; a request's look never waits for it (trylock) */
    atomic_bool gone;  /* configured names no folder: every address is a 404 */
};

struct route {
    char *prefix;      /* "/", "/fragments/", ...: starts and ends with "/" */
    size_t prefix_len;
    char *dir;         /* absolute, canonical (as it was at start-up) */
    char *configured;  /* absolute, symlinks unresolved: what routes_check re-opens */
    int dir_fd;        /* the number never changes; what it names may (routes_check) */
    struct route_watch *watch; /* owned */
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

/* The absolute path of rel (no leading "/"; "" for the folder itself)
 * beneath route's folder, one "/" between: the key of the file's entries in
 * the cache, which the watcher builds the same way to drop them. False when
 * it does not fit in size. */
bool routes_path(const struct route *route, const char *rel, char *out, size_t size);

/* Addresses folio keeps for itself (health, events, reload.js): no route may use them. */
#define ROUTES_RESERVED_PREFIX "/__folio/"

/* Whether the absolute path of len bytes (a query or fragment may follow) is
 * the article's: under one of the routes r (a const struct routes *), or
 * folio's own. The shape rewrite.c's is_ours callback takes. */
bool routes_owns(void *r, const char *path, size_t len);

enum route_state {
    ROUTE_SAME,     /* the folder at the configured path is the one held */
    ROUTE_REOPENED, /* it was replaced (or came back): dir_fd now names the new one */
    ROUTE_GONE,     /* nothing is there: serve nothing from this route */
};

/* Whether route still holds the folder at its configured path, re-opening it
 * by that path when it was replaced (one line on stderr for each change).
 * With missed false (every request): looks at most once a second, by the
 * one thread whose turn it is, and only if no other look is under way
 * (trylock): no request waits on another. With missed true: looks now,
 * after any look under way (the watcher, which heard a swap, and tests).
 * Thread-safe. */
enum route_state routes_check(const struct route *route, bool missed);

/* What routes_generation said before the open that found nothing: a swap
 * seen since then (by anyone) changes it. */
static inline uint64_t routes_generation(const struct route *route)
{
    return atomic_load_explicit(&route->watch->generation, memory_order_acquire);
}

/* A file was not found beneath route, whose generation was seen before the
 * open: whether to open it again, because the folder was re-opened since.
 * A 404 flood must cost what a hit costs, so a miss looks at configured at
 * most once every ROUTES_MISS_INTERVAL_MS per route, by one thread, and
 * never waits for a look under way; the other misses only compare the
 * generation. A swap is therefore seen by the first miss after it, or within
 * the interval under a flood. Thread-safe. */
#define ROUTES_MISS_INTERVAL_MS 50
bool routes_missed(const struct route *route, uint64_t seen);

void routes_close(struct routes *r); /* accepts a zeroed struct */

#endif
