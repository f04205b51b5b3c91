#include "connection.h"

#include <assert.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "library.h"

/* The open connections of this thread, newest first. */
static _Thread_local struct connection *open_here;
/* The one this thread last queued a response on (connection_refuse_no_room). */
static _Thread_local struct connection *queued_here;

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
    deadline_set_arriving(c->deadline, c->waiting_since_ms);
    if (open_here) {
        open_here->prev = c;
    }
    open_here = c;
    return c;
}

/* Takes c off this thread's list of open connections. */
static void unlist(struct connection *c)
{
    /* a connection's callbacks all run on the thread that listed it (connection.h) */
    assert(c->prev ? c->prev->next == c : open_here == c);
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
struct connection *connection_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* See connection.h. */
struct connection *connection_here(void)
{
    return open_here;
}

/* See connection.h: none awaited while a request is on. */
void connection_request_started(struct connection *c, void *request)
{
    assert(!c || !c->request); /* one request at a time on a connection: the last one is done */
    if (c) {
        c->waiting_since_ms = -1;
        address_hold_idle(&c->address, false);
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
    }
}

/* See connection.h. */
void connection_request_whole(struct connection *c)
{
    if (c) {
        deadline_set_arriving(c->deadline, -1);
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
        address_hold_idle(&c->address, kept_alive);
        deadline_set_arriving(c->deadline, c->waiting_since_ms);
        c->refusals_at_wait = library_refusals_noted();
        c->head_pending = false;
        c->request = NULL;
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

/* See connection.h. */
void connection_note_queued(struct MHD_Connection *conn)
{
    queued_here = connection_of(conn);
}

/* See connection.h: a record closed is unlisted, and so forgotten here. */
struct connection *connection_last_queued(void)
{
    return queued_here;
}
