/* connection_deadline: how long each connection may take (deadline.h's
 * entries, moved as its requests go on).
 *
 * libmicrohttpd's idle timeout alone lets a client that trickles its head
 * or reads its response a byte at a time keep a connection for ever: here
 * a head must be whole within --header-timeout, a response be taken at
 * --send-rate, and at the connection limit the connection that has waited
 * longest for its head gives its slot to a new one. Called on the
 * connection's worker thread.
 */
#ifndef FOLIO_CONNECTION_DEADLINE_H
#define FOLIO_CONNECTION_DEADLINE_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

struct connection;

/* Moves conn's deadline to deadline_ms on the monotonic clock (0: none). */
void connection_set_deadline(struct MHD_Connection *conn, int64_t deadline_ms);

/* A response is going out on conn: off libmicrohttpd's idle timeout, it is
 * cut when its client acknowledges fewer than rate x window_s bytes in a
 * window of window_s, or fewer than rate x (elapsed - grace_s) in all
 * (deadline_set_floor; acked_base: the kernel's count at its start), until
 * connection_expect_headers puts the idle timeout back. */
void connection_expect_progress(struct MHD_Connection *conn, uint64_t rate, unsigned window_s, unsigned grace_s,
                                uint64_t acked_base);

/* conn's response is sent from bytes of file fd up to offset end: it is
 * ended at once should the file become shorter (deadline_watch_file),
 * until connection_expect_headers. */
void connection_watch_file(struct MHD_Connection *conn, int fd, uint64_t end);

/* From now on conn waits for a request's line and headers: all of them
 * within header_timeout_s, however slowly they trickle in (nginx's
 * client_header_timeout), whatever the idle timeout (idle_timeout_s, the
 * daemon's, put back if connection_expect_progress took it off) says. */
void connection_expect_headers(struct MHD_Connection *conn, unsigned header_timeout_s,
                               unsigned idle_timeout_s);

/* c's response is done (sent whole, or cut): its file is watched no longer,
 * so a file edited while the connection idles between requests ends
 * nothing. Accepts NULL. */
void connection_unwatch_file(struct connection *c);

/* The daemon holds its limit (at_cap: acceptor_at_cap), c the newest: when
 * another connection, of any worker thread, is still waiting for its
 * request (a line, the rest of the fields, or the body a complete head
 * announced; a kept-alive connection waits too), shuts down the one that
 * has waited longest (deadline_evict_oldest), so a client that sends its
 * request at once always finds a slot however many slow ones hold the rest
 * (a slowloris). False when nothing was closed. */
bool connection_make_room(const struct connection *c, bool at_cap);

#endif
