/* Tests for sse.c: the framing table, then a real MHD daemon on port 0
 * (thread pool, epoll, suspend/resume, as the server runs it) spoken to
 * over real sockets. */
#include "cmocka_prelude.h"

#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "live/sse_internal.h"
#include "test_helpers.h"

/* ---- framing ---- */

static void test_format_table(void **state)
{
    (void)state;
    static const struct {
        const char *event, *data, *want;
    } cases[] = {
        {"css", "/style.css", "event: css\ndata: /style.css\n\n"},
        {"fragment", "intro", "event: fragment\ndata: intro\n\n"},
        {NULL, "x", "data: x\n\n"},
        {"", "x", "data: x\n\n"},
        {"reload", "a\nb", "event: reload\ndata: a\ndata: b\n\n"},
        {"e", "a\r\nb\rc", "event: e\ndata: a\ndata: b\ndata: c\n\n"},
        /* A trailing newline is an empty last line (round-trips as "a\n"). */
        {"e", "a\n", "event: e\ndata: a\ndata: \n\n"},
        {"e", "\n\n", "event: e\ndata: \ndata: \ndata: \n\n"},
        {"e", "", "event: e\ndata: \n\n"},
        {"e", NULL, "event: e\ndata: \n\n"},
        {"e", ": not a comment", "event: e\ndata: : not a comment\n\n"},
        /* An event name with a line break would inject fields: refused. */
        {"a\nb", "x", ""},
        {"a\rb", "x", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[256];
        size_t n = sse_format(buf, sizeof buf, cases[i].event, cases[i].data);
        if (strcmp(buf, cases[i].want) != 0) {
            fail_msg("case %zu: got [%s] want [%s]", i, buf, cases[i].want);
        }
        assert_int_equal(n, strlen(cases[i].want));
        /* Measuring with no buffer gives the same length. */
        assert_int_equal(sse_format(NULL, 0, cases[i].event, cases[i].data), n);
    }
    /* Truncation: full length returned, what fits written, NUL-terminated. */
    char small[8];
    memset(small, 'X', sizeof small);
    assert_int_equal(sse_format(small, sizeof small, "css", "/a"), 21);
    assert_string_equal(small, "event: ");
}

/* ---- a live daemon ---- */

struct fixture {
    struct sse_hub *hub;
    struct MHD_Daemon *d;
    uint16_t port;
};

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
                               const char *url, const char *method,
                               const char *version, const char *upload,
                               size_t *upload_size, void **req_cls)
{
    (void)method;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)req_cls;
    struct fixture *f = cls;
    struct MHD_Response *r;
    unsigned status = MHD_HTTP_OK;
    if (strcmp(url, "/events") == 0) {
        r = sse_hub_attach(f->hub, conn);
        if (r == NULL) {
            status = MHD_HTTP_SERVICE_UNAVAILABLE;
            r = MHD_create_response_from_buffer(6, (void *)"closed", MHD_RESPMEM_PERSISTENT);
        }
    } else {
        r = MHD_create_response_from_buffer(5, (void *)"plain", MHD_RESPMEM_PERSISTENT);
    }
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static int start(void **state, unsigned heartbeat_ms)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->hub = sse_hub_create(heartbeat_ms, 1000);
    assert_non_null(f->hub);
    f->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
                                MHD_ALLOW_SUSPEND_RESUME,
                            0, NULL, NULL, handler, f,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)3,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
                            MHD_OPTION_END);
    assert_non_null(f->d);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
    assert_non_null(di);
    f->port = di->port;
    assert_true(f->port > 0);
    *state = f;
    return 0;
}

static int setup_slow(void **state) { return start(state, 60000); }
static int setup_fast(void **state) { return start(state, 50); }

static int teardown(void **state)
{
    struct fixture *f = *state;
    sse_hub_close(f->hub, 1000);
    MHD_stop_daemon(f->d);
    sse_hub_destroy(f->hub);
    free(f);
    return 0;
}

