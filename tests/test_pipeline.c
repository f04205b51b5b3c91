/* The request pipeline (exchange, facts, target, respond, ready) on a real
 * server in this process, spoken to over loopback: what each stage decides,
 * and that a request's facts are read from its headers once, however many
 * stages read them (a miss, a 404, a ready answer). */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "base/settings.h"
#include "serve/cache.h"
#include "serve/facts.h"
#include "serve/http.h"
#include "site/resolve.h"
#include "site/routes.h"
#include "test_helpers.h"

struct rig {
    char root[64];
    struct routes routes;
    struct settings *settings;
    struct cache *cache;
    struct http_server *server;
    unsigned port;
};

/* An article of a page, a stylesheet worth compressing, a 404 page, a
 * fragment and an asset, served on a free port by one worker. */
static int rig_up(void **state)
{
    struct rig *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    snprintf(r->root, sizeof(r->root), "/tmp/folio-pipeline-XXXXXX");
    assert_non_null(mkdtemp(r->root));
    char dir[128];
    for (const char *const *d = (const char *const[]){"www", "fragments", "assets", NULL}; *d; d++) {
        snprintf(dir, sizeof(dir), "%s/%s", r->root, *d);
        assert_int_equal(mkdir(dir, 0755), 0);
    }
    snprintf(dir, sizeof(dir), "%s/www", r->root);
    th_write_file(dir, "index.html", "<!doctype html><title>t</title><link rel=stylesheet href=a.css>\n");
    th_write_file(dir, "404.html", "<!doctype html><title>not here</title>\n");
    char css[4096] = "";
    for (int i = 0; i < 60; i++) {
        snprintf(css + strlen(css), sizeof(css) - strlen(css), ".rule-%d { margin: %dpx; }\n", i, i);
    }
    th_write_file(dir, "a.css", css);
    snprintf(dir, sizeof(dir), "%s/fragments", r->root);
    th_write_file(dir, "f.html", "<p>fragment</p>\n");
    snprintf(dir, sizeof(dir), "%s/assets", r->root);
    th_write_file(dir, "a.txt", "0123456789");

    struct config c;
    assert_true(config_init(&c));
    char err[256];
    assert_true(config_set(&c, "root", r->root, err, sizeof(err)));
    assert_true(config_set(&c, "port", "0", err, sizeof(err)));
    assert_true(config_set(&c, "threads", "1", err, sizeof(err)));
    assert_true(config_set(&c, "quiet", "yes", err, sizeof(err)));
    assert_true(config_set(&c, "production", "yes", err, sizeof(err)));
    assert_true(config_set(&c, "trust-proxy", "yes", err, sizeof(err)));
    assert_true(routes_open(&r->routes, &c, err, sizeof(err)));
    resolve_init(r->routes.items[0].dir_fd);
    r->cache = cache_create(c.cache_size);
    r->settings = settings_create(&c);
    assert_non_null(r->cache);
    assert_non_null(r->settings);
    struct http_context ctx = {.settings = r->settings, .routes = &r->routes, .cache = r->cache};
    r->server = http_server_start(&ctx, err, sizeof(err));
    assert_non_null(r->server);
    r->port = http_server_port(r->server);
    *state = r;
    return 0;
}

static int rig_down(void **state)
{
    struct rig *r = *state;
    http_server_stop(r->server, 1);
    settings_destroy(r->settings);
    cache_destroy(r->cache);
    routes_close(&r->routes);
    th_remove_tree(r->root);
    free(r);
    return 0;
}

/* A response as read: its status, its header block and its body. */
struct answer {
    unsigned status;
    char head[2048];
    char body[8192];
    size_t body_len;
};

/* The value of header name in a's head, copied into out ("" when absent). */
static const char *header(const struct answer *a, const char *name, char *out, size_t size)
{
    char key[80];
    snprintf(key, sizeof(key), "\r\n%s: ", name);
    const char *at = strcasestr(a->head, key);
    out[0] = '\0';
    if (at) {
        at += strlen(key);
        size_t n = strcspn(at, "\r");
        snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), at);
    }
    return out;
}

