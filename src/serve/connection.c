#include "connection.h"

#include <errno.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <stdio.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/settings.h"
#include "library.h"
#include "log.h"
#include "precondition.h"
#include "progress.h"
#include "response.h"

/* How early before the idle timeout a close is still taken for it
 * (connection_dropped_line). */
#define IDLE_MARGIN_MS 250

/* At most this much of what a refused client sent on is read and dropped
 * before the close: enough for a pipelined request or two. */
#define DRAIN_MAX (64u << 10)

/* The open connections of this thread, newest first. */
static _Thread_local struct connection *open_here;
/* The one this thread last queued a response on (connection_refuse_no_room). */
static _Thread_local struct connection *queued_here;

/* True when any byte was ever written to the TCP socket fd (acknowledged,
 * or still in its send queue); true when that cannot be told. */
static bool ever_written(int fd)
{
    struct tcp_info info;
    socklen_t len = sizeof(info);
    int queued = 0;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(info.tcpi_bytes_acked) ||
        ioctl(fd, SIOCOUTQ, &queued) != 0) {
        return true;
    }
    return info.tcpi_bytes_acked > 0 || queued > 0;
}

/* See connection.h: a syscall only when a refusal came during the wait. */
unsigned connection_take_line_refusal(const struct connection *c)
{
    if (!c || c->waiting_since_ms < 0 || c->refusals_at_wait == library_refusals_noted() ||
        (!c->used && !ever_written(c->fd))) {
        return 0;
    }
    return library_take_refusal_since(c->refusals_at_wait);
}

/* See connection.h: a record waiting for the first request line. */
struct connection *connection_open(struct deadline_watch *w, int fd, int64_t header_deadline_ms)
{
    struct connection *c = malloc(sizeof(*c));
    if (!c) {
        return NULL;
    }
    *c = (struct connection){.deadline = deadline_add(w, fd, header_deadline_ms), .watch = w, .fd = fd,
                             .waiting_since_ms = clock_now_ms(), .refusals_at_wait = library_refusals_noted(),
                             .next = open_here};
    c->head_since_ms = c->waiting_since_ms;
    if (open_here) {
        open_here->prev = c;
    }
    open_here = c;
    return c;
}

/* Takes c off this thread's list of open connections. */
static void unlist(struct connection *c)
{
    if (c->prev) {
        c->prev->next = c->next;
    } else if (open_here == c) {
        open_here = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    c->prev = c->next = NULL;
    if (queued_here == c) {
        queued_here = NULL;
    }
}

/* See connection.h: the oldest head wins, on this thread's list only. */
bool connection_make_room(const struct connection *c, bool at_cap)
{
    if (!at_cap) {
        return false;
    }
    struct connection *oldest = NULL;
    for (struct connection *o = open_here; o; o = o->next) {
        if (o != c && !o->evicted && o->head_since_ms >= 0 &&
            (!oldest || o->head_since_ms <= oldest->head_since_ms)) {
            oldest = o;
        }
    }
    if (!oldest) {
        return false; /* every other one is being answered: the limit holds */
    }
    oldest->evicted = true;
    shutdown(oldest->fd, SHUT_RDWR);
    return true;
}

/* See connection.h: none awaited while a request is on. */
void connection_request_started(struct connection *c, void *request)
{
    if (c) {
        c->waiting_since_ms = -1;
        c->used = true;
        c->head_pending = true;
        c->request = request;
    }
    if (queued_here != c) {
        queued_here = NULL; /* another request's turn: that response's header is long built */
    }
}

/* See connection.h. */
void connection_head_checked(struct connection *c)
{
    if (c) {
        c->head_pending = false;
        c->head_since_ms = -1;
    }
}

/* See connection.h. */
unsigned connection_answered(const struct connection *c, uint64_t *bytes)
{
    *bytes = c ? c->answered_bytes : 0;
    return c ? c->answered : 0;
}

/* See connection.h: the next line is awaited from now, if there is one. */
void connection_request_done(struct connection *c, bool kept_alive)
{
    if (c) {
        c->waiting_since_ms = kept_alive ? clock_now_ms() : -1;
        c->head_since_ms = c->waiting_since_ms;
        c->refusals_at_wait = library_refusals_noted();
        c->head_pending = false;
        c->request = NULL;
        c->evicted = false;
        c->answered = 0;
        c->answered_bytes = 0;
    }
}

/* See connection.h. */
void connection_count_sent(struct connection *c, uint64_t sent, bool known)
{
    if (c) {
        c->sent_before += sent;
        c->sent_unknown |= !known;
    }
}

/* See connection.h: a peek never takes bytes from libmicrohttpd. */
enum connection_peer connection_peer_state(int fd)
{
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) {
        return CONNECTION_PEER_OPEN;
    }
    return CONNECTION_PEER_GONE;
}

/* See connection.h. libmicrohttpd closes a connection that waits for a
 * request line for these reasons only: the peer's FIN or reset (the peek
 * says GONE), the idle timeout (it fires only once the line has been awaited
 * that long: no byte came since, or the line would have been read), our
 * deadline watcher (it says so), daemon shutdown (it shuts every socket
 * first: GONE), a line it answers itself (414, 505: a refusal noted on this
 * thread), and the line it cannot parse. When some other connection of the
 * thread was refused during the wait, this close is not answered: silence
 * rather than a second response after libmicrohttpd's own. */
