/* library: each behaviour of libmicrohttpd folio relies on (serve/library.h),
 * on the library linked, over a real daemon and real sockets, so a library
 * that behaves otherwise fails here rather than in production. Where the
 * versions differ, each row says what each does: "old" is 0.9.75's
 * behaviour, "new" 1.0's (0.9.77 and later). */
#include "cmocka_prelude.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "serve/library.h"

#define LEN(s) (sizeof(s) - 1) /* string literals may hold NULs */

/* True when the linked library is a new one (1.0's parser and API). */
static bool new_library(void)
{
    const char *v = MHD_get_version();
    return strncmp(v, "0.9.", 4) != 0 || atoi(v + 4) >= 77;
}

/* What the daemon's callbacks saw. They run on its thread and the test reads
 * after a reply came over a socket, an order ThreadSanitizer cannot see: what
 * both threads touch is atomic; uri and conn stay on the daemon's thread. */
static struct {
    pthread_mutex_t lock;      /* on_message's answer in the library's stead */
    const char *uri;           /* the last URI-log callback's */
    size_t uri_length;         /* its length then */
    _Atomic size_t target_length; /* library_target_length of the last request */
    atomic_bool block_known;   /* library_header_block gave bounds for it */
    atomic_bool fields_in_block; /* and every field of it lay within them */
    atomic_bool write_at_close; /* on_connection writes "X" on a socket whose close is notified */
    atomic_int closed_write;   /* and the send()'s result */
    atomic_bool answer_refused; /* on_message answers a refused head in the library's stead */
    atomic_bool no_room;       /* LIBRARY_SAID_NO_ROOM was heard */
    atomic_uint refused;       /* the status of the last LIBRARY_SAID_REFUSAL */
    atomic_bool answered_instead; /* a refused head was answered in the library's stead */
    struct MHD_Connection *conn; /* the last connection started */
} seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_message(void *cls, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&seen.lock);
    unsigned status = 0;
    enum library_said said = library_heard(fmt, ap, &status);
    seen.no_room = seen.no_room || said == LIBRARY_SAID_NO_ROOM;
    if (said == LIBRARY_SAID_REFUSAL) {
        seen.refused = status;
        /* what connection_answer_refused_head does, on the one connection */
        if (seen.answer_refused && seen.conn && library_refusing_head(seen.conn)) {
            int fd = MHD_get_connection_info(seen.conn, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
            static const char ours[] = "HTTP/1.1 418 ours\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
            seen.answered_instead = send(fd, ours, LEN(ours), MSG_NOSIGNAL) == (ssize_t)LEN(ours);
            shutdown(fd, SHUT_WR);
        }
    }
    pthread_mutex_unlock(&seen.lock);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    seen.uri = uri;
    seen.uri_length = strlen(uri);
    return NULL;
}

/* One field for in_block: false (stop) at one outside the bounds cls holds. */
static enum MHD_Result field_in_block(void *cls, enum MHD_ValueKind kind, const char *name, size_t name_len,
                                      const char *value, size_t value_len)
{
    const char **bounds = cls;
    bool in = name >= bounds[0] && name + name_len <= bounds[1] && (value_len == 0 || value + value_len <= bounds[1]);
    seen.fields_in_block = seen.fields_in_block && in;
    return in ? MHD_YES : MHD_NO;
}

/* Answers "ok" on the second call, as folio does; the first notes what the
 * library tells of the request line and the header block. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **req)
{
    if (!*req) {
        *req = conn;
        seen.target_length = library_target_length(seen.uri, seen.uri_length, version, 8192);
        const char *bounds[2];
        seen.block_known = library_header_block(conn, method, version, &bounds[0], &bounds[1]);
        seen.fields_in_block = seen.block_known;
        if (seen.block_known) {
            MHD_get_connection_values_n(conn, MHD_HEADER_KIND, field_in_block, bounds);
        }
        return MHD_YES;
    }
    if (*upload_size > 0) {
        *upload_size = 0;
        return MHD_YES;
    }
    static char ok[] = "ok";
    struct MHD_Response *r = MHD_create_response_from_buffer(2, ok, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result q = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return q;
}

/* Counts the log messages of a daemon (test_the_daemon_options). */
static atomic_int messages;
static void count_messages(void *cls, const char *fmt, va_list ap)
{
    atomic_fetch_add(&messages, 1);
}

