/* ticker: calls its function at its interval with the time on its clock. */
#include "cmocka_prelude.h"

#include <pthread.h>

#include "base/clock.h"
#include "base/ticker.h"

struct seen {
    pthread_mutex_t lock;
    pthread_cond_t ticked;
    int64_t at;
    unsigned ticks;
};

static int64_t fake_now(void *ctx)
{
    return *(const int64_t *)ctx;
}

static void record(void *arg, int64_t now_ms)
{
    struct seen *s = arg;
    pthread_mutex_lock(&s->lock);
    s->at = now_ms;
    s->ticks++;
    pthread_cond_signal(&s->ticked);
    pthread_mutex_unlock(&s->lock);
}

/* Each call says the time on the ticker's clock: the one its function judges by. */
static void test_ticks_carry_the_clock(void **state)
{
    int64_t now = 424242;
    struct clock clock = {fake_now, &now};
    struct seen s = {.lock = PTHREAD_MUTEX_INITIALIZER, .ticked = PTHREAD_COND_INITIALIZER};
    struct ticker *t = ticker_start(1, &clock, record, &s);
    assert_non_null(t);
    pthread_mutex_lock(&s.lock);
    while (s.ticks == 0) {
        pthread_cond_wait(&s.ticked, &s.lock); /* the first tick, an event */
    }
    assert_int_equal(s.at, 424242);
    pthread_mutex_unlock(&s.lock);
    ticker_stop(t); /* joins: a tick in progress ends first, and none comes after */
    ticker_stop(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticks_carry_the_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
