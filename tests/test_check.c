/* check: the reference extractor, browser-style resolution, and a whole run
 * over a small article in a temporary folder (routes and resolver included). */
#include "cmocka_prelude.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/check.h"
#include "check/check_report.h"
#include "base/edits.h"
#include "check/check_near.h"
#include "check/check_refs.h"
#include "base/config.h"
#include "site/resolve.h"
#include "site/rewrite.h"
#include "site/routes.h"

/* The references of @html as "what=url@offset" joined by "|". */
static void refs_of(const char *html, char *out, size_t size)
{
    struct check_doc d = {0};
    assert_true(check_refs_html(html, strlen(html), &d));
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < d.nrefs; i++) {
        n += (size_t)snprintf(out + n, size - n, "%s%s=%s@%zu", i ? "|" : "", d.refs[i].what,
                              d.refs[i].url, d.refs[i].offset);
    }
    check_doc_free(&d);
}

static void test_extract(void **state)
{
    (void)state;
    static const struct { const char *in, *want; } table[] = {
        {"<img src=a.png>", "img src=a.png@9"},
        {"<IMG SRC='a&amp;b.png'>", "img src=a&b.png@10"},
        {"<img srcset=\"a.png 1x, b,c.png 2x\">", "img srcset=a.png@13|img srcset=b,c.png@23"},
        {"<video poster=p.jpg src=v.webm><source src=s.webm><track src=t.vtt></video>",
         "video poster=p.jpg@14|video src=v.webm@24|source src=s.webm@43|track src=t.vtt@61"},
        {"<object data=f.svg></object><p data=x>", "object data=f.svg@13"},
        {"<iframe src=f.html></iframe><link rel=icon href=i.svg>", "iframe src=f.html@12|link href=i.svg@48"},
        {"<p style=\"background:url('b.png')\">", "p style url()=b.png@26"},
        {"<style>a{background:url(c.png)} @import 'd.css';</style>", "url()=c.png@24|@import=d.css@41"},
        {"<div id=\"fragment-cheat sheet\"></div>", "fragment=fragments/cheat%20sheet.html@9"},
        {"<!-- <img src=x.png> --><!--><img src=y.png>", "img src=y.png@38"},
        {"<script>'<img src=x.png>'</scripts><img src=z.png></script>", ""},
        {"<base href=/x/><img src=a.png", ""}, /* <base> is not followed; an unclosed tag is dropped */
        {"<a href=\"#top\" name=n>", "a href=#top@9"},
    };
    char got[512];
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        refs_of(table[i].in, got, sizeof got);
        if (strcmp(got, table[i].want) != 0) {
            fail_msg("refs %zu: [%s] -> [%s], want [%s]", i, table[i].in, got, table[i].want);
        }
    }
}

/* Every attribute the checker follows is one rewrite.c rewrites, so the
 * --base-path check asks rewrite_url about exactly what rewrite_html does. */
static void test_attributes_are_rewritten(void **state)
{
    (void)state;
    const char *followed[] = {"src", "href", "poster", "data", "xlink:href", "SRC"};
    for (size_t i = 0; i < sizeof followed / sizeof followed[0]; i++) {
        assert_true(rewrite_is_url_attribute(followed[i], strlen(followed[i])));
    }
    assert_false(rewrite_is_url_attribute("data-src", 8));
    char got[256];
    refs_of("<img data-src=a.png src=b.png><x-y srcset=c.png style='background:url(d.png)'>", got, sizeof got);
    assert_string_equal(got, "img src=b.png@24|x-y srcset=c.png@42|x-y style url()=d.png@70");
}

/* Whether a document runs a script (its ids may then not all be in its source): a
 * <script> of no type, a JavaScript type or a module does; a data block, a comment or
 * markup inside script text does not. */
static void test_scripts(void **state)
{
    (void)state;
    static const struct {
        const char *html;
        bool scripts;
    } table[] = {
        {"<p id=a>no script</p>", false},
        {"<script src=a.js></script>", true},
        {"<SCRIPT>x()</SCRIPT>", true},
        {"<script type=module>x()</script>", true},
        {"<script type=\"Text/JavaScript\">x()</script>", true},
        {"<script type=\"\">x()</script>", true},
        {"<script type=application/ld+json>{}</script>", false},
        {"<script type=text/template><p id=t></p></script>", false},
        {"<!-- <script>x()</script> -->", false},
        {"<noscript>a</noscript><p>scripted</p>", false},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        struct check_doc d = {0};
        assert_true(check_refs_html(table[i].html, strlen(table[i].html), &d));
        if (d.scripts != table[i].scripts) {
            fail_msg("%s: scripts %d", table[i].html, d.scripts);
        }
        check_doc_free(&d);
    }
}

