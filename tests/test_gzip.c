/* compress (the gzip test of old): output is real gzip (RFC 1952), brotli
 * (RFC 7932) and zstd (RFC 8878) that decodes back to the input, and
 * incompressible input is declined by each. */
#include "cmocka_prelude.h"

#include "build_config.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#if FOLIO_HAVE_BROTLI
#include <brotli/decode.h>
#endif
#if FOLIO_HAVE_ZSTD
#include <zstd.h>
#endif

#include "base/body.h"
#include "serve/compress.h"

static void test_round_trip(void **state)
{
    size_t len = 200000;
    char *text = malloc(len);
    for (size_t i = 0; i < len; i++) {
        text[i] = "the pipeline bubble shrinks as micro-batches grow\n"[i % 50];
    }
    struct body *gz = compress_body(ENCODING_GZIP, text, len, 6);
    assert_non_null(gz);
    assert_true(gz->len < len / 10);
    assert_int_equal(gz->data[0], 0x1f); /* gzip magic, not zlib's */
    assert_int_equal(gz->data[1], 0x8b);

    z_stream zs = {0};
    assert_int_equal(inflateInit2(&zs, 16 + 15), Z_OK);
    char *back = malloc(len + 1);
    zs.next_in = gz->data;
    zs.avail_in = (uInt)gz->len;
    zs.next_out = (Bytef *)back;
    zs.avail_out = (uInt)len + 1;
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    assert_int_equal(zs.total_out, len);
    assert_memory_equal(back, text, len);
    inflateEnd(&zs);
    free(back);
    free(text);
    body_unref(gz);
}

static void test_incompressible_declined(void **state)
{
    unsigned char noise[4096];
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < sizeof(noise); i++) { /* xorshift: no structure to find */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        noise[i] = (unsigned char)x;
    }
    assert_null(compress_body(ENCODING_GZIP, noise, sizeof(noise), 6));
    assert_null(compress_body(ENCODING_BR, noise, sizeof(noise), 11));
    assert_null(compress_body(ENCODING_ZSTD, noise, sizeof(noise), 19));
    assert_null(compress_body(ENCODING_IDENTITY, "aaaaaaaaaaaaaaaaaaaaaaaaaaaa", 28, 1));
}

/* brotli and zstd, at the levels of both modes, decode back; a long
 * repeat far apart (beyond gzip's 32 KiB window) is found by both. */
static void test_br_and_zstd_round_trip(void **state)
{
    size_t len = 1 << 20;
    unsigned char *text = malloc(len);
    uint32_t x = 88172645u;
    for (size_t i = 0; i < len / 2; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        text[i] = (unsigned char)('a' + x % 16);
    }
    memcpy(text + len / 2, text, len / 2); /* the second half repeats the first, 512 KiB back */
    struct body *gz = compress_body(ENCODING_GZIP, text, len, 6);
    assert_non_null(gz);
    const struct {
        enum encoding e;
        int level;
    } rows[] = {
        {ENCODING_BR, COMPRESS_BR_PREVIEW}, {ENCODING_BR, COMPRESS_BR_PRODUCTION},
        {ENCODING_ZSTD, COMPRESS_ZSTD_PREVIEW}, {ENCODING_ZSTD, COMPRESS_ZSTD_PRODUCTION},
    };
    unsigned char *back = malloc(len + 1);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct body *b = compress_body(rows[i].e, text, len, rows[i].level);
        assert_int_equal(b != NULL, compress_available(rows[i].e));
        if (!b) {
            continue;
        }
        assert_true(b->len < gz->len * 3 / 5); /* the repeat costs next to nothing */
        size_t n = len + 1;
#if FOLIO_HAVE_BROTLI
        if (rows[i].e == ENCODING_BR) {
            assert_int_equal(BrotliDecoderDecompress(b->len, b->data, &n, back),
                             BROTLI_DECODER_RESULT_SUCCESS);
        }
#endif
#if FOLIO_HAVE_ZSTD
        if (rows[i].e == ENCODING_ZSTD) {
            n = ZSTD_decompress(back, len + 1, b->data, b->len);
            assert_false(ZSTD_isError(n));
        }
#endif
        assert_int_equal(n, len);
        assert_memory_equal(back, text, len);
        body_unref(b);
    }
    free(back);
    body_unref(gz);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_incompressible_declined),
        cmocka_unit_test(test_br_and_zstd_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
