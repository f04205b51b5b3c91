/* health: the default URL from the settings (a table), URLs refused before
 * any socket opens, and the check itself against a tiny listener on
 * 127.0.0.1 port 0 that answers as a test tells it (200, 503, nothing,
 * a closed connection, garbage), recording the request it was sent. */
#include "cmocka_prelude.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/config.h"
#include "serve/health.h"

static void test_default_url(void **state)
{
    (void)state;
    static const struct {
        const char *host;
        unsigned port;
        const char *url; /* NULL: refused */
    } table[] = {
        {"0.0.0.0", 8000, "http://127.0.0.1:8000/__folio/health"},
        {"::", 8080, "http://[::1]:8080/__folio/health"},
        {"127.0.0.1", 80, "http://127.0.0.1:80/__folio/health"},
        {"192.0.2.7", 9000, "http://192.0.2.7:9000/__folio/health"},
        {"::1", 8000, "http://[::1]:8000/__folio/health"},
        {"localhost", 8000, "http://localhost:8000/__folio/health"},
        {"0.0.0.0", 0, NULL},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        struct config c;
        config_init(&c);
        free(c.host);
        c.host = strdup(table[i].host);
        c.port = table[i].port;
        char url[300] = "", err[256] = "";
        bool ok = health_default_url(&c, url, sizeof url, err, sizeof err);
        if (table[i].url) {
            assert_true(ok);
            assert_string_equal(url, table[i].url);
        } else {
            assert_false(ok);
            assert_non_null(strstr(err, "port 0"));
        }
        config_finish(&c);
    }
}

/* Not a URL the check can ask: 2, and no connection is tried. */
static void test_refused_urls(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "https://127.0.0.1/", "127.0.0.1:8000", "http://", "http:///x", "http://[::1",
        "http://user@127.0.0.1/", "http://127.0.0.1:/", "http://127.0.0.1:123456/",
        "http://127.0.0.1:80x/", "http://127.0.0.1/?q=1", "http://127.0.0.1/#top",
        "http://127.0.0.1/a b",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[256] = "";
        assert_int_equal(health_check(bad[i], 200, err, sizeof err), 2);
        assert_non_null(strstr(err, "is not a URL"));
    }
}

/* ---- a listener that answers one connection ---- */

enum answer { ANSWER_TEXT, ANSWER_NOTHING, ANSWER_CLOSE };

struct listener {
    int fd;
    unsigned short port;
    enum answer how;
    const char *text;  /* ANSWER_TEXT: written once the request is in */
    char request[2048]; /* what the check sent */
    pthread_t thread;
};

static void *listener_serve(void *arg)
{
    struct listener *l = arg;
    int c = accept(l->fd, NULL, NULL);
    if (c < 0) {
        return NULL;
    }
    size_t len = 0;
    while (l->how != ANSWER_CLOSE && len + 1 < sizeof(l->request) &&
           !strstr(l->request, "\r\n\r\n")) {
        ssize_t n = read(c, l->request + len, sizeof(l->request) - 1 - len);
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
        l->request[len] = '\0';
    }
    if (l->how == ANSWER_TEXT) {
        ssize_t n = write(c, l->text, strlen(l->text));
        (void)n;
    } else if (l->how == ANSWER_NOTHING) {
        char scratch[64];
        while (read(c, scratch, sizeof scratch) > 0) { /* until the check gives up and closes */
        }
    }
    close(c);
    return NULL;
}

/* Listens on 127.0.0.1, port 0, and answers the first connection as @how. */
static void listener_start(struct listener *l, enum answer how, const char *text)
{
    *l = (struct listener){.how = how, .text = text};
    l->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(l->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(l->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l->fd, 4), 0);
    socklen_t n = sizeof a;
    assert_int_equal(getsockname(l->fd, (struct sockaddr *)&a, &n), 0);
    l->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&l->thread, NULL, listener_serve, l), 0);
}

static void listener_stop(struct listener *l)
{
    assert_int_equal(pthread_join(l->thread, NULL), 0);
    close(l->fd);
}

/* Runs one check of @path on a listener that answers @how/@text; returns
 * its status, with the reason in @err and the request the listener got. */
static int ask(enum answer how, const char *text, const char *path, unsigned timeout_ms,
               char *err, size_t err_size, char *request, size_t request_size)
{
    struct listener l;
    listener_start(&l, how, text);
    char url[300];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", l.port, path);
    err[0] = '\0';
    int status = health_check(url, timeout_ms, err, err_size);
    listener_stop(&l);
    snprintf(request, request_size, "%s", l.request);
    return status;
}

