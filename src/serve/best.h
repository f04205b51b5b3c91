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

/* Whether the job (c, key, variant, id) is waiting or being made: its
 * result is on its way. */
bool best_holds(struct best *b, struct cache *c, const char *key, const char *variant,
                const struct file_id *id);

/* Whether a job of len bytes would be taken now: the queue has room (8
 * jobs, 64 MiB of bodies) and is not stopped. */
bool best_has_room(struct best *b, size_t len);

/* Queues the making of plain (a reference is taken) in coding e at level,
 * kept in c under (key, variant) for file version id; when it cannot be
 * made or kept, an empty body is kept there instead, so a job is made once
 * per version. False when the queue is full or stopped, or holds that job
 * already: a job not taken is the caller's to offer again (entry.c does,
 * on the file's next request). */
bool best_queue(struct best *b, struct cache *c, const char *key, const char *variant,
                enum encoding e, int level, const struct file_id *id, struct body *plain);

/* Jobs finished so far (made, or found not worth keeping), for tests. */
unsigned long best_done(const struct best *b);
