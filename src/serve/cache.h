/* cache: derived representations of files, bounded in bytes.
 *
 * Keyed by (absolute path, variant), e.g. ("/srv/www/index.html", "gzip") or
 * (…, "mime"). Every entry remembers the identity of the file it was derived
 * from (device, inode, size, mtime in ns); a lookup with another identity
 * misses and drops the entry. Callers fstat the file they opened, so a stale
 * body is never served even when no watcher told us of a change; the watcher
 * (livereload.c) invalidates eagerly to catch same-size writes within one
 * timestamp tick and to give memory back.
 *
 * Bodies are shared, never copied: cache_get returns a new reference. The
 * byte budget counts what an entry really costs: its body, its key and the
 * bookkeeping around both, so many small entries with long keys (a flood of
 * proxy prefixes) cannot outgrow it. Least recently used entries go first
 * when it is exceeded. A body is kept in the heap or in a sealed memfd
 * (body.h) sent by sendfile (see CACHE_HEAP_MAX_BYTES); up to half of the
 * budget; anything bigger is not kept, and cache_put says so, so
 * the caller can choose a representation it need not rebuild per request.
 * One path keeps at most CACHE_VARIANTS_PER_PATH variants (its least recently
 * used one makes room): variants named by what a client sends (a prefix, a
 * depth) cannot push everything else out. Thread-safe (one mutex; nothing
 * slow happens under it, the memfd copy is made before it is taken).
 */
#ifndef FOLIO_CACHE_H
#define FOLIO_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct body;
struct cache;

struct file_id {
    uint64_t dev, ino, size;
    int64_t mtime_ns;
    int64_t ctime_ns; /* a chmod or a link changes it, not the bytes: a stricter check */
};

void file_id_from_stat(struct file_id *id, const struct stat *st);

/* True when both identities name the same version of the same file. */
bool file_id_same(const struct file_id *a, const struct file_id *b);

/* A name for one version of one representation: its path, its variant
 * and the file version id it is made from (a hash: two may collide, so a
 * name is a hint to look, never a proof). Never 0. What the cache
 * remembers an evicted entry by, and what a build in flight is known by
 * (flight.h). */
uint64_t cache_version_name(const char *path, const char *variant, const struct file_id *id);

/* NULL when out of memory. */
struct cache *cache_create(size_t max_bytes);
void cache_destroy(struct cache *c); /* accepts NULL */

/* Removes every entry for which drop(body, idle, arg) is true, idle telling
 * whether it went unused since the last sweep that passed mark_idle (a
 * sweep with mark_idle false tells none idle). drop runs under the cache's
 * lock: nothing slow (an fstat on a held descriptor at most). */
void cache_sweep(struct cache *c, bool mark_idle, bool (*drop)(const struct body *b, bool idle, void *arg),
                 void *arg);

/* A new reference to the body cached for (path, variant) from a file with
 * this identity, or NULL. */
struct body *cache_get(struct cache *c, const char *path, const char *variant,
                       const struct file_id *id);

/* A counter that every invalidation moves on. Read it before reading a file
 * to derive a body from it, and hand it to cache_put. */
uint64_t cache_generation(struct cache *c);

#define CACHE_VARIANTS_PER_PATH 16
/* Where a kept body lives, by the CPU a request costs (bench/README.md,
 * Measurements behind the code): up to 16 KiB in the heap, sent with its
 * headers in one write; above, up to 128 KiB, in a memfd sent by sendfile
 * (the copy into the socket is gone); above that in the heap again, as
 * libmicrohttpd sendfiles 128 KiB a round, a poll and a cork toggle each;
 * and past an eighth of the budget in a memfd whatever its size. */
#define CACHE_HEAP_MAX_BYTES (16u << 10)
#define CACHE_SENDFILE_MAX_BYTES (128u << 10)
/* Each memfd is a descriptor held: past this many, bodies stay in the heap,
 * so the cache never competes with connections for the process's limit. */
#define CACHE_MEMFDS_MAX 128

/* True when a body of len bytes would be kept in the heap, not a memfd (when
 * it is kept at all): where a copy of a file is worth making at all. */
bool cache_in_heap(const struct cache *c, size_t len);

/* True when a body of len bytes is small enough for the cache to keep. */
bool cache_can_keep(const struct cache *c, size_t len);

/* Keeps body (the cache takes its own reference, or a memfd copy of it) for
 * (path, variant), replacing any older one, unless an invalidation happened
 * since generation was read: the body may then hold bytes from before an
 * edit that kept size and mtime, and is served once but not kept. Returns
 * false when the body was not kept for its size (see cache_can_keep) or for
 * want of memory; a lost race with an invalidation counts as kept. */
bool cache_put(struct cache *c, const char *path, const char *variant, const struct file_id *id,
               struct body *body, uint64_t generation);

/* Drops every variant of path, and of everything below it when it is a folder. */
void cache_invalidate(struct cache *c, const char *path);
/* Drops the variants of path (that one file) whose names begin with prefix. */
void cache_drop_variants(struct cache *c, const char *path, const char *prefix);
void cache_clear(struct cache *c);


/*
 * A cache too small for what is asked thrashes: it evicts a body to make
 * room, the next request makes it again (a compression each time), and
 * that evicts another. The cache remembers what it evicted for room (the
 * last CACHE_GHOSTS entries, by a hash of key, variant and file version):
 * one kept again is a refault. CACHE_THRASH_REFAULTS of them within a
 * minute make the cache "too small" for the next minute: said once on
 * stderr (how much it refilled, and a size that would hold it), and in the
 * health endpoint; best.c makes no best level meanwhile, as one would be
 * evicted before it is used.
 */
#define CACHE_GHOSTS 1024
#define CACHE_THRASH_REFAULTS 16

/* Whether the cache is too small for what is asked now (see above). */
bool cache_too_small(struct cache *c);

/* What the health endpoint says of the cache, read at one moment. */
struct cache_stats {
    size_t bytes;      /* what the entries cost: bodies, keys, bookkeeping */
    bool too_small;    /* cache_too_small */
    uint64_t refaults; /* entries made again after they were evicted for room, since the start */
};

struct cache_stats cache_stats(struct cache *c);

#endif
