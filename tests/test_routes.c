/* routes: longest prefix wins, bare prefixes are recognised, and a missing
 * folder is named in the error. */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "serve/routes.h"

static char root[64];

static int make_root(void **state)
{
    strcpy(root, "/tmp/folio-routes-XXXXXX");
    assert_non_null(mkdtemp(root));
    const char *dirs[] = {"www", "fragments", "assets", "assets/data", "media"};
    for (size_t i = 0; i < 5; i++) {
        char path[128];
        snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
        assert_int_equal(mkdir(path, 0755), 0);
    }
    return 0;
}

static int remove_root(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd);
}

static void test_match(void **state)
{
    struct config c;
    config_init(&c);
    free(c.root);
    c.root = strdup(root);
    char err[256];
    struct config_error cerr;
    assert_true(config_apply_ini(&c, "[routes]\n/assets/data/ = media\n", &cerr));
    struct routes r;
    assert_true(routes_open(&r, &c, err, sizeof(err)));
    assert_int_equal(r.count, 4);

    static const struct {
        const char *path, *prefix;
        bool bare;
    } cases[] = {
        {"/", "/", false},
        {"/index.html", "/", false},
        {"/fragments/memory.html", "/fragments/", false},
        {"/fragments", "/fragments/", true},
        {"/fragmentsx", "/", false},
        {"/assets/images/a.png", "/assets/", false},
        {"/assets/data/x.csv", "/assets/data/", false}, /* longest prefix */
        {"/assets/data", "/assets/data/", true},
        {"/assets/database.csv", "/assets/", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool bare;
        const struct route *route = routes_match(&r, cases[i].path, &bare);
        assert_non_null(route);
        if (strcmp(route->prefix, cases[i].prefix) != 0 || bare != cases[i].bare) {
            fail_msg("%s: got %s%s", cases[i].path, route->prefix, bare ? " (bare)" : "");
        }
    }
    bool bare;
    const struct route *fragments = routes_match(&r, "/fragments/x.html", &bare);
    assert_true(fragments->is_fragments);
    assert_false(routes_match(&r, "/x", &bare)->is_fragments);
    routes_close(&r);
    /* The mark, not the name: a route renamed keeps it when marked. */
    assert_true(config_apply_ini(&c, "[routes]\n/fragments/ =\n/parts/ = fragments, fragments\n", &cerr));
    assert_true(routes_open(&r, &c, err, sizeof(err)));
    assert_true(routes_match(&r, "/parts/x.html", &bare)->is_fragments);
    assert_false(routes_match(&r, "/fragments/x.html", &bare)->is_fragments); /* "/" serves it now */
    char media[128];
    snprintf(media, sizeof(media), "%s/media", root);
    char *real = realpath(media, NULL);
    assert_string_equal(routes_match(&r, "/assets/data/x", &bare)->dir, real);
    free(real);
    routes_close(&r);
    config_finish(&c);
}

static void test_missing_folder(void **state)
{
    struct config c;
    config_init(&c);
    free(c.root);
    c.root = strdup(root);
    char err[256];
    struct config_error cerr;
    assert_true(config_apply_ini(&c, "[routes]\n/extra/ = nowhere\n", &cerr));
    struct routes r;
    assert_false(routes_open(&r, &c, err, sizeof(err)));
    assert_non_null(strstr(err, "route /extra/: folder "));
    assert_non_null(strstr(err, "nowhere: No such file or directory"));
    assert_int_equal(r.count, 0);
    config_finish(&c);

    config_init(&c);
    free(c.root);
    c.root = strdup("/nonexistent-folio-root");
    assert_false(routes_open(&r, &c, err, sizeof(err)));
    assert_string_equal(err, "root /nonexistent-folio-root: No such file or directory");
    config_finish(&c);
}

/* Whether route's fd names the folder at path now. */
static bool holds(const struct route *route, const char *path)
{
    struct stat held, there;
    return fstat(route->dir_fd, &held) == 0 && stat(path, &there) == 0 &&
           held.st_ino == there.st_ino && held.st_dev == there.st_dev;
}

static void test_replaced_folders_are_reopened(void **state)
{
    struct config c;
    config_init(&c);
    free(c.root);
    c.root = strdup(root);
    char err[256], www[128], away[128], v2[128];
    snprintf(www, sizeof(www), "%s/www", root);
    snprintf(away, sizeof(away), "%s/www-away", root);
    snprintf(v2, sizeof(v2), "%s/v2", root);
    struct routes r;
    assert_true(routes_open(&r, &c, err, sizeof(err)));
    bool bare;
    const struct route *top = routes_match(&r, "/", &bare);
    int fd = top->dir_fd;
    assert_int_equal(routes_check(top, true), ROUTE_SAME);
    assert_int_equal(rename(www, away), 0); /* moved away: nothing is served from it */
    assert_int_equal(routes_check(top, true), ROUTE_GONE);
    assert_int_equal(routes_check(top, false), ROUTE_GONE);
    assert_int_equal(mkdir(www, 0755), 0); /* built again */
    assert_int_equal(routes_check(top, true), ROUTE_REOPENED);
    assert_true(holds(top, www));
    assert_int_equal(top->dir_fd, fd); /* the same number, for requests in flight */
    assert_int_equal(rmdir(www), 0); /* swapped for a symlink */
    assert_int_equal(mkdir(v2, 0755), 0);
    assert_int_equal(symlink("v2", www), 0);
    assert_int_equal(routes_check(top, true), ROUTE_REOPENED);
    assert_true(holds(top, v2));
    assert_int_equal(routes_check(top, true), ROUTE_SAME);
    /* Without a miss, a look at most once a second. */
    assert_int_equal(unlink(www), 0);
    assert_int_equal(rename(away, www), 0);
    assert_int_equal(routes_check(top, false), ROUTE_SAME);
    assert_int_equal(routes_check(top, true), ROUTE_REOPENED);
    assert_true(holds(top, www));
    assert_int_equal(rmdir(v2), 0);
    routes_close(&r);
    config_finish(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_replaced_folders_are_reopened),
        cmocka_unit_test(test_missing_folder),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