/* Reads fd until *seen, the 'x' bytes it delivered so far, reaches want, or
 * two seconds pass: the live client keeps pace with every broadcast. */
static bool read_xs(int fd, size_t *seen, size_t want)
{
    char scratch[65536];
    int64_t end = th_now_ms() + 2000;
    while (*seen < want) {
        int left = (int)(end - th_now_ms());
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, left) <= 0) {
            return false;
        }
        ssize_t n = read(fd, scratch, sizeof scratch);
        if (n <= 0) {
            return false;
        }
        for (ssize_t i = 0; i < n; i++) {
            *seen += scratch[i] == 'x';
        }
    }
    return true;
}

static bool wait_count(struct sse_hub *hub, size_t want, int ms)
{
    return sse_hub_await(hub, SSE_STREAMING, want, (unsigned)ms);
}

/* Every one of @want streams has sent what it had and is parked. */
static bool wait_parked(struct sse_hub *hub, size_t want, int ms)
{
    return sse_hub_await(hub, SSE_PARKED, want, (unsigned)ms);
}

static void test_headers_and_hello(void **state)
{
    struct fixture *f = *state;
    struct th_stream s = {.fd = th_open_get(f->port, "/events", 0)};
    char hello[128];
    snprintf(hello, sizeof hello, "event: hello\ndata: %s\n\n", sse_hub_instance(f->hub));
    assert_true(th_read_until(&s, hello, 2000));
    assert_non_null(strstr(s.buf, "HTTP/1.1 200"));
    assert_non_null(strstr(s.buf, "Content-Type: text/event-stream\r\n"));
    assert_non_null(strstr(s.buf, "Cache-Control: no-cache, no-transform\r\n"));
    assert_non_null(strstr(s.buf, "X-Accel-Buffering: no\r\n"));
    assert_non_null(strstr(s.buf, "Transfer-Encoding: chunked\r\n"));
    assert_null(strstr(s.buf, "Content-Length"));
    assert_non_null(strstr(s.buf, "retry: 1000\n"));
    assert_int_equal(strlen(sse_hub_instance(f->hub)), 32);
    assert_true(wait_count(f->hub, 1, 1000));
    close(s.fd);
}

static void test_one_broadcast_one_frame(void **state)
{
    struct fixture *f = *state;
    struct th_stream s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = (struct th_stream){.fd = th_open_get(f->port, "/events", 0)};
        assert_true(th_read_until(&s[i], "event: hello", 2000));
    }
    assert_true(wait_count(f->hub, 3, 1000));
    /* Parked, so the broadcast must resume each of them. */
    assert_true(wait_parked(f->hub, 3, 2000));
    assert_true(sse_hub_broadcast(f->hub, "css", "/style.css"));
    for (int i = 0; i < 3; i++) {
        assert_true(th_read_until(&s[i], "event: css\ndata: /style.css\n\n", 2000));
    }
    /* Nothing more arrives: exactly one frame per broadcast. */
    for (int i = 0; i < 3; i++) {
        th_read_until(&s[i], "never", 150);
        assert_int_equal(th_count_of(s[i].buf, "event: css"), 1);
    }
    assert_true(sse_hub_broadcast(f->hub, "reload", "a\nb"));
    assert_true(th_read_until(&s[0], "event: reload\ndata: a\ndata: b\n\n", 2000));
    assert_false(sse_hub_broadcast(f->hub, "reload", ""));
    assert_false(sse_hub_broadcast(f->hub, "bad\nname", "x"));
    for (int i = 0; i < 3; i++) {
        close(s[i].fd);
    }
}

#define MANY 120

