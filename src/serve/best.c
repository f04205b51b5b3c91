#include "best.h"

#include <assert.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "compress.h"

#define QUEUE_JOBS_MAX 8
#define QUEUE_BYTES_MAX (64u << 20)

/* One best level to make. */
struct job {
    struct job *next;
    struct cache *cache;
    char *key, *variant;
    enum encoding coding;
    int level;
    struct file_id id;
    struct body *plain;
};

struct best {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    struct job *head, *tail, *current;
    size_t jobs, bytes;
    atomic_ulong done, made;
};

/* Frees a job and what it holds. */
static void job_free(struct job *j)
{
    body_unref(j->plain);
    free(j->key);
    free(j);
}

/* Makes one job's body and keeps it; drops the whole responses of the fast
 * one so the next request is built from the best. A body that cannot be
 * made (the encoder failed) or kept (too big for the cache) leaves an empty
 * one, "tried", so no request offers the job again for this version. */
static void run(struct best *b, struct job *j, const atomic_bool *stop)
{
    if (cache_too_small(j->cache)) {
        return; /* it would be evicted before it is used: offered again once there is room */
    }
    uint64_t generation = cache_generation(j->cache);
    struct body *coded = compress_body_until(j->coding, j->plain->data, j->plain->len, j->level, stop);
    if (coded && cache_put(j->cache, j->key, j->variant, &j->id, coded, generation)) {
        cache_drop_variants(j->cache, j->key, "r:"); /* whole responses (entry.c VARIANT_RESPONSE) */
        atomic_fetch_add(&b->made, 1);
    } else if (!atomic_load(stop)) {
        struct body *tried = body_create(0);
        if (tried) {
            cache_put(j->cache, j->key, j->variant, &j->id, tried, generation);
            body_unref(tried);
        }
    }
    body_unref(coded);
}

