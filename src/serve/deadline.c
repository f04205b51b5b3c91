#include "deadline.h"

#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
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
    struct timespec file_changed; /* its ctime when the response began */
    uint64_t start_acked;  /* the bytes acknowledged when the response began */
    uint64_t stall_acked;  /* and at the last look */
    /* deadline_set_arriving: since when a request has been arriving, -1 for
     * none; and whether deadline_evict_oldest shut it down for a newer one. */
    _Atomic int64_t arriving_ms;
    atomic_bool evicted;
};

/* How long a connection is fresh for deadline_evict_oldest: a client's
 * request comes with the handshake's last packet, or just after it, and is
 * read and handed over at once, unless the machine is busy; a slowloris
 * holds its connection seconds. A slot the limit keeps for that long is
 * made at the next look (deadline_set_room). */
#define EVICT_FRESH_MS 100

struct deadline_watch {
    pthread_mutex_t lock;
    const struct clock *clock; /* NULL: CLOCK_MONOTONIC */
    struct ticker *ticker;     /* NULL: looks are the holder's (deadline_watch_look) */
    unsigned (*waiting)(void *ctx); /* deadline_set_room: connections waiting for a slot */
    void *waiting_ctx;
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

/* True when e's response has stalled on a file changed since it began
 * (st: the file now): its socket had nothing queued and its client
 * acknowledged nothing more since the last look, though some of it (its
 * head). A client that reads slowly leaves bytes queued, a worker that has
 * not written the head yet (a busy machine) has sent nothing, and a file not
 * changed never stops a send; this is the library's sendfile that met the
 * file's end while a rewrite in place had cut it (written again before any
 * look saw it short), and waits for a writability that never comes
 * (library.h). Holds the lock. */
static bool stalled(struct deadline_entry *e, const struct stat *st)
{
    uint64_t acked;
    int queued = 1;
    uint64_t was = e->stall_acked;
    bool idle = progress_acked_bytes(e->fd, &acked) && ioctl(e->fd, SIOCOUTQ, &queued) == 0 && queued == 0;
    e->stall_acked = acked;
    return idle && acked == was && acked > e->start_acked &&
           (st->st_ctim.tv_sec != e->file_changed.tv_sec || st->st_ctim.tv_nsec != e->file_changed.tv_nsec);
}

/* When the file e's response is sent from is now shorter than it needs, or
 * the send has stalled on it (stalled), shuts e's socket down (once) and
 * stops watching the file. No reset: the client is reading, and gets every
 * byte the kernel took before the end. Holds the lock. */
static void end_if_cut_short(struct deadline_watch *w, struct deadline_entry *e)
{
    struct stat st;
    if (e->file_fd < 0 || fstat(e->file_fd, &st) != 0 ||
        ((uint64_t)st.st_size >= e->file_end && !stalled(e, &st))) {
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

static bool evict_locked(struct deadline_watch *w, const struct deadline_entry *newest);

/* One look at now: every entry past its deadline is expired; a connection
 * waiting for a slot at the limit gets one (deadline_set_room). */
static void watch_tick(void *arg, int64_t now)
{
    struct deadline_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    expire(w, now);
    /* Their own starts could not (all were fresh), or each waits its turn
     * behind the one before it: a slot for each, at once. */
    for (unsigned n = w->waiting ? w->waiting(w->waiting_ctx) : 0; n > 0 && evict_locked(w, NULL); n--) {
    }
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
    atomic_store(&e->arriving_ms, -1);
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
    struct stat st;
    if (dup >= 0 && fstat(dup, &st) != 0) {
        st.st_ctim = (struct timespec){-1, -1}; /* unknown: any look sees it changed */
    }
    pthread_mutex_lock(&w->lock);
    forget_file(e);
    e->file_fd = dup;
    e->file_end = end;
    e->file_changed = dup >= 0 ? st.st_ctim : (struct timespec){0, 0};
    if (!progress_acked_bytes(e->fd, &e->start_acked)) {
        e->start_acked = UINT64_MAX; /* unknown: never taken for stalled */
    }
    e->stall_acked = UINT64_MAX; /* the first look only notes the count */
    pthread_mutex_unlock(&w->lock);
    return dup >= 0 || file_fd < 0;
}

/* See deadline.h. */
void deadline_set_arriving(struct deadline_entry *e, int64_t since_ms)
{
    if (e) {
        atomic_store(&e->arriving_ms, since_ms);
    }
}

/* True when a whole request head sits unread in fd's socket: a client that
 * sent its request at once, accepted in the same turn of its worker as
 * others and not read yet (a peek: nothing is taken). A head longer than
 * the peek counts as still arriving. */
static bool head_unread(int fd)
{
    char bytes[4096];
    ssize_t n = recv(fd, bytes, sizeof(bytes), MSG_PEEK | MSG_DONTWAIT);
    for (ssize_t i = 1; i < n; i++) {
        if (bytes[i] == '\n' && (bytes[i - 1] == '\n' || (i > 2 && bytes[i - 1] == '\r' && bytes[i - 2] == '\n'))) {
            return true;
        }
    }
    return false;
}

/* The entry whose request has been arriving longest, of those arriving
 * since after (exclusive: INT64_MIN for all) and before before, newest
 * aside; NULL when none is. Holds the lock. */
static struct deadline_entry *oldest_arriving(struct deadline_watch *w, const struct deadline_entry *newest,
                                              int64_t after, int64_t before)
{
    struct deadline_entry *oldest = NULL;
    for (struct deadline_entry *e = w->head; e; e = e->next) {
        int64_t since = atomic_load(&e->arriving_ms);
        if (e != newest && since >= 0 && since > after && since < before && !atomic_load(&e->evicted) &&
            !atomic_load(&e->expired) && (!oldest || since <= atomic_load(&oldest->arriving_ms))) {
            oldest = e;
        }
    }
    return oldest;
}

/* The connection to close for newest: the oldest arriving of those born
 * before before whose head is not waiting unread (a few peeked at most). */
static struct deadline_entry *evictable(struct deadline_watch *w, const struct deadline_entry *newest,
                                        int64_t before)
{
    int64_t after = INT64_MIN;
    for (int tries = 0; tries < 8; tries++) {
        struct deadline_entry *e = oldest_arriving(w, newest, after, before);
        if (!e || !head_unread(e->fd)) {
            return e;
        }
        after = atomic_load(&e->arriving_ms); /* about to be read: the next */
    }
    return NULL;
}

/* Closes the connection evictable finds for newest (NULL: none is new).
 * One accepted a moment ago whose request has not come in yet (it comes
 * with or just after the handshake's last packet) is likelier a client about
 * to send it than a slowloris, so only those that have waited
 * EVICT_FRESH_MS may go: when none has, the slot waits for the next look
 * (deadline_set_room). Holds the lock. */
static bool evict_locked(struct deadline_watch *w, const struct deadline_entry *newest)
{
    struct deadline_entry *e = evictable(w, newest, clock_read(w->clock) - EVICT_FRESH_MS);
    if (e) {
        atomic_store(&e->evicted, true); /* before: the close may follow at once */
        shutdown(e->fd, SHUT_RDWR);
    }
    return e != NULL;
}

/* See deadline.h. */
bool deadline_evict_oldest(struct deadline_watch *w, const struct deadline_entry *newest)
{
    pthread_mutex_lock(&w->lock);
    bool closed = evict_locked(w, newest);
    pthread_mutex_unlock(&w->lock);
    return closed;
}

/* See deadline.h. */
void deadline_set_room(struct deadline_watch *w, unsigned (*waiting)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&w->lock);
    w->waiting = waiting;
    w->waiting_ctx = ctx;
    pthread_mutex_unlock(&w->lock);
}

/* See deadline.h. */
bool deadline_was_evicted(const struct deadline_entry *e)
{
    return e && atomic_load(&((struct deadline_entry *)e)->evicted);
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
