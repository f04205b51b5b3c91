/* connection: what folio keeps of each client connection libmicrohttpd holds.
 *
 * Per connection: its deadline entry (deadline.h) and whether it is waiting
 * for a request line; per worker thread, its open connections. The wait is
 * for a request line libmicrohttpd cannot read: one without a space
 * (`GARBAGE`) or starting with one (`   `), or on 1.0 one with a NUL. It
 * drops such a connection before any callback and without a response,
 * where RFC 9112 section 3 and nginx answer 400. folio runs the daemon with
 * MHD_USE_TURBO, which on a plain socket does two things: a new
 * connection's first read is tried at once rather than after epoll reports
 * it, and libmicrohttpd no longer shuts the write side before telling us of
 * the close (library.h). So at the close folio can still answer that 400
 * itself, and then shuts the write side as libmicrohttpd would have
 * (connection_close), for every connection, so the close is the same as
 * without the flag.
 *
 * The close notification does not say why; connection_dropped_line tells the
 * one case from every other by what is known for certain (see there). The
 * requests libmicrohttpd answers itself are known from its log, per thread
 * (library.h), and some are answered by folio in its stead
 * (connection_answer_refused_head, connection_refuse_no_room).
 */
#ifndef FOLIO_CONNECTION_H
#define FOLIO_CONNECTION_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acceptor.h"
#include "deadline.h"

struct config;
struct settings;

struct connection {
    struct deadline_entry *deadline; /* owned; NULL when out of memory */
    int fd;                          /* libmicrohttpd's socket, closed by it after connection_close */
    int64_t waiting_since_ms;        /* CLOCK_MONOTONIC ms since when a request line is awaited; -1: none is */
    uint64_t refusals_at_wait;       /* library_refusals_noted() when the wait began */
    bool used;                       /* a request line was read on it */
    bool head_pending;               /* a request line was read, our handler not yet called */
    void *request;                   /* its record (http.c's exchange) from then to its end; else NULL */
    int64_t head_since_ms;           /* CLOCK_MONOTONIC ms since when a request head is arriving; -1: none is */
    bool evicted;                    /* connection_make_room closed it, for a newer one */
    unsigned answered;               /* the status folio wrote on the socket itself; 0: none */
    size_t answered_bytes;           /* that answer's body length */
    uint64_t sent_before;            /* bytes its earlier responses put on it, derived (progress.h) */
    bool sent_unknown;               /* one of them could not be derived: marks ask the kernel */
    struct deadline_watch *watch;    /* the deadline's watcher */
    bool idle_timeout_off;           /* connection_expect_progress took it off MHD's idle timeout */
    bool file_watched;               /* connection_watch_file gave its deadline a file */
    struct MHD_Connection *conn;     /* libmicrohttpd's, once connection_on_notify has it */
    struct connection *prev, *next;  /* this thread's open connections (connection_open) */
};

/* How the peer's side of a socket looks, without reading from it. */
enum connection_peer {
    CONNECTION_PEER_OPEN, /* nothing to read yet, or more bytes waiting */
    CONNECTION_PEER_GONE, /* it sent its FIN, reset, or the socket is shut */
};

/* Starts the record of a connection on fd, waiting for its first request
 * line, watched by w until header_deadline_ms, and lists it among this
 * thread's (every callback of a connection runs on the worker thread that
 * accepted it). NULL when out of memory. */
struct connection *connection_open(struct deadline_watch *w, int fd, int64_t header_deadline_ms);

/* The status libmicrohttpd answered c's awaited request line with itself
 * (414, 505), taken from this thread's refusals (library.h); 0 when it did
 * not answer. Exact for a connection's first line (was anything ever
 * written to it?); for a later one, a refusal during its wait is taken to
 * be its own. */
unsigned connection_take_line_refusal(const struct connection *c);

/* A request line was read, its record request (kept on c until the request
 * is done): none is awaited until then. Accepts a NULL c. */
void connection_request_started(struct connection *c, void *request);

/* Our handler was called for the request: its head is libmicrohttpd's no
 * longer (see connection_answer_refused_head). Accepts NULL. */
void connection_head_checked(struct connection *c);

struct connection_daemon;

/* libmicrohttpd is refusing a request itself, on this thread, with status
 * (library.h: LIBRARY_SAID_REFUSAL). When it is refusing a head it read
 * whole (a Content-Length it cannot read, a transfer coding it does not
 * know, no Host; library_refusing_head tells which connection), folio
 * answers on the socket itself with its own verdict on that head
 * (d->refused_head; status when it has none) and shuts the write side, so
 * the library's own bytes go nowhere and it closes: the client gets the
 * status and page folio's handler would have given, on every version, and
 * the doubled answer one version gives a bad Content-Length (library.h)
 * never leaves. False when no connection of the thread is that one
 * (a request line, or a field line on the way, is being refused: the
 * library's answer goes out). */
bool connection_answer_refused_head(const struct connection_daemon *d, unsigned status);

/* A response is being queued on conn, on this thread (connection_refuse_no_room). */
void connection_note_queued(struct MHD_Connection *conn);

