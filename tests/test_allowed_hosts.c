/* allowed_hosts: the Host names a preview answers (DNS rebinding). */
#include "cmocka_prelude.h"

#include <string.h>

#include "base/allowed_hosts.h"

static bool match(const char *host, const char *list)
{
    return allowed_hosts_match(host, strlen(host), list);
}

static void test_what_a_preview_answers_by_itself(void **state)
{
    static const char *const yes[] = {
        "localhost", "localhost:8000", "LOCALHOST", "localhost.", "a.localhost", "b.a.localhost:1",
        "127.0.0.1", "127.0.0.1:8000", "192.168.1.20", "10.0.0.7:80", "[::1]", "[::1]:8000",
        "[fe80::1]", "", "localhost  ",
    };
    static const char *const no[] = {
        "evil.example", "evil.example:8000", "localhost.evil.example", "notlocalhost", "xlocalhost",
        "127.0.0.1.evil.example", "1.2.3", "999.1.1.1", "t", "a",
    };
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (!match(yes[i], "")) {
            fail_msg("refused %s", yes[i]);
        }
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        if (match(no[i], "")) {
            fail_msg("answered %s", no[i]);
        }
    }
}

static void test_the_list(void **state)
{
    const char *list = "box.local, .example.org ,Docs.Internal.";
    assert_true(match("box.local", list));
    assert_true(match("BOX.LOCAL:8000", list));
    assert_true(match("example.org", list));
    assert_true(match("a.example.org", list));
    assert_true(match("b.a.example.org:1", list));
    assert_true(match("docs.internal", list));
    assert_false(match("xexample.org", list));
    assert_false(match("box.local.evil", list));
    assert_false(match("evil.example", list));
    assert_true(match("anything.at.all", "*"));
    assert_true(match("anything", "box.local,*"));
}

static void test_a_list_is_checked(void **state)
{
    static const char *const good[] = {"box.local", ".example.org", "*", "a,b", " a , b ", "my_box.lan"};
    static const char *const bad[] = {"", ",", "a,,b", ".", "..", "a b", "box/x", "http://box", "a:80",
                                      "[::1]", "x\x1b"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (!allowed_hosts_valid(good[i])) {
            fail_msg("refused the list '%s'", good[i]);
        }
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (allowed_hosts_valid(bad[i])) {
            fail_msg("took the list '%s'", bad[i]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_what_a_preview_answers_by_itself),
        cmocka_unit_test(test_the_list),
        cmocka_unit_test(test_a_list_is_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
