/* inflight: a stop waits out the work under way, woken by the last to leave. */
#include "cmocka_prelude.h"

#include <pthread.h>
#include <time.h>

#include "base/inflight.h"

static void *wait_long(void *arg)
{
    static bool none_left;
    none_left = inflight_wait(arg, 60 * 1000);
    return &none_left;
}

/* None under way: at once. Some: until the last leaves, not the timeout. */
static void test_the_last_to_leave_wakes_the_waiter(void **state)
{
    struct inflight f;
    assert_true(inflight_init(&f));
    assert_true(inflight_wait(&f, 0));
    inflight_enter(&f);
    inflight_enter(&f);
    assert_int_equal(inflight_count(&f), 2);
    assert_false(inflight_wait(&f, 0)); /* the timeout, with work under way */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t waiter;
    assert_int_equal(pthread_create(&waiter, NULL, wait_long, &f), 0);
    inflight_leave(&f);
    inflight_leave(&f); /* whether the waiter is waiting yet or not, it wakes or never waits */
    void *none_left;
    assert_int_equal(pthread_join(waiter, &none_left), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(*(bool *)none_left);
    assert_true(t1.tv_sec - t0.tv_sec < 30); /* woken, long before its minute */
    inflight_finish(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_last_to_leave_wakes_the_waiter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
