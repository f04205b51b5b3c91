/* admission: the verdict on a request's head, one row per rule (RFC 9112,
 * RFC 9110, and what a library that parses in place leaves of a header
 * block: serve/library.h). */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <string.h>

#include "serve/admission.h"

#define LEN(s) (sizeof(s) - 1) /* string literals may hold NULs */

struct field {
    const char *name, *value;
};

/* The verdict on method, target (target_len bytes as sent), version and up
 * to four fields, with no header block known. */
static unsigned verdict(const char *method, const char *target, size_t target_len, const char *version,
                        const struct field *fields, struct request_target *t)
{
    struct admission a;
    admission_start(&a, NULL, NULL);
    for (size_t i = 0; i < 4 && fields[i].name; i++) {
        if (!admission_field(&a, fields[i].name, strlen(fields[i].name), fields[i].value,
                             strlen(fields[i].value))) {
            break;
        }
    }
    struct admission_head h = {method, version, target, target_len, strlen(target)};
    return admission_finish(&a, &h, t);
}

static void test_verdicts(void **state)
{
    static const struct {
        const char *method, *target;
        size_t target_len;
        const char *version;
        struct field fields[4];
        unsigned status;
    } rows[] = {
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "localhost"}}, 0},
        {"HEAD", "/a?b", 4, "HTTP/1.1", {{"Host", "h:80 \t"}}, 0}, /* trailing OWS is no part of Host */
        {"GET", "/", 1, "HTTP/1.0", {{NULL, NULL}}, 0},            /* 1.0 needs no Host */
        {"GET", "/", 1, "HTTP/1.1", {{NULL, NULL}}, 400},          /* 1.1 must send one */
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "a"}, {"Host", "b"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "a b"}}, 400},
        {"GET", "http://h/x", 10, "HTTP/1.1", {{"Host", "not valid"}}, 0}, /* 3.2.2: Host ignored */
        {"G T", "/", 1, "HTTP/1.1", {{"Host", "h"}}, 400},
        {"GET", "/\0x", 3, "HTTP/1.1", {{"Host", "h"}}, 400},      /* a NUL MHD cut the target at */
        {"GET", "*", 1, "HTTP/1.1", {{"Host", "h"}}, 400},         /* "*" is for OPTIONS */
        {"OPTIONS", "*", 1, "HTTP/1.1", {{"Host", "h"}}, 0},
        {"GET", "h:443", 5, "HTTP/1.1", {{"Host", "h"}}, 400},     /* host:port is for CONNECT */
        {"CONNECT", "h:443", 5, "HTTP/1.1", {{"Host", "h"}}, 501}, /* and folio is no tunnel */
        {"BREW", "/", 1, "HTTP/1.1", {{"Host", "h"}}, 501},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Bad Name", "x"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Content-Length", "5"}, {"Content-Length", "6"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Content-Length", "5"}, {"Content-Length", "5"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Content-Length", "5, 5"}}, 400}, /* one number */
        /* a head the library refused before saying its method and version */
        {NULL, "/", 1, NULL, {{"Host", "h"}, {"Transfer-Encoding", "gzip"}}, 501},
        {NULL, "/", 1, NULL, {{"Host", "h"}, {"Transfer-Encoding", "chunked, gzip"}}, 400},
        {NULL, "/", 1, NULL, {{"Transfer-Encoding", "chunked"}}, 400},  /* taken as 1.1: Host is due */
        {NULL, "/", 1, NULL, {{"Host", "h"}, {"Content-Length", "99999999"}}, 0}, /* a body on GET? not known */
        {NULL, "*", 1, NULL, {{"Host", "h"}}, 400},                       /* forms as GET's */
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Content-Length", "65536"}}, 0},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Content-Length", "65537"}}, 413},
        {"POST", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Content-Length", "65537"}}, 0}, /* 405 later */
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "chunked"}}, 0},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "chunked"}, {"Content-Length", "1"}}, 400},
        {"GET", "/", 1, "HTTP/1.0", {{"Transfer-Encoding", "chunked"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "gzip"}}, 501},
        /* chunked before another coding: the length cannot be told (RFC 9112 6.3) */
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "chunked, gzip"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "gzip"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "gzip, chunked"}}, 501},
        /* not the value libmicrohttpd frames as chunked: refused, not read unframed */
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "chunked "}}, 501},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "chunked,"}}, 501},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "Chunked"}}, 0},
        {"GET", "/", 1, "HTTP/1.1", {{"host", "h"}, {"transfer-encoding", "CHUNKED"}}, 0},
        /* issue 19, 12: chunked twice, and a bare CR in a value (nginx: 400 both) */
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"X-A", "a\rb"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h\r"}}, 400},
        {"GET", "/", 1, "HTTP/1.1", {{"Host", "h"}, {"X-A", "a\tb"}}, 0}, /* HTAB is field content */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct request_target t;
        unsigned got = verdict(rows[i].method, rows[i].target, rows[i].target_len, rows[i].version,
                               rows[i].fields, &t);
        if (got != rows[i].status) {
            print_message("row %zu: %s %s: %u, not %u\n", i, rows[i].method ? rows[i].method : "(none)",
                          rows[i].target, got, rows[i].status);
        }
        assert_int_equal(got, rows[i].status);
    }
}

