/* encoding: Accept-Encoding with q-values (RFC 9110 12.5.3), as a table. */
#include "cmocka_prelude.h"

#include <stdbool.h>

#include "serve/encoding.h"

static const struct {
    const char *header;
    bool gzip;
} cases[] = {
    {NULL, false},
    {"", false},
    {"gzip", true},
    {"GZIP", true},
    {"x-gzip", true},
    {"gzip, deflate, br", true},
    {"br, gzip;q=0.8", true},
    {"deflate, br", false},
    {"identity", false},
    {"gzip;q=0", false},
    {"gzip; q=0.000", false},
    {"gzip;q=0.001", true},
    {"gzip;Q=1", true},
    {"gzip;q=1.0", true},
    {"*", true},
    {"*;q=0", false},
    {"*;q=0.5, gzip;q=0", false},  /* named beats wildcard */
    {"gzip;q=0, *", false},
    {"identity;q=0, gzip", true},
    {"gzip;q=2", false},            /* malformed q: the entry is ignored */
    {"gzip;q=abc", false},
    {"gzipper", false},
    {" , ,gzip , ", true},
    {"deflate;q=0.5,gzip;q=0.5", true},
};

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (encoding_accepts_gzip(cases[i].header) != cases[i].gzip) {
            fail_msg("'%s': want %s", cases[i].header ? cases[i].header : "(null)",
                     cases[i].gzip ? "gzip" : "identity");
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