/* Sends request (a whole head, its CRLFs written \n here) on a new
 * connection and reads the response to it: its head, then Content-Length
 * bytes of body (none for a HEAD, a 204 or a 304). */
static void ask(const struct rig *r, const char *request, struct answer *a)
{
    char wire[8192];
    size_t n = 0;
    for (const char *p = request; *p && n + 2 < sizeof(wire); p++) {
        if (*p == '\n') {
            wire[n++] = '\r';
        }
        wire[n++] = *p;
    }
    struct th_stream s = {.fd = th_dial((uint16_t)r->port, 0)};
    assert_int_equal(write(s.fd, wire, n), (ssize_t)n);
    assert_true(th_read_until(&s, "\r\n\r\n", 10000));
    char *end = strstr(s.buf, "\r\n\r\n");
    size_t head_len = (size_t)(end - s.buf) + 2;
    assert_true(head_len < sizeof(a->head));
    memcpy(a->head, s.buf, head_len);
    a->head[head_len] = '\0';
    assert_int_equal(sscanf(a->head, "HTTP/1.1 %u", &a->status), 1);
    char length[32];
    size_t want = strncmp(request, "HEAD ", 5) == 0 || a->status == 204 || a->status == 304
                      ? 0 : strtoul(header(a, "Content-Length", length, sizeof(length)), NULL, 10);
    size_t body_at = head_len + 2;
    while (s.len < body_at + want && !s.eof) {
        th_read_until(&s, NULL, 100);
    }
    assert_true(want < sizeof(a->body) && s.len >= body_at + want);
    memcpy(a->body, s.buf + body_at, want);
    a->body[want] = '\0';
    a->body_len = want;
    close(s.fd);
}

/* Each request's facts are read once: a miss (entry, then a ready entry
 * made), a hit, a 404 (the ready look, then the 404 page), a range. */
static void test_facts_are_read_once_per_request(void **state)
{
    struct rig *r = *state;
    struct answer a;
    static const char *const requests[] = {
        "GET /a.css HTTP/1.1\nHost: t\nAccept-Encoding: gzip\n\n",        /* a miss */
        "GET /a.css HTTP/1.1\nHost: t\nAccept-Encoding: gzip\n\n",        /* a ready answer */
        "GET /missing.html HTTP/1.1\nHost: t\nSec-Fetch-Dest: document\n\n", /* a 404 */
        "GET /missing.html HTTP/1.1\nHost: t\n\n",
        "GET /assets/a.txt HTTP/1.1\nHost: t\nRange: bytes=2-4\n\n",       /* no ready look */
        "GET /fragments/f.html HTTP/1.1\nHost: t\nIf-None-Match: \"x\"\n\n",
    };
    for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
        uint64_t before = facts_reads();
        ask(r, requests[i], &a);
        assert_true(a.status == 200 || a.status == 206 || a.status == 404);
        assert_int_equal(facts_reads() - before, 1);
    }
}

/* target.c: a "//" spelling of an address that exists and a bare prefix
 * are redirected, relatively; a dot segment and a dotfile are not there;
 * folio's own health answers; a path longer than any file's is a 414. */
