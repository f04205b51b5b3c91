/* routes: longest prefix wins, bare prefixes are recognised, and a missing
 * folder is named in the error. */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "routes.h"

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
    assert_true(config_apply_ini(&c, "[routes]\n/assets/data/ = media\n", err, sizeof(err)));
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
    assert_true(config_apply_ini(&c, "[routes]\n/fragments/ =\n/parts/ = fragments, fragments\n", err,
                                 sizeof(err)));
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
    assert_true(config_apply_ini(&c, "[routes]\n/extra/ = nowhere\n", err, sizeof(err)));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_missing_folder),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
