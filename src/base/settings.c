#include "settings.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

struct snapshot {
    struct config config; /* first: a const struct config * is a snapshot's address */
    atomic_uint refs;     /* readers, plus one while it is the current one */
    unsigned generation;
};

struct settings {
    pthread_mutex_t lock; /* guards current and the step from it to a reference */
    struct snapshot *current;
};

static struct snapshot *snapshot_of(const struct config *c)
{
    return (struct snapshot *)(void *)((char *)c - offsetof(struct snapshot, config));
}

/* A snapshot holding config (moved out of the caller's struct). */
static struct snapshot *snapshot_create(struct config *config, unsigned generation)
{
    struct snapshot *snap = malloc(sizeof(*snap));
    if (!snap) {
        config_finish(config);
        return NULL;
    }
    snap->config = *config;
    *config = (struct config){0};
    atomic_init(&snap->refs, 1);
    snap->generation = generation;
    return snap;
}

static void snapshot_unref(struct snapshot *snap)
{
    /* acq_rel: the last reader's reads happen before the free. */
    unsigned long before = snap ? (unsigned long)atomic_fetch_sub_explicit(&snap->refs, 1, memory_order_acq_rel) : 0;
    assert(!snap || before > 0); /* released once more than acquired */
    if (before == 1) {
        config_finish(&snap->config);
        free(snap);
    }
}

struct settings *settings_create(struct config *first)
{
    struct settings *s = malloc(sizeof(*s));
    struct snapshot *snap = s ? snapshot_create(first, 0) : NULL;
    if (!snap) {
        free(s);
        config_finish(first);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->current = snap;
    return s;
}

void settings_destroy(struct settings *s)
{
    if (!s) {
        return;
    }
    assert(atomic_load(&s->current->refs) == 1); /* every acquired one released (settings.h) */
    snapshot_unref(s->current);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

const struct config *settings_acquire(struct settings *s)
{
    pthread_mutex_lock(&s->lock);
    struct snapshot *snap = s->current;
    unsigned long before = (unsigned long)atomic_fetch_add_explicit(&snap->refs, 1, memory_order_relaxed);
    assert(before > 0); /* the slot holds one reference to the current snapshot */
    (void)before;
    pthread_mutex_unlock(&s->lock);
    return &snap->config;
}

void settings_release(struct settings *s, const struct config *c)
{
    (void)s;
    if (c) {
        snapshot_unref(snapshot_of(c));
    }
}

bool settings_publish(struct settings *s, struct config *fresh)
{
    struct snapshot *snap = snapshot_create(fresh, 0);
    if (!snap) {
        return false;
    }
    pthread_mutex_lock(&s->lock);
    struct snapshot *old = s->current;
    snap->generation = old->generation + 1;
    s->current = snap;
    pthread_mutex_unlock(&s->lock);
    snapshot_unref(old); /* the slot's own reference */
    return true;
}

unsigned settings_generation(const struct config *c)
{
    return snapshot_of(c)->generation;
}
