/* escape: the one rule for a line printed from bytes folio did not write. */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"

static void test_table(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain/path-1.html", "plain/path-1.html"},
        {"", ""},
        {"a\tb\nc\rd", "a\\x09b\\x0Ac\\x0Dd"},
        {"\x1b[2K\x1b[1A", "\\x1B[2K\\x1B[1A"},       /* erase the line, go up */
        {"\x1b]52;c;aGk=\x07", "\\x1B]52;c;aGk=\\x07"}, /* OSC 52: the clipboard */
        {"del\x7f", "del\\x7F"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"\xc2\x9b" "31m", "\\xC2\\x9B31m"},            /* U+009B, the C1 CSI */
        {"\xc2\xa0", "\xc2\xa0"},                       /* U+00A0 is text */
        {"ab\xe2\x80\xae" "cd", "ab\\xE2\\x80\\xAEcd"}, /* U+202E reorders the line */
        {"\xe2\x81\xa6x\xe2\x80\xa8", "\\xE2\\x81\\xA6x\\xE2\\x80\\xA8"}, /* U+2066, U+2028 */
        {"\x9b\xff\xc0\xaf", "\\x9B\\xFF\\xC0\\xAF"},   /* no UTF-8, an overlong "/" */
        {"\xed\xa0\x80", "\\xED\\xA0\\x80"},            /* a surrogate */
        {"\xe2\x82", "\\xE2\\x82"},                     /* cut short */
        {"back\\slash \"quoted\"", "back\\slash \"quoted\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[256];
        size_t n = escape_text(cases[i].in, out, sizeof(out));
        assert_string_equal(out, cases[i].out);
        assert_int_equal(n, strlen(out));
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        escape_fputs(cases[i].in, f);
        fclose(f);
        assert_string_equal(buf, cases[i].out); /* one rule, both ways of writing */
        free(buf);
    }
}

static void test_what_does_not_fit_ends_in_dots(void **state)
{
    char out[12];
    assert_int_equal(escape_text("0123456789a", out, sizeof(out)), 11); /* fits exactly */
    assert_string_equal(out, "0123456789a");
    escape_text("0123456789ab", out, sizeof(out));
    assert_string_equal(out, "01234567...");
    escape_text("01234\x1b\x1b", out, sizeof(out)); /* never half an escape */
    assert_string_equal(out, "01234...");
    escape_text("0\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", out, sizeof(out)); /* nor half a character */
    assert_string_equal(out, "0\xe2\x82\xac\xe2\x82\xac...");
}

/* The JSON rule: UTF-8 kept, '"' '\\' and controls escaped, no UTF-8 as U+FFFD. */
static void test_json(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "\"plain\""},
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"\r\n\x1b[2K\x7f", "\"\\u000d\\u000a\\u001b[2K\\u007f\""},
        {"caf\xc3\xa9 \xe2\x80\xae", "\"caf\xc3\xa9 \xe2\x80\xae\""}, /* UTF-8 stays, U+202E too: JSON's reader unescapes */
        {"\xff\xc3(", "\"\\ufffd\\ufffd(\""},                        /* no UTF-8: one U+FFFD a byte */
        {"\xf0\x9f\x98\x80!", "\"\xf0\x9f\x98\x80!\""},
        {"", "\"\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        escape_json_fputs(cases[i].in, f);
        fclose(f);
        assert_string_equal(buf, cases[i].out);
        free(buf);
    }
    char step[ESCAPE_JSON_STEP_MAX + 1];
    size_t taken;
    assert_int_equal(escape_json_step("\xe2\x82\xac", step, &taken), 3); /* the euro sign, whole */
    assert_int_equal(taken, 3);
    assert_int_equal(escape_json_step("\xe2\x82", step, &taken), 6); /* cut short: U+FFFD for the lead */
    assert_int_equal(taken, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_what_does_not_fit_ends_in_dots),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
