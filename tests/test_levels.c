/* The brotli-quality and zstd-level settings: their defaults (the levels the
 * size tiers top out at), their ranges, and a clear reason for a bad value. */
#include "cmocka_prelude.h"

#include <string.h>

#include "base/config.h"

static void test_defaults_are_the_tiers_best(void **state)
{
    struct config c;
    config_init(&c);
    assert_int_equal(c.brotli_quality, 11);
    assert_int_equal(c.zstd_level, 19);
    config_finish(&c);
}

static const struct {
    const char *key, *value;
    const char *error; /* NULL: accepted; else a piece of the reason */
    unsigned want;
} cases[] = {
    {"brotli-quality", "1", NULL, 1},
    {"brotli-quality", "11", NULL, 11},
    {"brotli_quality", "5", NULL, 5},
    {"brotli-quality", "0", "from 1 to 11", 0},
    {"brotli-quality", "12", "from 1 to 11", 0},
    {"brotli-quality", "q9", "not a number", 0},
    {"zstd-level", "1", NULL, 1},
    {"zstd-level", "19", NULL, 19},
    {"zstd-level", "20", "from 1 to 19", 0},
    {"zstd-level", "", "not a number", 0},
};

static void test_set(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct config c;
        config_init(&c);
        char err[256] = "";
        bool ok = config_set(&c, cases[i].key, cases[i].value, err, sizeof(err));
        if (cases[i].error) {
            if (ok || !strstr(err, cases[i].error)) {
                fail_msg("%s=%s: '%s' lacks '%s'", cases[i].key, cases[i].value, err, cases[i].error);
            }
        } else {
            if (!ok) {
                fail_msg("%s=%s should pass: %s", cases[i].key, cases[i].value, err);
            }
            unsigned got = cases[i].key[0] == 'b' ? c.brotli_quality : c.zstd_level;
            assert_int_equal(got, cases[i].want);
        }
        config_finish(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_the_tiers_best),
        cmocka_unit_test(test_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
