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
 * kept in c under (key, variant) for file version id. False when the queue
 * is full (8 jobs, 64 MiB of bodies) or holds that job already. */
bool best_queue(struct best *b, struct cache *c, const char *key, const char *variant,
                enum encoding e, int level, const struct file_id *id, struct body *plain);

/* Jobs finished so far (made, or found not worth keeping), for tests. */
unsigned long best_done(const struct best *b);
