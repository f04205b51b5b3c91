/* log: the three formats, and that client strings cannot break a line. */
#include "cmocka_prelude.h"

#include <stdlib.h>
#include <string.h>

#include "serve/log.h"

static struct log_record sample(void)
{
    return (struct log_record){
        .remote = "127.0.0.1",
        .time = {784111777, 250000000},
        .method = "GET",
        .target = "/assets/read%20aloud.mp3",
        .protocol = "HTTP/1.1",
        .status = 206,
        .bytes = 1234,
        .referer = "http://127.0.0.1:8000/",
        .user_agent = "curl/7.88",
        .duration_ms = 1.5,
    };
}

static void test_common_and_combined(void **state)
{
    setenv("TZ", "UTC", 1);
    struct log_record r = sample();
    char line[1024];
    log_format_line(LOG_FORMAT_COMMON, &r, line, sizeof(line));
    assert_string_equal(line, "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] "
                              "\"GET /assets/read%20aloud.mp3 HTTP/1.1\" 206 1234\n");
    log_format_line(LOG_FORMAT_COMBINED, &r, line, sizeof(line));
    assert_string_equal(line, "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] "
                              "\"GET /assets/read%20aloud.mp3 HTTP/1.1\" 206 1234 "
                              "\"http://127.0.0.1:8000/\" \"curl/7.88\"\n");
    r.referer = NULL;
    r.user_agent = NULL;
    log_format_line(LOG_FORMAT_COMBINED, &r, line, sizeof(line));
    assert_non_null(strstr(line, " \"-\" \"-\"\n"));
}

static void test_json(void **state)
{
    struct log_record r = sample();
    char line[1024];
    log_format_line(LOG_FORMAT_JSON, &r, line, sizeof(line));
    assert_string_equal(line, "{\"time\":\"1994-11-06T08:49:37.250Z\",\"remote\":\"127.0.0.1\","
                              "\"method\":\"GET\",\"uri\":\"/assets/read%20aloud.mp3\","
                              "\"protocol\":\"HTTP/1.1\",\"status\":206,\"bytes\":1234,"
                              "\"referer\":\"http://127.0.0.1:8000/\",\"user_agent\":\"curl/7.88\","
                              "\"duration_ms\":1.500,\"complete\":true}\n");
    r.incomplete = true;
    log_format_line(LOG_FORMAT_JSON, &r, line, sizeof(line));
    assert_non_null(strstr(line, ",\"complete\":false}\n"));
}

/* Lines a second apart, and back again, each carry their own second (the
 * formatted second is kept from one line to the next). */
static void test_each_line_has_its_own_second(void **state)
{
    setenv("TZ", "UTC", 1);
    struct log_record r = sample();
    char line[1024];
    const char *common[] = {"[06/Nov/1994:08:49:37 +0000]", "[06/Nov/1994:08:49:38 +0000]"};
    const char *json[] = {"\"1994-11-06T08:49:37.250Z\"", "\"1994-11-06T08:49:38.250Z\""};
    for (int i = 0; i < 6; i++) {
        r.time.tv_sec = 784111777 + (i % 3 == 1);
        log_format_line(LOG_FORMAT_COMMON, &r, line, sizeof(line));
        assert_non_null(strstr(line, common[i % 3 == 1]));
        log_format_line(LOG_FORMAT_JSON, &r, line, sizeof(line));
        assert_non_null(strstr(line, json[i % 3 == 1]));
    }
}

/* A cut response's line is the standard one plus a last field, so parsers
 * of common and combined still find every standard field in its place. */
static void test_incomplete_appends_one_field(void **state)
{
    setenv("TZ", "UTC", 1);
    struct log_record r = sample();
    r.incomplete = true;
    char line[1024];
    log_format_line(LOG_FORMAT_COMMON, &r, line, sizeof(line));
    assert_string_equal(line, "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] "
                              "\"GET /assets/read%20aloud.mp3 HTTP/1.1\" 206 1234 incomplete\n");
    log_format_line(LOG_FORMAT_COMBINED, &r, line, sizeof(line));
    assert_string_equal(line, "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] "
                              "\"GET /assets/read%20aloud.mp3 HTTP/1.1\" 206 1234 "
                              "\"http://127.0.0.1:8000/\" \"curl/7.88\" incomplete\n");
}

