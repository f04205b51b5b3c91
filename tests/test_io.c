/* io: whole writes, and strings written with stdio. */
#include "cmocka_prelude.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/io.h"

/* What is written through the stream is the string; nothing written is "";
 * a string larger than stdio's buffer comes back whole. */
static void test_text(void **state)
{
    struct io_text text;
    FILE *out = io_text_open(&text);
    assert_non_null(out);
    fprintf(out, "{\"n\":%d,", 42);
    fputs("\"s\":\"x\"}", out);
    char *s = io_text_close(&text, out);
    assert_string_equal(s, "{\"n\":42,\"s\":\"x\"}");
    free(s);

    out = io_text_open(&text);
    assert_non_null(out);
    s = io_text_close(&text, out);
    assert_string_equal(s, "");
    free(s);

    out = io_text_open(&text);
    for (int i = 0; i < 100000; i++) {
        fputc('a' + i % 26, out);
    }
    s = io_text_close(&text, out);
    assert_int_equal(strlen(s), 100000);
    assert_int_equal(s[99999], 'a' + 99999 % 26);
    free(s);
}

/* Every byte reaches the other end; a closed end is refused. */
static void test_write_all(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_true(io_write_all(fds[1], "hello", 5));
    char got[8] = {0};
    assert_int_equal(read(fds[0], got, sizeof(got)), 5);
    assert_string_equal(got, "hello");
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    assert_false(io_write_all(fds[1], "x", 1));
    close(fds[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_write_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
