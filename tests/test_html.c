/* Unit tests for html.c and html_inject.c: the scanner, and where the
 * live-reload client's two tags land. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/html.h"

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
    /* The scanner rewrite.c and check.c share: abrupt comments end at once,
     * "--!>" ends a comment, "</scripts" does not end a script. */
    {"<!--></head>", "<!-->" S "</head>"},
    {"<!---></head>", "<!--->" S "</head>"},
    {"<!-- x --!></head>", "<!-- x --!>" S "</head>"},
    {"<script>'</scripts></head>'</script></head>", "<script>'</scripts></head>'</script>" S "</head>"},
    {"<title></head></title></head>", "<title></head></title>" S "</head>"},
    {"<p title='</head>'></head>", "<p title='</head>'>" S "</head>"},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t out_len = 12345;
        char *out = html_inject(cases[i].in, strlen(cases[i].in), NULL, S, &out_len);
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
    char *out = html_inject(in, sizeof in, NULL, "S", &out_len);
    assert_non_null(out);
    assert_int_equal(out_len, sizeof in + 1);
    assert_memory_equal(out, "a\0S</head>X", out_len);
    assert_int_equal(out[out_len], '\0');
    free(out);

    /* Only the first 5 bytes: "</hea" is cut off, so the end. */
    out = html_inject("a</head>", 5, NULL, "S", &out_len);
    assert_non_null(out);
    assert_string_equal(out, "a</heS");
    free(out);
}

static void test_null_empty(void **state)
{
    (void)state;
    size_t out_len = 1;
    char *out = html_inject(NULL, 0, NULL, "S", &out_len);
    assert_non_null(out);
    assert_string_equal(out, "S");
    assert_int_equal(out_len, 1);
    free(out);
    out = html_inject(NULL, 0, "E", "S", &out_len);
    assert_string_equal(out, "ES");
    assert_int_equal(out_len, 2);
    free(out);
    assert_int_equal(html_inject_offset("x</body>", 8), 1);
    assert_int_equal(html_early_offset("x</body>", 8), 0);
}

/* The early tag (E) runs before any of the page's scripts; the client's
 * deferred tag (S) stays before </head>. */
#define E "<script src=\"/__folio/early.js\" data-folio></script>"
static const struct {
    const char *in;
    const char *want;
} early_cases[] = {
    /* A page as written: after its leading metas, right after the last one,
     * so the next line (an inline script, say) keeps its columns. */
    {"<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n<title>t</title>\n<script>x</script>\n</head>",
     "<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8>" E "\n<title>t</title>\n<script>x</script>\n" S "</head>"},
    {"<HTML><HEAD><META CHARSET=UTF-8><META NAME=viewport CONTENT=x></HEAD>",
     "<HTML><HEAD><META CHARSET=UTF-8><META NAME=viewport CONTENT=x>" E S "</HEAD>"},
    /* Before the page's first script, inline, deferred or in <body>. */
    {"<head><script>throw 1</script></head>", "<head>" E "<script>throw 1</script>" S "</head>"},
    {"<script src=a.js defer></script></head>", E "<script src=a.js defer></script>" S "</head>"},
    {"<!doctype html><body><script>x</script>", "<!doctype html>" E "<body><script>x</script>" S},
    {"<!DOCTYPE html><html><body onload=\"f()\">", "<!DOCTYPE html><html>" E "<body onload=\"f()\">" S},
    /* No <head>: before the first element that is not html's or a meta. */
    {"<!doctype html><title>t</title><p>x", "<!doctype html>" E "<title>t</title><p>x" S},
    {"text first", E "text first" S},
    {"", E S},
    {"<head></head>", "<head>" E S "</head>"},
    /* A UTF-8 byte order mark stays first, and comments (closed) are passed. */
    {"\xEF\xBB\xBF<!doctype html><script>", "\xEF\xBB\xBF<!doctype html>" E "<script>" S},
    {"\xEF\xBB\xBFhi", "\xEF\xBB\xBF" E "hi" S},
    {"<!-- a --><!--><head><p>", "<!-- a --><!--><head>" E "<p>" S},
    /* Nothing cut off by the end of input is passed: it would swallow the tag. */
    {"<!-- never closed", E "<!-- never closed" S},
    {"<!doctype html", E "<!doctype html" S},
    {"<head><meta charset=utf-8", "<head>" E "<meta charset=utf-8" S},
    {"<html><head>", "<html><head>" E S},
    /* A <meta charset> after a title, a style or a link, in the prescan's
     * 1024 bytes: after it, so the prescan still finds it there. */
    {"<head><title>t</title><style>p{}</style><link rel=icon href=i.png><meta charset=utf-8><script>",
     "<head><title>t</title><style>p{}</style><link rel=icon href=i.png><meta charset=utf-8>" E "<script>" S},
    {"<head><title>t</title><meta http-equiv=Content-Type content=\"text/html; charset=utf-8\"><p>",
     "<head><title>t</title><meta http-equiv=Content-Type content=\"text/html; charset=utf-8\">" E "<p>" S},
    {"<head><title>t</title><meta name=x><p>", "<head>" E "<title>t</title><meta name=x><p>" S},
    /* ... but never past a script, a <base> (the tag's src resolves against
     * the page) or an element whose handler may run. */
    {"<head><script>x</script><meta charset=utf-8>", "<head>" E "<script>x</script><meta charset=utf-8>" S},
    {"<head><base href=/x/><meta charset=utf-8>", "<head>" E "<base href=/x/><meta charset=utf-8>" S},
    {"<head><link rel=stylesheet href=a.css onload=f()><meta charset=utf-8>",
     "<head>" E "<link rel=stylesheet href=a.css onload=f()><meta charset=utf-8>" S},
    /* Raw text holds no tags: a "<meta" in a title is text. */
    {"<head><title><meta charset=utf-8></title></head>", "<head>" E "<title><meta charset=utf-8></title>" S "</head>"},
    /* Both at one offset: the early tag first. */
    {"</head>", E S "</head>"},
};

