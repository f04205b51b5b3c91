#include "flight.h"

#include <assert.h>
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
static unsigned waiting;             /* in flight_begin's wait */

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
    assert(name != 0); /* 0 marks a free slot: cache_version_name never gives it */
    pthread_mutex_lock(&lock);
    if (slot_of(name) >= 0) {
        waiting++;
        while (slot_of(name) >= 0) {
            pthread_cond_wait(&landed, &lock);
        }
        waiting--;
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
    assert(name != 0 && i >= 0); /* ended by the FLIGHT_LEAD that began it, once */
    if (i >= 0) {
        slots[i] = 0;
    }
    pthread_cond_broadcast(&landed);
    pthread_mutex_unlock(&lock);
}

/* See flight.h. */
unsigned flight_waiting(void)
{
    pthread_mutex_lock(&lock);
    unsigned n = waiting;
    pthread_mutex_unlock(&lock);
    return n;
}
