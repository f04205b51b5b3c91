/* sse — see sse.h.
 *
 * Locking: hub->mu guards everything mutable in the hub and its clients.
 * A client's `suspended` flag is true exactly while MHD holds the
 * connection suspended by us and nobody has claimed the resume yet. Whoever
 * flips it to false (broadcast, heartbeat, close) owns that one
 * MHD_resume_connection() call and makes it after unlocking: a suspended
 * connection cannot be closed by MHD, so the pointer stays valid until that
 * resume, and MHD is never entered with hub->mu held from our threads.
 * `in_flight` counts resumes claimed but not yet made, so close() can wait
 * for them before the daemon stops. */
#include "sse_internal.h"

#include <assert.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/array.h"
#include "base/clock.h"

struct sse_client {
    struct sse_hub *hub;
    struct MHD_Connection *conn;
    int fd; /* the connection's socket, -1 unknown; valid while suspended */
    char *buf;
    size_t off, len, cap; /* pending bytes are buf[off .. off+len) */
    bool suspended;
    bool dropped;
    struct sse_client *prev, *next;
    struct sse_client *resume_next; /* claimed for resume, see above */
};

struct sse_hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* heartbeat wake-up, CLOCK_MONOTONIC */
    pthread_cond_t idle_cv; /* in_flight reached 0; a stream came, left, parked, woke or was dropped */
    pthread_t thread;
    bool thread_started;
    bool stopping;
    bool closed;
    unsigned heartbeat_ms;
    unsigned retry_ms;
    unsigned refs; /* the owner + one per client */
    unsigned in_flight;
    size_t nclients, ndropped;
    size_t max_clients; /* 0: no cap (sse_hub_set_limit) */
    struct sse_client *head;
    char instance[33];
};

size_t sse_format(char *buf, size_t size, const char *event, const char *data)
{
    size_t n = 0;
/* Appends @len bytes, writing only what fits; n counts them all. */
#define SSE_PUT(src, len)                                                     \
    do {                                                                      \
        size_t l_ = (len);                                                    \
        if (n < size) {                                                       \
            memcpy(buf + n, (src), n + l_ <= size ? l_ : size - n);           \
        }                                                                     \
        n += l_;                                                              \
    } while (0)
    if (event != NULL && event[0] != '\0') {
        if (strpbrk(event, "\r\n") != NULL) {
            if (size > 0) {
                buf[0] = '\0';
            }
            return 0;
        }
        SSE_PUT("event: ", 7);
        SSE_PUT(event, strlen(event));
        SSE_PUT("\n", 1);
    }
    const char *p = data != NULL ? data : "";
    for (;;) {
        size_t line = strcspn(p, "\r\n");
        SSE_PUT("data: ", 6);
        SSE_PUT(p, line);
        SSE_PUT("\n", 1);
        p += line;
        if (*p == '\0') {
            break;
        }
        p += (p[0] == '\r' && p[1] == '\n') ? 2 : 1;
    }
    SSE_PUT("\n", 1);
#undef SSE_PUT
    if (size > 0) {
        buf[n < size ? n : size - 1] = '\0';
    }
    return n;
}

/* Frees a client's queue and marks it dropped; the reader ends the stream
 * with an error when MHD next asks. Called with hub->mu held. */
static void sse_client_drop(struct sse_client *c)
{
    free(c->buf);
    c->buf = NULL;
    c->off = c->len = c->cap = 0;
    c->dropped = true;
    c->hub->ndropped++;
    pthread_cond_broadcast(&c->hub->idle_cv);
}

/* Appends to a client's queue, or drops the client when the queue would
 * pass the bound (it stopped reading) or memory runs out. Called with
 * hub->mu held. */