static void test_early_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof early_cases / sizeof early_cases[0]; i++) {
        size_t out_len = 0;
        char *out = html_inject(early_cases[i].in, strlen(early_cases[i].in), E, S, &out_len);
        assert_non_null(out);
        if (strcmp(out, early_cases[i].want) != 0) {
            print_error("case %zu: in=[%s]\n got=[%s]\nwant=[%s]\n", i, early_cases[i].in, out, early_cases[i].want);
        }
        assert_string_equal(out, early_cases[i].want);
        assert_int_equal(out_len, strlen(early_cases[i].want));
        free(out);
    }
}

/* A <meta charset> past the prescan's 1024 bytes is not waited for. */
static void test_early_prescan(void **state)
{
    (void)state;
    char in[1200];
    int n = snprintf(in, sizeof in, "<head><title>%01010d</title><meta charset=utf-8><script>", 0);
    assert_int_equal(html_early_offset(in, (size_t)n), strlen("<head>"));
    n = snprintf(in, sizeof in, "<head><title>%0990d</title><meta charset=utf-8><script>", 0);
    assert_int_equal(html_early_offset(in, (size_t)n), (size_t)n - strlen("<script>"));
}

/* The tokens of a document, as "type:text" for each, joined by "|". */
static void tokens_of(const char *html, char *out, size_t size)
{
    static const char types[] = "TSECR";
    struct html_scanner s;
    struct html_token t;
    size_t n = 0, covered = 0;
    out[0] = '\0';
    html_scanner_init(&s, html, strlen(html));
    while (html_scanner_next(&s, &t)) {
        assert_int_equal(t.start, covered); /* every byte in exactly one token */
        covered = t.end;
        n += (size_t)snprintf(out + n, size - n, "%s%c:%.*s", n ? "|" : "", types[t.type],
                              (int)(t.end - t.start), html + t.start);
    }
    assert_int_equal(covered, strlen(html));
}

static void test_tokens(void **state)
{
    (void)state;
    static const struct { const char *in, *want; } table[] = {
        {"a<b>c</b>", "T:a|S:<b>|T:c|E:</b>"},
        {"1 < 2 <3", "T:1 < 2 <3"},
        {"<!-->x<!--->y<!-- z --!>w", "C:<!-->|T:x|C:<!--->|T:y|C:<!-- z --!>|T:w"},
        {"<!--- x -->", "C:<!--- x -->"},
        {"<!--!>x-->", "C:<!--!>x-->"},
        {"<!doctype html><?xml x?></ x></>", "C:<!doctype html>|C:<?xml x?>|C:</ x>|C:</>"},
        {"<script>a</scripts>b</SCRIPT>c", "S:<script>|R:a</scripts>b|E:</SCRIPT>|T:c"},
        {"<style></style>", "S:<style>|E:</style>"},
        {"<textarea><b></textarea>", "S:<textarea>|R:<b>|E:</textarea>"},
        {"<a href='>'>x", "S:<a href='>'>|T:x"},
        {"<img src=x", "S:<img src=x"},
        {"</", "T:</"},
        /* Script text: inside "<!--", a "<script" makes "</script" close only itself. */
        {"<script><!--<script>a</script>b--></script>c",
         "S:<script>|R:<!--<script>a</script>b-->|E:</script>|T:c"},
        {"<script><!--a</script>b", "S:<script>|R:<!--a|E:</script>|T:b"},
        {"<script><!--><script></script>", "S:<script>|R:<!--><script>|E:</script>"},
        {"<script><!--<scripts></script>x", "S:<script>|R:<!--<scripts>|E:</script>|T:x"},
    };
    char got[512];
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        tokens_of(table[i].in, got, sizeof got);
        if (strcmp(got, table[i].want) != 0) {
            fail_msg("tokens %zu: [%s] -> [%s], want [%s]", i, table[i].in, got, table[i].want);
        }
    }
}

