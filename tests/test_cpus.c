/* cpus: the CPU quota of a cgroup v2 cpu.max line, against the CPUs the
 * affinity mask gives. */
#include "cmocka_prelude.h"

#include "base/cpus.h"

static const struct {
    const char *line;
    unsigned cpus, want;
} cases[] = {
    {"max 100000\n", 8, 8},       /* no quota */
    {"150000 100000\n", 8, 2},    /* --cpus 1.5: rounded up */
    {"100000 100000\n", 8, 1},
    {"50000 100000\n", 8, 1},     /* half a CPU still runs one thread */
    {"800000 100000\n", 4, 4},    /* a quota above the mask: the mask */
    {"200000 50000\n", 16, 4},    /* another period */
    {"0 100000\n", 4, 4},         /* nonsense: no limit read */
    {"", 3, 3},
    {"max", 2, 2},
};

static void test_quota_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned got = cpus_within_quota(cases[i].line, cases[i].cpus);
        if (got != cases[i].want) {
            fail_msg("'%s' with %u CPUs: %u, want %u", cases[i].line, cases[i].cpus, got, cases[i].want);
        }
    }
}

static void test_available_is_at_least_one(void **state)
{
    assert_true(cpus_available() >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_table),
        cmocka_unit_test(test_available_is_at_least_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