static void test_absolute_form_gives_its_path(void **state)
{
    static const struct field host[4] = {{"Host", "ignored"}};
    struct request_target t;
    assert_int_equal(verdict("GET", "http://h:8/p?q", LEN("http://h:8/p?q"), "HTTP/1.1", host, &t), 0);
    assert_int_equal(t.form, REQUEST_FORM_ABSOLUTE);
    assert_int_equal(t.path_len, 4);
    assert_memory_equal(t.path, "/p?q", 4);
}

/* The origin form of an absolute one: an empty path is "/" (issue 19). */
static void test_origin_form_of_an_absolute_target(void **state)
{
    static const struct {
        const char *absolute, *origin;
    } rows[] = {
        {"http://h/p?q", "/p?q"}, {"http://h?args", "/?args"}, {"http://h:80", "/"}, {"https://[::1]/", "/"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char target[64];
        snprintf(target, sizeof(target), "%s", rows[i].absolute);
        struct request_target t;
        assert_true(request_target_parse(target, strlen(target), &t));
        admission_origin_form(target, &t);
        assert_string_equal(target, rows[i].origin);
    }
}

/* A header block as libmicrohttpd leaves it: each ':' and line end
 * overwritten with NULs, names and values pointing into it. */
static unsigned block_verdict(char *block, size_t len, const size_t *at, size_t n)
{
    struct admission a;
    admission_start(&a, block, block + len);
    for (size_t i = 0; i + 1 < n; i += 2) {
        if (!admission_field(&a, block + at[i], strlen(block + at[i]), block + at[i + 1],
                             strlen(block + at[i + 1]))) {
            break;
        }
    }
    struct admission_head h = {"GET", "HTTP/1.1", "/", 1, 1};
    struct request_target t;
    return admission_finish(&a, &h, &t);
}

static void test_every_byte_of_the_block_belongs_to_a_field(void **state)
{
    /* "\r\nHost: h\r\nX: y\r\n\r\n" after the version */
    char whole[] = "\0\0Host\0 h\0\0X\0 y\0\0\0\0";
    size_t at[] = {2, 8, 11, 14};
    assert_int_equal(block_verdict(whole, LEN(whole), at, 4), 0);
    /* a NUL inside a value: its rest belongs to no field (MHD cut it) */
    char cut[] = "\0\0Host\0 h\0\0X\0 y\0z\0\0\0\0";
    assert_int_equal(block_verdict(cut, LEN(cut), at, 4), 400);
    /* a line starting with ':' ends MHD's block early: what follows is unaccounted */
    char colon[] = "\0\0Host\0 h\0\0: GET /x HTTP/1.1\0\0\0\0";
    assert_int_equal(block_verdict(colon, LEN(colon), at, 2), 400);
    /* bounds unknown: nothing is accounted for */
    struct admission a;
    admission_start(&a, whole + 4, whole);
    assert_null(a.cursor);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_absolute_form_gives_its_path),
        cmocka_unit_test(test_origin_form_of_an_absolute_target),
        cmocka_unit_test(test_every_byte_of_the_block_belongs_to_a_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