static void test_healthy(void **state)
{
    (void)state;
    char err[256], request[2048];
    assert_int_equal(ask(ANSWER_TEXT, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "", 2000, err,
                         sizeof err, request, sizeof request),
                     0);
    assert_non_null(strstr(request, "GET /__folio/health HTTP/1.1\r\n"));
    assert_non_null(strstr(request, "\r\nHost: 127.0.0.1:"));
    assert_non_null(strstr(request, "\r\nConnection: close\r\n"));
    /* HTTP/1.0 servers (a proxy in front, say) count too. */
    assert_int_equal(ask(ANSWER_TEXT, "HTTP/1.0 200 OK\r\n\r\n", "/", 2000, err, sizeof err, request,
                         sizeof request),
                     0);
    assert_non_null(strstr(request, "GET /__folio/health HTTP/1.1\r\n"));
}

/* A path is a prefix the server sits under; one already naming the health
 * endpoint is asked as it is. */
static void test_paths(void **state)
{
    (void)state;
    static const struct {
        const char *path, *line;
    } table[] = {
        {"/article", "GET /article/__folio/health HTTP/1.1\r\n"},
        {"/article/", "GET /article/__folio/health HTTP/1.1\r\n"},
        {"/article/__folio/health", "GET /article/__folio/health HTTP/1.1\r\n"},
        {"/__folio/health", "GET /__folio/health HTTP/1.1\r\n"},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        char err[256], request[2048];
        assert_int_equal(ask(ANSWER_TEXT, "HTTP/1.1 200 OK\r\n\r\n", table[i].path, 2000, err,
                             sizeof err, request, sizeof request),
                         0);
        assert_non_null(strstr(request, table[i].line));
    }
}

static void test_unhealthy(void **state)
{
    (void)state;
    char err[256], request[2048];
    assert_int_equal(ask(ANSWER_TEXT, "HTTP/1.1 503 Service Unavailable\r\n\r\n", "", 2000, err,
                         sizeof err, request, sizeof request),
                     1);
    assert_string_equal(err, "answered 'HTTP/1.1 503 Service Unavailable'");
    assert_int_equal(ask(ANSWER_TEXT, "SSH-2.0-OpenSSH\r\n", "", 2000, err, sizeof err, request,
                         sizeof request),
                     1);
    assert_non_null(strstr(err, "answered 'SSH-2.0"));
    assert_int_equal(ask(ANSWER_TEXT, "HTTP/1.1 2000 OK\r\n\r\n", "", 2000, err, sizeof err, request,
                         sizeof request),
                     1); /* four digits: not a 200 */
    /* A status line never finished, then the close: no answer. */
    assert_int_equal(ask(ANSWER_TEXT, "HTTP/1.1 200", "", 2000, err, sizeof err, request,
                         sizeof request),
                     1);
    assert_non_null(strstr(err, "no answer"));
    assert_int_equal(ask(ANSWER_CLOSE, NULL, "", 2000, err, sizeof err, request, sizeof request), 1);
    assert_non_null(strstr(err, "no answer"));
}

/* A server that takes the connection and says nothing costs the timeout. */
static void test_silent_server_times_out(void **state)
{
    (void)state;
    char err[256], request[2048];
    assert_int_equal(ask(ANSWER_NOTHING, NULL, "", 300, err, sizeof err, request, sizeof request), 1);
    assert_string_equal(err, "no answer within 300 ms");
    assert_non_null(strstr(request, "GET /__folio/health"));
}

/* Nothing listens: refused at once, said so. */
static void test_nothing_listens(void **state)
{
    (void)state;
    struct listener l;
    listener_start(&l, ANSWER_CLOSE, NULL);
    char url[300];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", l.port);
    int poke = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* lets the listener thread end */
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(l.port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(poke, (struct sockaddr *)&a, sizeof a), 0);
    listener_stop(&l); /* the port is free again */
    close(poke);
    char err[256] = "";
    assert_int_equal(health_check(url, 2000, err, sizeof err), 1);
    assert_non_null(strstr(err, "cannot connect"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_url),
        cmocka_unit_test(test_refused_urls),
        cmocka_unit_test(test_healthy),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_unhealthy),
        cmocka_unit_test(test_silent_server_times_out),
        cmocka_unit_test(test_nothing_listens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