bool connection_dropped_line(const struct connection *c, int64_t now_ms, unsigned idle_timeout_s,
                             enum connection_peer peer, bool deadline_expired)
{
    if (!c || c->waiting_since_ms < 0 || peer != CONNECTION_PEER_OPEN || deadline_expired ||
        c->refusals_at_wait != library_refusals_noted()) {
        return false;
    }
    /* libmicrohttpd's idle clock starts when its send completes, a moment
     * before ours (the completion callback): a close in the window's last
     * quarter second is taken for the timeout, never answered with a 400. */
    return idle_timeout_s == 0 || now_ms - c->waiting_since_ms < (int64_t)idle_timeout_s * 1000 - IDLE_MARGIN_MS;
}

/* See connection.h: one non-blocking send (a few hundred bytes; a socket
 * still full of the last response's bytes gets none rather than a wait),
 * then a non-blocking drain. */
bool connection_answer(int fd, const char *response, size_t len)
{
    ssize_t sent = send(fd, response, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    char sink[4096];
    for (size_t drained = 0; drained < DRAIN_MAX;) {
        ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n <= 0) {
            break;
        }
        drained += (size_t)n;
    }
    return sent == (ssize_t)len;
}

/* See connection.h: the deadline goes first, so its watcher never touches
 * a socket number libmicrohttpd is about to close and reuse. */
void connection_close(struct deadline_watch *w, struct connection *c)
{
    if (!c) {
        return;
    }
    deadline_remove(w, c->deadline);
    shutdown(c->fd, SHUT_WR);
    unlist(c);
    free(c);
}

/* See connection.h. */
void connection_daemon_init(struct connection_daemon *d, struct deadline_watch *deadlines,
                            struct settings *settings, const struct config *boot)
{
    d->deadlines = deadlines;
    d->settings = settings;
    d->header_timeout = boot->header_timeout;
    d->timeout = boot->timeout;
    d->acceptor = NULL; /* http.c's, once it listens */
    d->refused_head = NULL;
    d->start_error[0] = '\0';
    pthread_mutex_init(&d->start_lock, NULL);
    d->starting = true;
}

/* See connection.h. */
void connection_daemon_started(struct connection_daemon *d)
{
    pthread_mutex_lock(&d->start_lock);
    d->starting = false;
    pthread_mutex_unlock(&d->start_lock);
}

/* See connection.h. */
void connection_daemon_finish(struct connection_daemon *d)
{
    pthread_mutex_destroy(&d->start_lock);
}

/* See connection.h. */
struct connection *connection_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* See connection.h. */
void connection_set_deadline(struct MHD_Connection *conn, int64_t deadline_ms)
{
    struct connection *c = connection_of(conn);
    deadline_set(c ? c->deadline : NULL, deadline_ms);
}

/* See connection.h. */
void connection_expect_progress(struct MHD_Connection *conn, uint64_t rate, unsigned window_s, unsigned grace_s,
                                uint64_t acked_base)
{
    struct connection *c = connection_of(conn);
    if (!c || !c->deadline) {
        return;
    }
    /* The idle timeout would cut a reader whose socket buffer drains
     * slowly: no write for --timeout though it takes bytes all along. */
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    c->idle_timeout_off = true;
    deadline_set_floor(c->watch, c->deadline, rate, (int64_t)window_s * 1000, (int64_t)grace_s * 1000, acked_base);
}

/* See connection.h. */
void connection_watch_file(struct MHD_Connection *conn, int fd, uint64_t end)
{
    struct connection *c = connection_of(conn);
    if (c && c->deadline) {
        c->file_watched = deadline_watch_file(c->watch, c->deadline, fd, end);
    }
}

/* See connection.h. */
void connection_expect_headers(const struct connection_daemon *d, struct MHD_Connection *conn)
{
    struct connection *c = connection_of(conn);
    if (c && c->idle_timeout_off) { /* back between requests */
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, d->timeout);
        c->idle_timeout_off = false;
    }
    if (c && c->file_watched) { /* that response is done: the file may change as it likes */
        deadline_watch_file(c->watch, c->deadline, -1, 0);
        c->file_watched = false;
    }
    connection_set_deadline(conn, clock_now_ms() + (int64_t)d->header_timeout * 1000);
}

/* Answers status on c's socket for a request libmicrohttpd dropped or would
 * answer wrongly, as respond_error would have, and shuts its write side so
 * libmicrohttpd's own bytes go nowhere and it closes; notes on c what went
 * out (nothing, when the write failed: the log says "-"). */