static void test_many_streams_do_not_block(void **state)
{
    struct fixture *f = *state;
    static struct th_stream s[MANY];
    for (int i = 0; i < MANY; i++) {
        s[i] = (struct th_stream){.fd = th_open_get(f->port, "/events", 0)};
    }
    for (int i = 0; i < MANY; i++) {
        assert_true(th_read_until(&s[i], "event: hello", 3000));
    }
    assert_true(wait_count(f->hub, MANY, 2000));

    /* Idle streams are parked, not polled: each is suspended in
     * libmicrohttpd, which never polls a suspended connection, so they cost
     * no CPU while they sit there (a stream left unsuspended would make
     * its polling thread spin: sse.c). */
    assert_true(wait_parked(f->hub, MANY, 3000));

    /* A normal request on the same 3-thread daemon is answered at once. */
    for (int k = 0; k < 5; k++) {
        struct th_stream p = {.fd = th_open_get(f->port, "/page", 0)};
        assert_true(th_read_until(&p, "plain", 2000));
        assert_non_null(strstr(p.buf, "HTTP/1.1 200"));
        close(p.fd);
    }

    /* And one broadcast reaches every stream. */
    assert_true(sse_hub_broadcast(f->hub, "fragment", "intro"));
    for (int i = 0; i < MANY; i++) {
        assert_true(th_read_until(&s[i], "event: fragment\ndata: intro\n\n", 3000));
    }
    for (int i = 0; i < MANY; i++) {
        close(s[i].fd);
    }
}

static void test_disconnect_is_cleaned(void **state)
{
    struct fixture *f = *state; /* 50 ms heartbeat */
    struct th_stream s = {.fd = th_open_get(f->port, "/events", 0)};
    assert_true(th_read_until(&s, "event: hello", 2000));
    assert_true(th_read_until(&s, ": ping\n\n", 2000));
    struct th_stream t = {.fd = th_open_get(f->port, "/events", 0)};
    assert_true(th_read_until(&t, "event: hello", 2000));
    assert_true(wait_count(f->hub, 2, 1000));
    close(s.fd);
    /* The heartbeat's write fails on the dead peer; MHD closes it and the
     * response's free callback removes the client. */
    assert_true(wait_count(f->hub, 1, 3000));
    /* The live one still streams. */
    t.len = 0;
    assert_true(th_read_until(&t, ": ping\n\n", 2000));
    close(t.fd);
    assert_true(wait_count(f->hub, 0, 3000));
}

static void test_slow_reader_is_dropped(void **state)
{
    struct fixture *f = *state;
    /* A client that never reads, with a tiny receive buffer. */
    int fd = th_open_get(f->port, "/events", 2048);
    struct th_stream live = {.fd = th_open_get(f->port, "/events", 0)};
    assert_true(th_read_until(&live, "event: hello", 2000));
    assert_true(wait_count(f->hub, 2, 2000));
    static char big[4096];
    memset(big, 'x', sizeof big - 1);
    /* Up to 40 MB: far more than socket buffers plus the queue bound. The
     * live one reads each event before the next is sent, so only the stuck
     * one falls behind, however slowly MHD's threads run (ASan, valgrind). */
    size_t seen = 0;
    for (int i = 0; i < 10000 && sse_hub_client_count(f->hub) == 2; i++) {
        assert_true(sse_hub_broadcast(f->hub, "big", big));
        assert_true(read_xs(live.fd, &seen, (size_t)(i + 1) * (sizeof big - 1)));
    }
    assert_int_equal(sse_hub_client_count(f->hub), 1);
    close(fd);
    close(live.fd);
}

static void test_close_ends_streams(void **state)
{
    struct fixture *f = *state;
    struct th_stream s[2];
    for (int i = 0; i < 2; i++) {
        s[i] = (struct th_stream){.fd = th_open_get(f->port, "/events", 0)};
        assert_true(th_read_until(&s[i], "event: hello", 2000));
    }
    assert_true(wait_count(f->hub, 2, 1000));
    assert_true(wait_parked(f->hub, 2, 2000));
    assert_true(sse_hub_broadcast(f->hub, "css", "/last.css"));
    assert_true(sse_hub_close(f->hub, 2000));
    assert_int_equal(sse_hub_client_count(f->hub), 0);
    for (int i = 0; i < 2; i++) {
        /* What was queued is still delivered, then the chunked terminator. */
        assert_true(th_read_until(&s[i], "0\r\n\r\n", 2000));
        assert_non_null(strstr(s[i].buf, "data: /last.css"));
        close(s[i].fd);
    }
    /* Closed: no new streams, a clear status instead. */
    struct th_stream late = {.fd = th_open_get(f->port, "/events", 0)};
    assert_true(th_read_until(&late, "closed", 2000));
    assert_non_null(strstr(late.buf, "HTTP/1.1 503"));
    close(late.fd);
    assert_true(sse_hub_close(f->hub, 10)); /* idempotent */
}