/* Answers "ok" on the first call (the connection then ends, body or not). */
static enum MHD_Result answer_at_once(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                      const char *version, const char *upload, size_t *upload_size, void **req)
{
    static char ok[] = "ok";
    struct MHD_Response *r = MHD_create_response_from_buffer(2, ok, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result q = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return q;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_ConnectionNotificationCode code)
{
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        seen.conn = conn;
        return;
    }
    seen.conn = NULL;
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (seen.write_at_close) {
        seen.closed_write = fd ? (int)send(fd->connect_fd, "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT) : -2;
    }
}

/* A daemon like folio's (internal thread, epoll, turbo, the library's
 * options), handler answering; its port in *port. */
static struct MHD_Daemon *start_with(MHD_AccessHandlerCallback handler, uint16_t *port)
{
    struct MHD_OptionItem options[LIBRARY_OPTIONS_MAX];
    library_daemon_options(options, 64, 1);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_ERROR_LOG, 0, NULL, NULL,
        handler, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        NULL, MHD_OPTION_EXTERNAL_LOGGER, on_message, NULL, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    assert_non_null(d);
    *port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return d;
}

static struct MHD_Daemon *start(uint16_t *port)
{
    return start_with(on_request, port);
}

/* A socket connected to port on 127.0.0.1, its reads bounded to 5 s. */
static int connected(uint16_t port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
    return s;
}

/* Sends len bytes of data to port and reads what comes back until the
 * daemon closes (5 s at most) into out; the bytes read. */
static size_t exchange(uint16_t port, const char *data, size_t len, char *out, size_t size)
{
    int s = connected(port);
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

/* The status of the first response in out; 0 for none. */
static unsigned status_in(const char *out)
{
    unsigned status = 0;
    sscanf(out, "HTTP/1.1 %u", &status);
    return status;
}

/* The versions verified start silently; another is said in one line that
 * names it and tells what it means, never sending the user to a test a
 * release build does not have. */
static void test_the_version_is_checked(void **state)
{
    assert_true(library_verified("0.9.75", NULL));
    assert_true(library_verified("1.0.1", NULL));
    assert_false(library_verified(NULL, NULL));
    char said[512] = "";
    FILE *err = fmemopen(said, sizeof(said), "w");
    assert_false(library_verified("1.0.4", err));
    fclose(err);
    assert_non_null(strstr(said, "libmicrohttpd 1.0.4"));
    assert_non_null(strstr(said, "0.9.75 and 1.0.1"));
    assert_null(strstr(said, "test_library"));
    assert_int_equal(strchr(said, '\n') - said + 1, (long)strlen(said)); /* one line */
    /* The library linked is one verified: a new one fails here first. */
    said[0] = '\0';
    err = fmemopen(said, sizeof(said), "w");
    bool linked = library_verified(MHD_get_version(), err);
    fclose(err);
    if (!linked) {
        fail_msg("%s: check every test below, then add it to library.c's verified", said);
    }
    assert_string_equal(said, "");
}

/* The log: a refusal says its status, before the library's answer goes
 * out, on the connection's thread; a head refused once read whole is the
 * one library_refusing_head names, and an answer written then in the
 * library's stead is the one the client gets. */
static void test_a_refused_head_can_be_answered_in_the_librarys_stead(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[4096];
    static const char bad[] = "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n";
    seen.answered_instead = false;
    seen.answer_refused = true;
    exchange(port, bad, LEN(bad), out, sizeof(out));
    assert_int_equal(seen.refused, 400);
    assert_true(seen.answered_instead);
    assert_string_equal(out, "HTTP/1.1 418 ours\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    /* a refused line is no refused head: the library's own answer goes out */
    static const char version[] = "GET / HTTP/9.9\r\nHost: h\r\n\r\n";
    seen.answered_instead = false;
    exchange(port, version, LEN(version), out, sizeof(out));
    assert_int_equal(seen.refused, 505);
    assert_false(seen.answered_instead);
    assert_int_equal(status_in(out), 505);
    seen.answer_refused = false;
    MHD_stop_daemon(d);
}

/* The request line: on an old library parsed in place (a NUL cuts the
 * target's string, the version starts one past its true end); a new one
 * closes on a NUL before any callback. */
static void test_a_nul_in_the_target(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[4096];
    static const char nul[] = "GET /a\0bc HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    seen.target_length = 0;
    size_t got = exchange(port, nul, LEN(nul), out, sizeof(out));
    size_t cut = seen.target_length;
    static const char query[] = "GET /a?q HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    exchange(port, query, LEN(query), out + 1024, sizeof(out) - 1024);
    assert_int_equal(seen.target_length, 4); /* the query is the target's, whatever the library does to it */
    seen.target_length = cut;
    MHD_stop_daemon(d);
    if (new_library()) {
        assert_int_equal(got, 0);
        assert_int_equal(seen.target_length, 0); /* the handler never ran */
    } else {
        assert_int_equal(status_in(out), 200);
        assert_int_equal(seen.target_length, 5); /* "/a\0bc", not "/a" */
    }
    /* the arithmetic alone, on a line laid out in place */
    char line[] = "/a\0b\0HTTP/1.1";
    size_t in_place = new_library() ? 2 : 4;
    assert_int_equal(library_target_length(line, 2, line + 5, 100), in_place);
    assert_int_equal(library_target_length(line, 2, line + 5, 3), 2);   /* past the limit */
    assert_int_equal(library_target_length(line, 2, line, 100), 2);     /* a copy elsewhere */
    assert_int_equal(library_target_length(line, 2, line + 3, 100), 2); /* exactly its own length */
}

/* The header block: on an old library the fields lie between the version's
 * end and the head's end (library_header_block); a new one gives none. */
static void test_the_header_block(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[4096];
    static const char head[] = "GET / HTTP/1.1\r\nHost: h\r\nX-A:  a b \r\nX-B:\r\nConnection: close\r\n\r\n";
    exchange(port, head, LEN(head), out, sizeof(out));
    MHD_stop_daemon(d);
    assert_int_equal(status_in(out), 200);
    assert_int_equal(seen.block_known, !new_library());
    assert_int_equal(seen.fields_in_block, !new_library());
}

/* What reaches the handler, request by request: an old library hands folio
 * these heads to judge; a new one, under library_daemon_options, refuses
 * many itself. (folio's admission refuses every one that reaches it but
 * the plain ones.) 0: the handler answered (200); -1: closed unanswered. */
static void test_what_reaches_the_handler(void **state)
{
#define ROW(text, old, new) {text, LEN(text), old, new}
    static const struct {
        const char *data;
        size_t len;
        int old, new;
    } rows[] = {
        ROW("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", 0, 400),
        ROW("GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n", 0, 0),
        ROW("GET /a  HTTP/1.1\r\nHost: h\r\n\r\n", 0, 400),
        ROW("GET /a HTTP/1.1\nHost: h\n\n", 0, 400),           /* bare LF line ends */
        ROW("\r\n\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, -1), /* two empty lines first */
        ROW("\0\0\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, -1),  /* a line of NULs: skipped, or closed */
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n", 0, 400),
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nX-A: a\0b\r\n\r\n", 0, 400),
        ROW("GET /a HTTP/1.1\r\nHost: h\r\n:foo: 1\r\n\r\n", 0, 400),
        ROW("GET /a HTTP/1.1\r\nHost: h\r\na b: 1\r\n\r\n", 0, 400),
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n", 0, 400), /* a folded line */
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nnocolon\r\n\r\n", 400, 400),
        ROW("GET /a HTTP/1.1\r\n\r\n", 0, 400),                    /* no Host */
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 0, 400),
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
            0, 400),
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n", 400, 400),
        /* a second length is read by neither (1.0.4 refuses it): folio's to refuse */
        ROW("GET /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello", 0, 0),
        ROW("GET /a HTTP/9.9\r\nHost: h\r\n\r\n", 505, 505),
    };
#undef ROW
    uint16_t port;
    struct MHD_Daemon *d = start_with(answer_at_once, &port);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char out[4096];
        size_t got = exchange(port, rows[i].data, rows[i].len, out, sizeof(out));
        int want = new_library() ? rows[i].new : rows[i].old;
        int status = got == 0 ? -1 : (int)status_in(out);
        if (status != (want == 0 ? 200 : want)) {
            print_message("row %zu: %d, not %d\n", i, status, want);
        }
        assert_int_equal(status, want == 0 ? 200 : want);
    }
    MHD_stop_daemon(d);
    assert_int_equal(library_skips_nul_lines(), !new_library());
}

/* The options: a pool only past one worker (the library warns of a pool of
 * one), a limit of its own that never binds before folio's, the discipline
 * on a new library; a daemon takes them without a word in its log. */
static void test_the_daemon_options(void **state)
{
    struct MHD_OptionItem items[LIBRARY_OPTIONS_MAX];
    for (unsigned threads = 0; threads <= 3; threads++) {
        library_daemon_options(items, 100, threads);
        bool pool = false, discipline = false;
        size_t i = 0;
        for (; items[i].option != MHD_OPTION_END; i++) {
            pool = pool || items[i].option == MHD_OPTION_THREAD_POOL_SIZE;
            discipline = discipline || (int)items[i].option == 38; /* MHD_OPTION_CLIENT_DISCIPLINE_LVL */
            if (items[i].option == MHD_OPTION_CONNECTION_LIMIT) {
                assert_int_equal(items[i].value, 200 * (threads > 1 ? threads : 1));
            }
        }
        assert_true(i < LIBRARY_OPTIONS_MAX);
        assert_int_equal(pool, threads > 1);
        assert_int_equal(discipline, new_library());
        struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG,
                                                0, NULL, NULL, answer_at_once, NULL, MHD_OPTION_EXTERNAL_LOGGER,
                                                count_messages, NULL, MHD_OPTION_ARRAY, items, MHD_OPTION_END);
        assert_non_null(d);
        MHD_stop_daemon(d);
    }
    assert_int_equal(atomic_load(&messages), 0);
    library_daemon_options(items, UINT_MAX, 8);
    assert_int_equal(items[0].value, UINT_MAX); /* capped, never wrapped */
}

/* A line it cannot parse is dropped with its socket still writable. */
static void test_a_dropped_line_leaves_the_socket_writable(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[64];
    seen.closed_write = 0;
    seen.write_at_close = true;
    assert_int_equal(exchange(port, "GARBAGE\r\n", 9, out, sizeof(out)), 1);
    seen.write_at_close = false;
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

/* A response queued on the handler's first call ends the connection: the
 * request pipelined after it gets nothing (http.c answers on the second). */
static void test_an_answer_on_the_first_call_ends_the_connection(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start_with(answer_at_once, &port);
    char out[4096];
    static const char two[] = "GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n";
    exchange(port, two, LEN(two), out, sizeof(out));
    MHD_stop_daemon(d);
    assert_int_equal(status_in(out), 200);
    assert_null(strstr(strstr(out, "HTTP/1.1 200") + 1, "HTTP/1.1"));
}

/* A connection waiting for a request, nothing of it read, closes at its
 * client's end, before its first request and kept alive after one
 * (address_limit.h takes such a connection's slot back before it does). */
static void test_an_idle_connection_closes_at_its_clients_end(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start(&port);
    char out[512];
    int fresh = connected(port);
    shutdown(fresh, SHUT_WR);
    assert_int_equal(recv(fresh, out, sizeof(out), 0), 0); /* the close, not the 5 s timeout */
    close(fresh);
    int kept = connected(port);
    static const char get[] = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    assert_int_equal(send(kept, get, LEN(get), 0), (ssize_t)LEN(get));
    size_t got = 0;
    ssize_t n = 0;
    while ((got < 4 || memcmp(out + got - 4, "\r\nok", 4) != 0) && got < sizeof(out) &&
           (n = recv(kept, out + got, sizeof(out) - got, 0)) > 0) {
        got += (size_t)n;
    }
    assert_true(got >= 4 && memcmp(out, "HTTP/1.1 200", 12) == 0);
    shutdown(kept, SHUT_WR);
    assert_int_equal(recv(kept, out, sizeof(out), 0), 0);
    close(kept);
    MHD_stop_daemon(d);
}

/* library_not_modified: a 304 the client reads the next response after,
 * with the representation's Content-Length on an old library, none on a new
 * one (as nginx). */
static enum MHD_Result answer_not_modified(void *cls, struct MHD_Connection *conn, const char *url,
                                           const char *method, const char *version, const char *upload,
                                           size_t *upload_size, void **req)
{
    if (!*req) {
        *req = conn;
        return MHD_YES;
    }
    struct MHD_Response *r = library_not_modified(1234);
    enum MHD_Result q = MHD_queue_response(conn, 304, r);
    MHD_destroy_response(r);
    return q;
}

static void test_a_304_and_the_next_response(void **state)
{
    uint16_t port;
    struct MHD_Daemon *d = start_with(answer_not_modified, &port);
    char out[4096];
    static const char two[] = "GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    exchange(port, two, LEN(two), out, sizeof(out));
    MHD_stop_daemon(d);
    const char *second = strstr(out + 1, "HTTP/1.1 304");
    assert_non_null(second); /* kept alive: the second answer came after the first */
    char first[2048];
    snprintf(first, sizeof(first), "%.*s", (int)(second - out), out);
    assert_int_equal(strstr(first, "Content-Length: 1234\r\n") != NULL, library_not_modified_has_length());
    assert_null(strstr(first, "Content-Length: 0"));
    assert_int_equal(library_not_modified_has_length(), !new_library());
}

/* ---- the response mutex: one fd-backed response shared by two threads ---- */

/* The gate in the sendfile below. Only the responses of the mutex test send
 * from a file, so every call is theirs. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t moved;
    bool hold;     /* the next call waits at the gate (once) */
    bool held;     /* that call is at the gate */
    bool released; /* the test let it go */
} sf = {.lock = PTHREAD_MUTEX_INITIALIZER, .moved = PTHREAD_COND_INITIALIZER};

/* libmicrohttpd's sendfile, interposed (the executable's symbol comes
 * first): the first call after sf.hold is set waits inside the call until
 * the test releases it (10 s at most), so whatever libmicrohttpd holds
 * around it is held until then. */
ssize_t sendfile64(int out, int in, off64_t *offset, size_t count)
{
    static ssize_t (*real)(int, int, off64_t *, size_t);
    if (!real) {
        void *next = dlsym(RTLD_NEXT, "sendfile64");
        memcpy(&real, &next, sizeof(real)); /* ISO C has no object-to-function cast */
    }
    pthread_mutex_lock(&sf.lock);
    if (sf.hold) {
        sf.hold = false;
        sf.held = true;
        pthread_cond_broadcast(&sf.moved);
        struct timespec until = clock_deadline(CLOCK_REALTIME, 10000);
        while (!sf.released && pthread_cond_timedwait(&sf.moved, &sf.lock, &until) == 0) {
        }
    }
    pthread_mutex_unlock(&sf.lock);
    return real(out, in, offset, count);
}

/* Waits (2 s at most) until the held call is at the gate; whether it is. */
static bool sf_wait_held(void)
{
    struct timespec until = clock_deadline(CLOCK_REALTIME, 2000);
    pthread_mutex_lock(&sf.lock);
    while (!sf.held && pthread_cond_timedwait(&sf.moved, &sf.lock, &until) == 0) {
    }
    bool held = sf.held;
    pthread_mutex_unlock(&sf.lock);
    return held;
}

/* Sets the gate (hold) or lets the held call go. */
static void sf_set(bool hold)
{
    pthread_mutex_lock(&sf.lock);
    sf.hold = hold;
    sf.held = sf.held && !hold;
    sf.released = !hold;
    pthread_cond_broadcast(&sf.moved);
    pthread_mutex_unlock(&sf.lock);
}

/* How long the shared case waits for a body that must not come while A's
 * sendfile is held: a bound on a negative, not a window the result needs. */
#define MUTEX_WAIT_MS 400

#define MUTEX_BODY (1u << 20)

/* The responses the daemon answers with: shared for every request, or
 * own[i] for the i-th (a response per connection, on its own dup). */
static struct {
    struct MHD_Response *shared, *own[2];
    atomic_int asked;
    bool per_connection;
} fd_answers;

static enum MHD_Result on_file_request(void *cls, struct MHD_Connection *conn, const char *url,
                                       const char *method, const char *version, const char *upload,
                                       size_t *upload_size, void **req)
{
    if (!*req) {
        *req = conn;
        return MHD_YES;
    }
    int i = atomic_fetch_add(&fd_answers.asked, 1);
    struct MHD_Response *r = fd_answers.per_connection ? fd_answers.own[i % 2] : fd_answers.shared;
    return MHD_queue_response(conn, 200, r);
}

/* A connection to port that has asked for "/": its socket. */
static int ask(uint16_t port)
{
    int s = connected(port);
    static const char get[] = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    assert_int_equal(send(s, get, sizeof(get) - 1, 0), (ssize_t)(sizeof(get) - 1));
    return s;
}

/* Reads s up to its first body byte (the header block, then one byte),
 * waiting @ms at most; true when that byte came. *matched keeps how much
 * of the blank line was read, so a later call goes on from there. */
static bool body_byte_within(int s, int *matched, int ms)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long left = ms - ((now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000);
        struct pollfd p = {.fd = s, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            return false;
        }
        char c;
        assert_int_equal(recv(s, &c, 1, 0), 1);
        if (*matched == 4) {
            return true;
        }
        *matched = c == "\r\n\r\n"[*matched] ? *matched + 1 : c == '\r';
    }
}