static void answer_instead(struct connection *c, unsigned status)
{
    char page[RESPONSE_PAGE_MAX], date[30], response[RESPONSE_PAGE_MAX + 512];
    size_t len = response_error_page(status, NULL, "", page, sizeof(page));
    precondition_date_format(time(NULL), date);
    int n = snprintf(response, sizeof(response),
                     "HTTP/1.1 %u %s\r\nDate: %s\r\nConnection: close\r\n"
                     "Content-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n\r\n%s",
                     status, MHD_get_reason_phrase_for(status), date, len, page);
    bool sent = n > 0 && (size_t)n < sizeof(response) && connection_answer(c->fd, response, (size_t)n);
    c->answered = sent ? status : 0;
    c->answered_bytes = sent ? len : 0;
    shutdown(c->fd, SHUT_WR); /* libmicrohttpd's send now fails (EPIPE) and it closes */
}

/* See connection.h. */
bool connection_answer_refused_head(const struct connection_daemon *d, unsigned status)
{
    for (struct connection *c = open_here; c; c = c->next) {
        if (c->head_pending && !c->answered && c->conn && library_refusing_head(c->conn)) {
            unsigned ours = d->refused_head ? d->refused_head(c->conn, c->request, status) : 0;
            answer_instead(c, ours ? ours : status);
            return true;
        }
    }
    return false;
}

/* See connection.h. */
void connection_note_queued(struct MHD_Connection *conn)
{
    queued_here = connection_of(conn);
}

/* See connection.h. */
bool connection_refuse_no_room(void)
{
    struct connection *c = queued_here;
    uint64_t sent;
    /* and none of its response went out: a header block built, the library
     * would have been speaking of another connection (its own answers) */
    if (!c || c->answered || c->sent_unknown || !progress_kernel_bytes(c->fd, &sent) || sent != c->sent_before) {
        return false;
    }
    answer_instead(c, 431);
    return true;
}

/* See connection.h. */
bool connection_line_starts_nul(const char *bytes, size_t n)
{
    size_t i = 0;
    while (i < n && (bytes[i] == '\r' || bytes[i] == '\n')) {
        i++;
    }
    return i < n && bytes[i] == '\0';
}

/* See connection.h: the drain in connection_answer leaves nothing unread,
 * so the close after the shutdown is a FIN that keeps the 400, not a reset. */
bool connection_refuse_nul_line(struct connection *c)
{
    char first[64];
    ssize_t n = recv(c->fd, first, sizeof(first), MSG_PEEK | MSG_DONTWAIT);
    if (n <= 0 || !connection_line_starts_nul(first, (size_t)n)) {
        return false;
    }
    answer_instead(c, 400);
    c->waiting_since_ms = -1; /* answered: nothing is awaited, nothing dropped */
    shutdown(c->fd, SHUT_RD);
    return true;
}

/* See connection.h. */
void connection_on_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct connection_daemon *d = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = fd ? connection_open(d->deadlines, fd->connect_fd,
                                               clock_now_ms() + (int64_t)d->header_timeout * 1000)
                             : NULL;
        if (*socket_context) {
            ((struct connection *)*socket_context)->conn = conn;
            connection_make_room(*socket_context, acceptor_at_cap(d->acceptor));
            if (library_skips_nul_lines()) {
                connection_refuse_nul_line(*socket_context);
            }
        }
        return;
    }
    acceptor_closed(d->acceptor); /* a slot for the next */
    struct connection *c = *socket_context;
    *socket_context = NULL;
    bool dropped = c && (c->evicted || deadline_was_expired(c->deadline));
    unsigned status = dropped ? 0 : connection_take_line_refusal(c);
    bool unread = c && connection_dropped_line(c, clock_now_ms(), d->timeout,
                                               connection_peer_state(c->fd), dropped);
    if (unread) {
        answer_instead(c, 400);
    }
    size_t answered = 0;
    if (c && c->answered) { /* now, or at the start (connection_refuse_nul_line) */
        status = c->answered;
        answered = c->answered_bytes;
    }
    connection_close(d->deadlines, c); /* before MHD closes the socket */
    if (!status && !dropped && !unread) {
        return;
    }
    struct log_record rec = {.status = status, .bytes = answered};
    const struct config *now = settings_acquire(d->settings);
    if (!now->quiet) {
        clock_gettime(CLOCK_REALTIME, &rec.time);
        log_request_line(conn, now, &rec, false);
    }
    settings_release(d->settings, now);
}

/* See connection.h. */
void connection_on_mhd_message(void *cls, const char *fmt, va_list ap)
{
    struct connection_daemon *d = cls;
    unsigned status = 0;
    switch (library_heard(fmt, ap, &status)) {
    case LIBRARY_SAID_REFUSAL: /* worth an access-log line; some are ours to answer */
        library_note_refusal(status);
        connection_answer_refused_head(d, status);
        break;
    case LIBRARY_SAID_NO_ROOM:
        connection_refuse_no_room();
        break;
    case LIBRARY_SAID_NO_POOL:
        acceptor_lost(d->acceptor, "no memory for its buffers");
        break;
    case LIBRARY_SAID_OTHER:
        break;
    }
    pthread_mutex_lock(&d->start_lock);
    if (d->starting) {
        vsnprintf(d->start_error, sizeof(d->start_error), fmt, ap);
    }
    pthread_mutex_unlock(&d->start_lock);
}