static void sse_client_push(struct sse_client *c, const char *bytes, size_t len)
{
    if (c->dropped) {
        return;
    }
    if (c->len + len > SSE_CLIENT_MAX_QUEUE) {
        sse_client_drop(c);
        return;
    }
    if (c->off > 0 && c->off + c->len + len > c->cap) {
        memmove(c->buf, c->buf + c->off, c->len);
        c->off = 0;
    }
    char *b = array_grow(c->buf, &c->cap, c->len + len, 1, 256);
    if (b == NULL) {
        sse_client_drop(c);
        return;
    }
    c->buf = b;
    assert(c->off + c->len + len <= c->cap); /* pending bytes are buf[off .. off+len), inside it */
    memcpy(c->buf + c->off + c->len, bytes, len);
    c->len += len;
}

/* Takes suspended client c off its suspension onto *list, for one resume. */
static void sse_claim(struct sse_client *c, struct sse_client **list)
{
    c->suspended = false;
    pthread_cond_broadcast(&c->hub->idle_cv);
    c->resume_next = *list;
    *list = c;
}

/* Claims the resume of every suspended client. Called with hub->mu held;
 * the caller passes the list to sse_resume_claimed() after unlocking. */
static struct sse_client *sse_claim_resumes(struct sse_hub *hub)
{
    struct sse_client *list = NULL;
    for (struct sse_client *c = hub->head; c != NULL; c = c->next) {
        if (c->suspended) {
            sse_claim(c, &list);
        }
    }
    if (list != NULL) {
        hub->in_flight++;
    }
    return list;
}

static void sse_resume_claimed(struct sse_hub *hub, struct sse_client *list)
{
    if (list == NULL) {
        return;
    }
    while (list != NULL) {
        /* Read the link first: once resumed, the client may end and be
         * freed on an MHD thread at any moment. */
        struct sse_client *next = list->resume_next;
        MHD_resume_connection(list->conn);
        list = next;
    }
    pthread_mutex_lock(&hub->mu);
    hub->in_flight--;
    pthread_cond_broadcast(&hub->idle_cv);
    pthread_mutex_unlock(&hub->mu);
}

/* MHD content reader: runs on an MHD thread for one client. */
static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct sse_client *c = cls;
    struct sse_hub *hub = c->hub;
    ssize_t ret;
    pthread_mutex_lock(&hub->mu);
    if (c->len > 0) {
        size_t n = c->len < max ? c->len : max;
        memcpy(buf, c->buf + c->off, n);
        c->off += n;
        c->len -= n;
        if (c->len == 0) {
            c->off = 0;
        }
        ret = (ssize_t)n;
    } else if (c->dropped) {
        ret = MHD_CONTENT_READER_END_WITH_ERROR;
    } else if (hub->closed) {
        ret = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        /* Nothing to send: park the connection. Returning 0 without
         * suspending would make MHD's polling thread spin. Suspending under
         * the lock means `suspended` is never seen true before MHD agrees. */
        c->suspended = true;
        MHD_suspend_connection(c->conn);
        pthread_cond_broadcast(&hub->idle_cv);
        ret = 0;
    }
    pthread_mutex_unlock(&hub->mu);
    return ret;
}

static void sse_hub_unref_locked_and_unlock(struct sse_hub *hub)
{
    bool last = --hub->refs == 0;
    pthread_mutex_unlock(&hub->mu);
    if (last) {
        pthread_cond_destroy(&hub->cv);
        pthread_cond_destroy(&hub->idle_cv);
        pthread_mutex_destroy(&hub->mu);
        free(hub);
    }
}

/* MHD response free callback: the stream is over (closed, ended, or the
 * response was never queued). */
static void sse_client_free(void *cls)
{
    struct sse_client *c = cls;
    struct sse_hub *hub = c->hub;
    pthread_mutex_lock(&hub->mu);
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        hub->head = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    hub->nclients--;
    if (c->dropped) {
        hub->ndropped--;
    }
    free(c->buf);
    free(c);
    pthread_cond_broadcast(&hub->idle_cv);
    sse_hub_unref_locked_and_unlock(hub);
}