static void test_attributes(void **state)
{
    (void)state;
    const char *h = "<IMG SRC = \"a b.png\" alt='x' hidden data-x=1 =odd/>";
    struct html_scanner s;
    struct html_token t;
    html_scanner_init(&s, h, strlen(h));
    assert_true(html_scanner_next(&s, &t));
    assert_int_equal(t.type, HTML_START_TAG);
    assert_true(html_name_is(h, t.name, t.name_len, "img"));
    assert_true(t.closed);
    static const struct { const char *name, *value; bool has; } want[] = {
        {"SRC", "a b.png", true}, {"alt", "x", true}, {"hidden", "", false},
        {"data-x", "1", true}, {"=odd", "", false},
    };
    size_t pos = t.attrs, n = 0;
    struct html_attr a;
    while (html_attr_next(h, &t, &pos, &a)) {
        assert_true(n < sizeof want / sizeof want[0]);
        assert_int_equal(a.name_len, strlen(want[n].name));
        assert_memory_equal(h + a.name, want[n].name, a.name_len);
        assert_int_equal(a.has_value, want[n].has);
        assert_int_equal(a.value_len, strlen(want[n].value));
        assert_memory_equal(h + a.value, want[n].value, a.value_len);
        n++;
    }
    assert_int_equal(n, sizeof want / sizeof want[0]);
}

static void test_srcset(void **state)
{
    (void)state;
    const char *v = " a.png 1x,b, c.png 2x , f(x,y).png 3x,d.png,";
    const char *want[] = {"a.png", "b", "c.png", "f(x,y).png", "d.png"};
    size_t pos = 0, url, len, n = 0;
    while (html_srcset_next(v, strlen(v), &pos, &url, &len)) {
        assert_true(n < 5);
        assert_int_equal(len, strlen(want[n]));
        assert_memory_equal(v + url, want[n], len);
        n++;
    }
    assert_int_equal(n, 5);
}

/* The names html_fragment_names finds, joined by ",". */
static void names_of(const char *html, size_t max, char *out, size_t size)
{
    struct html_span names[8];
    size_t n = html_fragment_names(html, strlen(html), names, max < 8 ? max : 8), used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        used += (size_t)snprintf(out + used, size - used, "%s%.*s", i ? "," : "", (int)names[i].len,
                                 html + names[i].at);
    }
}

static bool has_base(const char *html)
{
    return html_has_base_href(html, strlen(html));
}

static void test_fragment_names(void **state)
{
    (void)state;
    static const struct { const char *in, *want; } table[] = {
        {"<div id=\"fragment-a\"></div><p id='fragment-b'>", "a,b"},
        {"<div ID=fragment-c class=x>", "c"},          /* any case of the name, unquoted value */
        {"<div class=\"fragment-a\" data-id=\"fragment-b\">", ""}, /* only id counts */
        {"<div id=\"Fragment-a\"><div id=\"fragment-\"><div id>", ""}, /* the value's case counts; no name */
        {"<div id=\"fragment-a\" id=\"fragment-b\">", "a"},   /* the first id wins */
        {"<div id=\"x\" id=\"fragment-b\">", ""},
        {"<!-- <div id=\"fragment-old\"></div> --><div id=\"fragment-new\">", "new"},
        {"<!-- a --!><div id=fragment-after>", "after"}, /* "--!>" closes a comment */
        {"<script>x = '<div id=\"fragment-s\">'</script><style>#fragment-t{}</style>", ""},
        {"<textarea><div id=fragment-t></textarea><noscript><div id=fragment-n></noscript>", ""},
        {"<template><template></template><div id=fragment-u></template><div id=fragment-v>", "v"},
        {"<div id=fragment-a><div id=fragment-b><div id=fragment-a>", "a,b"}, /* each once, first place */
        {"<div id=\"fragment-a&amp;b\">", "a&amp;b"}, /* as written */
        {"<div id=\"fragment-cut\"", ""}, /* the end of input inside the tag: no element */
        {"text <div\nid\n=\n\"fragment-spaced\"\n>", "spaced"},
        {"</div id=fragment-end>", ""}, /* an end tag names nothing */
        {"", ""},
    };
    char got[256];
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        names_of(table[i].in, 8, got, sizeof(got));
        if (strcmp(got, table[i].want) != 0) {
            fail_msg("case %zu: %s: got \"%s\", want \"%s\"", i, table[i].in, got, table[i].want);
        }
    }
    assert_true(has_base("<head><BASE HREF=\"/x/\">"));
    assert_true(has_base("<base target=_top><base href=../>"));
    assert_false(has_base("<base target=_top><!-- <base href=/> -->"));
    assert_false(has_base("<template><base href=/></template><script><base href=/></script>"));
    assert_false(has_base("<basefont href=/>"));
    /* At most max, the first ones in document order. */
    names_of("<i id=fragment-1><i id=fragment-2><i id=fragment-1><i id=fragment-3>", 2, got, sizeof(got));
    assert_string_equal(got, "1,2");
}

