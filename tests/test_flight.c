/* flight: one build of a name at a time; past the slots, builds go alone. */
#include "cmocka_prelude.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "serve/flight.h"

/* The first to begin a name leads it; with every slot taken a build goes
 * ahead unnamed; an ended name can be led again. */
static void test_slots(void **state)
{
    uint64_t names[65];
    size_t led = 0;
    for (uint64_t i = 0; i < 65; i++) {
        names[i] = 1000 + i;
        enum flight f = flight_begin(names[i]);
        if (f == FLIGHT_LEAD) {
            led++;
        } else {
            assert_int_equal(f, FLIGHT_ALONE); /* never a wait: the names differ */
            assert_int_equal(i, 64);           /* only once the table is full */
        }
    }
    assert_int_equal(led, 64);
    for (size_t i = 0; i < led; i++) {
        flight_end(names[i]);
    }
    assert_int_equal(flight_begin(names[0]), FLIGHT_LEAD); /* ended: free to lead again */
    flight_end(names[0]);
}

static void *begin_seven(void *role)
{
    *(enum flight *)role = flight_begin(7);
    return NULL;
}

/* A build of a name in progress: the next to begin it waits until it ends,
 * then is told to look in the cache (FLIGHT_WAITED), not to build. */
static void test_a_second_build_waits(void **state)
{
    assert_int_equal(flight_begin(7), FLIGHT_LEAD);
    enum flight second = FLIGHT_LEAD;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, begin_seven, &second), 0);
    struct timespec now, until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 10;
    while (flight_waiting() == 0 && clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec < until.tv_sec) {
        sched_yield(); /* until it waits: an event awaited, 10 s at most */
    }
    assert_int_equal(flight_waiting(), 1);
    flight_end(7);
    pthread_join(t, NULL);
    assert_int_equal(second, FLIGHT_WAITED);
    assert_int_equal(flight_waiting(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots),
        cmocka_unit_test(test_a_second_build_waits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
