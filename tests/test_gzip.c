/* gzip: output is real gzip (RFC 1952) that inflates back to the input,
 * and incompressible input is declined. */
#include "cmocka_prelude.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_incompressible_declined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
