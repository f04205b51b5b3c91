#pragma once
/* Best levels off the request path: brotli 11 and zstd 19 of a body too big
 * to make them while a request waits (compress_level's tiers) are made by
 * one worker thread, from a bounded queue, while requests get the fast
 * level; when one lands it goes into the cache under its own variant (its
 * ETag names the level) and the whole responses made from the fast one are
 * dropped, so the next request is answered with the best. */

#include <stdbool.h>

#include "base/body.h"
#include "cache.h"
#include "encoding.h"

struct best;

/* A stopped worker's queue, the thread started on the first job; NULL when
 * out of memory (big bodies then keep their fast level). */
struct best *best_start(void);

/* Stops the worker: a brotli in progress gives up within one step
 * (compress_body_until), queued jobs are dropped. Accepts NULL. */
void best_stop(struct best *b);

/* Queues the making of plain (a reference is taken) in coding e at level,
 * kept in c under (key, variant) for file version id; when it cannot be
 * made or kept, an empty body is kept there instead, so a job is made once
 * per version. False when the queue is full or stopped, or holds that job
 * already: a job not taken is the caller's to offer again (entry.c does,
 * on the file's next request). */
bool best_queue(struct best *b, struct cache *c, const char *key, const char *variant,
                enum encoding e, int level, const struct file_id *id, struct body *plain);

/* A best level as the worker left it in the cache. */
enum best_state {
    BEST_ABSENT, /* never made for this version (or evicted since) */
    BEST_TRIED,  /* made and found not worth keeping, or not kept: an empty body */
    BEST_LANDED, /* in the cache: it, not the fast level, answers (its ETag names it) */
};

/* The state of the best level kept in c under (key, variant) for id. */
enum best_state best_state(struct cache *c, const char *key, const char *variant, const struct file_id *id);

/* Offers the job (see best_queue) for a body of len bytes that plain(arg)
 * gives, asked only when the queue has room. True when the job is on its
 * way (queued now or before), or declined because the cache is too small
 * (cache_too_small: it would be evicted before it is used); false when it
 * waits for room: it is not dropped for that, the caller offers it again
 * (entry.c, on the file's next request, keeping no whole response
 * meanwhile: ready.c). */
bool best_offer(struct best *b, struct cache *c, const char *key, const char *variant, enum encoding e,
                int level, const struct file_id *id, size_t len, struct body *(*plain)(void *arg), void *arg);

/* Jobs finished so far (made, or found not worth keeping), for tests. */
unsigned long best_done(const struct best *b);

/* Best levels made and kept so far, for the health endpoint. Accepts NULL. */
unsigned long best_made(const struct best *b);
