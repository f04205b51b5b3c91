/* precondition: conditional requests in RFC 9110 13.2.2 order, If-Range,
 * and the three HTTP-date forms. */
#include "cmocka_prelude.h"

#include <string.h>

#include "serve/precondition.h"

#define ETAG "\"1a-2b-3c\""
#define T 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT */
#define NOW (T + 30 * 86400) /* the request's time: a month later */

static const struct precondition_times times = {T, T}; /* written then, unchanged since */

static const struct {
    struct precondition_headers h;
    enum precondition_result want;
} cases[] = {
    {{NULL, NULL, NULL, NULL}, PRECONDITION_PASS},
    {{NULL, ETAG, NULL, NULL}, PRECONDITION_NOT_MODIFIED},
    {{NULL, "W/" ETAG, NULL, NULL}, PRECONDITION_NOT_MODIFIED}, /* weak comparison */
    {{NULL, "\"x\", " ETAG, NULL, NULL}, PRECONDITION_NOT_MODIFIED},
    {{NULL, "\"x\",W/\"y\"," ETAG, NULL, NULL}, PRECONDITION_NOT_MODIFIED},
    {{NULL, "*", NULL, NULL}, PRECONDITION_NOT_MODIFIED},
    {{NULL, "\"other\"", NULL, NULL}, PRECONDITION_PASS},
    {{NULL, "\"1a-2b-3c-gz\"", NULL, NULL}, PRECONDITION_PASS}, /* another variant */
    {{NULL, "garbage", NULL, NULL}, PRECONDITION_PASS},
    /* empty list elements are accepted (RFC 9110 5.6.1) */
    {{NULL, ", " ETAG, NULL, NULL}, PRECONDITION_NOT_MODIFIED},
    {{NULL, "\"x\", ,," ETAG ",", NULL, NULL}, PRECONDITION_NOT_MODIFIED},
    {{", " ETAG, NULL, NULL, NULL}, PRECONDITION_PASS},
    {{",", NULL, NULL, NULL}, PRECONDITION_FAILED},
    {{NULL, NULL, "Sun, 06 Nov 1994 08:49:37 GMT", NULL}, PRECONDITION_NOT_MODIFIED},
    {{NULL, NULL, "Sun, 06 Nov 1994 08:49:36 GMT", NULL}, PRECONDITION_PASS},
    {{NULL, NULL, "Mon, 07 Nov 1994 00:00:00 GMT", NULL}, PRECONDITION_NOT_MODIFIED},
    {{NULL, NULL, "not a date", NULL}, PRECONDITION_PASS},
    /* If-None-Match wins over If-Modified-Since (13.1.3) */
    {{NULL, "\"other\"", "Mon, 07 Nov 1994 00:00:00 GMT", NULL}, PRECONDITION_PASS},
    {{ETAG, NULL, NULL, NULL}, PRECONDITION_PASS},
    {{"*", NULL, NULL, NULL}, PRECONDITION_PASS},
    {{"\"other\"", NULL, NULL, NULL}, PRECONDITION_FAILED},
    {{"W/" ETAG, NULL, NULL, NULL}, PRECONDITION_FAILED}, /* If-Match compares strongly */
    {{NULL, NULL, NULL, "Sun, 06 Nov 1994 08:49:36 GMT"}, PRECONDITION_FAILED},
    {{NULL, NULL, NULL, "Sun, 06 Nov 1994 08:49:37 GMT"}, PRECONDITION_PASS},
    {{ETAG, NULL, NULL, "Sun, 06 Nov 1994 08:49:36 GMT"}, PRECONDITION_PASS}, /* If-Match wins */
};

static void test_evaluate(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum precondition_result got = precondition_evaluate(&cases[i].h, ETAG, &times, NOW);
        if (got != cases[i].want) {
            fail_msg("case %zu: got %d, want %d", i, got, cases[i].want);
        }
    }
}

static void test_if_range(void **state)
{
    assert_true(precondition_if_range(NULL, ETAG, &times, NOW));
    assert_true(precondition_if_range(ETAG, ETAG, &times, NOW));
    assert_false(precondition_if_range("W/" ETAG, ETAG, &times, NOW));
    assert_false(precondition_if_range("\"old\"", ETAG, &times, NOW));
    assert_true(precondition_if_range("Sun, 06 Nov 1994 08:49:37 GMT", ETAG, &times, NOW));
    assert_false(precondition_if_range("Sun, 06 Nov 1994 08:49:38 GMT", ETAG, &times, NOW));
    assert_false(precondition_if_range("yesterday", ETAG, &times, NOW));
}

