/* clock: deadlines for timed waits, and the monotonic condition variable. */
#include "cmocka_prelude.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "base/clock.h"

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* @ms after the moment it was asked, whole seconds carried, on the clock
 * named: between ms after a reading before and ms after one after. */
static void test_deadline(void **state)
{
    static const unsigned spans[] = {0, 1, 999, 1000, 1001, 1500, 123456};
    static const clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_REALTIME};
    for (size_t c = 0; c < 2; c++) {
        for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
            struct timespec before, after;
            clock_gettime(clocks[c], &before);
            struct timespec t = clock_deadline(clocks[c], spans[i]);
            clock_gettime(clocks[c], &after);
            assert_true(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
            int64_t span = (int64_t)spans[i] * 1000000;
            assert_true(ns_of(t) >= ns_of(before) + span);
            assert_true(ns_of(t) <= ns_of(after) + span);
        }
    }
}

struct waker {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool woken;
};

static void *wake(void *arg)
{
    struct waker *w = arg;
    pthread_mutex_lock(&w->mu); /* taken once the test waits */
    w->woken = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* A condition variable from clock_cond_init counts on CLOCK_MONOTONIC: a
 * deadline 10 s ahead there (long past on CLOCK_REALTIME, which counts
 * from 1970) lets the wait last until it is woken. */
static void test_cond(void **state)
{
    struct waker w = {.mu = PTHREAD_MUTEX_INITIALIZER};
    assert_true(clock_cond_init(&w.cv));
    struct timespec until = clock_deadline(CLOCK_MONOTONIC, 10000);
    pthread_mutex_lock(&w.mu);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wake, &w), 0);
    int rc = 0;
    while (!w.woken && rc == 0) {
        rc = pthread_cond_timedwait(&w.cv, &w.mu, &until);
    }
    pthread_mutex_unlock(&w.mu);
    pthread_join(t, NULL);
    assert_int_equal(rc, 0);
    assert_true(w.woken);
    pthread_cond_destroy(&w.cv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_cond),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
