#include "connection_deadline.h"

#include <sys/socket.h>

#include "base/clock.h"
#include "connection.h"
#include "deadline.h"

/* See connection_deadline.h. */
void connection_set_deadline(struct MHD_Connection *conn, int64_t deadline_ms)
{
    struct connection *c = connection_of(conn);
    deadline_set(c ? c->deadline : NULL, deadline_ms);
}

/* See connection_deadline.h. */
void connection_expect_progress(struct MHD_Connection *conn, uint64_t rate, unsigned window_s, unsigned grace_s,
                                uint64_t acked_base)
{
    struct connection *c = connection_of(conn);
    if (!c || !c->deadline) {
        return;
    }
    /* The idle timeout would cut a reader whose socket buffer drains
     * slowly: no write for --timeout though it takes bytes all along. */
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    c->idle_timeout_off = true;
    deadline_set_floor(c->watch, c->deadline, rate, (int64_t)window_s * 1000, (int64_t)grace_s * 1000, acked_base);
}

/* See connection_deadline.h. */
void connection_watch_file(struct MHD_Connection *conn, int fd, uint64_t end)
{
    struct connection *c = connection_of(conn);
    if (c && c->deadline) {
        c->file_watched = deadline_watch_file(c->watch, c->deadline, fd, end);
    }
}

/* See connection_deadline.h. */
void connection_expect_headers(struct MHD_Connection *conn, unsigned header_timeout_s,
                               unsigned idle_timeout_s)
{
    struct connection *c = connection_of(conn);
    if (c && c->idle_timeout_off) { /* back between requests */
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, idle_timeout_s);
        c->idle_timeout_off = false;
    }
    connection_unwatch_file(c);
    connection_set_deadline(conn, clock_now_ms() + (int64_t)header_timeout_s * 1000);
}

/* See connection_deadline.h. */
void connection_unwatch_file(struct connection *c)
{
    if (c && c->file_watched) { /* that response is done: the file may change as it likes */
        deadline_watch_file(c->watch, c->deadline, -1, 0);
        c->file_watched = false;
    }
}

/* See connection_deadline.h: the oldest request arriving, of any thread. */
bool connection_make_room(const struct connection *c, bool at_cap)
{
    return at_cap && c->deadline && deadline_evict_oldest(c->watch, c->deadline);
}
