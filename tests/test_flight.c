/* flight: one build of a name at a time; past the slots, builds go alone. */
#include "cmocka_prelude.h"

#include <stdint.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
