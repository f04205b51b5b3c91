#include "deadline.h"

#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/ticker.h"
#include "progress.h"

struct deadline_entry {
    struct deadline_entry *prev, *next;
    int fd;
    _Atomic int64_t deadline_ms;
    atomic_bool expired; /* shut down since the last deadline_set */
    /* A send-rate floor (deadline_set_floor), read and moved by the watcher
     * alone once set: 0 rate for none. */
    _Atomic uint64_t rate;
    int64_t window_ms, window_end_ms, start_ms, grace_ms;
    uint64_t acked_start;  /* the kernel's count when the response was queued */
    uint64_t acked_window; /* ... when the current window began */
    /* deadline_watch_file: a dup of the file the response is sent from, or
     * -1, and the size it needs; under the watcher's lock. */
    int file_fd;
    uint64_t file_end;
};

struct deadline_watch {
    pthread_mutex_t lock;
    const struct clock *clock; /* NULL: CLOCK_MONOTONIC */
    struct ticker *ticker;     /* NULL: looks are the holder's (deadline_watch_look) */
    struct deadline_entry *head;
    atomic_uint_fast64_t expired;
};

/* True when e, due at due, has a floor its client keeps, and then moves its
 * deadline to the next look. Two tests, both on bytes acknowledged (a full
 * socket buffer that drains slowly is progress; nginx's send_timeout counts
 * writes): at least rate x window in each window (a reader that stalls is
 * cut after one), and on the whole at least rate x (elapsed - grace), the
 * same bound a deadline of grace + size / rate gave. The next look is the
 * window's end or when the whole falls below, whichever comes first. */
static bool kept_the_floor(struct deadline_entry *e, int64_t due, int64_t now)
{
    uint64_t rate = atomic_load(&e->rate), taken;
    if (!rate || !progress_acked_bytes(e->fd, &taken)) {
        return false;
    }
    uint64_t since_start = taken > e->acked_start ? taken - e->acked_start : 0;
    int64_t owed_ms = now - e->start_ms - e->grace_ms;
    if (owed_ms > 0 && since_start < rate * (uint64_t)owed_ms / 1000) {
        return false;
    }
    if (now >= e->window_end_ms) {
        if (taken < e->acked_window + rate * (uint64_t)e->window_ms / 1000) {
            return false;
        }
        e->acked_window = taken;
        e->window_end_ms = now + e->window_ms;
    }
    int64_t below = e->start_ms + e->grace_ms + (int64_t)(since_start * 1000 / rate) + 1;
    int64_t next = below < e->window_end_ms ? below : e->window_end_ms;
    return atomic_compare_exchange_strong(&e->deadline_ms, &due, next > now ? next : now + 1);
}

/* Stops e watching its file. Holds the lock. */
static void forget_file(struct deadline_entry *e)
{
    if (e->file_fd >= 0) {
        close(e->file_fd);
    }
    e->file_fd = -1;
}

/* When the file e's response is sent from is now shorter than it needs,
 * shuts e's socket down (once) and stops watching the file. No reset: the
 * client is reading, and gets every byte the kernel took before the end.
 * Holds the lock. */
static void end_if_cut_short(struct deadline_watch *w, struct deadline_entry *e)
{
    struct stat st;
    if (e->file_fd < 0 || fstat(e->file_fd, &st) != 0 || (uint64_t)st.st_size >= e->file_end) {
        return;
    }
    forget_file(e);
    atomic_store(&e->rate, 0); /* and no deadline's reset after it */
    atomic_store(&e->deadline_ms, 0);
    atomic_store(&e->expired, true); /* before: the close may follow at once */
    shutdown(e->fd, SHUT_RDWR);
    atomic_fetch_add(&w->expired, 1);
}

/* Shuts down every socket past its deadline, once each, and every one
 * whose file was cut short. Holds the lock. */
