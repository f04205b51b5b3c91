/* encoding: Accept-Encoding with q-values (RFC 9110 12.5.3), as tables:
 * what is accepted, which body is better, the ranks a whole response shares. */
#include "cmocka_prelude.h"

#include <stdbool.h>
#include <string.h>

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
        if ((encoding_parse(cases[i].header).q[ENCODING_GZIP] > 0) != cases[i].gzip) {
            fail_msg("'%s': want %s", cases[i].header ? cases[i].header : "(null)",
                     cases[i].gzip ? "gzip" : "identity");
        }
    }
}

/* Every coding's q-value, in thousandths: identity, gzip, zstd, br. */
static const struct {
    const char *header;
    unsigned q[ENCODING_COUNT];
} qs[] = {
    {NULL, {1, 0, 0, 0}},                          /* no header: identity only */
    {"", {1, 0, 0, 0}},
    {"gzip, deflate, br, zstd", {1, 1000, 1000, 1000}}, /* Chromium's */
    {"br;q=1, gzip;q=0.8", {1, 800, 0, 1000}},
    {"BR, ZSTD;q=0.5", {1, 0, 500, 1000}},
    {"*", {1000, 1000, 1000, 1000}},
    {"*;q=0.3, br", {300, 300, 300, 1000}},        /* "*" stands for every coding not named */
    {"*;q=0", {0, 0, 0, 0}},                        /* identity refused too (RFC 9110 12.5.3) */
    {"*;q=0, identity", {1000, 0, 0, 0}},
    {"identity;q=0, zstd", {0, 0, 1000, 0}},
    {"identity;q=0.5, br;q=0.1", {500, 0, 0, 100}},
    {"br;q=0, br;q=0.7", {1, 0, 0, 700}},          /* named twice: the highest */
    {"br;q=1.5, zstd;q=x", {1, 0, 0, 0}},          /* malformed: ignored */
    {"brotli, zstandard, x-zstd", {1, 0, 0, 0}},   /* not tokens of the registry */
    {"br ; q=0.25 , zstd\t;q=0.5", {1, 0, 500, 250}},
    {"x-gzip;q=0.2, gzip;q=0.4", {1, 400, 0, 0}},
};

static void test_q_table(void **state)
{
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        struct encoding_accept acc = encoding_parse(qs[i].header);
        for (size_t e = 0; e < ENCODING_COUNT; e++) {
            if (acc.q[e] != qs[i].q[e]) {
                fail_msg("'%s': coding %zu has q %u, want %u",
                         qs[i].header ? qs[i].header : "(null)", e, acc.q[e], qs[i].q[e]);
            }
        }
    }
}

/* Which of two bodies answers: an acceptable one, then the smaller, then
 * br > zstd > gzip > identity. */
static const struct {
    const char *header;
    enum encoding a;
    uint64_t size_a;
    enum encoding b;
    uint64_t size_b;
    bool a_better;
} choices[] = {
    {"gzip, br, zstd", ENCODING_BR, 100, ENCODING_GZIP, 200, true},
    {"gzip, br, zstd", ENCODING_BR, 300, ENCODING_GZIP, 200, false},  /* smaller wins */
    {"gzip, br, zstd", ENCODING_BR, 200, ENCODING_ZSTD, 200, true},   /* tie: br */
    {"gzip, br, zstd", ENCODING_ZSTD, 200, ENCODING_GZIP, 200, true}, /* tie: zstd over gzip */
    {"gzip, br, zstd", ENCODING_GZIP, 200, ENCODING_IDENTITY, 200, true},
    {"gzip;q=1, br;q=0.5", ENCODING_GZIP, 900, ENCODING_BR, 100, false}, /* any q > 0: the size */
    {"br;q=0, gzip", ENCODING_BR, 1, ENCODING_GZIP, 900, false},        /* refused */
    {"gzip", ENCODING_GZIP, 900, ENCODING_IDENTITY, 1000, true},
    {"gzip", ENCODING_IDENTITY, 1000, ENCODING_GZIP, 900, false},
    {"identity, gzip;q=0.5", ENCODING_IDENTITY, 1000, ENCODING_GZIP, 10, false},
    {"gzip;q=0", ENCODING_IDENTITY, 1000, ENCODING_GZIP, 10, true},
    {"identity;q=0, gzip", ENCODING_IDENTITY, 1, ENCODING_GZIP, 900, false},
};

static void test_choices(void **state)
{
    for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
        struct encoding_accept acc = encoding_parse(choices[i].header);
        if (encoding_better(&acc, choices[i].a, choices[i].size_a, choices[i].b, choices[i].size_b) !=
            choices[i].a_better) {
            fail_msg("row %zu ('%s'): want %s", i, choices[i].header,
                     choices[i].a_better ? "a" : "b");
        }
    }
}

/* The ranks that name a shared whole response: equal for clients that
 * choose alike, apart for clients that may not. */
static void test_ranks(void **state)
{
    static const struct {
        const char *header, *ranks; /* identity, gzip, zstd, br */
    } rows[] = {
        {NULL, "1000"},
        {"gzip", "1100"},
        {"gzip, deflate, br, zstd", "1111"},
        {"br, zstd, gzip", "1111"},
        {"gzip;q=0.9, br;q=0.8", "1101"},
        {"gzip;q=0.5, br;q=0.4", "1101"},  /* accepted alike: the same answer */
        {"identity;q=0, br", "0001"},
        {"*", "1111"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct encoding_accept acc = encoding_parse(rows[i].header);
        char ranks[ENCODING_COUNT + 1] = {0};
        encoding_rank(&acc, ranks);
        if (strcmp(ranks, rows[i].ranks) != 0) {
            fail_msg("'%s': ranks %s, want %s", rows[i].header ? rows[i].header : "(null)", ranks,
                     rows[i].ranks);
        }
    }
}

static void test_names(void **state)
{
    assert_null(encoding_name(ENCODING_IDENTITY));
    assert_string_equal(encoding_name(ENCODING_GZIP), "gzip");
    assert_string_equal(encoding_name(ENCODING_ZSTD), "zstd");
    assert_string_equal(encoding_name(ENCODING_BR), "br");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_q_table),
        cmocka_unit_test(test_choices),
        cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
