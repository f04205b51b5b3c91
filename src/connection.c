#include "connection.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

/* At most this much of what a refused client sent on is read and dropped
 * before the close: enough for a pipelined request or two. */
#define DRAIN_MAX (64u << 10)

/* See connection.h: a record waiting for the first request line. */
struct connection *connection_open(struct deadline_watch *w, int fd, int64_t header_deadline_ms)
{
    struct connection *c = malloc(sizeof(*c));
    if (!c) {
        return NULL;
    }
    *c = (struct connection){.deadline = deadline_add(w, fd, header_deadline_ms), .fd = fd,
                             .waiting_since_ms = deadline_now_ms()};
    return c;
}

/* See connection.h: none awaited while a request is on. */
void connection_request_started(struct connection *c)
{
    if (c) {
        c->waiting_since_ms = -1;
    }
}

/* See connection.h: the next line is awaited from now, if there is one. */
void connection_request_done(struct connection *c, bool kept_alive)
{
    if (c) {
        c->waiting_since_ms = kept_alive ? deadline_now_ms() : -1;
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

/* See connection.h. libmicrohttpd 0.9.75 closes a connection that waits for
 * a request line for these reasons only: the peer's FIN or reset (the peek
 * says GONE), the idle timeout (it fires only once the line has been awaited
 * that long: no byte came since, or the line would have been read), our
 * deadline watcher (it says so), daemon shutdown (it shuts every socket
 * first: GONE), a line too long (it answers 414 itself: refused), and the
 * line it cannot parse. */
bool connection_dropped_line(const struct connection *c, int64_t now_ms, unsigned idle_timeout_s,
                             enum connection_peer peer, bool deadline_expired, bool refused)
{
    if (!c || c->waiting_since_ms < 0 || peer != CONNECTION_PEER_OPEN || deadline_expired || refused) {
        return false;
    }
    return idle_timeout_s == 0 || now_ms - c->waiting_since_ms < (int64_t)idle_timeout_s * 1000;
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
    free(c);
}
