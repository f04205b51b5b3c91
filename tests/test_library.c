/* library: each behaviour of libmicrohttpd folio relies on (serve/library.h),
 * on the library linked, over a real daemon and real sockets, so a library
 * that behaves otherwise fails here rather than in production. */
#include "cmocka_prelude.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve/admission.h"
#include "serve/library.h"

/* What the daemon's callbacks saw, under a lock (they run on its thread). */
static struct {
    pthread_mutex_t lock;
    char messages[4096]; /* every log format, one a line */
    const char *uri;     /* the last URI-log callback's */
    size_t sent_length;  /* admission_sent_length of the last request */
    int closed_write;    /* send() on a socket whose close is notified: its result */
} seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_message(void *cls, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&seen.lock);
    size_t n = strlen(seen.messages);
    snprintf(seen.messages + n, sizeof(seen.messages) - n, "%s\n", fmt);
    pthread_mutex_unlock(&seen.lock);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    seen.uri = uri;
    return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **req)
{
    if (!*req) {
        *req = conn; /* the first call: answer on the second (as folio does) */
        seen.sent_length = admission_sent_length(seen.uri, strlen(seen.uri), version, 8192);
        return MHD_YES;
    }
    static char ok[] = "ok";
    struct MHD_Response *r = MHD_create_response_from_buffer(2, ok, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result q = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return q;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_ConnectionNotificationCode code)
{
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        seen.closed_write = fd ? (int)send(fd->connect_fd, "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT) : -2;
    }
}

/* A daemon like folio's (internal thread, epoll, turbo); its port in *port. */
static struct MHD_Daemon *start(uint16_t *port)
{
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_ERROR_LOG, 0, NULL, NULL,
        on_request, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        NULL, MHD_OPTION_EXTERNAL_LOGGER, on_message, NULL, MHD_OPTION_END);
    assert_non_null(d);
    *port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return d;
}

/* Sends len bytes of data to port and reads what comes back until the
 * daemon closes (5 s at most) into out; the bytes read. */
static size_t exchange(uint16_t port, const char *data, size_t len, char *out, size_t size)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(send(s, data, len, 0), (ssize_t)len);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < size && (n = recv(s, out + got, size - got - 1, 0)) > 0) {
        got += (size_t)n;
    }
    out[got] = '\0';
    close(s);
    return got;
}

static void test_the_version_is_checked(void **state)
{
    assert_true(library_is_verified("0.9.75"));
    assert_false(library_is_verified("0.9.76"));
    assert_false(library_is_verified("1.0.1"));
    assert_false(library_is_verified(NULL));
    FILE *sink = fopen("/dev/null", "w");
    bool linked = library_check(sink);
    fclose(sink);
    /* The library linked is the one verified: a new one fails here first. */
    if (!linked) {
        fail_msg("libmicrohttpd %s is linked, verified on %s: check every test below, then %s",
                 MHD_get_version(), LIBRARY_VERIFIED, "LIBRARY_VERIFIED");
    }
}

/* The refusal message says the status; the Content-Length ones exist. */
static void test_log_wording(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[4096];
    static const char bad[] = "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n";
    static const char big[] = "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 100000000000000000000000\r\n\r\n";
    exchange(port, bad, sizeof(bad) - 1, out, sizeof(out));
    /* libmicrohttpd 0.9.75's doubled answer (issue 19, 7), which folio replaces */
    assert_non_null(strstr(out, "HTTP/1.1 400"));
    exchange(port, big, sizeof(big) - 1, out, sizeof(out));
    MHD_stop_daemon(d);
    bool malformed = false, too_large = false, refusal = false;
    for (char *line = strtok(seen.messages, "\n"); line; line = strtok(NULL, "\n")) {
        malformed = malformed || library_message_is(line, LIBRARY_MSG_LENGTH_MALFORMED);
        too_large = too_large || library_message_is(line, LIBRARY_MSG_LENGTH_TOO_LARGE);
        refusal = refusal || library_message_is(line, LIBRARY_MSG_REFUSAL);
    }
    assert_true(malformed);
    assert_true(too_large);
    assert_true(refusal);
}

/* The target is parsed in place: a NUL in it is seen past the URI's end. */
static void test_the_request_line_is_parsed_in_place(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[4096];
    static const char nul[] = "GET /a\0bc HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    exchange(port, nul, sizeof(nul) - 1, out, sizeof(out));
    assert_int_equal(seen.sent_length, 5); /* "/a\0bc", not "/a" */
    MHD_stop_daemon(d);
}

/* A line it cannot parse is dropped with its socket still writable. */
static void test_a_dropped_line_leaves_the_socket_writable(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[64];
    seen.closed_write = 0;
    assert_int_equal(exchange(port, "GARBAGE\r\n", 9, out, sizeof(out)), 1);
    assert_string_equal(out, "X");
    assert_int_equal(seen.closed_write, 1);
    MHD_stop_daemon(d);
}

/* Every Connection line counts: a close on the second one ends it. */
static void test_every_connection_line_counts(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[4096];
    static const char two[] = "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n"
                              "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    exchange(port, two, sizeof(two) - 1, out, sizeof(out));
    MHD_stop_daemon(d);
    assert_non_null(strstr(out, "HTTP/1.1 200"));
    assert_null(strstr(strstr(out, "HTTP/1.1 200") + 1, "HTTP/1.1 200")); /* one answer, then the close */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_version_is_checked),
        cmocka_unit_test(test_log_wording),
        cmocka_unit_test(test_the_request_line_is_parsed_in_place),
        cmocka_unit_test(test_a_dropped_line_leaves_the_socket_writable),
        cmocka_unit_test(test_every_connection_line_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
