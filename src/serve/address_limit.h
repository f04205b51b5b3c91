/* address_limit: the connections each client address holds, and
 * --per-ip-limit on them, counted by folio rather than by libmicrohttpd.
 *
 * The library's own limit (MHD_OPTION_PER_IP_CONNECTION_LIMIT) decides when
 * a socket is handed to it, on the accept thread, and counts a connection
 * until its worker has cleaned it up, a turn of that worker after the close:
 * a client that closes connections and opens new ones at once is refused
 * below its limit. And it refuses with a close, which the client sees as a
 * reset, where nginx's limit_conn answers 503 (limit_conn_status). Here a
 * connection takes one of its address's slots when it starts, gives it back
 * the moment its close is notified, and one over the limit is answered 503
 * on its first request (http.c), unless a slot has freed by then: one of a
 * connection whose client has already gone while it waited for a request
 * (the FIN is in its socket, unread by its worker) is taken back then, as
 * that connection can only close. Thread-safe: one lock, taken when a
 * connection starts and closes, and when one over the limit asks again.
 */
#ifndef FOLIO_ADDRESS_LIMIT_H
#define FOLIO_ADDRESS_LIMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>

struct address_limit;
struct address_count;

/* A connection's place in its address's count, kept in its record
 * (connection.h). Zeroed: not counted. */
struct address_hold {
    struct address_count *count;      /* its address's; NULL: not counted (no limit, not IP, no memory) */
    int fd;                           /* its socket, peeked at (address_limit_admit) until it leaves */
    bool holds;                       /* one of its address's slots is its own (under the lock) */
    atomic_bool idle;                 /* waiting for a request of which nothing was read */
    struct address_hold *prev, *next; /* its address's holders (under the lock) */
};

/* A count of connections by address, at most limit each (0: none, nothing
 * is counted). NULL when out of memory. */
struct address_limit *address_limit_create(unsigned limit);

/* Frees l (every connection has left). Accepts NULL. */
void address_limit_destroy(struct address_limit *l);

/* A connection on socket fd from addr has started: counted in h (idle),
 * with a slot of its address when one is free. False when it is over the
 * limit (address_limit_admit asks again); true when it holds a slot or is
 * not counted (l NULL or without a limit, an address that is not IP, no
 * memory: a client is never refused for folio's own shortage). IPv4 and
 * its IPv6-mapped form are one address. */
bool address_limit_enter(struct address_limit *l, struct address_hold *h, int fd, const struct sockaddr *addr);

/* The first request on h's connection: true when it may be served, for it
 * holds a slot, or takes one now (one freed meanwhile, or one taken back
 * from a holder of its address whose client has gone while it was idle).
 * False: it is over the limit (answer 503 and close). */
bool address_limit_admit(struct address_limit *l, struct address_hold *h);

/* h's connection is waiting for a request of which nothing was read (idle
 * true; when it starts, and kept alive between requests), or not. Lock-free. */
void address_hold_idle(struct address_hold *h, bool idle);

/* h's connection is closing: its slot is free at once, and h is counted no
 * longer. Before the socket is closed (its number may be peeked at until
 * then). Accepts a zeroed h. */
void address_limit_leave(struct address_limit *l, struct address_hold *h);

#endif
