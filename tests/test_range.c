/* range: the Range header against sizes, as a table (RFC 9110 14.1.2). */
#include "cmocka_prelude.h"

#include "serve/range.h"

static const struct {
    const char *header;
    uint64_t size;
    enum range_result want;
    uint64_t first, last;
} cases[] = {
    {NULL, 100, RANGE_NONE, 0, 0},
    {"bytes=0-9", 100, RANGE_SATISFIABLE, 0, 9},
    {"bytes=10-", 100, RANGE_SATISFIABLE, 10, 99},
    {"bytes=-10", 100, RANGE_SATISFIABLE, 90, 99},
    {"bytes=-1000", 100, RANGE_SATISFIABLE, 0, 99},
    {"bytes=0-1000", 100, RANGE_SATISFIABLE, 0, 99},
    {"bytes=99-99", 100, RANGE_SATISFIABLE, 99, 99},
    {"BYTES = 5-6", 100, RANGE_SATISFIABLE, 5, 6},
    {"bytes=5-6 ", 100, RANGE_SATISFIABLE, 5, 6},
    {"bytes=100-", 100, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=100-200", 100, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=-0", 100, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=0-", 0, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=-5", 0, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=200-300, 5-6", 100, RANGE_SATISFIABLE, 5, 6},
    {"bytes=0-1,5-6", 100, RANGE_NONE, 0, 0}, /* several: the whole, 200 */
    {"bytes=9-5", 100, RANGE_NONE, 0, 0},     /* invalid: ignored */
    {"bytes=", 100, RANGE_NONE, 0, 0},
    {"bytes=-", 100, RANGE_NONE, 0, 0},
    {"bytes=a-b", 100, RANGE_NONE, 0, 0},
    {"bytes=1-2-3", 100, RANGE_NONE, 0, 0},
    /* Empty list elements are accepted (RFC 9110 5.6.1); none but them is no range-set. */
    {"bytes=1-2,", 100, RANGE_SATISFIABLE, 1, 2},
    {"bytes=,0-1", 100, RANGE_SATISFIABLE, 0, 1},
    {"bytes= , ,5-6 , ", 100, RANGE_SATISFIABLE, 5, 6},
    {"bytes=,", 100, RANGE_NONE, 0, 0},
    {"bytes=0-1,,5-6", 100, RANGE_NONE, 0, 0},
    {"items=0-5", 100, RANGE_NONE, 0, 0},
    {"bytes 0-5", 100, RANGE_NONE, 0, 0},
    /* Past 2^64 - 1: still a position past the end (RFC 9110 14.1.2), as nginx answers a first-pos */
    {"bytes=99999999999999999999999-", 100, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=18446744073709551615-", 100, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=0-99999999999999999999999", 100, RANGE_SATISFIABLE, 0, 99},
    {"bytes=-99999999999999999999999", 100, RANGE_SATISFIABLE, 0, 99},
    {"bytes=99999999999999999999998-99999999999999999999999", 100, RANGE_UNSATISFIABLE, 0, 0},
    {"bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7,8-8,9-9,10-10,11-11,12-12,13-13,14-14,15-15,16-16", 100, RANGE_NONE, 0, 0},
};

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t first = 12345, last = 67890; /* must stay untouched unless satisfiable */
        enum range_result got = range_parse(cases[i].header, cases[i].size, &first, &last);
        if (got != cases[i].want) {
            fail_msg("'%s' on %llu: got %d, want %d", cases[i].header ? cases[i].header : "(null)",
                     (unsigned long long)cases[i].size, got, cases[i].want);
        }
        if (got == RANGE_SATISFIABLE) {
            assert_int_equal(first, cases[i].first);
            assert_int_equal(last, cases[i].last);
            assert_true(first <= last && last < cases[i].size);
        } else if (first != 12345 || last != 67890) {
            fail_msg("'%s': wrote a range but answered %d", cases[i].header, got);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