/* A closed tab leaves the count within about a second, although the next
 * heartbeat is a minute away: the parked socket's hang-up is seen. */
static void test_closed_peer_is_dropped_between_heartbeats(void **state)
{
    struct fixture *f = *state; /* 60 s heartbeat */
    struct th_stream s = {.fd = th_open_get(f->port, "/events", 0)};
    struct th_stream t = {.fd = th_open_get(f->port, "/events", 0)};
    assert_true(th_read_until(&s, "event: hello", 2000));
    assert_true(th_read_until(&t, "event: hello", 2000));
    assert_true(wait_parked(f->hub, 2, 2000));
    close(s.fd);
    int64_t t0 = th_now_ms();
    assert_true(wait_count(f->hub, 1, (int)SSE_PEER_CHECK_MS * 3));
    assert_true(th_now_ms() - t0 < (int64_t)SSE_PEER_CHECK_MS * 3);
    /* The open one was left alone and still gets events. */
    assert_true(sse_hub_broadcast(f->hub, "css", "/after.css"));
    assert_true(th_read_until(&t, "data: /after.css", 2000));
    close(t.fd);
    assert_true(wait_count(f->hub, 0, (int)SSE_PEER_CHECK_MS * 3));
}

/* Without a daemon: a hub with no clients closes and goes. */
static void test_destroy_without_clients(void **state)
{
    (void)state;
    struct sse_hub *hub = sse_hub_create(0, 0);
    assert_non_null(hub);
    assert_int_equal(sse_hub_client_count(hub), 0);
    assert_true(sse_hub_broadcast(hub, "css", "/x.css")); /* no clients: fine */
    assert_true(sse_hub_close(hub, 0));
    sse_hub_destroy(hub);
    sse_hub_destroy(NULL);
}

/* The owner may go first: with a client attached, the hub outlives
 * sse_hub_destroy() until that client's response is freed (ASan and
 * valgrind fail a use after free here). */
static void test_destroy_order(void **state)
{
    struct fixture *f = *state;
    struct th_stream s = {.fd = th_open_get(f->port, "/events", 0)};
    assert_true(th_read_until(&s, "event: hello", 2000));
    assert_true(wait_parked(f->hub, 1, 2000));
    assert_true(sse_hub_broadcast(f->hub, "css", "/queued.css"));
    sse_hub_close(f->hub, 0); /* ends the stream, does not wait for it */
    sse_hub_destroy(f->hub);  /* the owner goes first */
    /* The stream still ends cleanly, served from the hub its response keeps. */
    assert_true(th_read_until(&s, "0\r\n\r\n", 2000));
    assert_non_null(strstr(s.buf, "data: /queued.css"));
    close(s.fd);
    MHD_stop_daemon(f->d); /* frees the last response, and with it the hub */
    free(f);
    *state = NULL;
}

static int teardown_if_any(void **state)
{
    return *state == NULL ? 0 : teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_table),
        cmocka_unit_test(test_destroy_without_clients),
        cmocka_unit_test_setup_teardown(test_destroy_order, setup_slow, teardown_if_any),
        cmocka_unit_test_setup_teardown(test_headers_and_hello, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_one_broadcast_one_frame, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_many_streams_do_not_block, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_disconnect_is_cleaned, setup_fast, teardown),
        cmocka_unit_test_setup_teardown(test_slow_reader_is_dropped, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_close_ends_streams, setup_slow, teardown),
        cmocka_unit_test_setup_teardown(test_closed_peer_is_dropped_between_heartbeats, setup_slow, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
