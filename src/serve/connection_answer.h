/* connection_answer: the answers folio writes on a connection's socket
 * itself, where libmicrohttpd drops a request or would answer it wrongly.
 *
 * The library drops a connection whose request line it cannot read: one
 * without a space (`GARBAGE`) or starting with one (`   `), or on 1.0 one
 * with a NUL, before any callback and without a response, where RFC 9112
 * section 3 and nginx answer 400. folio runs the daemon with MHD_USE_TURBO
 * (connection_daemon.h), so at the close it can still answer that 400
 * itself. The close notification does not say why; connection_dropped_line
 * tells the one case from every other by what is known for certain. The
 * requests libmicrohttpd answers itself are known from its log, per thread
 * (library.h); some folio answers in its stead: a head it refuses once read
 * whole (connection_answer_refused_head), the head that leaves no room for
 * a response (connection_refuse_no_room), a line of NULs the library would
 * skip (connection_refuse_nul_line). Called on the connection's worker
 * thread.
 */
#ifndef FOLIO_CONNECTION_ANSWER_H
#define FOLIO_CONNECTION_ANSWER_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct connection;

/* folio's verdict on the head of request (connection_request_started's) on
 * conn, which the library refuses with status: the status to answer
 * instead, or 0 for the library's own. */
typedef unsigned connection_verdict(struct MHD_Connection *conn, void *request, unsigned status);

/* How the peer's side of a socket looks, without reading from it. */
enum connection_peer {
    CONNECTION_PEER_OPEN, /* nothing to read yet, or more bytes waiting */
    CONNECTION_PEER_GONE, /* it sent its FIN, reset, or the socket is shut */
};

/* The peer's side of fd (a non-blocking peek). */
enum connection_peer connection_peer_state(int fd);

/* True when a close seen now can only be libmicrohttpd dropping a request
 * line it could not read: a line was awaited, the peer is still there, the
 * idle timeout (idle_timeout_s, 0 for none) cannot have fired yet, our
 * deadline did not end it, and no refusal was noted on this thread during
 * the wait (library.h: it might have been this connection's, already
 * answered). */
bool connection_dropped_line(const struct connection *c, int64_t now_ms, unsigned idle_timeout_s,
                             enum connection_peer peer, bool deadline_expired);

/* The status libmicrohttpd answered c's awaited request line with itself
 * (414, 505), taken from this thread's refusals (library.h); 0 when it did
 * not answer. Exact for a connection's first line (was anything ever
 * written to it?); for a later one, a refusal during its wait is taken to
 * be its own. */
unsigned connection_take_line_refusal(const struct connection *c);

/* Writes response (len bytes, a whole HTTP/1.1 response with Connection:
 * close) to fd without blocking, then reads and drops what the client sent
 * meanwhile so the close is not a reset that loses it. True when all went out. */
bool connection_answer(int fd, const char *response, size_t len);

/* Answers status on c's socket, as respond_error would have, and shuts its
 * write side so libmicrohttpd's own bytes go nowhere and it closes; notes
 * on c what went out (connection_answered; nothing when the write failed:
 * the log then says "-"). */
void connection_answer_instead(struct connection *c, unsigned status);

/* libmicrohttpd is refusing a request itself, on this thread, with status
 * (library.h: LIBRARY_SAID_REFUSAL). When it is refusing a head it read
 * whole (a Content-Length it cannot read, a transfer coding it does not
 * know, no Host; library_refusing_head tells which connection), folio
 * answers on the socket itself with its own verdict on that head
 * (verdict; status when it has none, or verdict is NULL) and shuts the
 * write side, so the library's own bytes go nowhere and it closes: the
 * client gets the status and page folio's handler would have given, on
 * every version, and the doubled answer one version gives a bad
 * Content-Length (library.h) never leaves. False when no connection of the
 * thread is that one (a request line, or a field line on the way, is being
 * refused: the library's answer goes out). */
bool connection_answer_refused_head(connection_verdict *verdict, unsigned status);

/* libmicrohttpd is closing, on this thread, a connection whose
 * request head left its pool no room for the response's header block: a
 * head a little under the one it refuses with 431 gets no answer at all.
 * folio answers that 431 on the socket itself and shuts its write side.
 * The connection is the one this thread last queued a response on (the
 * library builds the header block in the same pass, right after the
 * handler returns; library.h) if none of that response has gone out.
 * False when there is none. */
bool connection_refuse_no_room(void);

/* True when the n bytes a new connection sent first start a request line
 * with a NUL (after the empty lines RFC 9112 2.2 lets a server skip): where
 * libmicrohttpd takes a line whose first byte is NUL for an empty one and
 * skips it without a word (library_skips_nul_lines), nginx answers 400 at
 * once. */
bool connection_line_starts_nul(const char *bytes, size_t n);

/* On a connection just accepted: when what already arrived on c's socket
 * (a peek, never taken from libmicrohttpd) starts with such a line,
 * answers 400, shuts the socket so libmicrohttpd closes it, and keeps the
 * status for the close's log line. Bytes that come later are libmicrohttpd's
 * alone: that line is then ended by the header deadline. True when answered. */
bool connection_refuse_nul_line(struct connection *c);

#endif