/* On a daemon like folio's (a pool of two epoll threads), connection A's
 * first sendfile is held at the gate; B asks meanwhile and is accepted by
 * the other thread (A's waits). Whether B's first body byte came within
 * @ms while A was held; B's body comes once A goes, either way. */
static bool second_connection_sent_meanwhile(bool per_connection, int ms)
{
    char path[] = "/tmp/folio-mutex-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    static char block[MUTEX_BODY];
    memset(block, 'm', sizeof(block));
    assert_int_equal(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
    fd_answers.per_connection = per_connection;
    atomic_store(&fd_answers.asked, 0);
    fd_answers.shared = MHD_create_response_from_fd(MUTEX_BODY, fd);
    fd_answers.own[0] = MHD_create_response_from_fd(MUTEX_BODY, dup(fd));
    fd_answers.own[1] = MHD_create_response_from_fd(MUTEX_BODY, dup(fd));
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO,
                                            0, NULL, NULL, on_file_request, NULL,
                                            MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_END);
    assert_non_null(d);
    uint16_t port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    sf_set(true);
    int a = ask(port);
    if (!sf_wait_held()) {
        sf_set(false);
        fail_msg("libmicrohttpd sent an fd-backed response without sendfile64: see src/serve/ready.c");
    }
    int b = ask(port); /* while A's thread waits: the other one takes it */
    int b_matched = 0, a_matched = 0;
    bool meanwhile = body_byte_within(b, &b_matched, ms);
    sf_set(false);
    assert_true(meanwhile || body_byte_within(b, &b_matched, 10000));
    assert_true(body_byte_within(a, &a_matched, 10000));
    close(a);
    close(b);
    MHD_stop_daemon(d);
    MHD_destroy_response(fd_answers.shared);
    MHD_destroy_response(fd_answers.own[0]);
    MHD_destroy_response(fd_answers.own[1]);
    return meanwhile;
}

