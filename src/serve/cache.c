#include "cache.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/body.h"
#include "base/hash.h"

/* What malloc keeps beside each block (glibc: a size word, 16-byte rounding). */
#define MALLOC_OVERHEAD 16

struct cache_item {
    struct cache_item *hash_next;
    struct cache_item *lru_prev, *lru_next; /* most recent at lru_head */
    uint64_t hash;                     /* of the path alone: a path's variants share a chain */
    uint64_t used;                     /* c->clock at the last get or put */
    size_t cost;                       /* what this entry adds to c->bytes */
    struct file_id id;
    struct body *body;
    char *variant; /* points into key storage after path */
    char path[];
};

struct cache {
    pthread_mutex_t lock;
    struct cache_item **buckets;
    size_t bucket_count, entry_count;
    struct cache_item *lru_head, *lru_tail;
    size_t bytes, max_bytes;
    uint64_t generation, clock;
    uint64_t idle_mark; /* clock at the last sweep that marked idleness */
    atomic_size_t memfds; /* entries whose body is a memfd: each holds a descriptor */
    struct ghost {        /* evicted for room, newest at ghost_next - 1 (cache.h) */
        uint64_t key;
        size_t cost;
    } ghosts[CACHE_GHOSTS];
    size_t ghost_next;
    uint64_t refaults;           /* since the start */
    time_t window;               /* when the current minute of refaults began */
    size_t window_refaults, window_bytes;
    time_t too_small_until;      /* cache_too_small while now is before it */
    bool said;                   /* the stderr line, once */
};

