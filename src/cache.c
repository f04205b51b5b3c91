#include "cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"

struct entry {
    struct entry *hash_next;
    struct entry *lru_prev, *lru_next; /* most recent at lru_head */
    uint64_t hash;
    struct file_id id;
    struct body *body;
    char *variant; /* points into key storage after path */
    char path[];
};

struct cache {
    pthread_mutex_t lock;
    struct entry **buckets;
    size_t bucket_count, entry_count;
    struct entry *lru_head, *lru_tail;
    size_t bytes, max_bytes;
    uint64_t generation;
};

void file_id_from_stat(struct file_id *id, const struct stat *st)
{
    id->dev = st->st_dev;
    id->ino = st->st_ino;
    id->size = (uint64_t)st->st_size;
    id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static uint64_t hash_key(const char *path, const char *variant)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (const char *p = path; *p; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    }
    h = (h ^ 0xff) * 1099511628211u;
    for (const char *p = variant; *p; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    }
    return h;
}

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
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void lru_unlink(struct cache *c, struct entry *e)
{
    *(e->lru_prev ? &e->lru_prev->lru_next : &c->lru_head) = e->lru_next;
    *(e->lru_next ? &e->lru_next->lru_prev : &c->lru_tail) = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(struct cache *c, struct entry *e)
{
    e->lru_prev = NULL;
    e->lru_next = c->lru_head;
    *(c->lru_head ? &c->lru_head->lru_prev : &c->lru_tail) = e;
    c->lru_head = e;
}

static struct entry **find_slot(struct cache *c, uint64_t hash, const char *path,
                                const char *variant)
{
    struct entry **slot = &c->buckets[hash % c->bucket_count];
    while (*slot && ((*slot)->hash != hash || strcmp((*slot)->path, path) != 0 ||
                     strcmp((*slot)->variant, variant) != 0)) {
        slot = &(*slot)->hash_next;
    }
    return slot;
}

/* Unlinks the entry at *slot from both lists and frees it. */
static void remove_at(struct cache *c, struct entry **slot)
{
    struct entry *e = *slot;
    *slot = e->hash_next;
    lru_unlink(c, e);
    c->bytes -= e->body->len;
    c->entry_count--;
    body_unref(e->body);
    free(e);
}

static void remove_entry(struct cache *c, struct entry *e)
{
    remove_at(c, find_slot(c, e->hash, e->path, e->variant));
}

static void grow(struct cache *c)
{
    size_t count = c->bucket_count * 2;
    struct entry **buckets = calloc(count, sizeof(*buckets));
    if (!buckets) {
        return; /* longer chains, still correct */
    }
    for (size_t i = 0; i < c->bucket_count; i++) {
        for (struct entry *e = c->buckets[i], *next; e; e = next) {
            next = e->hash_next;
            e->hash_next = buckets[e->hash % count];
            buckets[e->hash % count] = e;
        }
    }
    free(c->buckets);
    c->buckets = buckets;
    c->bucket_count = count;
}

static bool same_file(const struct file_id *a, const struct file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns;
}

struct body *cache_get(struct cache *c, const char *path, const char *variant,
                       const struct file_id *id)
{
    uint64_t hash = hash_key(path, variant);
    struct body *found = NULL;
    pthread_mutex_lock(&c->lock);
    struct entry **slot = find_slot(c, hash, path, variant);
    if (*slot && same_file(&(*slot)->id, id)) {
        found = body_ref((*slot)->body);
        lru_unlink(c, *slot);
        lru_push_front(c, *slot);
    } else if (*slot) {
        remove_at(c, slot);
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

uint64_t cache_generation(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    uint64_t generation = c->generation;
    pthread_mutex_unlock(&c->lock);
    return generation;
}

void cache_put(struct cache *c, const char *path, const char *variant, const struct file_id *id,
               struct body *body, uint64_t generation)
{
    if (body->len > c->max_bytes / 8) {
        return;
    }
    size_t path_len = strlen(path), variant_len = strlen(variant);
    struct entry *e = calloc(1, sizeof(*e) + path_len + variant_len + 2);
    if (!e) {
        return;
    }
    memcpy(e->path, path, path_len + 1);
    e->variant = e->path + path_len + 1;
    memcpy(e->variant, variant, variant_len + 1);
    e->hash = hash_key(path, variant);
    e->id = *id;
    e->body = body_ref(body);

    pthread_mutex_lock(&c->lock);
    if (generation != c->generation) {
        pthread_mutex_unlock(&c->lock);
        body_unref(e->body);
        free(e);
        return;
    }
    struct entry **slot = find_slot(c, e->hash, path, variant);
    if (*slot) {
        remove_at(c, slot);
    }
    if (c->entry_count >= c->bucket_count) {
        grow(c);
    }
    slot = &c->buckets[e->hash % c->bucket_count];
    e->hash_next = *slot;
    *slot = e;
    lru_push_front(c, e);
    c->bytes += body->len;
    c->entry_count++;
    while (c->bytes > c->max_bytes && c->lru_tail) {
        remove_entry(c, c->lru_tail);
    }
    pthread_mutex_unlock(&c->lock);
}

void cache_invalidate(struct cache *c, const char *path)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') {
        len--;
    }
    pthread_mutex_lock(&c->lock);
    c->generation++;
    for (struct entry *e = c->lru_head, *next; e; e = next) {
        next = e->lru_next;
        if (strncmp(e->path, path, len) == 0 && (e->path[len] == '\0' || e->path[len] == '/')) {
            remove_entry(c, e);
        }
    }
    pthread_mutex_unlock(&c->lock);
}

void cache_clear(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    c->generation++;
    while (c->lru_head) {
        remove_entry(c, c->lru_head);
    }
    pthread_mutex_unlock(&c->lock);
}

size_t cache_bytes(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    size_t bytes = c->bytes;
    pthread_mutex_unlock(&c->lock);
    return bytes;
}

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