/* RFC 9110 8.8.2.1: a Last-Modified never later than the Date; and a date
 * "not modified since" only when the file did not change since, here. */
static void test_future_and_older_mtimes(void **state)
{
    const struct precondition_times future = {NOW + 365 * 86400, T}; /* a clock a year ahead */
    assert_int_equal(precondition_last_modified(&future, NOW), NOW);
    assert_int_equal(precondition_last_modified(&times, NOW), T);
    char sent[30], then[30], later[30], ahead[30];
    precondition_date_format(NOW, sent);            /* what a client got for the future file */
    precondition_date_format(T - 10, then);         /* before the file changed here */
    precondition_date_format(NOW + 60, later);      /* later than the request */
    precondition_date_format(future.modified, ahead); /* the old answer's future date */
    struct precondition_headers h = {.if_modified_since = sent};
    assert_int_equal(precondition_evaluate(&h, ETAG, &future, NOW + 5), PRECONDITION_NOT_MODIFIED);
    h.if_modified_since = then; /* changed here after that date */
    assert_int_equal(precondition_evaluate(&h, ETAG, &future, NOW), PRECONDITION_PASS);
    h.if_modified_since = ahead; /* later than now: no date folio sent */
    assert_int_equal(precondition_evaluate(&h, ETAG, &future, NOW), PRECONDITION_PASS);
    assert_int_equal(precondition_evaluate(&h, ETAG, &times, NOW), PRECONDITION_PASS);
    h.if_modified_since = later;
    assert_int_equal(precondition_evaluate(&h, ETAG, &times, NOW), PRECONDITION_PASS);
    /* The redeploy that fixes the clock: a version with a real, older mtime, put in place
     * after the client's copy (ctime), is seen; the same version, not changed since, is 304. */
    const struct precondition_times fixed = {T, NOW + 3};
    h.if_modified_since = sent;
    assert_int_equal(precondition_evaluate(&h, ETAG, &fixed, NOW + 5), PRECONDITION_PASS);
    const struct precondition_times unpacked = {T, NOW - 3}; /* an archive's old mtime, unpacked before */
    assert_int_equal(precondition_evaluate(&h, ETAG, &unpacked, NOW + 5), PRECONDITION_NOT_MODIFIED);
    char mtime[30];
    precondition_date_format(T, mtime); /* its own Last-Modified: 304 however it got here */
    h.if_modified_since = mtime;
    assert_int_equal(precondition_evaluate(&h, ETAG, &fixed, NOW + 5), PRECONDITION_NOT_MODIFIED);
    /* If-Unmodified-Since sees the same changes. */
    struct precondition_headers u = {.if_unmodified_since = sent};
    assert_int_equal(precondition_evaluate(&u, ETAG, &fixed, NOW + 5), PRECONDITION_FAILED);
    /* If-Range: a stand-in date names no version. */
    assert_false(precondition_if_range(sent, ETAG, &future, NOW));
    assert_true(precondition_if_range(mtime, ETAG, &times, NOW));
}

static void test_dates(void **state)
{
    time_t t;
    assert_true(precondition_date_parse("Sun, 06 Nov 1994 08:49:37 GMT", &t));
    assert_int_equal(t, T);
    assert_true(precondition_date_parse("Sunday, 06-Nov-94 08:49:37 GMT", &t));
    assert_int_equal(t, T);
    assert_true(precondition_date_parse("Sun Nov  6 08:49:37 1994", &t));
    assert_int_equal(t, T);
    assert_false(precondition_date_parse("Sun, 06 Nov 1994 08:49:37 PST", &t));
    assert_false(precondition_date_parse("Sun, 06 Foo 1994 08:49:37 GMT", &t));
    assert_false(precondition_date_parse("Sun, 06 Nov 1994 25:49:37 GMT", &t));
    assert_false(precondition_date_parse("Sun, 06 Nov 1994 08:49:37 GMT trailing", &t));
    assert_false(precondition_date_parse("", &t));

    char buf[30];
    precondition_date_format(T, buf);
    assert_string_equal(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
    precondition_date_format((time_t)1 << 62, buf); /* beyond year 9999: clamped, no crash */
    assert_string_equal(buf, "Thu, 01 Jan 1970 00:00:00 GMT");
    precondition_date_format(-5, buf);
    assert_string_equal(buf, "Thu, 01 Jan 1970 00:00:00 GMT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evaluate),
        cmocka_unit_test(test_if_range),
        cmocka_unit_test(test_future_and_older_mtimes),
        cmocka_unit_test(test_dates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
