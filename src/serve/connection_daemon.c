#include "connection_daemon.h"

#include <stdio.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/settings.h"
#include "address_limit.h"
#include "connection.h"
#include "connection_deadline.h"
#include "library.h"
#include "log.h"

/* See connection_daemon.h. */
void connection_daemon_init(struct connection_daemon *d, struct deadline_watch *deadlines,
                            struct settings *settings, const struct config *boot)
{
    d->deadlines = deadlines;
    d->settings = settings;
    d->header_timeout = boot->header_timeout;
    d->timeout = boot->timeout;
    d->acceptor = NULL; /* http.c's, once it listens */
    d->addresses = NULL;
    d->refused_head = NULL;
    d->start_error[0] = '\0';
    pthread_mutex_init(&d->start_lock, NULL);
    d->starting = true;
}

/* See connection_daemon.h. */
void connection_daemon_started(struct connection_daemon *d)
{
    pthread_mutex_lock(&d->start_lock);
    d->starting = false;
    pthread_mutex_unlock(&d->start_lock);
}

/* See connection_daemon.h. */
void connection_daemon_finish(struct connection_daemon *d)
{
    pthread_mutex_destroy(&d->start_lock);
}

/* See connection_daemon.h. */
void connection_on_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct connection_daemon *d = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = fd ? connection_open(d->deadlines, fd->connect_fd,
                                               clock_now_ms() + (int64_t)d->header_timeout * 1000)
                             : NULL;
        struct connection *c = *socket_context;
        if (c) {
            c->conn = conn;
            const union MHD_ConnectionInfo *peer = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
            if (address_limit_enter(d->addresses, &c->address, c->fd, peer ? peer->client_addr : NULL)) {
                connection_make_room(c, acceptor_at_cap(d->acceptor));
            } else { /* as if arriving for ever: the first to go at the cap, and none goes for it */
                deadline_set_arriving(c->deadline, 0);
            }
            if (library_skips_nul_lines()) {
                connection_refuse_nul_line(c);
            }
        }
        return;
    }
    struct connection *c = *socket_context;
    *socket_context = NULL;
    if (c) {
        address_limit_leave(d->addresses, &c->address); /* the moment it closes */
    }
    acceptor_closed(d->acceptor); /* a slot for the next */
    bool dropped = c && (deadline_was_evicted(c->deadline) || deadline_was_expired(c->deadline));
    unsigned status = dropped ? 0 : connection_take_line_refusal(c);
    bool unread = c && connection_dropped_line(c, clock_now_ms(), d->timeout,
                                               connection_peer_state(c->fd), dropped);
    if (unread) {
        connection_answer_instead(c, 400);
    }
    size_t answered = 0;
    if (c && c->answered) { /* now, or at the start (connection_refuse_nul_line) */
        status = c->answered;
        answered = c->answered_bytes;
    }
    connection_close(d->deadlines, c); /* before MHD closes the socket */
    if (!status && !dropped && !unread) {
        return;
    }
    struct log_record rec = {.status = status, .bytes = answered};
    const struct config *now = settings_acquire(d->settings);
    if (!now->quiet) {
        clock_gettime(CLOCK_REALTIME, &rec.time);
        log_request_line(conn, now, &rec, false);
    }
    settings_release(d->settings, now);
}

/* See connection_daemon.h. */
void connection_on_mhd_message(void *cls, const char *fmt, va_list ap)
{
    struct connection_daemon *d = cls;
    unsigned status = 0;
    switch (library_heard(fmt, ap, &status)) {
    case LIBRARY_SAID_REFUSAL: /* worth an access-log line; some are ours to answer */
        library_note_refusal(status);
        connection_answer_refused_head(d->refused_head, status);
        break;
    case LIBRARY_SAID_NO_ROOM:
        connection_refuse_no_room();
        break;
    case LIBRARY_SAID_NO_POOL:
        acceptor_lost(d->acceptor, "no memory for its buffers");
        break;
    case LIBRARY_SAID_OTHER:
        break;
    }
    pthread_mutex_lock(&d->start_lock);
    if (d->starting) {
        vsnprintf(d->start_error, sizeof(d->start_error), fmt, ap);
    }
    pthread_mutex_unlock(&d->start_lock);
}
