#include "connection_answer.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "connection.h"
#include "library.h"
#include "precondition.h"
#include "progress.h"
#include "response.h"

/* How early before the idle timeout a close is still taken for it
 * (connection_dropped_line). */
#define IDLE_MARGIN_MS 250

/* At most this much of what a refused client sent on is read and dropped
 * before the close: enough for a pipelined request or two. */
#define DRAIN_MAX (64u << 10)

/* True when any byte was ever handed to the kernel on socket fd (sent,
 * acknowledged or queued); true when that cannot be told. */
static bool ever_written(int fd)
{
    uint64_t bytes;
    return !progress_kernel_bytes(fd, &bytes) || bytes > 0;
}

/* See connection_answer.h: a syscall only when a refusal came during the wait. */
unsigned connection_take_line_refusal(const struct connection *c)
{
    if (!c || c->waiting_since_ms < 0 || c->refusals_at_wait == library_refusals_noted() ||
        (!c->used && !ever_written(c->fd))) {
        return 0;
    }
    return library_take_refusal_since(c->refusals_at_wait);
}

/* See connection_answer.h: a peek never takes bytes from libmicrohttpd. */
enum connection_peer connection_peer_state(int fd)
{
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) {
        return CONNECTION_PEER_OPEN;
    }
    return CONNECTION_PEER_GONE;
}

/* See connection_answer.h. libmicrohttpd closes a connection that waits for a
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

/* See connection_answer.h: one non-blocking send (a few hundred bytes; a socket
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

/* See connection_answer.h: a response written whole, as http.c's would be. */
void connection_answer_instead(struct connection *c, unsigned status)
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

/* See connection_answer.h. */
bool connection_answer_refused_head(connection_verdict *verdict, unsigned status)
{
    for (struct connection *c = connection_here(); c; c = c->next) {
        if (c->head_pending && !c->answered && c->conn && library_refusing_head(c->conn)) {
            unsigned ours = verdict ? verdict(c->conn, c->request, status) : 0;
            connection_answer_instead(c, ours ? ours : status);
            return true;
        }
    }
    return false;
}

/* See connection_answer.h. */
bool connection_refuse_no_room(void)
{
    struct connection *c = connection_last_queued();
    uint64_t sent;
    /* and none of its response went out: a header block built, the library
     * would have been speaking of another connection (its own answers) */
    if (!c || c->answered || c->sent_unknown || !progress_kernel_bytes(c->fd, &sent) || sent != c->sent_before) {
        return false;
    }
    connection_answer_instead(c, 431);
    return true;
}

/* See connection_answer.h. */
bool connection_line_starts_nul(const char *bytes, size_t n)
{
    size_t i = 0;
    while (i < n && (bytes[i] == '\r' || bytes[i] == '\n')) {
        i++;
    }
    return i < n && bytes[i] == '\0';
}

/* See connection_answer.h: the drain in connection_answer leaves nothing unread,
 * so the close after the shutdown is a FIN that keeps the 400, not a reset. */
bool connection_refuse_nul_line(struct connection *c)
{
    char first[64];
    ssize_t n = recv(c->fd, first, sizeof(first), MSG_PEEK | MSG_DONTWAIT);
    if (n <= 0 || !connection_line_starts_nul(first, (size_t)n)) {
        return false;
    }
    connection_answer_instead(c, 400);
    c->waiting_since_ms = -1; /* answered: nothing is awaited, nothing dropped */
    shutdown(c->fd, SHUT_RD);
    return true;
}