/* libmicrohttpd 0.9.75 holds a file-backed response's mutex across each
 * sendfile of it, so connections on other threads sending the same
 * response wait for it: src/serve/ready.c keeps one 200 per worker thread,
 * each on its own dup, for that reason alone. The control: with a response
 * each, B's body comes while A is held inside its sendfile. Should a
 * library stop serialising (the shared case no longer waits), this fails
 * and tells us the per-thread 200s can go. */
static void test_a_shared_file_response_is_sent_one_thread_at_a_time(void **state)
{
    if (!second_connection_sent_meanwhile(true, 10000)) {
        fail_msg("with a response each, B's body did not come (10 s) while A's sendfile was held");
    }
    if (second_connection_sent_meanwhile(false, MUTEX_WAIT_MS)) {
        fail_msg("a shared fd-backed response was sent by two threads at once (B's body came while A's "
                 "sendfile was held): the per-thread 200s of src/serve/ready.c can go");
    }
}

/* ---- the pool: a request head of about half of it ---- */

#define FIELD_BYTES 64 /* a browser's field, "Accept-Language: en-US,en;q=0.9" and the like */

/* A request head of head_bytes in all: the line, Host, Connection: close, fields of
 * FIELD_BYTES with their CRLF, one last field for the rest, the blank
 * line. Freed by the caller. */
