#pragma once
/* folio's own accept loop, in front of libmicrohttpd's worker pool.
 *
 * libmicrohttpd lets every worker of its pool accept from the one
 * listening socket, up to ten connections a turn, so a burst of connections
 * (a load balancer filling its pool, nginx's upstream keepalive, wrk -c32)
 * lands on whichever worker woke first, and stays there for as long as each
 * is kept alive: one worker does nearly all the work (bench/README.md,
 * Measurements behind the code). Here one
 * thread accepts and hands each socket to MHD_add_connection, which gives it
 * to a worker with room, chosen by the descriptor's number, so in turn
 * (library.h). The
 * daemon runs with MHD_USE_NO_LISTEN_SOCKET; its accept policy applies to
 * added sockets as to its own (the per-address limit is folio's:
 * address_limit.h). The connection
 * limit is kept here, as a count of the sockets handed over and not yet
 * closed: libmicrohttpd's own splits the limit evenly among the workers and
 * counts a socket only once its worker takes it, so a burst handed over
 * faster than the workers take them would be closed by it at once. A
 * worker that cannot start serving a socket handed to it (no memory for its
 * pool) closes it without a notification but with a log message, which
 * gives the slot back (acceptor_lost): uncounted, a thousand failed
 * allocations under memory pressure would have stopped folio accepting for
 * good. */

#include <microhttpd.h>
#include <stdbool.h>
#include <sys/socket.h>

struct acceptor;

/* A non-blocking socket bound to addr and listening (both families for
 * "::", as nginx's ipv6only=off); -1 with errno set when it cannot be had. */
int acceptor_listen(const struct sockaddr_storage *addr);

/* An acceptor of listen_fd (taken, closed by acceptor_destroy, or here on
 * failure) that holds the daemon to limit connections: past it, new ones
 * wait in the listen backlog, as they did in libmicrohttpd's own accept.
 * NULL when out of memory. */
struct acceptor *acceptor_create(int listen_fd, unsigned limit);

/* Starts accepting into d, from a thread of its own; false if it cannot. */
bool acceptor_start(struct acceptor *a, struct MHD_Daemon *d);

/* A connection handed to the daemon has closed (MHD_CONNECTION_NOTIFY_CLOSED):
 * one more may be accepted. Any thread. */
void acceptor_closed(struct acceptor *a);

/* libmicrohttpd has logged that it closed a socket it never started
 * serving (library.h: LIBRARY_MSG_NO_POOL), for reason: on a worker's
 * thread, one handed over and never to be notified, so its slot is free and
 * stderr hears of it (once a minute at most); on the accept thread,
 * MHD_add_connection's own refusal, which that thread counts back itself.
 * Any thread. */
void acceptor_lost(struct acceptor *a, const char *reason);

/* True when the daemon holds the limit: room is made (connection_make_room). */
bool acceptor_at_cap(const struct acceptor *a);

/* How many connections wait in the listen backlog for a slot while the
 * daemon holds the limit (0 below it; no accept). Any thread; the deadline
 * watcher asks (deadline_set_room). */
unsigned acceptor_waiting(void *a);

/* The port the socket is bound to (the one picked, for port 0). */
unsigned acceptor_port(const struct acceptor *a);

/* Stops accepting and joins (before MHD_stop_daemon: the thread adds to d).
 * Accepts NULL and a stopped or never started acceptor. */
void acceptor_stop(struct acceptor *a);

/* Closes the socket and frees a (after MHD_stop_daemon, whose closes call
 * acceptor_closed). Accepts NULL. */
void acceptor_destroy(struct acceptor *a);