/* The identity of the file st describes; see cache.h. */
void file_id_from_stat(struct file_id *id, const struct stat *st)
{
    id->dev = st->st_dev;
    id->ino = st->st_ino;
    id->size = (uint64_t)st->st_size;
    id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    id->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* FNV-1a of a path: every variant of one path lands in one bucket, so the
 * per-path cap is a walk along one chain. */
static uint64_t hash_path(const char *path)
{
    return hash_string(HASH_START, path);
}

/* See cache.h: an entry's version among the ghosts, a build's in flight.h. */
uint64_t cache_version_name(const char *path, const char *variant, const struct file_id *id)
{
    const uint64_t fields[] = {id->dev, id->ino, id->size, (uint64_t)id->mtime_ns, (uint64_t)id->ctime_ns};
    return hash_bytes(hash_string(hash_path(path), variant), fields, sizeof(fields)) | 1; /* 0 marks a free slot */
}

/* Remembers e, evicted to make room. Lock held. */
static void ghost_add(struct cache *c, const struct cache_item *e)
{
    c->ghosts[c->ghost_next] = (struct ghost){cache_version_name(e->path, e->variant, &e->id), e->cost};
    c->ghost_next = (c->ghost_next + 1) % CACHE_GHOSTS;
}

/* bytes as --cache-size takes it, rounded up: "48K", "3M". */
static void size_text(size_t bytes, char out[24])
{
    size_t k = 1024, m = k * k;
    if (bytes < m) {
        snprintf(out, 24, "%zuK", (bytes + k - 1) / k);
    } else {
        snprintf(out, 24, "%zuM", (bytes + m - 1) / m);
    }
}

/* Says, once, that the cache is too small, and what it refilled. Lock held. */
static void say_too_small(struct cache *c)
{
    if (c->said) {
        return;
    }
    c->said = true;
    char held[24], refilled[24], wanted[24];
    size_text(c->max_bytes, held);
    size_text(c->window_bytes, refilled);
    size_text(c->max_bytes + c->window_bytes, wanted);
    fprintf(stderr,
            "folio: the cache is too small for what is asked (--cache-size %s): %zu bodies (%s) were "
            "evicted for room and made again within a minute; give it at least --cache-size %s\n",
            held, c->window_refaults, refilled, wanted);
}

/* A put of (path, variant, id): when it was evicted for room lately, a
 * refault (cache.h). Lock held. */
static void ghost_check(struct cache *c, const char *path, const char *variant, const struct file_id *id)
{
    uint64_t key = cache_version_name(path, variant, id);
    for (size_t i = 0; i < CACHE_GHOSTS; i++) {
        if (c->ghosts[i].key != key) {
            continue;
        }
        time_t now = time(NULL);
        if (now - c->window >= 60) {
            c->window = now;
            c->window_refaults = c->window_bytes = 0;
        }
        c->refaults++;
        c->window_refaults++;
        c->window_bytes += c->ghosts[i].cost;
        c->ghosts[i].key = 0;
        if (c->window_refaults >= CACHE_THRASH_REFAULTS) {
            c->too_small_until = now + 60;
            say_too_small(c);
        }
        return;
    }
}

/* An empty cache of max_bytes, or NULL. */
struct cache *cache_create(size_t max_bytes)
{
    struct cache *c = calloc(1, sizeof(*c));
    if (!c) {
        return NULL;
    }
    c->bucket_count = 256;
    c->buckets = calloc(c->bucket_count, sizeof(*c->buckets));
    if (!c->buckets) {
        free(c);
        return NULL;
    }
    c->max_bytes = max_bytes;
    atomic_init(&c->memfds, 0);
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

/* Takes e out of the recency list. */
static void lru_unlink(struct cache *c, struct cache_item *e)
{
    *(e->lru_prev ? &e->lru_prev->lru_next : &c->lru_head) = e->lru_next;
    *(e->lru_next ? &e->lru_next->lru_prev : &c->lru_tail) = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

/* Makes e the most recently used entry. */
static void lru_push_front(struct cache *c, struct cache_item *e)
{
    e->lru_prev = NULL;
    e->lru_next = c->lru_head;
    *(c->lru_head ? &c->lru_head->lru_prev : &c->lru_tail) = e;
    c->lru_head = e;
    e->used = ++c->clock;
}

/* The chain link that holds (path, variant), or the chain's NULL end. */
static struct cache_item **find_slot(struct cache *c, uint64_t hash, const char *path,
                                const char *variant)
{
    struct cache_item **slot = &c->buckets[hash % c->bucket_count];
    while (*slot && ((*slot)->hash != hash || strcmp((*slot)->path, path) != 0 ||
                     strcmp((*slot)->variant, variant) != 0)) {
        slot = &(*slot)->hash_next;
    }
    return slot;
}

/* Unlinks the entry at *slot from both lists and frees it. */
static void remove_at(struct cache *c, struct cache_item **slot)
{
    struct cache_item *e = *slot;
    if (!e) { /* the chain's end: nothing there to remove */
        return;
    }
    assert(c->bytes >= e->cost && c->entry_count > 0); /* the counts cover every entry */
    *slot = e->hash_next;
    lru_unlink(c, e);
    c->bytes -= e->cost;
    c->entry_count--;
    if (e->body->fd >= 0) {
        atomic_fetch_sub(&c->memfds, 1);
    }
    body_unref(e->body);
    free(e);
}

/* Removes e, wherever its chain holds it. */
static void remove_item(struct cache *c, struct cache_item *e)
{
    struct cache_item **slot = find_slot(c, e->hash, e->path, e->variant);
    assert(*slot == e); /* an entry is in the chain its hash names */
    remove_at(c, slot);
}

/* Doubles the bucket table; on failure the chains just stay longer. */
static void grow(struct cache *c)
{
    size_t count = c->bucket_count * 2;
    struct cache_item **buckets = calloc(count, sizeof(*buckets));
    if (!buckets) {
        return;
    }
    for (size_t i = 0; i < c->bucket_count; i++) {
        for (struct cache_item *e = c->buckets[i], *next; e; e = next) {
            next = e->hash_next;
            e->hash_next = buckets[e->hash % count];
            buckets[e->hash % count] = e;
        }
    }
    free(c->buckets);
    c->buckets = buckets;
    c->bucket_count = count;
}

/* See cache.h. */
bool file_id_same(const struct file_id *a, const struct file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
           a->ctime_ns == b->ctime_ns;
}

/* A new reference to the body of (path, variant) for this file version, or NULL. */
struct body *cache_get(struct cache *c, const char *path, const char *variant,
                       const struct file_id *id)
{
    uint64_t hash = hash_path(path);
    struct body *found = NULL;
    pthread_mutex_lock(&c->lock);
    struct cache_item **slot = find_slot(c, hash, path, variant);
    if (*slot && file_id_same(&(*slot)->id, id)) {
        found = body_ref((*slot)->body);
        lru_unlink(c, *slot);
        lru_push_front(c, *slot);
    } else if (*slot) {
        remove_at(c, slot);
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

/* The invalidation counter; see cache.h. */
uint64_t cache_generation(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    uint64_t generation = c->generation;
    pthread_mutex_unlock(&c->lock);
    return generation;
}

/* True when a body of len bytes fits the per-entry limit (half the budget). */
bool cache_can_keep(const struct cache *c, size_t len)
{
    return len <= c->max_bytes / 2;
}

/* See cache.h and CACHE_HEAP_MAX_BYTES. */
bool cache_in_heap(const struct cache *c, size_t len)
{
    return len <= c->max_bytes / 8 && (len <= CACHE_HEAP_MAX_BYTES || len > CACHE_SENDFILE_MAX_BYTES);
}

/* When path already has its share of variants, drops the least recently
 * used of them (not the one being replaced, which goes anyway). */
static void cap_variants(struct cache *c, uint64_t hash, const char *path, const char *variant)
{
    struct cache_item *oldest = NULL;
    size_t count = 0;
    for (struct cache_item *e = c->buckets[hash % c->bucket_count]; e; e = e->hash_next) {
        if (e->hash == hash && strcmp(e->path, path) == 0) {
            if (strcmp(e->variant, variant) == 0) {
                return;
            }
            count++;
            oldest = !oldest || e->used < oldest->used ? e : oldest;
        }
    }
    assert(count <= CACHE_VARIANTS_PER_PATH); /* each put keeps it so */
    if (count >= CACHE_VARIANTS_PER_PATH) {
        remove_item(c, oldest);
    }
}

/* A new entry for (path, variant) holding body or a memfd copy of it (see
 * CACHE_HEAP_MAX_BYTES); NULL when it cannot be made. */
static struct cache_item *item_create(struct cache *c, const char *path, const char *variant,
                                  const struct file_id *id, struct body *body)
{
    size_t path_len = strlen(path), variant_len = strlen(variant);
    struct cache_item *e = calloc(1, sizeof(*e) + path_len + variant_len + 2);
    bool heap = body->on_free != NULL || /* its bytes are not plain bytes */
                cache_in_heap(c, body->len) || atomic_load(&c->memfds) >= CACHE_MEMFDS_MAX;
    struct body *kept = heap ? body_ref(body) : body_to_memfd(body);
    if (kept && kept->fd >= 0) {
        atomic_fetch_add(&c->memfds, 1);
    }
    if (!e || !kept) {
        free(e);
        body_unref(kept);
        return NULL;
    }
    memcpy(e->path, path, path_len + 1);
    e->variant = e->path + path_len + 1;
    memcpy(e->variant, variant, variant_len + 1);
    e->hash = hash_path(path);
    e->id = *id;
    e->body = kept;
    e->cost = sizeof(*e) + path_len + variant_len + 2 + sizeof(*kept) + 2 * MALLOC_OVERHEAD + kept->len +
              kept->weight;
    return e;
}

/* Keeps body for (path, variant); see cache.h. */
bool cache_put(struct cache *c, const char *path, const char *variant, const struct file_id *id,
               struct body *body, uint64_t generation)
{
    if (!cache_can_keep(c, body->len)) {
        return false;
    }
    struct cache_item *e = item_create(c, path, variant, id, body);
    if (!e) {
        return false;
    }
    pthread_mutex_lock(&c->lock);
    if (generation != c->generation) {
        pthread_mutex_unlock(&c->lock);
        if (e->body->fd >= 0) {
            atomic_fetch_sub(&c->memfds, 1);
        }
        body_unref(e->body);
        free(e);
        return true;
    }
    struct cache_item **slot = find_slot(c, e->hash, path, variant);
    if (*slot) {
        remove_at(c, slot);
    }
    cap_variants(c, e->hash, path, variant);
    ghost_check(c, path, variant, id);
    if (c->entry_count >= c->bucket_count) {
        grow(c);
    }
    slot = &c->buckets[e->hash % c->bucket_count];
    e->hash_next = *slot;
    *slot = e;
    lru_push_front(c, e);
    c->bytes += e->cost;
    c->entry_count++;
    while (c->bytes > c->max_bytes && c->lru_tail) {
        ghost_add(c, c->lru_tail);
        remove_item(c, c->lru_tail);
    }
    pthread_mutex_unlock(&c->lock);
    return true;
}

/* Drops every variant of path and of everything below it. */
void cache_invalidate(struct cache *c, const char *path)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') {
        len--;
    }
    pthread_mutex_lock(&c->lock);
    c->generation++;
    for (struct cache_item *e = c->lru_head, *next; e; e = next) {
        next = e->lru_next;
        if (strncmp(e->path, path, len) == 0 && (e->path[len] == '\0' || e->path[len] == '/')) {
            remove_item(c, e);
        }
    }
    pthread_mutex_unlock(&c->lock);
}

/* See cache.h. */
void cache_drop_variants(struct cache *c, const char *path, const char *prefix)
{
    size_t len = strlen(prefix);
    pthread_mutex_lock(&c->lock);
    c->generation++; /* a body made before is not kept: it may be what was dropped */
    for (struct cache_item *e = c->lru_head, *next; e; e = next) {
        next = e->lru_next;
        if (strcmp(e->path, path) == 0 && strncmp(e->variant, prefix, len) == 0) {
            remove_item(c, e);
        }
    }
    pthread_mutex_unlock(&c->lock);
}

/* Drops everything. */
void cache_clear(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    c->generation++;
    while (c->lru_head) {
        remove_item(c, c->lru_head);
    }
    pthread_mutex_unlock(&c->lock);
}

/* See cache.h. */
void cache_sweep(struct cache *c, bool mark_idle, bool (*drop)(const struct body *b, bool idle, void *arg),
                 void *arg)
{
    pthread_mutex_lock(&c->lock);
    for (struct cache_item *e = c->lru_head, *next; e; e = next) {
        next = e->lru_next;
        if (drop(e->body, mark_idle && e->used <= c->idle_mark, arg)) {
            remove_item(c, e);
        }
    }
    if (mark_idle) {
        c->idle_mark = c->clock;
    }
    pthread_mutex_unlock(&c->lock);
}

/* See cache.h. */
bool cache_too_small(struct cache *c)
{
    return cache_stats(c).too_small;
}

/* See cache.h. */
struct cache_stats cache_stats(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    struct cache_stats stats = {c->bytes, time(NULL) < c->too_small_until, c->refaults};
    pthread_mutex_unlock(&c->lock);
    return stats;
}

/* Frees the cache; bodies still referenced elsewhere live on. */
void cache_destroy(struct cache *c)
{
    if (!c) {
        return;
    }
    cache_clear(c);
    pthread_mutex_destroy(&c->lock);
    free(c->buckets);
    free(c);
}