static char *head_of(size_t head_bytes)
{
    static const char start[] = "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n";
    char *req = malloc(head_bytes + 1);
    assert_non_null(req);
    size_t at = sizeof(start) - 1;
    memcpy(req, start, at);
    for (unsigned i = 0; at + 3 * FIELD_BYTES < head_bytes; i++) {
        int n = snprintf(req + at, FIELD_BYTES, "X-F%04u: ", i);
        memset(req + at + n, 'v', FIELD_BYTES - 2 - (size_t)n);
        memcpy(req + at + FIELD_BYTES - 2, "\r\n", 2);
        at += FIELD_BYTES;
    }
    size_t last = head_bytes - at - 2; /* "X-Z: " ... "\r\n", then the blank line */
    assert_true(last > 7);
    memcpy(req + at, "X-Z: ", 5);
    memset(req + at + 5, 'z', last - 7);
    memcpy(req + at + last - 2, "\r\n\r\n", 5);
    assert_int_equal(strlen(req), head_bytes);
    return req;
}

/* The status a bare daemon whose connection memory is pool bytes answers
 * a head_bytes head with (head_of); 0 for none. */
static unsigned status_for_head(size_t pool, size_t head_bytes)
{
    struct MHD_OptionItem options[LIBRARY_OPTIONS_MAX];
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_ERROR_LOG, 0, NULL, NULL,
        on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, on_message, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_ARRAY, library_daemon_options(options, 64, 1),
        MHD_OPTION_END);
    assert_non_null(d);
    uint16_t port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char *req = head_of(head_bytes);
    char out[4096];
    /* the daemon closes after either answer (exchange reads until then) */
    exchange(port, req, head_bytes, out, sizeof(out));
    free(req);
    MHD_stop_daemon(d);
    unsigned status = 0;
    sscanf(out, "HTTP/1.1 %u", &status);
    return status;
}

