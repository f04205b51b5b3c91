/* preload: which Link headers a page gets, in which words, and which
 * fragment folder a page's relative "fragments/" names. */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/body.h"
#include "base/config.h"
#include "serve/preload.h"
#include "site/resolve.h"
#include "site/routes.h"

#define HINT_WORDS "; rel=preload; as=fetch; crossorigin=anonymous; fetchpriority=low"
#define LINK(name) "<fragments/" name ".html>" HINT_WORDS "\n"

static char root[64];
static struct routes routes;

static void touch(const char *rel)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("<p>x</p>\n", f);
    fclose(f);
}

static int make_root(void **state)
{
    (void)state;
    strcpy(root, "/tmp/folio-preload-XXXXXX");
    assert_non_null(mkdtemp(root));
    const char *dirs[] = {"www", "www/sub", "fragments", "fragments/folder.html", "assets", "media"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        char path[128];
        snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
        assert_int_equal(mkdir(path, 0755), 0);
    }
    const char *files[] = {"fragments/a.html", "fragments/b.html", "fragments/c-2_x.y.html",
                           "fragments/.hidden.html", "fragments/sp ace.html", "secret.html",
                           "fragments/caf\xc3\xa9-\xe8\xa1\xa8.html", "fragments/bad\xc3.html",
                           "fragments/l\xc3\xa4nge(2).html"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        touch(files[i]);
    }
    char link[256], target[256];
    snprintf(link, sizeof(link), "%s/fragments/out.html", root);
    snprintf(target, sizeof(target), "%s/secret.html", root);
    assert_int_equal(symlink(target, link), 0); /* a file outside: never served, never hinted */
    snprintf(link, sizeof(link), "%s/fragments/in.html", root);
    assert_int_equal(symlink("a.html", link), 0); /* a link inside: served, hinted */

    struct config c;
    char err[256];
    struct config_error cerr;
    config_init(&c);
    free(c.root);
    c.root = strdup(root);
    assert_true(config_apply_ini(&c, "[routes]\n/media/fragments/ = media, fragments\n", &cerr));
    assert_true(routes_open(&routes, &c, err, sizeof(err)));
    resolve_init(routes.items[0].dir_fd);
    config_finish(&c);
    return 0;
}

static int remove_root(void **state)
{
    (void)state;
    char cmd[128];
    routes_close(&routes);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd);
}

/* The route at prefix; the test fails when there is none. */
static const struct route *route_of(const char *prefix)
{
    size_t i = 0;
    while (i < routes.count && strcmp(routes.items[i].prefix, prefix) != 0) {
        i++;
    }
    assert_in_range(i, 0, routes.count - 1);
    return &routes.items[i];
}

/* preload_links's text for html with budget, as a string. */
static void links_of(const char *html, size_t budget, char *out, size_t size)
{
    struct body *b = preload_links(html, strlen(html), route_of("/fragments/"), budget);
    assert_non_null(b);
    assert_true(b->len < size);
    memcpy(out, b->data, b->len);
    out[b->len] = '\0';
    body_unref(b);
}

static void test_links(void **state)
{
    (void)state;
    static const struct { const char *html, *want; } table[] = {
        /* Document order, the exact words, a missing fragment left out. */
        {"<div id=fragment-b></div><div id=fragment-missing></div><div id=fragment-a>", LINK("b") LINK("a")},
        {"<!-- <div id=fragment-a> --><div id=fragment-b>", LINK("b")}, /* commented out */
        {"<div id=fragment-c-2_x.y>", LINK("c-2_x.y")},                  /* every plain character */
        {"<div id=fragment-.hidden><div id=\"fragment-sp ace\"><div id=fragment-a&amp;>", ""}, /* not plain */
        /* Beyond ASCII, as the URL parser and encodeURIComponent both send it; not UTF-8, or
         * an ASCII character some loader would spell otherwise: not hinted. */
        {"<div id=fragment-caf\xc3\xa9-\xe8\xa1\xa8>", LINK("caf%C3%A9-%E8%A1%A8")},
        {"<div id=fragment-bad\xc3><div id=\"fragment-l\xc3\xa4nge(2)\">", ""},
        {"<div id=fragment-folder><div id=fragment-out>", ""}, /* a folder, a link out: never served */
        {"<base href=\"/elsewhere/\"><div id=fragment-a>", ""}, /* its fetches resolve elsewhere */
        {"<p>no fragments</p>", ""},
        /* What DOMContentLoaded waits for first, when its URL is the page's relative one. */
        {"<link rel=stylesheet href=style.css><script src=/abs.js></script><script src=js/app.js defer></script>"
         "<script src=../up.js></script><script src=\"q.js?v=2\"></script><div id=fragment-a>",
         "<style.css>; rel=preload; as=style\n<js/app.js>; rel=preload; as=script\n" LINK("a")},
        {"<link rel=stylesheet href=style.css><div id=fragment-missing>", ""}, /* no fragment, no hint */
    };
    char got[1024];
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        links_of(table[i].html, 4096, got, sizeof(got));
        if (strcmp(got, table[i].want) != 0) {
            fail_msg("case %zu: %s: got \"%s\", want \"%s\"", i, table[i].html, got, table[i].want);
        }
    }
    /* The budget in bytes: a hint that does not fit is left out, a shorter later one may fit. */
    links_of("<i id=fragment-a><i id=fragment-c-2_x.y><i id=fragment-b>", 2 * strlen(LINK("a")), got, sizeof(got));
    assert_string_equal(got, LINK("a") LINK("b"));
}

