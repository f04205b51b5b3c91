/* rewrite: which references get the proxy prefix, as tables for HTML and CSS. */
#include "cmocka_prelude.h"

#include <stdlib.h>
#include <string.h>

#include "base/url_prefix.h"
#include "site/rewrite.h"

static const struct rewrite_context page = {"/article", 0, NULL, NULL};
static const struct rewrite_context deep = {"/article", 2, NULL, NULL};

static const struct {
    const struct rewrite_context *ctx;
    const char *in, *out;
} html_cases[] = {
    {&page, "<img src=\"/assets/a.png\">", "<img src=\"/article/assets/a.png\">"},
    {&page, "<img src='/assets/a.png'>", "<img src='/article/assets/a.png'>"},
    {&page, "<img src=/assets/a.png alt=x>", "<img src=/article/assets/a.png alt=x>"},
    {&page, "<IMG SRC = \"/a.png\">", "<IMG SRC = \"/article/a.png\">"},
    {&page, "<img src=\"assets/a.png\">", "<img src=\"assets/a.png\">"},       /* stays inside */
    {&page, "<img src=\"../assets/a.png\">", "<img src=\"/article/assets/a.png\">"}, /* climbs out */
    {&page, "<img src=\"./../../x.png\">", "<img src=\"/article/x.png\">"},
    {&deep, "<img src=\"../../assets/a.png\">", "<img src=\"../../assets/a.png\">"},
    {&deep, "<img src=\"../../../assets/a.png\">", "<img src=\"/article/assets/a.png\">"},
    {&page, "<a href=\"/\">home</a>", "<a href=\"/article/\">home</a>"},
    {&page, "<a href=\"#ref-3\">[3]</a>", "<a href=\"#ref-3\">[3]</a>"},
    {&page, "<a href=\"?x=1\">", "<a href=\"?x=1\">"},
    {&page, "<a href=\"https://example.com/x\">", "<a href=\"https://example.com/x\">"},
    {&page, "<a href=\"//cdn.example/x\">", "<a href=\"//cdn.example/x\">"},
    {&page, "<a href=\"mailto:a@b\">", "<a href=\"mailto:a@b\">"},
    {&page, "<link rel=stylesheet href=\"/style.css\">", "<link rel=stylesheet href=\"/article/style.css\">"},
    {&page, "<script src=\"/app.js\"></script>", "<script src=\"/article/app.js\"></script>"},
    {&page, "<script>fetch('/assets/x.json')</script>", "<script>fetch('/assets/x.json')</script>"},
    {&page, "<!-- <img src=\"/a.png\"> -->", "<!-- <img src=\"/a.png\"> -->"},
    {&page, "<audio controls src=\"/assets/read%20aloud%2C%20intro.ogg\"></audio>",
     "<audio controls src=\"/article/assets/read%20aloud%2C%20intro.ogg\"></audio>"},
    {&page, "<video poster=\"/p.jpg\"><source src=\"/v.webm\"></video>",
     "<video poster=\"/article/p.jpg\"><source src=\"/article/v.webm\"></video>"},
    {&page, "<iframe src=\"/assets/data/frame.html\" title=t></iframe>",
     "<iframe src=\"/article/assets/data/frame.html\" title=t></iframe>"},
    {&page, "<img srcset=\"/a.png 1x, b.png 2x,/c.png 3x\">",
     "<img srcset=\"/article/a.png 1x, b.png 2x,/article/c.png 3x\">"},
    /* A URL in srcset runs to whitespace, commas included (HTML spec). */
    {&page, "<img srcset=\"/a.png,/b.png 2x\">", "<img srcset=\"/article/a.png,/b.png 2x\">"},
    {&page, "<img srcset=\"/a.png, /b.png 2x\">", "<img srcset=\"/article/a.png, /article/b.png 2x\">"},
    {&page, "<div style=\"background: url(/bg.png)\">", "<div style=\"background: url(/article/bg.png)\">"},
    {&page, "<style>body{background:url('/bg.png')}</style>", "<style>body{background:url('/article/bg.png')}</style>"},
    {&page, "<p data-x=\"/not-a-url\" title=\"/neither\">", "<p data-x=\"/not-a-url\" title=\"/neither\">"},
    {&page, "<object data=\"/fig.svg\"></object>", "<object data=\"/article/fig.svg\"></object>"},
    {&page, "<p>a < b and /x</p>", "<p>a < b and /x</p>"},
    {&page, "<img src=\"/a.png\"", "<img src=\"/article/a.png\""}, /* unterminated: copied */
    {&page, "<input disabled value=\"/x\">", "<input disabled value=\"/x\">"},
    {&page, "<a href=\" /x \">", "<a href=\" /article/x \">"},
    {&page, "", ""},
    /* One scanner with html.c: "<!-->" and "<!--->" are whole comments, "--!>" ends one,
     * "</scripts" and "</styles" do not end raw text, a title holds no tags. */
    {&page, "<!--><img src=\"/a.png\">", "<!--><img src=\"/article/a.png\">"},
    {&page, "<!---><img src=\"/a.png\"><!-- x -->", "<!---><img src=\"/article/a.png\"><!-- x -->"},
    {&page, "<!-- x --!><img src=\"/a.png\">", "<!-- x --!><img src=\"/article/a.png\">"},
    {&page, "<script>w(\"</scripts><img src='/a.png'>\")</script><img src=\"/b.png\">",
     "<script>w(\"</scripts><img src='/a.png'>\")</script><img src=\"/article/b.png\">"},
    {&page, "<style>a{}</styles>b{background:url(/x.png)}</style>",
     "<style>a{}</styles>b{background:url(/article/x.png)}</style>"},
    {&page, "<title><img src=\"/a.png\"></title>", "<title><img src=\"/a.png\"></title>"},
    {&page, "<script><!--<script>x</script><img src=/a.png>--></script><img src=/b.png>",
     "<script><!--<script>x</script><img src=/a.png>--></script><img src=/article/b.png>"},
    {&page, "<a title='x>y' href=/a>", "<a title='x>y' href=/article/a>"},
};

