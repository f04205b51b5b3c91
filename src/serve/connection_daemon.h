/* connection_daemon: libmicrohttpd's connection and logger callbacks, which
 * keep folio's record of each connection (connection.h), its deadlines
 * (connection_deadline.h) and the answers written in the library's stead
 * (connection_answer.h).
 *
 * folio runs the daemon with MHD_USE_TURBO, which on a plain socket does
 * two things: a new connection's first read is tried at once rather than
 * after epoll reports it, and libmicrohttpd no longer shuts the write side
 * before telling us of the close (library.h). So at the close folio can
 * still answer a request line the library dropped, and then shuts the write
 * side as libmicrohttpd would have (connection_close), for every
 * connection, so the close is the same as without the flag.
 */
#ifndef FOLIO_CONNECTION_DAEMON_H
#define FOLIO_CONNECTION_DAEMON_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#include "acceptor.h"
#include "connection_answer.h"
#include "deadline.h"

struct config;
struct settings;

/* What the callbacks below share, for the daemon's life: the context of
 * MHD_OPTION_NOTIFY_CONNECTION and MHD_OPTION_EXTERNAL_LOGGER. */
struct connection_daemon {
    struct deadline_watch *deadlines; /* slow clients: see deadline.h */
    connection_verdict *refused_head; /* folio's verdict on a head the library refuses
                                       * (connection_answer.h); set before the daemon starts */
    struct settings *settings;        /* quiet and the log's: the snapshot current when a line is written */
    unsigned header_timeout, timeout; /* s: start-up settings, fixed for the daemon's life */
    struct acceptor *acceptor;        /* holds the connection limit (acceptor.h); set before the daemon starts */
    struct address_limit *addresses;  /* --per-ip-limit's count (address_limit.h); set before the daemon starts */
    pthread_mutex_t start_lock;       /* guards the two below */
    bool starting;                    /* MHD's messages are kept only while it starts */
    char start_error[256];
};

/* Readies d for a daemon about to start (its messages kept from now on),
 * bound to the start-up settings boot. */
void connection_daemon_init(struct connection_daemon *d, struct deadline_watch *deadlines,
                            struct settings *settings, const struct config *boot);

/* The daemon started, or failed to: its messages are kept no longer. */
void connection_daemon_started(struct connection_daemon *d);

/* Releases what init took. */
void connection_daemon_finish(struct connection_daemon *d);

/* MHD_OPTION_NOTIFY_CONNECTION (cls: a connection_daemon). A connection
 * opens: it gets its record and header deadline, is counted under its
 * address, and room is made for it at the limit (connection_make_room);
 * one over its address's limit makes no room, is the first to go at the
 * connection limit, and is answered 503 if it asks. It closes: its address's slot is free and the
 * acceptor may take the next (acceptor_closed); a request line
 * libmicrohttpd dropped is answered here; that, a refusal of a line it
 * could not read (414, a bad version), or a deadline that ended it before
 * its request line was whole had no request of ours, so each is logged. */
void connection_on_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code);

/* MHD_OPTION_EXTERNAL_LOGGER (cls: a connection_daemon): notes MHD's
 * refusals (library_note_refusal), answers some in its stead, and keeps its
 * last word while the daemon starts, for the start-up error. At run time MHD speaks of clients
 * that misbehave, which is not worth a line on stderr each. Its worker
 * threads call this at once: the lock keeps them off the buffer. */
void connection_on_mhd_message(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
