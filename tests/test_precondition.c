/* precondition: conditional requests in RFC 9110 13.2.2 order, If-Range,
 * and the three HTTP-date forms. */
#include "cmocka_prelude.h"

#include <string.h>

#include "serve/precondition.h"

#define ETAG "\"1a-2b-3c\""
#define T 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT */

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
        enum precondition_result got = precondition_evaluate(&cases[i].h, ETAG, T);
        if (got != cases[i].want) {
            fail_msg("case %zu: got %d, want %d", i, got, cases[i].want);
        }
    }
}

static void test_if_range(void **state)
{
    assert_true(precondition_if_range(NULL, ETAG, T));
    assert_true(precondition_if_range(ETAG, ETAG, T));
    assert_false(precondition_if_range("W/" ETAG, ETAG, T));
    assert_false(precondition_if_range("\"old\"", ETAG, T));
    assert_true(precondition_if_range("Sun, 06 Nov 1994 08:49:37 GMT", ETAG, T));
    assert_false(precondition_if_range("Sun, 06 Nov 1994 08:49:38 GMT", ETAG, T));
    assert_false(precondition_if_range("yesterday", ETAG, T));
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
        cmocka_unit_test(test_dates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