/* A fragment is hinted when folio would serve it: a symlink inside the
 * folder only where the resolver follows one (openat2), never where it
 * walks without (old kernels, seccomp profiles, valgrind: resolve.h). */
static void test_links_as_served(void **state)
{
    (void)state;
    const char *html = "<div id=fragment-out><div id=fragment-in><div id=fragment-a>";
    char got[1024];
    bool openat2 = resolve_init(route_of("/fragments/")->dir_fd);
    links_of(html, 4096, got, sizeof(got));
    assert_string_equal(got, openat2 ? LINK("in") LINK("a") : LINK("a"));
    resolve_force_walk_for_tests(true);
    links_of(html, 4096, got, sizeof(got));
    resolve_force_walk_for_tests(false);
    assert_string_equal(got, LINK("a"));
}

/* At most PRELOAD_MAX hints, the first ones in document order. */
static void test_cap(void **state)
{
    (void)state;
    char html[8192], want[16384], name[64];
    size_t h = 0, w = 0;
    for (int i = 0; i < PRELOAD_MAX + 5; i++) {
        snprintf(name, sizeof(name), "fragments/n%02d.html", i);
        touch(name);
        h += (size_t)snprintf(html + h, sizeof(html) - h, "<div id=fragment-n%02d></div>", i);
        if (i < PRELOAD_MAX) {
            w += (size_t)snprintf(want + w, sizeof(want) - w, "<fragments/n%02d.html>" HINT_WORDS "\n", i);
        }
    }
    char got[16384];
    links_of(html, 1u << 20, got, sizeof(got));
    assert_string_equal(got, want);
}

static void test_folder(void **state)
{
    (void)state;
    struct file_id id;
    char variant[96];
    const struct route *www = route_of("/"), *fragments = route_of("/fragments/");
    assert_ptr_equal(preload_folder(&routes, www, "index.html", &id, variant, sizeof(variant)), fragments);
    assert_non_null(strstr(variant, "links:"));
    /* A page in a subfolder: its "fragments/" is /sub/fragments/, no fragment route. */
    assert_null(preload_folder(&routes, www, "sub/index.html", &id, variant, sizeof(variant)));
    /* Fragments are fetched, never pages; the routes may be unknown. */
    assert_null(preload_folder(&routes, fragments, "a.html", &id, variant, sizeof(variant)));
    assert_null(preload_folder(NULL, www, "index.html", &id, variant, sizeof(variant)));
    /* Another folder marked fragments, named by the pages beside it; none beside an asset. */
    assert_ptr_equal(preload_folder(&routes, www, "media/page.html", &id, variant, sizeof(variant)),
                     route_of("/media/fragments/"));
    assert_null(preload_folder(&routes, route_of("/assets/"), "x.html", &id, variant, sizeof(variant)));

    /* Adding a fragment changes the folder's version, and so the variant the hints are kept under. */
    char before[96];
    struct file_id then;
    assert_non_null(preload_folder(&routes, www, "index.html", &then, before, sizeof(before)));
    touch("fragments/new.html");
    assert_non_null(preload_folder(&routes, www, "index.html", &id, variant, sizeof(variant)));
    assert_string_not_equal(before, variant);
    assert_false(file_id_same(&then, &id));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_links_as_served),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_folder),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
