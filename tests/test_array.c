/* array: room by doubling, and nothing lost when there is none. */
#include "cmocka_prelude.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/array.h"

/* The first call takes first, then the capacity doubles, or jumps to need. */
static void test_grows_by_doubling(void **state)
{
    size_t cap = 0;
    int *a = array_grow(NULL, &cap, 1, sizeof *a, 16);
    assert_non_null(a);
    assert_int_equal(cap, 16);
    assert_ptr_equal(array_grow(a, &cap, 16, sizeof *a, 16), a); /* room already: itself */
    assert_int_equal(cap, 16);
    a = array_grow(a, &cap, 17, sizeof *a, 16);
    assert_non_null(a);
    assert_int_equal(cap, 32);
    a[31] = 7; /* the room is there */
    a = array_grow(a, &cap, 100, sizeof *a, 16);
    assert_non_null(a);
    assert_int_equal(cap, 100); /* more than twice: just what was asked */
    assert_int_equal(a[31], 7); /* what was in it stays */
    free(a);
    cap = 0;
    char *b = array_grow(NULL, &cap, 5, 1, 0);
    assert_non_null(b);
    assert_int_equal(cap, 5);
    free(b);
}

/* A size that would overflow is refused, the array and its capacity kept. */
static void test_overflow_keeps_the_array(void **state)
{
    size_t cap = 0;
    long *a = array_grow(NULL, &cap, 4, sizeof *a, 0);
    assert_non_null(a);
    assert_null(array_grow(a, &cap, SIZE_MAX / 2, sizeof *a, 0));
    assert_int_equal(cap, 4);
    a[3] = 1; /* still the caller's */
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_by_doubling),
        cmocka_unit_test(test_overflow_keeps_the_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