/* The worker: one job at a time until stopped. */
static void *work(void *arg)
{
    struct best *b = arg;
    pthread_mutex_lock(&b->lock);
    while (!atomic_load(&b->stop)) {
        struct job *j = b->head;
        if (!j) {
            pthread_cond_wait(&b->wake, &b->lock);
            continue;
        }
        b->head = j->next;
        b->tail = b->head ? b->tail : NULL;
        b->current = j;
        pthread_mutex_unlock(&b->lock);
        run(b, j, &b->stop);
        pthread_mutex_lock(&b->lock);
        b->current = NULL;
        assert(b->jobs > 0 && b->bytes >= j->plain->len); /* a queued job counted on its way in */
        b->jobs--;
        b->bytes -= j->plain->len;
        job_free(j);
        atomic_fetch_add(&b->done, 1);
        if (!b->head) {
            /* The encoders' tables (tens of MB for zstd 19 of a big body)
             * went back to malloc, which keeps them in its heap for reuse;
             * an idle worker gives them back (bench/README.md, Measurements
             * behind the code). */
            pthread_mutex_unlock(&b->lock);
            malloc_trim(0);
            pthread_mutex_lock(&b->lock);
        }
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* See best.h. */
struct best *best_start(void)
{
    struct best *b = calloc(1, sizeof(*b));
    if (b) {
        pthread_mutex_init(&b->lock, NULL);
        pthread_cond_init(&b->wake, NULL);
        atomic_init(&b->stop, false);
        atomic_init(&b->done, 0);
        atomic_init(&b->made, 0);
    }
    return b;
}

/* See best.h. */
void best_stop(struct best *b)
{
    if (!b) {
        return;
    }
    pthread_mutex_lock(&b->lock);
    atomic_store(&b->stop, true);
    pthread_cond_signal(&b->wake);
    pthread_mutex_unlock(&b->lock);
    if (b->started) {
        pthread_join(b->thread, NULL);
    }
    for (struct job *j = b->head, *next; j; j = next) {
        next = j->next;
        job_free(j);
    }
    pthread_cond_destroy(&b->wake);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* True when j is the job (cache, key, variant, id). Called with lock held. */
static bool same_job(const struct job *j, struct cache *c, const char *key, const char *variant,
                     const struct file_id *id)
{
    return j && j->cache == c && strcmp(j->key, key) == 0 && strcmp(j->variant, variant) == 0 &&
           file_id_same(&j->id, id);
}

/* Whether the queue holds the job, in progress or waiting. Called with lock held. */
static bool queued(const struct best *b, struct cache *c, const char *key, const char *variant,
                   const struct file_id *id)
{
    if (same_job(b->current, c, key, variant, id)) {
        return true;
    }
    for (const struct job *j = b->head; j; j = j->next) {
        if (same_job(j, c, key, variant, id)) {
            return true;
        }
    }
    return false;
}

/* A new job, its key and variant in one allocation; NULL when out of memory. */
static struct job *job_new(struct cache *c, const char *key, const char *variant, enum encoding e,
                           int level, const struct file_id *id, struct body *plain)
{
    size_t key_len = strlen(key) + 1, variant_len = strlen(variant) + 1;
    struct job *j = malloc(sizeof(*j));
    char *names = malloc(key_len + variant_len);
    if (!j || !names) {
        free(j);
        free(names);
        return NULL;
    }
    memcpy(names, key, key_len);
    memcpy(names + key_len, variant, variant_len);
    *j = (struct job){.cache = c, .key = names, .variant = names + key_len, .coding = e,
                      .level = level, .id = *id, .plain = body_ref(plain)};
    return j;
}

/* Whether a job of len bytes fits the queue now. Called with lock held. */
static bool room_for(const struct best *b, size_t len)
{
    return !atomic_load(&b->stop) && b->jobs < QUEUE_JOBS_MAX && b->bytes + len <= QUEUE_BYTES_MAX;
}

/* Whether the job (c, key, variant, id) is waiting or being made: its
 * result is on its way. */
static bool best_holds(struct best *b, struct cache *c, const char *key, const char *variant,
                const struct file_id *id)
{
    pthread_mutex_lock(&b->lock);
    bool held = queued(b, c, key, variant, id);
    pthread_mutex_unlock(&b->lock);
    return held;
}

/* Whether a job of len bytes would be taken now. */
static bool best_has_room(struct best *b, size_t len)
{
    pthread_mutex_lock(&b->lock);
    bool room = room_for(b, len);
    pthread_mutex_unlock(&b->lock);
    return room;
}

/* See best.h. */
bool best_queue(struct best *b, struct cache *c, const char *key, const char *variant,
                enum encoding e, int level, const struct file_id *id, struct body *plain)
{
    bool ok = false;
    pthread_mutex_lock(&b->lock);
    if (room_for(b, plain->len) && !queued(b, c, key, variant, id)) {
        if (!b->started) {
            b->started = pthread_create(&b->thread, NULL, work, b) == 0;
        }
        struct job *j = b->started ? job_new(c, key, variant, e, level, id, plain) : NULL;
        if (j) {
            *(b->tail ? &b->tail->next : &b->head) = j;
            b->tail = j;
            b->jobs++;
            b->bytes += plain->len;
            pthread_cond_signal(&b->wake);
            ok = true;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return ok;
}

/* See best.h. */
enum best_state best_state(struct cache *c, const char *key, const char *variant, const struct file_id *id)
{
    struct body *b = cache_get(c, key, variant, id);
    enum best_state state = !b ? BEST_ABSENT : b->len > 0 ? BEST_LANDED : BEST_TRIED;
    body_unref(b);
    return state;
}

/* See best.h. */
bool best_offer(struct best *b, struct cache *c, const char *key, const char *variant, enum encoding e,
                int level, const struct file_id *id, size_t len, struct body *(*plain)(void *arg), void *arg)
{
    if (best_holds(b, c, key, variant, id) || cache_too_small(c)) {
        return true; /* on its way; or declined: it would be evicted before it is used (cache.h) */
    }
    struct body *bytes = best_has_room(b, len) ? plain(arg) : NULL;
    bool queued = bytes && best_queue(b, c, key, variant, e, level, id, bytes);
    body_unref(bytes);
    return queued || best_holds(b, c, key, variant, id);
}

/* See best.h. */
unsigned long best_done(const struct best *b)
{
    return b ? atomic_load(&((struct best *)b)->done) : 0;
}

/* See best.h. */
unsigned long best_made(const struct best *b)
{
    return b ? atomic_load(&((struct best *)b)->made) : 0;
}
