#include "flight.h"

#include <pthread.h>

/* Builds in flight at once: more than the worker threads there are. When
 * every slot is taken a build goes ahead unnamed (as before single-flight)
 * rather than wait for a slot. */
#define FLIGHT_SLOTS 64

/* One process-wide table: builds of one version in two caches (tests) only
 * wait for each other, they never share bytes. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t landed = PTHREAD_COND_INITIALIZER;
static uint64_t slots[FLIGHT_SLOTS]; /* 0: free */

/* FNV-1a of len bytes, continued from h. */
static uint64_t mix(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * 1099511628211u;
    }
    return h;
}

/* See flight.h. Never 0, the free slot's mark. */
uint64_t flight_name(const char *key, const char *variant, const struct file_id *id)
{
    uint64_t h = 14695981039346656037u;
    for (const char *p = key; *p; p++) {
        h = mix(h, p, 1);
    }
    h = mix(h, "\n", 1); /* "a" + "bc" is not "ab" + "c" */
    for (const char *p = variant; *p; p++) {
        h = mix(h, p, 1);
    }
    uint64_t version[4] = {id->dev, id->ino, id->size, (uint64_t)id->mtime_ns};
    h = mix(h, version, sizeof(version));
    return h ? h : 1;
}

/* The slot holding name, or -1. Called with lock held. */
static int slot_of(uint64_t name)
{
    for (int i = 0; i < FLIGHT_SLOTS; i++) {
        if (slots[i] == name) {
            return i;
        }
    }
    return -1;
}

/* See flight.h. */
enum flight flight_begin(uint64_t name)
{
    pthread_mutex_lock(&lock);
    if (slot_of(name) >= 0) {
        while (slot_of(name) >= 0) {
            pthread_cond_wait(&landed, &lock);
        }
        pthread_mutex_unlock(&lock);
        return FLIGHT_WAITED;
    }
    int free_slot = slot_of(0);
    if (free_slot >= 0) {
        slots[free_slot] = name;
    }
    pthread_mutex_unlock(&lock);
    return free_slot >= 0 ? FLIGHT_LEAD : FLIGHT_ALONE;
}

/* See flight.h. */
void flight_end(uint64_t name)
{
    pthread_mutex_lock(&lock);
    int i = slot_of(name);
    if (i >= 0) {
        slots[i] = 0;
    }
    pthread_cond_broadcast(&landed);
    pthread_mutex_unlock(&lock);
}