/* libmicrohttpd is closing, on this thread, a connection whose
 * request head left its pool no room for the response's header block: a
 * head a little under the one it refuses with 431 gets no answer at all.
 * folio answers that 431 on the socket itself and shuts its write side.
 * The connection is the one this thread last queued a response on (the
 * library builds the header block in the same pass, right after the
 * handler returns; library.h) if none of that response has gone out.
 * False when there is none. */
bool connection_refuse_no_room(void);

/* The daemon holds its limit (at_cap: acceptor_at_cap), c the newest: when
 * one of this thread's others is still waiting for its request head (a
 * line, or the rest of the fields; a kept-alive connection waits too),
 * shuts down the one that has waited longest, so a client that sends its
 * request at once always finds a slot however many slow ones hold the rest
 * (a slowloris). Its socket is shut as the deadline watcher's are:
 * libmicrohttpd sees the end on its next read and closes it, and its close
 * lets the acceptor take the next. False when nothing was closed. */
bool connection_make_room(const struct connection *c, bool at_cap);

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

/* The status folio answered c with itself (connection_answer_refused_head),
 * its body length in *bytes; 0 when it did not. Accepts NULL. */
unsigned connection_answered(const struct connection *c, uint64_t *bytes);

/* The request is done; kept_alive says whether libmicrohttpd reads another
 * one on this connection (false when it closes after the response). Accepts NULL. */
void connection_request_done(struct connection *c, bool kept_alive);

/* The response that just completed on c put sent bytes on its socket, head
 * and body (progress.h); known false when they cannot be told, so every
 * later mark on c asks the kernel. Accepts NULL. */
void connection_count_sent(struct connection *c, uint64_t sent, bool known);

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

/* Writes response (len bytes, a whole HTTP/1.1 response with Connection:
 * close) to fd without blocking, then reads and drops what the client sent
 * meanwhile so the close is not a reset that loses it. True when all went out. */
bool connection_answer(int fd, const char *response, size_t len);

/* Ends the record before libmicrohttpd closes the socket: stops its
 * deadline and shuts the socket's write side (a FIN after the last byte, as
 * libmicrohttpd does without MHD_USE_TURBO). Accepts NULL. */
void connection_close(struct deadline_watch *w, struct connection *c);

/* ---- libmicrohttpd's side: its connection and logger callbacks ---- */

/* What the callbacks below share, for the daemon's life: the context of
 * MHD_OPTION_NOTIFY_CONNECTION and MHD_OPTION_EXTERNAL_LOGGER. */
struct connection_daemon {
    struct deadline_watch *deadlines; /* slow clients: see deadline.h */
    /* folio's verdict on the head of request (connection_request_started's)
     * on conn, which the library refuses with status: the status to answer
     * instead, or 0 for the library's own; set before the daemon starts */
    unsigned (*refused_head)(struct MHD_Connection *conn, void *request, unsigned status);
    struct settings *settings;        /* quiet and the log's: the snapshot current when a line is written */
    unsigned header_timeout, timeout; /* s: start-up settings, fixed for the daemon's life */
    struct acceptor *acceptor;        /* holds the connection limit (acceptor.h); set before the daemon starts */
    pthread_mutex_t start_lock;       /* guards the two below */
    bool starting;                    /* MHD's messages are kept only while it starts */
    char start_error[256];
};

/* A response is going out on conn: off libmicrohttpd's idle timeout, it is
 * cut when its client acknowledges fewer than rate x window_s bytes in a
 * window of window_s, or fewer than rate x (elapsed - grace_s) in all
 * (deadline_set_floor; acked_base: the kernel's count at its start), until connection_expect_headers puts the idle timeout back. */
void connection_expect_progress(struct MHD_Connection *conn, uint64_t rate, unsigned window_s, unsigned grace_s,
                                uint64_t acked_base);

/* conn's response is sent from bytes of file fd up to offset end: it is
 * ended at once should the file become shorter (deadline_watch_file),
 * until connection_expect_headers. */
void connection_watch_file(struct MHD_Connection *conn, int fd, uint64_t end);

/* Readies d for a daemon about to start (its messages kept from now on),
 * bound to the start-up settings boot. */
void connection_daemon_init(struct connection_daemon *d, struct deadline_watch *deadlines,
                            struct settings *settings, const struct config *boot);

/* The daemon started, or failed to: its messages are kept no longer. */
void connection_daemon_started(struct connection_daemon *d);

/* Releases what init took. */
void connection_daemon_finish(struct connection_daemon *d);

/* folio's record of conn (its socket context), or NULL. */
struct connection *connection_of(struct MHD_Connection *conn);

/* Moves conn's deadline to deadline_ms on the monotonic clock (0: none). */
void connection_set_deadline(struct MHD_Connection *conn, int64_t deadline_ms);

/* From now on conn waits for a request's line and headers: all of them
 * within --header-timeout, however slowly they trickle in (nginx's
 * client_header_timeout), whatever the idle timeout says. */
void connection_expect_headers(const struct connection_daemon *d, struct MHD_Connection *conn);

/* MHD_OPTION_NOTIFY_CONNECTION (cls: a connection_daemon). A connection
 * opens: it gets its record and header deadline, and room is made for it
 * at the limit (connection_make_room). It closes: the acceptor may take the
 * next (acceptor_closed); a request line
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