static void expire(struct deadline_watch *w, int64_t now)
{
    for (struct deadline_entry *e = w->head; e; e = e->next) {
        end_if_cut_short(w, e);
        int64_t due = atomic_load(&e->deadline_ms);
        if (due != 0 && now >= due && kept_the_floor(e, due, now)) {
            continue;
        }
        if (due != 0 && now >= due && atomic_compare_exchange_strong(&e->deadline_ms, &due, 0)) {
            /* Linger 0: the close libmicrohttpd then makes resets the
             * connection and drops what is queued for a client that does
             * not read, instead of trickling it out. */
            struct linger reset = {.l_onoff = 1, .l_linger = 0};
            atomic_store(&e->expired, true); /* before: the close may follow at once */
            setsockopt(e->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
            shutdown(e->fd, SHUT_RDWR);
            atomic_fetch_add(&w->expired, 1);
        }
    }
}

/* One look at now: every entry past its deadline is expired. */
static void watch_tick(void *arg, int64_t now)
{
    struct deadline_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    expire(w, now);
    pthread_mutex_unlock(&w->lock);
}

void deadline_watch_look(struct deadline_watch *w)
{
    watch_tick(w, clock_read(w->clock));
}

struct deadline_watch *deadline_watch_start(unsigned tick_ms, const struct clock *clock)
{
    struct deadline_watch *w = calloc(1, sizeof(*w));
    if (!w) {
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    w->clock = clock;
    w->ticker = tick_ms ? ticker_start(tick_ms, clock, watch_tick, w) : NULL;
    if (tick_ms && !w->ticker) {
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void deadline_watch_stop(struct deadline_watch *w)
{
    if (!w) {
        return;
    }
    ticker_stop(w->ticker);
    while (w->head) {
        struct deadline_entry *e = w->head;
        w->head = e->next;
        forget_file(e);
        free(e);
    }
    pthread_mutex_destroy(&w->lock);
    free(w);
}

struct deadline_entry *deadline_add(struct deadline_watch *w, int fd, int64_t deadline_ms)
{
    struct deadline_entry *e = calloc(1, sizeof(*e));
    if (!e) {
        return NULL;
    }
    e->fd = fd;
    e->file_fd = -1;
    atomic_store(&e->deadline_ms, deadline_ms);
    pthread_mutex_lock(&w->lock);
    e->next = w->head;
    if (w->head) {
        w->head->prev = e;
    }
    w->head = e;
    pthread_mutex_unlock(&w->lock);
    return e;
}

void deadline_set(struct deadline_entry *e, int64_t deadline_ms)
{
    if (e) {
        atomic_store(&e->rate, 0);
        atomic_store(&e->deadline_ms, deadline_ms);
        atomic_store(&e->expired, false);
    }
}

/* See deadline.h. */
void deadline_set_floor(struct deadline_watch *w, struct deadline_entry *e, uint64_t rate, int64_t window_ms,
                        int64_t grace_ms, uint64_t acked_base)
{
    if (!e) {
        return;
    }
    int64_t now = clock_read(w->clock);
    pthread_mutex_lock(&w->lock); /* the watcher reads the window under it */
    e->window_ms = window_ms > 0 ? window_ms : 1000;
    e->start_ms = now;
    e->grace_ms = grace_ms;
    e->window_end_ms = now + e->window_ms;
    e->acked_start = e->acked_window = acked_base;
    atomic_store(&e->rate, rate);
    int64_t first = grace_ms < e->window_ms ? grace_ms : e->window_ms;
    atomic_store(&e->deadline_ms, now + (first > 0 ? first : 1));
    atomic_store(&e->expired, false);
    pthread_mutex_unlock(&w->lock);
}

/* See deadline.h. The dup is made outside the lock: the watcher never
 * waits on it. */
bool deadline_watch_file(struct deadline_watch *w, struct deadline_entry *e, int file_fd, uint64_t end)
{
    if (!e) {
        return false;
    }
    int dup = file_fd >= 0 ? fcntl(file_fd, F_DUPFD_CLOEXEC, 0) : -1;
    pthread_mutex_lock(&w->lock);
    forget_file(e);
    e->file_fd = dup;
    e->file_end = end;
    pthread_mutex_unlock(&w->lock);
    return dup >= 0 || file_fd < 0;
}

bool deadline_was_expired(const struct deadline_entry *e)
{
    return e && atomic_load(&((struct deadline_entry *)e)->expired);
}

void deadline_remove(struct deadline_watch *w, struct deadline_entry *e)
{
    if (!e) {
        return;
    }
    pthread_mutex_lock(&w->lock);
    assert(e->prev ? e->prev->next == e : w->head == e); /* listed once, on this watch */
    if (e->prev) {
        e->prev->next = e->next;
    } else {
        w->head = e->next;
    }
    if (e->next) {
        e->next->prev = e->prev;
    }
    forget_file(e);
    pthread_mutex_unlock(&w->lock);
    free(e);
}

void deadline_end_reads(struct deadline_watch *w)
{
    pthread_mutex_lock(&w->lock);
    for (struct deadline_entry *e = w->head; e; e = e->next) {
        shutdown(e->fd, SHUT_RD);
    }
    pthread_mutex_unlock(&w->lock);
}

void deadline_expire_all(struct deadline_watch *w)
{
    pthread_mutex_lock(&w->lock);
    for (struct deadline_entry *e = w->head; e; e = e->next) {
        atomic_store(&e->rate, 0); /* no floor to keep: the grace is over */
        atomic_store(&e->deadline_ms, 1); /* due long ago */
    }
    expire(w, clock_read(w->clock));
    pthread_mutex_unlock(&w->lock);
}

uint64_t deadline_expired(const struct deadline_watch *w)
{
    return atomic_load(&((struct deadline_watch *)w)->expired);
}