static const struct {
    const struct rewrite_context *ctx;
    const char *in, *out;
} css_cases[] = {
    {&page, "a{background:url(/bg.png)}", "a{background:url(/article/bg.png)}"},
    {&page, "a{background:url( \"/bg.png\" )}", "a{background:url( \"/article/bg.png\" )}"},
    {&page, "a{background:URL('../img/x.png')}", "a{background:URL('/article/img/x.png')}"},
    {&deep, "a{background:url(../img/x.png)}", "a{background:url(../img/x.png)}"},
    {&page, "@import \"/base.css\";", "@import \"/article/base.css\";"},
    {&page, "@import url(/base.css);", "@import url(/article/base.css);"},
    {&page, "/* url(/x.png) */ a{}", "/* url(/x.png) */ a{}"},
    {&page, "a::before{content:\"url(/x)\"}", "a::before{content:\"url(/x)\"}"},
    {&page, "a{b:myurl(/x)}", "a{b:myurl(/x)}"},
    {&page, "@font-face{src:url(/f.woff2) format('woff2')}", "@font-face{src:url(/article/f.woff2) format('woff2')}"},
    {&page, "a{background:url(data:image/png;base64,AAAA)}", "a{background:url(data:image/png;base64,AAAA)}"},
};

static void test_html(void **state)
{
    for (size_t i = 0; i < sizeof(html_cases) / sizeof(html_cases[0]); i++) {
        size_t len;
        char *got = rewrite_html(html_cases[i].in, strlen(html_cases[i].in), html_cases[i].ctx, &len);
        assert_non_null(got);
        if (strcmp(got, html_cases[i].out) != 0) {
            fail_msg("html %zu: [%s] -> [%s], want [%s]", i, html_cases[i].in, got, html_cases[i].out);
        }
        assert_int_equal(len, strlen(got));
        free(got);
    }
}