static void test_targets_to_answers(void **state)
{
    struct rig *r = *state;
    struct answer a;
    char value[256];
    ask(r, "GET //a.css HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 301);
    assert_string_equal(header(&a, "Location", value, sizeof(value)), "../a.css");
    ask(r, "GET /fragments?x=1 HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 301);
    assert_string_equal(header(&a, "Location", value, sizeof(value)), "fragments/?x=1");
    ask(r, "GET /.git/config HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 404);
    ask(r, "GET /__folio/health HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "\"status\":\"ok\""));
    assert_non_null(strstr(a.body, "\"mode\":\"production\""));
    char request[6000] = "GET /";
    memset(request + 5, 'a', 4200);
    strcpy(request + 4205, " HTTP/1.1\nHost: t\n\n");
    ask(r, request, &a);
    assert_int_equal(a.status, 414);
}

/* respond.c and the conditionals: a 304 for the ETag sent, on any line of
 * a list; a 412 for If-Match on another; a 416 says the size; OPTIONS and
 * other methods; the 404 is the article's page. */
static void test_conditionals_ranges_and_made_up_answers(void **state)
{
    struct rig *r = *state;
    struct answer a;
    char etag[128], value[256], request[512];
    ask(r, "GET /assets/a.txt HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "0123456789");
    header(&a, "ETag", etag, sizeof(etag));
    assert_true(etag[0] == '"');
    snprintf(request, sizeof(request), "GET /assets/a.txt HTTP/1.1\nHost: t\nIf-None-Match: \"other\"\n"
             "If-None-Match: %s\n\n", etag);
    ask(r, request, &a); /* two lines are one list (RFC 9110 5.3) */
    assert_int_equal(a.status, 304);
    ask(r, "GET /assets/a.txt HTTP/1.1\nHost: t\nIf-Match: \"other\"\n\n", &a);
    assert_int_equal(a.status, 412);
    ask(r, "GET /assets/a.txt HTTP/1.1\nHost: t\nRange: bytes=2-4\n\n", &a);
    assert_int_equal(a.status, 206);
    assert_string_equal(a.body, "234");
    ask(r, "GET /assets/a.txt HTTP/1.1\nHost: t\nRange: bytes=20-\n\n", &a);
    assert_int_equal(a.status, 416);
    assert_string_equal(header(&a, "Content-Range", value, sizeof(value)), "bytes */10");
    ask(r, "OPTIONS * HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 204);
    assert_string_equal(header(&a, "Allow", value, sizeof(value)), "GET, HEAD, OPTIONS");
    ask(r, "DELETE /a.css HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 405);
    ask(r, "GET /nothing HTTP/1.1\nHost: t\n\n", &a);
    assert_int_equal(a.status, 404);
    assert_non_null(strstr(a.body, "not here"));
    assert_string_equal(header(&a, "Cache-Control", value, sizeof(value)), "no-store");
}

/* exchange.c: a trusted proxy's prefix goes into the page's references;
 * one that is no clean path is the proxy's fault, a 400. */
static void test_the_proxy_prefix(void **state)
{
    struct rig *r = *state;
    struct answer a;
    ask(r, "GET / HTTP/1.1\nHost: t\nX-Forwarded-Prefix: /article\n\n", &a);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "href=a.css")); /* relative: it stays inside as it is */
    ask(r, "GET /assets/a.txt HTTP/1.1\nHost: t\nX-Forwarded-Prefix: article\\x\n\n", &a);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.body, "X-Forwarded-Prefix"));
}

/* ready.c: the second request of a file is answered whole, with the same
 * bytes and validators; a coding the client prefers gets its own entry. */
static void test_ready_answers_match_the_first(void **state)
{
    struct rig *r = *state;
    struct answer first, again, gzip;
    char e1[128], e2[128], e3[128], coding[32];
    ask(r, "GET /a.css HTTP/1.1\nHost: t\nAccept-Encoding: identity\n\n", &first);
    ask(r, "GET /a.css HTTP/1.1\nHost: t\nAccept-Encoding: identity\n\n", &again);
    assert_int_equal(first.status, 200);
    assert_int_equal(again.status, 200);
    assert_int_equal(first.body_len, again.body_len);
    assert_memory_equal(first.body, again.body, first.body_len);
    assert_string_equal(header(&first, "ETag", e1, sizeof(e1)), header(&again, "ETag", e2, sizeof(e2)));
    ask(r, "GET /a.css HTTP/1.1\nHost: t\nAccept-Encoding: gzip\n\n", &gzip);
    assert_string_equal(header(&gzip, "Content-Encoding", coding, sizeof(coding)), "gzip");
    assert_string_not_equal(header(&gzip, "ETag", e3, sizeof(e3)), e1);
    assert_true(gzip.body_len < first.body_len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts_are_read_once_per_request),
        cmocka_unit_test(test_targets_to_answers),
        cmocka_unit_test(test_conditionals_ranges_and_made_up_answers),
        cmocka_unit_test(test_the_proxy_prefix),
        cmocka_unit_test(test_ready_answers_match_the_first),
    };
    return cmocka_run_group_tests(tests, rig_up, rig_down);
}
