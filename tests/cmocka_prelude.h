/* The includes cmocka needs before itself, in one place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* cmocka's test signature hands every test a `void **state` most never read;
 * the rule against unused parameters holds in src/, not here. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