/* --header-limit is MHD_OPTION_CONNECTION_MEMORY_LIMIT, and
 * docs/reliability.md and --help promise that libmicrohttpd 0.9.75 then takes a request head
 * of about half of it: up to about 7.9 KB at the default 16 KiB, 431 past
 * it. A library that keeps more of the pool for itself (or less) moves
 * that line, and the promise with it. */
static void test_a_head_of_about_half_the_pool_is_taken(void **state)
{
    /* 0.9.75 serves up to 8,160 bytes here, then closes without a word for
     * a few dozen bytes, then 431 */
    assert_int_equal(status_for_head(16384, 7900), 200);
    assert_int_equal(status_for_head(16384, 8600), 431);
    assert_int_equal(status_for_head(32768, 15800), 200); /* half of any pool: 16,352 */
    assert_int_equal(status_for_head(32768, 16800), 431);
}

/* Between the heads served and those refused with 431 lies a band whose
 * head leaves the pool no room for the response's header block: 0.9.75
 * closes with no answer and logs why ("%s\n", connection_close_error), the
 * message folio answers that 431 on (connection_refuse_no_room). A library
 * that answers there, or says it otherwise, fails here. */
static void test_a_head_leaving_no_room_for_the_answer_is_closed_with_a_reason(void **state)
{
    size_t silent = 0;
    seen.no_room = false;
    for (size_t head = 8000; head < 8700 && !silent; head += 4) {
        silent = status_for_head(16384, head) == 0 ? head : 0;
    }
    assert_true(silent > 0);
    assert_true(seen.no_room);
}