/* A parked stream whose browser has gone (a closed tab sends FIN) is
 * dropped now, not at the next heartbeat write: MHD does not watch a
 * suspended connection, so nobody else would notice. While `suspended` is
 * true MHD cannot close the connection, so its fd is still ours to poll.
 * Claims the resume of each one dropped (see sse_claim_resumes). Called
 * with hub->mu held. */
static struct sse_client *sse_drop_closed_peers(struct sse_hub *hub)
{
    struct sse_client *list = NULL;
    for (struct sse_client *c = hub->head; c != NULL; c = c->next) {
        if (!c->suspended || c->dropped || c->fd < 0) {
            continue;
        }
        struct pollfd p = {.fd = c->fd, .events = POLLIN | POLLRDHUP};
        /* An EventSource sends nothing after its request: readable means
         * the peer closed (or reset) its side. */
        if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLIN))) {
            sse_client_drop(c);
            sse_claim(c, &list);
        }
    }
    if (list != NULL) {
        hub->in_flight++;
    }
    return list;
}

static void *sse_heartbeat_thread(void *arg)
{
    struct sse_hub *hub = arg;
    static const char ping[] = ": ping\n\n";
    unsigned check_ms = hub->heartbeat_ms < SSE_PEER_CHECK_MS ? hub->heartbeat_ms : SSE_PEER_CHECK_MS;
    unsigned since_ping = 0;
    pthread_mutex_lock(&hub->mu);
    struct timespec due = clock_deadline(CLOCK_MONOTONIC, check_ms);
    while (!hub->stopping) {
        int r = pthread_cond_timedwait(&hub->cv, &hub->mu, &due);
        if (hub->stopping) {
            break;
        }
        if (r != ETIMEDOUT) {
            continue; /* spurious */
        }
        due = clock_deadline(CLOCK_MONOTONIC, check_ms);
        if (hub->closed) {
            continue;
        }
        struct sse_client *gone = sse_drop_closed_peers(hub);
        struct sse_client *list = NULL;
        since_ping += check_ms;
        if (since_ping >= hub->heartbeat_ms) {
            since_ping = 0;
            for (struct sse_client *c = hub->head; c != NULL; c = c->next) {
                sse_client_push(c, ping, sizeof ping - 1);
            }
            list = sse_claim_resumes(hub);
        }
        pthread_mutex_unlock(&hub->mu);
        sse_resume_claimed(hub, gone);
        sse_resume_claimed(hub, list);
        pthread_mutex_lock(&hub->mu);
    }
    pthread_mutex_unlock(&hub->mu);
    return NULL;
}

static void sse_make_instance(char out[33])
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        /* No entropy yet (early boot): time and pid still differ between
         * two runs, which is all the id has to do. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t a = (uint64_t)ts.tv_sec, b = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        memcpy(r, &a, 8);
        memcpy(r + 8, &b, 8);
    }
    for (size_t i = 0; i < sizeof r; i++) {
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    }
}

struct sse_hub *sse_hub_create(unsigned heartbeat_ms, unsigned retry_ms)
{
    struct sse_hub *hub = calloc(1, sizeof *hub);
    if (hub == NULL) {
        return NULL;
    }
    hub->heartbeat_ms = heartbeat_ms ? heartbeat_ms : SSE_HEARTBEAT_DEFAULT_MS;
    hub->retry_ms = retry_ms ? retry_ms : SSE_RETRY_DEFAULT_MS;
    hub->refs = 1;
    sse_make_instance(hub->instance);
    pthread_mutex_init(&hub->mu, NULL);
    clock_cond_init(&hub->cv);
    clock_cond_init(&hub->idle_cv);
    if (pthread_create(&hub->thread, NULL, sse_heartbeat_thread, hub) != 0) {
        pthread_cond_destroy(&hub->cv);
        pthread_cond_destroy(&hub->idle_cv);
        pthread_mutex_destroy(&hub->mu);
        free(hub);
        return NULL;
    }
    hub->thread_started = true;
    return hub;
}

const char *sse_hub_instance(const struct sse_hub *hub)
{
    return hub->instance;
}

/* Adds the stream's headers to r; false when one could not be added. */
static bool sse_add_headers(struct MHD_Response *r)
{
    /* no-transform: proxies must not compress (and so buffer) the stream;
     * X-Accel-Buffering: nginx must pass each event on at once.
     * Connection: close, because a stream never ends to be reused, and a
     * browser that abandons a reusable one with no read pending drains it
     * first (Chromium: up to 5 s) before it sends FIN; on a closing one it
     * drops the socket at once, so a closed tab leaves the count at once. */
    return MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream") == MHD_YES &&
           MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, no-transform") == MHD_YES &&
           MHD_add_response_header(r, "X-Accel-Buffering", "no") == MHD_YES &&
           MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES;
}