static void test_css(void **state)
{
    for (size_t i = 0; i < sizeof(css_cases) / sizeof(css_cases[0]); i++) {
        size_t len;
        char *got = rewrite_css(css_cases[i].in, strlen(css_cases[i].in), css_cases[i].ctx, &len);
        assert_non_null(got);
        if (strcmp(got, css_cases[i].out) != 0) {
            fail_msg("css %zu: [%s] -> [%s], want [%s]", i, css_cases[i].in, got, css_cases[i].out);
        }
        free(got);
    }
}

static bool only_assets(void *arg, const char *path, size_t len)
{
    return len >= 8 && strncmp(path, "/assets/", 8) == 0;
}

static void test_only_our_routes(void **state)
{
    struct rewrite_context ctx = {"/article", 0, only_assets, NULL};
    const char *in = "<a href=\"/about\"></a><img src=\"/assets/a.png\"><img src=\"../assets/b.png\">";
    size_t len;
    char *got = rewrite_html(in, strlen(in), &ctx, &len);
    assert_string_equal(got, "<a href=\"/about\"></a><img src=\"/article/assets/a.png\">"
                             "<img src=\"/article/assets/b.png\">");
    free(got);
}

static void test_prefix_validity(void **state)
{
    const char *good[] = {"/article", "/a/b", "/playbook-2024", "/~user"};
    const char *bad[] = {"", "/", "article", "/a/", "//a", "/a//b", "/a/../b", "/.git", "/%2e%2e",
                         "/a\"b", "/a<b", "/a b", "/a\\b", "/a?b", "/a#b"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (!url_prefix_valid(good[i])) {
            fail_msg("'%s' should be valid", good[i]);
        }
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (url_prefix_valid(bad[i])) {
            fail_msg("'%s' should be refused", bad[i]);
        }
    }
}

static void test_prefix_clean(void **state)
{
    const struct {
        const char *in, *out; /* out NULL: refused */
    } cases[] = {
        {"/article", "/article"}, {"/article/", "/article"}, {"/article///", "/article"},
        {"/", ""}, {"", ""}, {"//", ""}, {"/a/b/", "/a/b"},
        {"article", NULL}, {"/a//b", NULL}, {"/a/../b/", NULL}, {"/%2e%2e/", NULL}, {"/a b", NULL},
    };
    char out[URL_PREFIX_MAX];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool ok = url_prefix_clean(cases[i].in, out, sizeof(out));
        if (ok != (cases[i].out != NULL) || (ok && strcmp(out, cases[i].out) != 0)) {
            fail_msg("'%s' gave %s '%s'", cases[i].in, ok ? "true" : "false", out);
        }
    }
    char longest[URL_PREFIX_MAX + 1];
    memset(longest, 'a', sizeof(longest));
    longest[0] = '/';
    longest[URL_PREFIX_MAX - 1] = '\0'; /* 255 characters: fits */
    assert_true(url_prefix_clean(longest, out, sizeof(out)));
    longest[URL_PREFIX_MAX - 1] = 'a';
    longest[URL_PREFIX_MAX] = '\0'; /* 256: does not */
    assert_false(url_prefix_clean(longest, out, sizeof(out)));
}

/* A target's folders: what its references climb back with "../". */
static void test_depth(void **state)
{
    (void)state;
    assert_int_equal(rewrite_depth("/"), 0);
    assert_int_equal(rewrite_depth("/index.html"), 0);
    assert_int_equal(rewrite_depth("/a/b.html"), 1);
    assert_int_equal(rewrite_depth("/a/b/"), 2);
    assert_int_equal(rewrite_depth("/a/b.html?x=/y/z"), 1); /* the query aside */
    assert_int_equal(rewrite_depth("/a/b.html#/y/z"), 1);   /* and a fragment */
    assert_int_equal(rewrite_depth("a/b"), 1);              /* no leading "/": each one counts */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_css),
        cmocka_unit_test(test_only_our_routes),
        cmocka_unit_test(test_prefix_validity),
        cmocka_unit_test(test_prefix_clean),
        cmocka_unit_test(test_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