static void test_ids(void **state)
{
    (void)state;
    const char *html = "<h2 id=a></h2><a name=b></a><p id=\"\"></p><!-- <p id=c> --><p id=a>";
    struct check_doc d = {0};
    assert_true(check_refs_html(html, strlen(html), &d));
    assert_int_equal(d.nids, 3);
    assert_string_equal(d.ids[0].id, "a");
    assert_false(d.ids[0].is_name);
    assert_string_equal(d.ids[1].id, "b");
    assert_true(d.ids[1].is_name);
    assert_string_equal(d.ids[2].id, "a");
    check_doc_free(&d);
}

static void test_resolve(void **state)
{
    (void)state;
    static const struct {
        const char *ref, *base;
        enum check_url_kind kind;
        const char *path, *fragment;
    } table[] = {
        {"a.png", "/index.html", CHECK_URL_PATH, "/a.png", NULL},
        {"a.png", "/ch/one.html", CHECK_URL_PATH, "/ch/a.png", NULL},
        {"../a.png", "/ch/one.html", CHECK_URL_PATH, "/ch/../a.png", NULL},
        {"/x/y.png?v=2#f", "/ch/one.html", CHECK_URL_PATH, "/x/y.png", "f"},
        {"  a\tb\n.png  ", "/", CHECK_URL_PATH, "/ab.png", NULL},
        {"a\\b.png", "/", CHECK_URL_PATH, "/a/b.png", NULL},
        {"p.html#sec%20two", "/", CHECK_URL_PATH, "/p.html", "sec two"},
        {"#x", "/", CHECK_URL_DOCUMENT, NULL, "x"},
        {"?q=1", "/", CHECK_URL_DOCUMENT, NULL, NULL},
        {"", "/", CHECK_URL_DOCUMENT, NULL, NULL},
        {"https://example.com/", "/", CHECK_URL_EXTERNAL, NULL, NULL},
        {"HTTP://example.com/", "/", CHECK_URL_EXTERNAL, NULL, NULL},
        {"//cdn.example/x", "/", CHECK_URL_EXTERNAL, NULL, NULL},
        {"mailto:a@b", "/", CHECK_URL_OTHER, NULL, NULL},
        {"data:image/png;base64,AA", "/", CHECK_URL_OTHER, NULL, NULL},
        {"javascript:void(0)", "/", CHECK_URL_OTHER, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        struct check_url u;
        assert_true(check_url_resolve(table[i].ref, table[i].base, &u));
        if (u.kind != table[i].kind) {
            fail_msg("resolve %zu [%s]: kind %d, want %d", i, table[i].ref, u.kind, table[i].kind);
        }
        if (table[i].path) {
            assert_string_equal(u.path, table[i].path);
        }
        if (table[i].fragment) {
            assert_non_null(u.fragment);
            assert_string_equal(u.fragment, table[i].fragment);
        } else if (u.kind != CHECK_URL_EXTERNAL && u.kind != CHECK_URL_OTHER) {
            assert_null(u.fragment);
        }
        check_url_free(&u);
    }
}

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A run over root, unverified anchors errors when @strict. */
static struct check_report *run_with(const char *base_path, bool strict)
{
    struct config c;
    config_init(&c);
    free(c.root);
    c.root = strdup(root);
    struct routes routes;
    char err[256];
    assert_true(routes_open(&routes, &c, err, sizeof err));
    resolve_init(routes.items[0].dir_fd);
    struct check_options o = {.base_path = base_path, .unreferenced = true, .strict = strict};
    struct check_report *r = check_run(&routes, &o, err, sizeof err);
    assert_non_null(r);
    routes_close(&routes);
    config_finish(&c);
    return r;
}

/* The problems of a run over root. */
static struct check_report *run(const char *base_path)
{
    return run_with(base_path, false);
}

/* A live run that reports only @focus (and every page with @pages). */
static struct check_report *run_focus(const char *focus, bool pages)
{
    struct config c;
    config_init(&c);
    free(c.root);
    c.root = strdup(root);
    struct routes routes;
    char err[256];
    assert_true(routes_open(&routes, &c, err, sizeof err));
    const char *const list[] = {focus};
    struct check_options o = {.focus = list, .nfocus = focus ? 1 : 0, .focus_pages = pages};
    struct check_report *r = check_run(&routes, &o, err, sizeof err);
    assert_non_null(r);
    routes_close(&routes);
    config_finish(&c);
    return r;
}

/* True when the report holds a problem at @file:@line:@col whose message holds @part. */
static bool has(const struct check_report *r, enum check_severity sev, const char *file,
                unsigned line, unsigned col, const char *part)
{
    for (size_t i = 0; i < r->count; i++) {
        const struct check_problem *p = &r->problems[i];
        if (p->severity == sev && strcmp(p->file, file) == 0 && p->line == line && p->column == col &&
            strstr(p->message, part) != NULL) {
            return true;
        }
    }
    return false;
}

static void test_run(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/folio-check-XXXXXX");
    assert_non_null(mkdtemp(root));
    put("www/index.html", "<link rel=stylesheet href=s.css>\n"
                          "<img src=\"assets/a%20b.png\"><img src=\"assets/nope.png\">\n"
                          "<div id=fragment-f></div><a href=\"#in-f\">x</a><a href=\"#no\">y</a>\n"
                          "<img src=\"../assets/a b.png\"><img src=\"assets/../../assets/a b.png\">\n"
                          "<img src=\"assets/out.png\">\n");
    put("www/s.css", "p{background:url(\"../assets/a b.png\")}\n@import 'gone.css';\n");
    put("fragments/f.html", "<p id=in-f><img src=\"assets/a b.png\"></p><img src=x.png>\n");
    put("assets/a b.png", "png");
    put("assets/lonely.txt", "x");
    char link[512];
    snprintf(link, sizeof link, "%s/assets/out.png", root);
    assert_int_equal(symlink("/etc/passwd", link), 0); /* escapes the folder */

    struct check_report *r = run(NULL);
    if (getenv("TEST_CHECK_VERBOSE")) {
        check_print_text(r, stderr);
    }
    assert_true(has(r, CHECK_ERROR, "www/index.html", 2, 39, "not found"));
    assert_true(has(r, CHECK_ERROR, "www/index.html", 3, 56, "no element with id \"no\""));
    assert_true(has(r, CHECK_ERROR, "www/index.html", 5, 11, "leads outside the article's folders"));
    assert_true(has(r, CHECK_ERROR, "www/s.css", 2, 10, "not found"));
    assert_true(has(r, CHECK_ERROR, "fragments/f.html", 1, 51, "x.png\" not found"));
    assert_true(has(r, CHECK_WARNING, "assets/lonely.txt", 1, 1, "nothing references"));
    assert_int_equal(r->errors, 5);
    assert_int_equal(r->warnings, 1);
    check_report_free(r);

    /* Live: one file's problems only (a fragment's found through its page). */
    r = run_focus("/s.css", false);
    assert_int_equal(r->errors, 1);
    assert_true(has(r, CHECK_ERROR, "www/s.css", 2, 10, "not found"));
    check_report_free(r);
    r = run_focus("/fragments/f.html", false);
    assert_int_equal(r->errors, 1);
    assert_true(has(r, CHECK_ERROR, "fragments/f.html", 1, 51, "not found"));
    check_report_free(r);
    r = run_focus(NULL, true);
    assert_int_equal(r->errors, 3);
    assert_int_equal(r->warnings, 0);
    check_report_free(r);

    /* Under a prefix: "../" at the top is rewritten, a climb in the middle is not. */
    r = run("/article");
    assert_true(has(r, CHECK_ERROR, "www/index.html", 4, 40, "leaves --base-path /article"));
    assert_int_equal(r->errors, 6);
    check_report_free(r);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* What @print wrote for @r, malloc'd. */
static char *printed(void (*print)(const struct check_report *, FILE *), const struct check_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    print(r, out);
    assert_int_equal(fclose(out), 0);
    return buf;
}

/* The printer alone, on a report built by hand: the text and JSON formats,
 * byte for byte (tests/integration/test_check.py holds them on real runs). */
static void test_print(void **state)
{
    (void)state;
    struct check_problem problems[] = {
        {CHECK_ERROR, "www/index.html", "/index.html", 3, 7, "img src \"a\tb.png\" not found", "a\tb.png",
         "www/a\tb.png", CHECK_CODE_NONE},
        {CHECK_WARNING, "assets/x.txt", "/assets/x.txt", 1, 1, "nothing references this file", "",
         "assets/x.txt", CHECK_CODE_NONE},
        {CHECK_WARNING, "www/index.html", "/index.html", 4, 9,
         "a href \"#h\" points at no element with id \"h\" in the source; may be made by a script", "#h",
         "www/index.html#h",
         CHECK_CODE_UNVERIFIED_ANCHOR},
        {CHECK_EXTERNAL, "www/index.html", "/index.html", 9, 2, "https://e.org/", "https://e.org/", "",
         CHECK_CODE_NONE},
    };
    struct check_report r = {.problems = problems, .count = 4, .errors = 1, .warnings = 1, .externals = 1,
                             .unverified = 1, .files = 4, .references = 12, .root = "/srv/a\\b",
                             .base_path = ""};
    char *buf = printed(check_print_text, &r);
    assert_string_equal(buf,
        /* a tab, like every control byte, as the log writes it (base/escape.h) */
        "www/index.html:3:7: error: img src \"a\\x09b.png\" not found (www/a\\x09b.png)\n"
        "assets/x.txt:1:1: warning: nothing references this file (assets/x.txt)\n"
        "www/index.html:4:9: warning: a href \"#h\" points at no element with id \"h\" in the source; may be "
        "made by a script [unverified-anchor] (www/index.html#h)\n"
        "folio check: 1 error, 1 warning, 1 unverified in 4 files (12 references, 1 external, not fetched); "
        "URLs built by scripts are not seen; 1 anchor unverified: the id is in no source of a page that "
        "runs scripts (--strict: errors)\n");
    free(buf);
    buf = printed(check_print_json, &r);
    assert_string_equal(buf,
        "{\"root\":\"/srv/a\\\\b\",\"base_path\":\"\",\"files\":4,\"references\":12,\"errors\":1,"
        "\"warnings\":1,\"unverified\":1,\"problems\":[{\"severity\":\"error\",\"code\":\"\",\"file\":"
        "\"www/index.html\",\"line\":3,"
        "\"column\":7,\"message\":\"img src \\\"a\\u0009b.png\\\" not found\",\"reference\":"
        "\"a\\u0009b.png\",\"resolved\":\"www/a\\u0009b.png\"},{\"severity\":\"warning\",\"code\":\"\","
        "\"file\":\"assets/x.txt\",\"line\":1,\"column\":1,\"message\":\"nothing references this file\","
        "\"reference\":\"\",\"resolved\":\"assets/x.txt\"},{\"severity\":\"warning\",\"code\":"
        "\"unverified-anchor\",\"file\":\"www/index.html\",\"line\":4,\"column\":9,\"message\":"
        "\"a href \\\"#h\\\" points at no element with id \\\"h\\\" in the source; may be made by a script\","
        "\"reference\":"
        "\"#h\",\"resolved\":\"www/index.html#h\"}],\"external\":[{\"file\":\"www/index.html\","
        "\"line\":9,\"column\":2,\"url\":\"https://e.org/\"}],\"not_seen\":[\"URLs built by scripts\","
        "\"ids made by scripts\",\"<base href>\"],\"summary\":\"folio check: 1 error, 1 warning, "
        "1 unverified in 4 files (12 references, 1 external, not fetched); URLs built by scripts are "
        "not seen; 1 anchor unverified: the id is in no source of a page that runs scripts "
        "(--strict: errors)\"}\n");
    free(buf);
}

/* The summary counts in English: one file, one reference, one error. */
static void test_summary_singular(void **state)
{
    (void)state;
    struct check_report r = {.errors = 1, .files = 1, .references = 1, .root = "/a", .base_path = ""};
    char line[512];
    check_summary(&r, line, sizeof(line));
    assert_string_equal(line, "folio check: 1 error, 0 warnings, 0 unverified in 1 file (1 reference, 0 external, "
                              "not fetched); URLs built by scripts are not seen");
}

/* An anchor no source names: an error in a page without scripts, unverified
 * (a warning of its own code, counted apart) in one whose page or fragment
 * runs a script, an error again under --strict. A data block does not run. */
static void test_unverified_anchor(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/folio-check-XXXXXX");
    assert_non_null(mkdtemp(root));
    put("www/index.html", "<a href=\"#made\">m</a><a href=\"plain.html#gone\">p</a>\n"
                          "<a href=\"frag.html#later\">f</a><a href=\"data.html#x\">d</a>\n"
                          "<script src=x.js></script>\n");
    put("www/plain.html", "<p id=here><img src=assets/p.png>no script</p>\n");
    put("assets/p.png", "png");
    put("www/frag.html", "<div id=fragment-s></div>\n");
    put("www/data.html", "<script type=application/ld+json>{}</script>\n");
    put("fragments/s.html", "<script>document.body.id = 'later';</script>\n");
    put("www/x.js", "");
    for (int strict = 0; strict <= 1; strict++) {
        struct check_report *r = run_with(NULL, strict);
        enum check_severity sev = strict ? CHECK_ERROR : CHECK_WARNING;
        assert_true(has(r, sev, "www/index.html", 1, 10, "\"#made\" points at no element with id \"made\" in the source; may be made by a script"));
        assert_true(has(r, sev, "www/index.html", 2, 10, "with id \"later\" in the source"));
        assert_true(has(r, CHECK_ERROR, "www/index.html", 1, 31, "\"plain.html#gone\" points at no element"));
        assert_true(has(r, CHECK_ERROR, "www/index.html", 2, 41, "\"data.html#x\" points at no element"));
        size_t coded = 0;
        for (size_t i = 0; i < r->count; i++) {
            coded += r->problems[i].code == CHECK_CODE_UNVERIFIED_ANCHOR;
        }
        assert_int_equal(coded, 2);
        assert_int_equal(r->unverified, strict ? 0 : 2);
        assert_int_equal(r->errors, strict ? 4 : 2);
        assert_int_equal(r->warnings, 0);
        check_report_free(r);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* Damerau's optimal string alignment by the whole table: what check_near
 * must agree with. */
static size_t osa_slow(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), d[20][20];
    for (size_t i = 0; i <= n; i++) {
        for (size_t j = 0; j <= m; j++) {
            size_t best = i == 0 ? j : j == 0 ? i : d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (i > 0 && j > 0) {
                best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
                best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
            }
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1;
            }
            d[i][j] = best;
        }
    }
    return d[n][m];
}

/* A random string of 1 to 16 bytes over a small alphabet, so that many are
 * a typo apart. */
static void random_id(char *out, unsigned *seed)
{
    static const char alphabet[] = "ab-1A";
    size_t n = 1 + (size_t)(rand_r(seed) % 16);
    for (size_t i = 0; i < n; i++) {
        out[i] = alphabet[rand_r(seed) % (sizeof(alphabet) - 1)];
    }
    out[n] = '\0';
}

/* The index finds what a scan of every id with the whole table finds: the
 * first in the order given of the nearest, within two edits and a third. */
static void test_near_agrees_with_the_whole_table(void **state)
{
    enum { IDS = 400, ASKED = 400 };
    static char ids[IDS][17], asked[ASKED][17];
    const char *list[IDS];
    unsigned seed = 36;
    for (size_t i = 0; i < IDS; i++) {
        random_id(ids[i], &seed);
        list[i] = ids[i];
    }
    struct check_near *x = check_near_index(list, IDS);
    assert_non_null(x);
    size_t found = 0;
    for (size_t q = 0; q < ASKED; q++) {
        random_id(asked[q], &seed);
        if (q % 2) { /* an id with one to three bytes changed, put in, taken out or swapped */
            strcpy(asked[q], ids[rand_r(&seed) % IDS]);
            for (int edits = 1 + rand_r(&seed) % 3; edits > 0; edits--) {
                size_t n = strlen(asked[q]), at = (size_t)rand_r(&seed) % (n + 1);
                int how = rand_r(&seed) % 4;
                if (how == 3 && at + 1 < n) { /* two neighbours swapped */
                    char c = asked[q][at];
                    asked[q][at] = asked[q][at + 1];
                    asked[q][at + 1] = c;
                } else if (how == 0 && n < 16) {
                    memmove(asked[q] + at + 1, asked[q] + at, n - at + 1);
                    asked[q][at] = 'b';
                } else if (how == 1 && at < n && n > 1) {
                    memmove(asked[q] + at, asked[q] + at + 1, n - at);
                } else if (at < n) {
                    asked[q][at] = asked[q][at] == 'a' ? '1' : 'a';
                }
            }
        }
        size_t len = strlen(asked[q]), limit = len / 3 < 2 ? len / 3 : 2, best = limit + 1;
        const char *want = NULL;
        for (size_t i = 0; i < IDS && limit > 0; i++) {
            size_t e = osa_slow(asked[q], ids[i]);
            if (e < best) {
                best = e;
                want = ids[i];
            }
        }
        const char *got = check_near_find(x, asked[q]);
        if (want == NULL) {
            assert_null(got);
        } else {
            assert_ptr_equal(got, want);
            found++;
        }
        for (size_t i = 0; i < 8; i++) { /* and the banded table stops right */
            size_t e = osa_slow(asked[q], ids[i]);
            for (size_t lim = 0; lim <= 3; lim++) {
                assert_int_equal(edits_count(asked[q], len, ids[i], strlen(ids[i]), lim),
                                 e <= lim ? e : lim + 1);
            }
        }
    }
    assert_true(found > ASKED / 4); /* the alphabet makes typos common: the test sees many */
    check_near_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extract),
        cmocka_unit_test(test_attributes_are_rewritten),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_scripts),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_summary_singular),
        cmocka_unit_test(test_unverified_anchor),
        cmocka_unit_test(test_near_agrees_with_the_whole_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
