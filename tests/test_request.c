/* request: the RFC 9112 checks of request.c, one table per function (each
 * row from the issue, nginx or the RFC's own examples). */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <string.h>

#include "serve/request.h"

#define LEN(s) (sizeof(s) - 1) /* string literals may hold NULs */

static void test_targets(void **state)
{
    static const struct {
        const char *raw;
        size_t len;
        bool ok;
        enum request_form form;
        const char *path, *authority;
    } rows[] = {
        {"/a.txt", LEN("/a.txt"), true, REQUEST_FORM_ORIGIN, "/a.txt", ""},
        {"/a?b=c", LEN("/a?b=c"), true, REQUEST_FORM_ORIGIN, "/a?b=c", ""},
        {"/%C3%A9", LEN("/%C3%A9"), true, REQUEST_FORM_ORIGIN, "/%C3%A9", ""},
        {"/\xc3\xa9", LEN("/\xc3\xa9"), true, REQUEST_FORM_ORIGIN, "/\xc3\xa9", ""},
        {"http://localhost/a.txt", LEN("http://localhost/a.txt"), true, REQUEST_FORM_ABSOLUTE, "/a.txt", "localhost"},
        {"HTTP://h:8000/a?q", LEN("HTTP://h:8000/a?q"), true, REQUEST_FORM_ABSOLUTE, "/a?q", "h:8000"},
        {"https://[::1]:443", LEN("https://[::1]:443"), true, REQUEST_FORM_ABSOLUTE, "", "[::1]:443"},
        {"example.com:443", LEN("example.com:443"), true, REQUEST_FORM_AUTHORITY, "", "example.com:443"},
        {"*", 1, true, REQUEST_FORM_ASTERISK, "", ""},
        {"http://h?q", LEN("http://h?q"), true, REQUEST_FORM_ABSOLUTE, "?q", "h"}, /* an empty path is "/" */
        /* a fragment is never sent (RFC 9112 3.2); when it is, it is dropped (nginx, lighttpd) */
        {"/a#frag", LEN("/a#frag"), true, REQUEST_FORM_ORIGIN, "/a", ""},
        {"/a?q#f?g/h", LEN("/a?q#f?g/h"), true, REQUEST_FORM_ORIGIN, "/a?q", ""},
        {"http://h:8?q#f", LEN("http://h:8?q#f"), true, REQUEST_FORM_ABSOLUTE, "?q", "h:8"},
        {"http://h#f", LEN("http://h#f"), true, REQUEST_FORM_ABSOLUTE, "", "h"},
        /* refused */
        {"/a.txt\0.junk", LEN("/a.txt\0.junk"), false, 0, NULL, NULL},
        {"/..\0", LEN("/..\0"), false, 0, NULL, NULL},
        {"/a b.txt", LEN("/a b.txt"), false, 0, NULL, NULL},
        {"/\x02", LEN("/\x02"), false, 0, NULL, NULL},
        {"/\x7f", LEN("/\x7f"), false, 0, NULL, NULL},
        {"/a\tb", LEN("/a\tb"), false, 0, NULL, NULL},
        {"#frag", LEN("#frag"), false, 0, NULL, NULL},
        {"/a#b c", LEN("/a#b c"), false, 0, NULL, NULL},
        {"", 0, false, 0, NULL, NULL},
        {"a.txt", LEN("a.txt"), false, 0, NULL, NULL},
        {"ftp://h/a", LEN("ftp://h/a"), false, 0, NULL, NULL},
        {"http://u:p@h/a", LEN("http://u:p@h/a"), false, 0, NULL, NULL},
        {"http://h:99999/", LEN("http://h:99999/"), false, 0, NULL, NULL},
        {"http:///a", LEN("http:///a"), false, 0, NULL, NULL},
        {"example.com", LEN("example.com"), false, 0, NULL, NULL},
        {"**", 2, false, 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct request_target t;
        bool ok = request_target_parse(rows[i].raw, rows[i].len, &t);
        if (ok != rows[i].ok) {
            fail_msg("row %zu (%s): %d", i, rows[i].raw, ok);
        }
        if (ok) {
            assert_int_equal(t.form, rows[i].form);
            assert_int_equal(t.path_len, strlen(rows[i].path));
            assert_memory_equal(t.path, rows[i].path, t.path_len);
            assert_int_equal(t.authority_len, strlen(rows[i].authority));
            assert_memory_equal(t.authority, rows[i].authority, t.authority_len);
        }
    }
}

static void test_hosts(void **state)
{
    static const struct {
        const char *value;
        size_t len;
        bool ok;
    } rows[] = {
        {"localhost", LEN("localhost"), true},
        {"localhost:8000", LEN("localhost:8000"), true},
        {"127.0.0.1:80", LEN("127.0.0.1:80"), true},
        {"[::1]", LEN("[::1]"), true},
        {"[2001:db8::1]:8080", LEN("[2001:db8::1]:8080"), true},
        {"[v1.fe:80]", LEN("[v1.fe:80]"), true},
        {"ex%41mple.com", LEN("ex%41mple.com"), true},
        {"h:", LEN("h:"), true}, /* port = *DIGIT (RFC 3986 3.2.3) */
        {"h:65535", LEN("h:65535"), true},
        /* refused */
        {"", 0, false},
        {"example.com/\\:552", LEN("example.com/\\:552"), false},
        {"localhost\x02", LEN("localhost\x02"), false},
        {"h:1.2", LEN("h:1.2"), false},
        {"h:9000:80", LEN("h:9000:80"), false},
        {"h:65536", LEN("h:65536"), false},
        {"h:000080", LEN("h:000080"), false},
        {"[::1", LEN("[::1"), false},
        {"::1]", LEN("::1]"), false},
        {"[::1]x", LEN("[::1]x"), false},
        {"[::g]", LEN("[::g]"), false},
        {"[]", LEN("[]"), false},
        {"a b", LEN("a b"), false},
        {"u@h", LEN("u@h"), false},
        {"h%4", LEN("h%4"), false},
        {"h\0x", LEN("h\0x"), false},
        {"[20:01:db8::1\0\0]:80", LEN("[20:01:db8::1\0\0]:80"), false}, /* fuzz_request found it */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (request_host_valid(rows[i].value, rows[i].len) != rows[i].ok) {
            fail_msg("row %zu (%s)", i, rows[i].value);
        }
    }
}

static void test_tokens_and_methods(void **state)
{
    assert_true(request_is_token("X-Forwarded-For", 15));
    assert_false(request_is_token(":foo", 4));
    assert_false(request_is_token("foo\x02", 4));
    assert_false(request_is_token("a b", 3));
    assert_false(request_is_token("", 0));
    assert_true(request_lists_token("close", "close"));
    assert_true(request_lists_token("keep-alive, Close", "close"));
    assert_true(request_lists_token(" ,close\t, x", "close"));
    assert_false(request_lists_token("closed, unclose", "close"));
    assert_false(request_lists_token("keep-alive", "close"));
    assert_false(request_lists_token("", "close"));
    assert_false(request_lists_token(NULL, "close"));
    assert_int_equal(request_method_classify("GET", 3), REQUEST_METHOD_GET);
    assert_int_equal(request_method_classify("HEAD", 4), REQUEST_METHOD_HEAD);
    assert_int_equal(request_method_classify("OPTIONS", 7), REQUEST_METHOD_OPTIONS);
    assert_int_equal(request_method_classify("CONNECT", 7), REQUEST_METHOD_CONNECT);
    assert_int_equal(request_method_classify("POST", 4), REQUEST_METHOD_KNOWN);
    assert_int_equal(request_method_classify("DELETE", 6), REQUEST_METHOD_KNOWN);
    assert_int_equal(request_method_classify("get", 3), REQUEST_METHOD_UNKNOWN); /* case-sensitive */
    assert_int_equal(request_method_classify("FOO", 3), REQUEST_METHOD_UNKNOWN);
    assert_int_equal(request_method_classify("G\x01T", 3), REQUEST_METHOD_INVALID);
}

static void test_content_length(void **state)
{
    static const struct {
        const char *first, *second; /* second NULL: one field */
        bool ok;
        uint64_t length;
    } rows[] = {
        {"0", NULL, true, 0},
        {"29", NULL, true, 29},
        {"5, 5", NULL, true, 5},
        {"5", "5", true, 5},
        {" 7 ", NULL, true, 7},
        {"0", "29", false, 0},
        {"5, 6", NULL, false, 0},
        {"", NULL, false, 0},
        {"-5", NULL, false, 0},
        {"5x", NULL, false, 0},
        {"5,", NULL, false, 0},
        {"99999999999999999999", NULL, false, 0},
        {"18446744073709551606", NULL, true, 18446744073709551606u},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        bool seen = false;
        uint64_t len = 0;
        bool ok = request_content_length(rows[i].first, strlen(rows[i].first), &seen, &len);
        if (ok && rows[i].second) {
            ok = request_content_length(rows[i].second, strlen(rows[i].second), &seen, &len);
        }
        if (ok != rows[i].ok || (ok && len != rows[i].length)) {
            fail_msg("row %zu (%s)", i, rows[i].first);
        }
    }
}

static void test_folder_location(void **state)
{
    static const struct {
        const char *name, *query, *location;
    } rows[] = {
        {"sub", NULL, "sub/"},
        {"dir sp", NULL, "dir%20sp/"},
        {"a?b", NULL, "a%3Fb/"},
        {"a#b", NULL, "a%23b/"},
        {"100%", NULL, "100%25/"},
        {"a:b", NULL, "./a:b/"},
        {"line\nbreak", NULL, "line%0Abreak/"},
        {"caf\xc3\xa9", NULL, "caf%C3%A9/"},
        {"sub", "x=1&y", "sub/?x=1&y"},
        {"it's(1)", NULL, "it's(1)/"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char out[128];
        size_t n = request_folder_location(rows[i].name, strlen(rows[i].name), rows[i].query, out,
                                           sizeof(out));
        assert_int_equal(n, strlen(rows[i].location));
        assert_string_equal(out, rows[i].location);
    }
    char tiny[4];
    assert_int_equal(request_folder_location("abcd", 4, NULL, tiny, sizeof(tiny)), 0);
}

static void test_slash_location(void **state)
{
    static const struct {
        const char *sent, *canonical, *query, *location; /* location "": no redirect */
    } rows[] = {
        {"/a.txt", "/a.txt", NULL, ""},
        {"/a/b/", "/a/b/", NULL, ""},
        {"//a.txt", "/a.txt", NULL, "../a.txt"},
        {"/a//b.html", "/a/b.html", NULL, "../../a/b.html"},
        {"/a///", "/a/", "q=1", "../../../a/?q=1"},
        {"///", "/", NULL, "../../"},
        {"//dir%20sp/x", "/dir sp/x", NULL, "../../dir%20sp/x"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char out[128];
        size_t n = request_slash_location(rows[i].sent, strlen(rows[i].sent), rows[i].canonical,
                                          rows[i].query, out, sizeof(out));
        assert_int_equal(n, strlen(rows[i].location));
        if (n) {
            assert_string_equal(out, rows[i].location);
        }
    }
    /* 2,500 slashes climb 2,499 folders or give up: never a cut reference. */
    static char many[2600];
    memset(many, '/', 2500);
    memcpy(many + 2500, "a.txt", 6);
    char big[8192], small[1024];
    size_t n = request_slash_location(many, strlen(many), "/a.txt", NULL, big, sizeof(big));
    assert_int_equal(n, 2499 * 3 + 5);
    assert_int_equal(request_slash_location(many, strlen(many), "/a.txt", NULL, small, sizeof(small)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_tokens_and_methods),
        cmocka_unit_test(test_content_length),
        cmocka_unit_test(test_folder_location),
        cmocka_unit_test(test_slash_location),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