/* The resources html_blocking_resources finds, as "s:url" and "j:url" joined by ",". */
static void resources_of(const char *html, char *out, size_t size)
{
    struct html_resource r[8];
    size_t n = html_blocking_resources(html, strlen(html), r, 8), used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        used += (size_t)snprintf(out + used, size - used, "%s%c:%.*s", i ? "," : "",
                                 r[i].kind == HTML_STYLESHEET ? 's' : 'j', (int)r[i].url.len, html + r[i].url.at);
    }
}

static void test_blocking_resources(void **state)
{
    (void)state;
    static const struct { const char *in, *want; } table[] = {
        {"<link rel=stylesheet href=a.css><script src=b.js defer></script><script src=c.js></script>",
         "s:a.css,j:b.js,j:c.js"},
        {"<LINK REL=\"preload Stylesheet\" HREF='x.css' type=text/css>", "s:x.css"},
        {"<link rel=\"alternate stylesheet\" href=alt.css><link rel=icon href=i.svg><link rel=stylesheet>", ""},
        {"<link rel=stylesheet href=p.css media=print><link rel=stylesheet href=d.css disabled>", ""},
        {"<script src=a.js async></script><script type=module src=m.js></script><script nomodule src=n.js>", ""},
        {"<script src=i.js integrity=sha384-x></script><script src=c.js crossorigin></script>", ""},
        {"<script type=text/javascript src=t.js></script><script>inline()</script><script src=''></script>", "j:t.js"},
        {"<!-- <link rel=stylesheet href=old.css> --><noscript><link rel=stylesheet href=n.css></noscript>", ""},
        {"<template><script src=t.js></script></template><script src=after.js></script>", "j:after.js"},
    };
    char got[256];
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        resources_of(table[i].in, got, sizeof(got));
        if (strcmp(got, table[i].want) != 0) {
            fail_msg("case %zu: %s: got \"%s\", want \"%s\"", i, table[i].in, got, table[i].want);
        }
    }
}

static void test_decode_and_cursor(void **state)
{
    (void)state;
    size_t n;
    char *d = html_decode("a&amp;b&#x20;c&#233;&unknown;&lt", 32, &n);
    assert_string_equal(d, "a&b c\xC3\xA9&unknown;&lt");
    assert_int_equal(n, strlen(d));
    free(d);
    const char *text = "ab\n\xC3\xA9x\r\ny";
    struct html_cursor c = {0};
    html_cursor_seek(&c, text, 0);
    assert_int_equal(c.line, 1);
    assert_int_equal(c.column, 1);
    html_cursor_seek(&c, text, 5); /* after the two bytes of U+00E9 */
    assert_int_equal(c.line, 2);
    assert_int_equal(c.column, 2);
    html_cursor_seek(&c, text, 8);
    assert_int_equal(c.line, 3);
    assert_int_equal(c.column, 1);
    html_cursor_seek(&c, text, 1); /* backwards: from the start again */
    assert_int_equal(c.line, 1);
    assert_int_equal(c.column, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_not_terminated),
        cmocka_unit_test(test_null_empty),
        cmocka_unit_test(test_early_table),
        cmocka_unit_test(test_early_prescan),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_srcset),
        cmocka_unit_test(test_decode_and_cursor),
        cmocka_unit_test(test_fragment_names),
        cmocka_unit_test(test_blocking_resources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