/* ---- a socket handed over that the worker cannot start ---- */

/* The test below asks for a pool no allocator can give: a sanitizer's must
 * return NULL as glibc's does, not end the program. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* What the daemon of the test below saw. */
static struct {
    pthread_mutex_t lock;
    int started;          /* connections notified started */
    bool no_pool_off_thread; /* LIBRARY_SAID_NO_POOL logged, not on the adding thread */
    pthread_t adder;
} unstarted = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void unstarted_message(void *cls, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&unstarted.lock);
    unsigned status;
    if (library_heard(fmt, ap, &status) == LIBRARY_SAID_NO_POOL && !pthread_equal(pthread_self(), unstarted.adder)) {
        unstarted.no_pool_off_thread = true;
    }
    pthread_mutex_unlock(&unstarted.lock);
}

static void unstarted_notify(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_ConnectionNotificationCode code)
{
    pthread_mutex_lock(&unstarted.lock);
    unstarted.started += code == MHD_CONNECTION_NOTIFY_STARTED;
    pthread_mutex_unlock(&unstarted.lock);
}

/* MHD_add_connection queues a socket for the worker, which allocates its
 * pool when it takes it: when that fails, 0.9.75 closes the socket with no
 * notification, LIBRARY_SAID_NO_POOL logged on the worker's thread. folio's
 * acceptor counts the slot back on that message (acceptor_lost); a library
 * that notified these, or said nothing, fails here. (A pool of 512 GiB:
 * mmap refuses it, then malloc.) */