/* The stream's response, reading from client c: NULL (and c freed) when it
 * cannot be made. */
static struct MHD_Response *sse_response_create(struct sse_client *c)
{
    struct MHD_Response *r = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 4096, sse_reader, c, sse_client_free);
    if (r == NULL) {
        sse_client_free(c);
        return NULL;
    }
    if (!sse_add_headers(r)) {
        MHD_destroy_response(r); /* runs sse_client_free */
        return NULL;
    }
    return r;
}

/* A HEAD's content reader: never asked for content, and it has none. */
static ssize_t sse_no_content(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls;
    (void)pos;
    (void)buf;
    (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

struct MHD_Response *sse_hub_head(struct sse_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    bool room = !hub->closed && !(hub->max_clients && hub->nclients >= hub->max_clients);
    pthread_mutex_unlock(&hub->mu);
    if (!room) {
        return NULL;
    }
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_no_content,
                                                               NULL, NULL);
    if (r == NULL) {
        return NULL;
    }
    /* A response to HEAD has no content (RFC 9110 9.3.2), yet libmicrohttpd
     * 0.9.75 writes a chunked body's last chunk ("0\r\n\r\n") after a HEAD's
     * header (serve/library.h). Unframed (its end is the connection's, which a stream closes
     * anyway), there is no last chunk to write; Transfer-Encoding, a field
     * decided while sending the content, may be left out of a HEAD's
     * answer (9.3.2). */
    if (MHD_set_response_options(r, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) != MHD_YES ||
        !sse_add_headers(r)) {
        MHD_destroy_response(r);
        return NULL;
    }
    return r;
}

struct MHD_Response *sse_hub_attach(struct sse_hub *hub,
                                    struct MHD_Connection *conn)
{
    struct sse_client *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    c->hub = hub;
    c->conn = conn;
    c->fd = -1;
    char hello[128];
    int hn = snprintf(hello, sizeof hello, "retry: %u\nevent: hello\ndata: %s\n\n",
                      hub->retry_ms, hub->instance);
    /* The hello goes first, so the browser learns the instance (and that
     * the stream is alive) without waiting for a heartbeat. */
    sse_client_push(c, hello, (size_t)hn);
    if (c->dropped) {
        free(c);
        return NULL;
    }
    /* Linked before the response exists, so from here on the one way out is
     * sse_client_free(), whether MHD or we call it. */
    pthread_mutex_lock(&hub->mu);
    if (hub->closed || (hub->max_clients && hub->nclients >= hub->max_clients)) {
        pthread_mutex_unlock(&hub->mu);
        free(c->buf);
        free(c);
        return NULL;
    }
    c->next = hub->head;
    if (hub->head != NULL) {
        hub->head->prev = c;
    }
    hub->head = c;
    hub->nclients++;
    hub->refs++;
    pthread_cond_broadcast(&hub->idle_cv);
    pthread_mutex_unlock(&hub->mu);

    struct MHD_Response *r = sse_response_create(c);
    if (r == NULL) {
        return NULL;
    }
    /* Events are tiny and latency is the point: no Nagle delay. */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci != NULL) {
        int one = 1;
        (void)setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_lock(&hub->mu);
        c->fd = ci->connect_fd;
        pthread_mutex_unlock(&hub->mu);
    }
    return r;
}

