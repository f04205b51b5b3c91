/* Unit tests for html.c: where the live-reload snippet lands. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "html.h"

#define S "<script src=\"/__folio/reload.js\"></script>"

static const struct {
    const char *in;
    const char *want;
} cases[] = {
    /* The plain case and its spellings. */
    {"<html><head><title>t</title></head><body>x</body></html>",
     "<html><head><title>t</title>" S "</head><body>x</body></html>"},
    {"<HTML><HEAD></HEAD><BODY></BODY></HTML>",
     "<HTML><HEAD>" S "</HEAD><BODY></BODY></HTML>"},
    {"<head></HeAd ><body>", "<head>" S "</HeAd ><body>"},
    {"<head></head\n>", "<head>" S "</head\n>"},
    /* Only the first </head> counts. */
    {"<head></head></head>", "<head>" S "</head></head>"},
    /* "</header>" is not "</head>". */
    {"<body><header></header></body>", "<body><header></header>" S "</body>"},
    /* No </head>: before </body>, else at the end. */
    {"<p>hi</p></body></html>", "<p>hi</p>" S "</body></html>"},
    {"<P>hi</P></BODY>", "<P>hi</P>" S "</BODY>"},
    {"<p>no end tags", "<p>no end tags" S},
    {"", S},
    {"</hea", "</hea" S},
    /* Inside a comment or raw text an end tag is not one. */
    {"<!-- </head> --><head></head>", "<!-- </head> --><head>" S "</head>"},
    {"<!--</head>--></body>", "<!--</head>-->" S "</body>"},
    {"<!-- never closed </head>", "<!-- never closed </head>" S},
    {"<script>var s='</head>';</script></head>",
     "<script>var s='</head>';</script>" S "</head>"},
    {"<SCRIPT type=x>'</head>'</SCRIPT ></head>",
     "<SCRIPT type=x>'</head>'</SCRIPT >" S "</head>"},
    {"<style>/* </head> */</style></head>",
     "<style>/* </head> */</style>" S "</head>"},
    /* "<scripts>" is not a script element; its </head> counts. */
    {"<scripts></head>", "<scripts>" S "</head>"},
    /* An unterminated script swallows the rest: at the end. */
    {"<script></head>", "<script></head>" S},
    /* </body> before </head> (broken page): </head> still wins. */
    {"</body></head>", "</body>" S "</head>"},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t out_len = 12345;
        char *out = html_inject(cases[i].in, strlen(cases[i].in), S, &out_len);
        assert_non_null(out);
        if (strcmp(out, cases[i].want) != 0) {
            print_error("case %zu: in=[%s]\n got=[%s]\nwant=[%s]\n", i,
                        cases[i].in, out, cases[i].want);
        }
        assert_string_equal(out, cases[i].want);
        assert_int_equal(out_len, strlen(cases[i].want));
        free(out);
    }
}

/* The input need not be NUL-terminated and may hold NUL bytes. */
static void test_not_terminated(void **state)
{
    (void)state;
    const char in[] = {'a', '\0', '<', '/', 'h', 'e', 'a', 'd', '>', 'X'};
    size_t out_len = 0;
    char *out = html_inject(in, sizeof in, "S", &out_len);
    assert_non_null(out);
    assert_int_equal(out_len, sizeof in + 1);
    assert_memory_equal(out, "a\0S</head>X", out_len);
    assert_int_equal(out[out_len], '\0');
    free(out);

    /* Only the first 5 bytes: "</hea" is cut off, so the end. */
    out = html_inject("a</head>", 5, "S", &out_len);
    assert_non_null(out);
    assert_string_equal(out, "a</heS");
    free(out);
}

static void test_null_empty(void **state)
{
    (void)state;
    size_t out_len = 1;
    char *out = html_inject(NULL, 0, "S", &out_len);
    assert_non_null(out);
    assert_string_equal(out, "S");
    assert_int_equal(out_len, 1);
    free(out);
    assert_int_equal(html_inject_offset("x</body>", 8), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_not_terminated),
        cmocka_unit_test(test_null_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
