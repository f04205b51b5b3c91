/* ready: whole responses, built once, for the entry stage (entry.h).
 *
 * A representation served whole (200 or 304, no Range) has its two
 * MHD_Responses, every header set, built once and queued on every later
 * request for the same version of the file and the same kind of client:
 * libmicrohttpd reference-counts responses and may queue one on many
 * connections, and a shared fd is sent with explicit offsets. They live in
 * the cache beside the bodies, under the file's key (routes_path) and a
 * variant entry.c names (entry_response_variant), so an edit (and
 * livereload's invalidation) drops them too. A hit costs one fstatat (the
 * version check: only bytes once validated beneath the folder are sent, so a
 * path swapped meanwhile gives a miss, never another file) instead of open,
 * fstat and close, and builds no header (nor measures one: progress.h).
 *
 * Thread-safe: the cache is, the descriptor count is atomic. A ready
 * entry's responses are never changed once kept.
 */
#ifndef FOLIO_READY_H
#define FOLIO_READY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "progress.h"

struct MHD_Response;
struct body;
struct cache;
struct config;
struct entry_facts;
struct entry_rep;
struct entry_server;
struct precondition_headers;
struct route;

#define READY_FDS_MAX 256 /* descriptors ready responses may hold open */

/* What ready entries share, for the server's life. */
struct ready_pool {
    struct cache *cache;
    atomic_uint fds; /* descriptors ready entries hold (READY_FDS_MAX) */
};

/* A thread that closes held descriptors: those of files gone at once (a
 * second at most), those unused for inactive_s seconds after one to two
 * such periods, as nginx's open_file_cache `inactive`. NULL when it cannot
 * start (held descriptors then go only with their entries). */
struct ready_sweeper *ready_sweeper_start(struct ready_pool *p, unsigned inactive_s);
void ready_sweeper_stop(struct ready_sweeper *s); /* accepts NULL */

/* A response to queue as it is (shared: never changed, never destroyed by
 * the caller) with its status and body size; release once queued. */
struct ready_answer {
    struct body *holder; /* the reference that keeps resp alive */
    struct MHD_Response *resp;
    unsigned status;
    uint64_t size;
    struct progress_head head; /* resp's header block, measured when it was made */
    int fd; /* the file resp sends from, to watch for truncation (not ours; open while
            * holder is); -1 for a 304 or a sealed memfd, which cannot shrink */
};

/* The answer for a whole request of rel beneath route from a client with
 * facts f (no Range), when a ready entry exists for the file's current
 * version and the preconditions pre pass (200) or give 304. False to take
 * the long way: no entry, another version, a 412; with *missing set when
 * the look found nothing at rel at all (no open can find a file there: a
 * 404, unless the folder was swapped). */
bool ready_lookup(struct ready_pool *p, const struct entry_server *entries,
                  const struct route *route, const char *rel, const struct entry_facts *f,
                  const struct precondition_headers *pre, struct ready_answer *out, bool *missing);

/* Makes rep, answered with status (200 or 304), a ready entry of (route,
 * rel, f), keeps it and fills out. False with *out_of_memory false, rep
 * untouched, when it cannot be had (no descriptor left, a variant too
 * long): take the long way; false with *out_of_memory true when memory ran
 * out (rep's bytes may be gone: the request fails). */
bool ready_make(struct ready_pool *p, const struct config *config,
                const struct entry_server *entries, const struct route *route, const char *rel,
                const struct entry_facts *f, struct entry_rep *rep, unsigned status,
                struct ready_answer *out, bool *out_of_memory);

/* The article's 404 page (404.html beneath root) as a ready answer, when it
 * is the same for every address: no live-reload client and no prefix to
 * put in (both depend on where the missing address is). False when that is
 * not so or there is no 404.html (the caller builds the page), or, with
 * *out_of_memory, when memory ran out. */
bool ready_not_found(struct ready_pool *p, const struct entry_server *entries,
                     const struct route *root, const struct entry_facts *f,
                     struct ready_answer *out, bool *out_of_memory);

/* Drops the reference an answer holds; accepts a released one. */
void ready_answer_release(struct ready_answer *a);

#endif