bool sse_hub_broadcast(struct sse_hub *hub, const char *event, const char *data)
{
    if (data == NULL || data[0] == '\0') {
        return false;
    }
    size_t n = sse_format(NULL, 0, event, data);
    if (n == 0) {
        return false;
    }
    char *frame = malloc(n + 1);
    if (frame == NULL) {
        return false;
    }
    sse_format(frame, n + 1, event, data);
    pthread_mutex_lock(&hub->mu);
    struct sse_client *list = NULL;
    if (!hub->closed) {
        for (struct sse_client *c = hub->head; c != NULL; c = c->next) {
            sse_client_push(c, frame, n);
        }
        list = sse_claim_resumes(hub);
    }
    pthread_mutex_unlock(&hub->mu);
    free(frame);
    sse_resume_claimed(hub, list);
    return true;
}

/* The streams counted as @what says. Called with hub->mu held. */
static size_t sse_count_locked(const struct sse_hub *hub, enum sse_count what)
{
    if (what == SSE_STREAMING) {
        return hub->nclients - hub->ndropped;
    }
    size_t n = 0;
    for (const struct sse_client *c = hub->head; c != NULL; c = c->next) {
        n += c->suspended && !c->dropped;
    }
    return n;
}

/* See sse_internal.h. */
bool sse_hub_await(struct sse_hub *hub, enum sse_count what, size_t want, unsigned ms)
{
    struct timespec until = clock_deadline(CLOCK_MONOTONIC, ms);
    pthread_mutex_lock(&hub->mu);
    int rc = 0;
    while (sse_count_locked(hub, what) != want && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&hub->idle_cv, &hub->mu, &until);
    }
    bool reached = sse_count_locked(hub, what) == want;
    pthread_mutex_unlock(&hub->mu);
    return reached;
}

size_t sse_hub_client_count(struct sse_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    size_t n = sse_count_locked(hub, SSE_STREAMING);
    pthread_mutex_unlock(&hub->mu);
    return n;
}

bool sse_hub_close(struct sse_hub *hub, unsigned wait_ms)
{
    pthread_mutex_lock(&hub->mu);
    hub->closed = true;
    struct sse_client *list = sse_claim_resumes(hub);
    pthread_mutex_unlock(&hub->mu);
    sse_resume_claimed(hub, list);

    struct timespec until = clock_deadline(CLOCK_MONOTONIC, wait_ms);
    pthread_mutex_lock(&hub->mu);
    /* Resumes claimed by a concurrent broadcast must land before the daemon
     * stops: a connection left suspended at MHD_stop_daemon is an API
     * violation. This wait is not bounded by @wait_ms (it is a few calls). */
    while (hub->in_flight > 0) {
        pthread_cond_wait(&hub->idle_cv, &hub->mu);
    }
    while (hub->nclients > 0) {
        if (pthread_cond_timedwait(&hub->idle_cv, &hub->mu, &until) == ETIMEDOUT) {
            break;
        }
    }
    bool all = hub->nclients == 0;
    pthread_mutex_unlock(&hub->mu);
    return all;
}

void sse_hub_destroy(struct sse_hub *hub)
{
    if (hub == NULL) {
        return;
    }
    pthread_mutex_lock(&hub->mu);
    hub->stopping = true;
    hub->closed = true;
    pthread_cond_broadcast(&hub->cv);
    pthread_mutex_unlock(&hub->mu);
    if (hub->thread_started) {
        pthread_join(hub->thread, NULL);
    }
    pthread_mutex_lock(&hub->mu);
    sse_hub_unref_locked_and_unlock(hub);
}

void sse_hub_set_limit(struct sse_hub *hub, size_t max_clients)
{
    pthread_mutex_lock(&hub->mu);
    hub->max_clients = max_clients;
    pthread_mutex_unlock(&hub->mu);
}
