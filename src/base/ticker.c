#include "ticker.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"

struct ticker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* CLOCK_MONOTONIC: a clock step neither stalls nor hurries it */
    bool stopping;
    unsigned interval_ms;
    const struct clock *clock;
    void (*tick)(void *arg, int64_t now_ms);
    void *arg;
};

/* Waits an interval, ticks, until stopped; the tick runs without the lock,
 * so a stop never waits behind more than the tick in progress. */
static void *ticker_main(void *arg)
{
    struct ticker *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stopping) {
        struct timespec until = clock_deadline(CLOCK_MONOTONIC, t->interval_ms);
        pthread_cond_timedwait(&t->wake, &t->lock, &until);
        if (!t->stopping) {
            pthread_mutex_unlock(&t->lock);
            t->tick(t->arg, clock_read(t->clock));
            pthread_mutex_lock(&t->lock);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

/* See ticker.h. */
struct ticker *ticker_start(unsigned interval_ms, const struct clock *clock,
                            void (*tick)(void *arg, int64_t now_ms), void *arg)
{
    struct ticker *t = calloc(1, sizeof(*t));
    if (!t) {
        return NULL;
    }
    *t = (struct ticker){.interval_ms = interval_ms ? interval_ms : 1, .clock = clock, .tick = tick, .arg = arg};
    clock_cond_init(&t->wake);
    pthread_mutex_init(&t->lock, NULL);
    if (pthread_create(&t->thread, NULL, ticker_main, t) != 0) {
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->lock);
        free(t);
        return NULL;
    }
    return t;
}

/* See ticker.h. */
void ticker_stop(struct ticker *t)
{
    if (!t) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    t->stopping = true;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
