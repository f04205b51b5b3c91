/* check_live: the `check` event a batch of saves makes, read before it is
 * broadcast (check_live_event), over a small article in a temporary folder
 * with its real routes: only changes are sent, a fixed file is cleared, a
 * fragment is checked from its page, a non-document change (a deleted image)
 * re-checks the pages, and another hub (another server) starts afresh. */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "live/check_live.h"
#include "live/sse.h"
#include "site/resolve.h"
#include "site/routes.h"
#include "test_helpers.h"

struct fixture {
    char root[64];
    struct config config;
    struct routes routes;
    struct sse_hub *hub;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->root, sizeof f->root, "/tmp/folio-check-live-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    static const char *const dirs[] = {"www", "fragments", "assets"};
    for (size_t i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", f->root, dirs[i]);
        assert_int_equal(mkdir(path, 0755), 0);
    }
    th_write_file(f->root, "www/index.html", "<img src=assets/a.png>\n<div id=fragment-f></div>\n");
    th_write_file(f->root, "fragments/f.html", "<p id=in-f>ok</p>\n");
    th_write_file(f->root, "assets/a.png", "png");
    config_init(&f->config);
    free(f->config.root);
    f->config.root = strdup(f->root);
    char err[256];
    assert_true(routes_open(&f->routes, &f->config, err, sizeof err));
    resolve_init(f->routes.items[0].dir_fd);
    f->hub = sse_hub_create(60000, 1000);
    assert_non_null(f->hub);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    sse_hub_destroy(f->hub);
    routes_close(&f->routes);
    config_finish(&f->config);
    th_remove_tree(f->root);
    free(f);
    return 0;
}

/* The index of the route served at @prefix: what a watch_change names. */
static int route_id(const struct fixture *f, const char *prefix)
{
    for (size_t i = 0; i < f->routes.count; i++) {
        if (strcmp(f->routes.items[i].prefix, prefix) == 0) {
            return (int)i;
        }
    }
    fail_msg("no route %s", prefix);
    return -1;
}

/* The event for one saved file @rel of the route at @prefix (NULL: none). */
static char *saved(const struct fixture *f, struct sse_hub *hub, const char *prefix, const char *rel)
{
    struct watch_change c = {route_id(f, prefix), rel};
    struct watch_batch b = {&c, 1, false};
    return check_live_event(&f->routes, &b, hub);
}

/* @rel written clean again (@text): its saving clears @url, once. */
static void cleared(const struct fixture *f, const char *rel, const char *text, const char *prefix,
                    const char *url)
{
    th_write_file(f->root, rel, text);
    char *event = saved(f, f->hub, prefix, strchr(rel, '/') + 1);
    char want[160];
    snprintf(want, sizeof want, "\"url\":\"%s\",\"problems\":[]}", url);
    assert_non_null(event);
    assert_non_null(strstr(event, want));
    free(event);
    assert_null(saved(f, f->hub, prefix, strchr(rel, '/') + 1));
}

static void test_only_changes_are_sent(void **state)
{
    struct fixture *f = *state;
    /* A clean article: nothing to tell. */
    assert_null(saved(f, f->hub, "/", "index.html"));

    th_write_file(f->root, "www/index.html",
                  "<img src=assets/a.png>\n<img src=assets/nope.png>\n<div id=fragment-f></div>\n");
    char *event = saved(f, f->hub, "/", "index.html");
    assert_non_null(event);
    char server[160];
    snprintf(server, sizeof server, "{\"server\":\"%s\",\"files\":[{\"file\":\"www/index.html\","
             "\"url\":\"/index.html\",\"problems\":[{\"severity\":\"error\"", sse_hub_instance(f->hub));
    assert_non_null(strstr(event, server));
    assert_non_null(strstr(event, "\"line\":2,\"column\":10,"));
    assert_non_null(strstr(event, "img src \\\"assets/nope.png\\\" not found"));
    free(event);

    /* The same errors again: the browsers know them already. */
    assert_null(saved(f, f->hub, "/", "index.html"));

    /* Fixed: the file is cleared, once. */
    cleared(f, "www/index.html", "<img src=assets/a.png>\n<div id=fragment-f></div>\n", "/", "/index.html");
}

static void test_fragment_from_its_page(void **state)
{
    struct fixture *f = *state;
    /* x.png resolves against the page that loads the fragment, "/". */
    th_write_file(f->root, "fragments/f.html", "<p id=in-f>ok</p>\n<img src=x.png>\n");
    char *event = saved(f, f->hub, "/fragments/", "f.html");
    assert_non_null(event);
    assert_non_null(strstr(event, "\"file\":\"fragments/f.html\",\"url\":\"/fragments/f.html\""));
    assert_non_null(strstr(event, "img src \\\"x.png\\\" not found"));
    assert_non_null(strstr(event, "\"resolved\":\"www/x.png\""));
    assert_null(strstr(event, "www/index.html\",\"url\"")); /* the page itself is clean */
    free(event);
    assert_null(saved(f, f->hub, "/fragments/", "f.html"));
    cleared(f, "fragments/f.html", "<p id=in-f>ok</p>\n", "/fragments/", "/fragments/f.html");
}

static void test_deleted_image_rechecks_pages(void **state)
{
    struct fixture *f = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/assets/a.png", f->root);
    assert_int_equal(unlink(path), 0);
    char *event = saved(f, f->hub, "/assets/", "a.png");
    assert_non_null(event);
    assert_non_null(strstr(event, "\"file\":\"www/index.html\""));
    assert_non_null(strstr(event, "img src \\\"assets/a.png\\\" not found"));
    free(event);
    assert_null(saved(f, f->hub, "/assets/", "a.png"));

    /* An overflowed batch names no file: every page is checked again. */
    struct watch_batch overflow = {NULL, 0, true};
    assert_null(check_live_event(&f->routes, &overflow, f->hub));

    /* Another server's hub was told nothing: it hears the error. */
    struct sse_hub *other = sse_hub_create(60000, 1000);
    assert_non_null(other);
    event = check_live_event(&f->routes, &overflow, other);
    assert_non_null(event);
    char server[96];
    snprintf(server, sizeof server, "{\"server\":\"%s\"", sse_hub_instance(other));
    assert_non_null(strstr(event, server));
    assert_non_null(strstr(event, "assets/a.png\\\" not found"));
    free(event);

    /* The image back, through the broadcasting half: no client, no harm; then
     * the error is known to be gone. */
    th_write_file(f->root, "assets/a.png", "png");
    struct watch_change c = {route_id(f, "/assets/"), "a.png"};
    struct watch_batch b = {&c, 1, false};
    check_live_batch(&f->routes, &b, other, NULL);
    assert_null(check_live_event(&f->routes, &b, other));
    sse_hub_destroy(other);
}

/* A change outside every route, or in a file the check does not read, on a
 * clean article: silence. */
static void test_nothing_to_check(void **state)
{
    struct fixture *f = *state;
    struct watch_change c = {(int)f->routes.count, "elsewhere.html"};
    struct watch_batch b = {&c, 1, false};
    assert_null(check_live_event(&f->routes, &b, f->hub));
    struct watch_batch empty = {NULL, 0, false};
    assert_null(check_live_event(&f->routes, &empty, f->hub));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_only_changes_are_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fragment_from_its_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_image_rechecks_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_to_check, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
