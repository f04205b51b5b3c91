/* report's pure parts: the form a report is written in, the origin rule. */
#include "cmocka_prelude.h"

#include <string.h>

#include "live/report.h"

static void test_form_fields(void **state)
{
    (void)state;
    static const struct {
        const char *form, *name, *want; /* want NULL: not found, or a bad escape */
    } cases[] = {
        {"kind=error&message=a%20b", "message", "a b"},
        {"kind=error&message=a+b", "message", "a b"},
        {"kind=error&message=", "message", ""},
        {"message=x&kind=place", "kind", "place"},
        {"kinds=x&kind=y", "kind", "y"},
        {"kind=error", "message", NULL},
        {"message=%zz", "message", NULL},
        {"message=%4", "message", NULL},
        {"message=%1B%5B2J", "message", "\x1b[2J"},
        {"", "kind", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[64];
        bool found = report_form_field(cases[i].form, cases[i].name, out, sizeof(out));
        if (cases[i].want == NULL) {
            assert_false(found);
        } else {
            assert_true(found);
            assert_string_equal(out, cases[i].want);
        }
    }
}

static void test_a_cut_keeps_whole_characters(void **state)
{
    (void)state;
    char out[6];
    /* "aé€" is 1 + 2 + 3 bytes: five fit, and the cut falls inside the euro sign */
    assert_true(report_form_field("m=a%C3%A9%E2%82%AC", "m", out, sizeof(out)));
    assert_string_equal(out, "a\xc3\xa9");
    assert_true(report_form_field("m=abcdefgh", "m", out, sizeof(out)));
    assert_string_equal(out, "abcde");
}

static void test_same_origin(void **state)
{
    (void)state;
    assert_true(report_same_origin("127.0.0.1:8000", NULL, NULL));
    assert_true(report_same_origin("127.0.0.1:8000", NULL, "same-origin"));
    assert_true(report_same_origin("127.0.0.1:8000", "http://127.0.0.1:8000", "same-origin"));
    assert_true(report_same_origin("Example.org", "https://example.org", NULL));
    assert_false(report_same_origin("127.0.0.1:8000", NULL, "same-site"));
    assert_false(report_same_origin("127.0.0.1:8000", NULL, "cross-site"));
    assert_false(report_same_origin("127.0.0.1:8000", NULL, "none"));
    assert_false(report_same_origin("127.0.0.1:8000", "http://127.0.0.1:8001", NULL));
    assert_false(report_same_origin("127.0.0.1:8000", "http://evil.example", "same-origin"));
    assert_false(report_same_origin("127.0.0.1:8000", "null", NULL));
    assert_false(report_same_origin(NULL, "http://127.0.0.1:8000", NULL));
    assert_false(report_same_origin("127.0.0.1:8000", "ftp://127.0.0.1:8000", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form_fields),
        cmocka_unit_test(test_a_cut_keeps_whole_characters),
        cmocka_unit_test(test_same_origin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
