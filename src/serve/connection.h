/* connection: what folio keeps of each client connection libmicrohttpd holds.
 *
 * The registry: one record per connection (its socket, its deadline entry,
 * where its requests stand, what went out on it), listed among its worker
 * thread's open connections. Every callback of a connection runs on the
 * worker thread that took it, so a thread's list and the records on it
 * need no lock. What is done with a record lives beside: its deadlines
 * (connection_deadline.h), the answers folio writes on its socket itself
 * where libmicrohttpd drops a request or would answer it wrongly
 * (connection_answer.h), and libmicrohttpd's callbacks that drive all three
 * (connection_daemon.h). What folio relies on of the library's behaviour
 * is library.h's.
 */
#ifndef FOLIO_CONNECTION_H
#define FOLIO_CONNECTION_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "address_limit.h"
#include "deadline.h"

struct connection {
    struct deadline_entry *deadline; /* owned; NULL when out of memory */
    int fd;                          /* libmicrohttpd's socket, closed by it after connection_close */
    int64_t waiting_since_ms;        /* CLOCK_MONOTONIC ms since when a request line is awaited; -1: none is */
    uint64_t refusals_at_wait;       /* library_refusals_noted() when the wait began */
    bool used;                       /* a request line was read on it */
    bool head_pending;               /* a request line was read, our handler not yet called */
    void *request;                   /* its record (http.c's exchange) from then to its end; else NULL */
    unsigned answered;               /* the status folio wrote on the socket itself; 0: none */
    size_t answered_bytes;           /* that answer's body length */
    uint64_t sent_before;            /* bytes its earlier responses put on it, derived (progress.h) */
    bool sent_unknown;               /* one of them could not be derived: marks ask the kernel */
    struct deadline_watch *watch;    /* the deadline's watcher */
    bool idle_timeout_off;           /* connection_expect_progress took it off MHD's idle timeout */
    bool file_watched;               /* connection_watch_file gave its deadline a file */
    struct MHD_Connection *conn;     /* libmicrohttpd's, once connection_on_notify has it */
    struct address_hold address;     /* its place in its address's count (address_limit.h) */
    struct connection *prev, *next;  /* this thread's open connections (connection_open) */
};

/* Starts the record of a connection on fd, waiting for its first request
 * line, watched by w until header_deadline_ms, and lists it among this
 * thread's. NULL when out of memory. */
struct connection *connection_open(struct deadline_watch *w, int fd, int64_t header_deadline_ms);

/* Ends the record before libmicrohttpd closes the socket: stops its
 * deadline and shuts the socket's write side (a FIN after the last byte, as
 * libmicrohttpd does without MHD_USE_TURBO, connection_daemon.h). Accepts
 * NULL. */
void connection_close(struct deadline_watch *w, struct connection *c);

/* folio's record of conn (its socket context), or NULL. */
struct connection *connection_of(struct MHD_Connection *conn);

/* This thread's open connections, newest first (then each one's next). */
struct connection *connection_here(void);

/* A request line was read, its record request (kept on c until the request
 * is done): none is awaited until then. Accepts a NULL c. */
void connection_request_started(struct connection *c, void *request);

/* Our handler was called for the request: its head is libmicrohttpd's no
 * longer (see connection_answer_refused_head). Accepts NULL. */
void connection_head_checked(struct connection *c);

/* The request is wholly in (its head and the body it announced, if any) and
 * is being answered: no longer one connection_make_room may close. Until
 * then a request still arriving counts as its head does: folio reads no
 * body, so a complete head that announces one (Content-Length: 100, or
 * chunked) and sends none is a slowloris like a head that never ends.
 * Accepts NULL. */
void connection_request_whole(struct connection *c);

/* A response is being queued on conn, on this thread (connection_refuse_no_room). */
void connection_note_queued(struct MHD_Connection *conn);

/* The connection this thread last queued a response on, while no other
 * request has begun on the thread since; else NULL. */
struct connection *connection_last_queued(void);

/* The status folio answered c with itself (connection_answer.h), its body
 * length in *bytes; 0 when it did not. Accepts NULL. */
unsigned connection_answered(const struct connection *c, uint64_t *bytes);

/* The request is done; kept_alive says whether libmicrohttpd reads another
 * one on this connection (false when it closes after the response). Accepts NULL. */
void connection_request_done(struct connection *c, bool kept_alive);

/* The response that just completed on c put sent bytes on its socket, head
 * and body (progress.h); known false when they cannot be told, so every
 * later mark on c asks the kernel. Accepts NULL. */
void connection_count_sent(struct connection *c, uint64_t sent, bool known);

#endif