static void test_a_socket_the_worker_cannot_start_is_closed_unnotified_and_logged(void **state)
{
    unstarted.adder = pthread_self();
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET,
        0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, unstarted_message, NULL,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)512 << 30, MHD_OPTION_NOTIFY_CONNECTION, unstarted_notify,
        NULL, MHD_OPTION_END);
    assert_non_null(d);
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in at = {.sin_family = AF_INET};
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(at);
    assert_int_equal(bind(listener, (struct sockaddr *)&at, sizeof(at)), 0);
    assert_int_equal(listen(listener, 1), 0);
    getsockname(listener, (struct sockaddr *)&at, &len);
    int client = connected(ntohs(at.sin_port));
    int server = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    assert_int_equal(MHD_add_connection(d, server, (struct sockaddr *)&at, len), MHD_YES);
    char byte;
    assert_int_equal(recv(client, &byte, 1, 0), 0); /* closed by the worker, never served */
    MHD_stop_daemon(d);
    assert_int_equal(unstarted.started, 0);
    assert_true(unstarted.no_pool_off_thread);
    close(client);
    close(listener);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_version_is_checked),
        cmocka_unit_test(test_a_refused_head_can_be_answered_in_the_librarys_stead),
        cmocka_unit_test(test_a_nul_in_the_target),
        cmocka_unit_test(test_the_header_block),
        cmocka_unit_test(test_what_reaches_the_handler),
        cmocka_unit_test(test_the_daemon_options),
        cmocka_unit_test(test_a_dropped_line_leaves_the_socket_writable),
        cmocka_unit_test(test_every_connection_line_counts),
        cmocka_unit_test(test_an_answer_on_the_first_call_ends_the_connection),
        cmocka_unit_test(test_an_idle_connection_closes_at_its_clients_end),
        cmocka_unit_test(test_a_304_and_the_next_response),
        cmocka_unit_test(test_a_shared_file_response_is_sent_one_thread_at_a_time),
        cmocka_unit_test(test_a_head_of_about_half_the_pool_is_taken),
        cmocka_unit_test(test_a_head_leaving_no_room_for_the_answer_is_closed_with_a_reason),
        cmocka_unit_test(test_a_socket_the_worker_cannot_start_is_closed_unnotified_and_logged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