static void test_hostile_strings_are_escaped(void **state)
{
    struct log_record r = sample();
    r.target = "/a\"b\\c\n127.0.0.1 - - fake\x1b[31m\xff";
    r.user_agent = "\"quoted\"";
    char line[1024];
    size_t len = log_format_line(LOG_FORMAT_COMBINED, &r, line, sizeof(line));
    assert_int_equal(strlen(line), len);
    assert_int_equal(strchr(line, '\n') - line, (long)len - 1); /* one line, whatever came in */
    assert_null(strchr(line, '\x1b'));
    assert_non_null(strstr(line, "/a\\\"b\\\\c\\x0A127.0.0.1 - - fake\\x1B[31m\\xFF"));
    assert_non_null(strstr(line, "\"\\\"quoted\\\"\""));
    log_format_line(LOG_FORMAT_JSON, &r, line, sizeof(line));
    /* JSON is UTF-8: a byte that is no UTF-8 is U+FFFD, never \u00ff (Latin-1). */
    assert_non_null(strstr(line, "\"uri\":\"/a\\\"b\\\\c\\u000a127.0.0.1 - - fake\\u001b[31m\\ufffd\""));
}

static void test_json_keeps_utf8_and_marks_what_is_not(void **state)
{
    struct log_record r = sample();
    r.user_agent = "Mozilla/5.0 (Caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80)";
    char line[1024];
    log_format_line(LOG_FORMAT_JSON, &r, line, sizeof(line));
    assert_non_null(strstr(line, "\"user_agent\":\"Mozilla/5.0 (Caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80)\""));
    /* Overlong, surrogate, past U+10FFFF, cut short, a lone continuation. */
    r.user_agent = "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82|\x80";
    log_format_line(LOG_FORMAT_JSON, &r, line, sizeof(line));
    assert_non_null(strstr(line, "\"user_agent\":\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
                                 "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd|\\ufffd\""));
    /* The text formats keep every byte, as \xHH. */
    log_format_line(LOG_FORMAT_COMBINED, &r, line, sizeof(line));
    assert_non_null(strstr(line, "\"\\xC0\\xAF|\\xED\\xA0\\x80|"));
}

static void test_nothing_sent_is_a_dash(void **state)
{
    struct log_record r = sample();
    r.status = 0;
    r.bytes = 0;
    char line[1024];
    log_format_line(LOG_FORMAT_COMMON, &r, line, sizeof(line));
    assert_non_null(strstr(line, "HTTP/1.1\" - 0\n"));
    log_format_line(LOG_FORMAT_JSON, &r, line, sizeof(line));
    assert_non_null(strstr(line, "\"status\":null,\"bytes\":0,"));
}

static void test_long_target_is_truncated_not_overflowed(void **state)
{
    struct log_record r = sample();
    char *target = malloc(20000);
    memset(target, 'a', 19999);
    target[19999] = '\0';
    r.target = target;
    char line[1024];
    for (int f = LOG_FORMAT_COMMON; f <= LOG_FORMAT_JSON; f++) {
        size_t len = log_format_line((enum log_format)f, &r, line, sizeof(line));
        assert_true(len < sizeof(line));
        assert_int_equal(line[len - 1], '\n');
        assert_non_null(strstr(line, "..."));
        assert_non_null(strstr(line, f == LOG_FORMAT_JSON ? "\"status\":206" : "\" 206 1234"));
    }
    free(target);
}

static void test_parse(void **state)
{
    enum log_format f;
    assert_true(log_format_parse("json", &f));
    assert_int_equal(f, LOG_FORMAT_JSON);
    assert_true(log_format_parse("combined", &f));
    assert_int_equal(f, LOG_FORMAT_COMBINED);
    assert_false(log_format_parse("JSON ", &f));
    assert_false(log_format_parse("", &f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_and_combined),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_each_line_has_its_own_second),
        cmocka_unit_test(test_incomplete_appends_one_field),
        cmocka_unit_test(test_json_keeps_utf8_and_marks_what_is_not),
        cmocka_unit_test(test_nothing_sent_is_a_dash),
        cmocka_unit_test(test_hostile_strings_are_escaped),
        cmocka_unit_test(test_long_target_is_truncated_not_overflowed),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
