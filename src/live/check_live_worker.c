/* check_live_worker — see check_live_worker.h. */
#include "check_live_worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "check_live.h"

/* Past this many changes waiting, they are checked as an overflow is (the
 * pages, all of them): a burst that big is a checkout, not an edit. */
#define CHECK_LIVE_PENDING_MAX 1024
/* The check thread's nice value (see check_live_worker_run). */
#define CHECK_LIVE_NICE 10

struct check_live_worker {
    const struct routes *routes;
    struct sse_hub *hub;
    FILE *out; /* check_live_batch's lines */
    pthread_mutex_t lock;
    pthread_cond_t wake, checked; /* work came (or stop); a check ended */
    pthread_t thread;
    bool stop, busy;
    struct watch_change *pending; /* relpaths owned; what the next check covers */
    size_t n;
    bool overflow;
    unsigned long handed, done; /* batches handed over, and covered by a finished check */
};

/* Frees the relpaths of @n changes and the list. */
static void check_live_changes_free(struct watch_change *changes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)changes[i].relpath);
    }
    free(changes);
}

/* Adds @b's changes to what waits, each once. Lock held. */
static void check_live_merge(struct check_live_worker *cl, const struct watch_batch *b)
{
    cl->overflow |= b->overflow;
    if (cl->overflow || cl->n + b->n > CHECK_LIVE_PENDING_MAX) {
        cl->overflow = true;
        return;
    }
    struct watch_change *grown = realloc(cl->pending, (cl->n + b->n + 1) * sizeof(*grown));
    if (grown == NULL) {
        cl->overflow = true; /* the pages, then: never nothing */
        return;
    }
    cl->pending = grown;
    for (size_t i = 0; i < b->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < cl->n && !seen; j++) {
            seen = cl->pending[j].id == b->changes[i].id && strcmp(cl->pending[j].relpath, b->changes[i].relpath) == 0;
        }
        char *rel = seen ? NULL : strdup(b->changes[i].relpath);
        if (rel != NULL) {
            cl->pending[cl->n++] = (struct watch_change){b->changes[i].id, rel};
        }
        cl->overflow |= !seen && rel == NULL;
    }
}

/* The thread: one check at a time, of all that waits. */
static void *check_live_worker_run(void *arg)
{
    struct check_live_worker *cl = arg;
    /* A check is background work: on a busy machine (two cores, a build
     * beside) the watcher and the requests go first, or a long check still
     * delays the next stylesheet's swap by taking its core. Linux's nice is
     * per thread; raising it is always allowed. */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), CHECK_LIVE_NICE);
    pthread_mutex_lock(&cl->lock);
    while (!cl->stop) {
        if (cl->n == 0 && !cl->overflow) {
            pthread_cond_wait(&cl->wake, &cl->lock);
            continue;
        }
        struct watch_batch b = {cl->pending, cl->n, cl->overflow};
        unsigned long covers = cl->handed;
        cl->pending = NULL;
        cl->n = 0;
        cl->overflow = false;
        cl->busy = true;
        pthread_mutex_unlock(&cl->lock);
        check_live_batch(cl->routes, &b, cl->hub, cl->out);
        check_live_changes_free((struct watch_change *)b.changes, b.n);
        pthread_mutex_lock(&cl->lock);
        cl->busy = false;
        cl->done = covers;
        pthread_cond_broadcast(&cl->checked);
    }
    pthread_mutex_unlock(&cl->lock);
    return NULL;
}

struct check_live_worker *check_live_worker_start(const struct routes *r, struct sse_hub *hub, FILE *out)
{
    struct check_live_worker *cl = calloc(1, sizeof(*cl));
    if (cl == NULL) {
        return NULL;
    }
    cl->routes = r;
    cl->hub = hub;
    cl->out = out;
    pthread_mutex_init(&cl->lock, NULL);
    pthread_cond_init(&cl->wake, NULL);
    clock_cond_init(&cl->checked);
    if (pthread_create(&cl->thread, NULL, check_live_worker_run, cl) != 0) {
        pthread_cond_destroy(&cl->wake);
        pthread_cond_destroy(&cl->checked);
        pthread_mutex_destroy(&cl->lock);
        free(cl);
        return NULL;
    }
    return cl;
}

void check_live_worker_submit(struct check_live_worker *cl, const struct watch_batch *b, unsigned wait_ms)
{
    struct timespec until = clock_deadline(CLOCK_MONOTONIC, wait_ms);
    pthread_mutex_lock(&cl->lock);
    bool idle = !cl->busy && cl->n == 0 && !cl->overflow;
    check_live_merge(cl, b);
    unsigned long mine = ++cl->handed;
    pthread_cond_signal(&cl->wake);
    bool waiting = idle; /* an earlier save's check is never waited for */
    while (waiting && cl->done < mine) {
        waiting = pthread_cond_timedwait(&cl->checked, &cl->lock, &until) != ETIMEDOUT;
    }
    pthread_mutex_unlock(&cl->lock);
}

void check_live_worker_stop(struct check_live_worker *cl)
{
    if (cl == NULL) {
        return;
    }
    pthread_mutex_lock(&cl->lock);
    cl->stop = true;
    pthread_cond_signal(&cl->wake);
    pthread_mutex_unlock(&cl->lock);
    pthread_join(cl->thread, NULL);
    check_live_changes_free(cl->pending, cl->n);
    pthread_cond_destroy(&cl->wake);
    pthread_cond_destroy(&cl->checked);
    pthread_mutex_destroy(&cl->lock);
    free(cl);
}
