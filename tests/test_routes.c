/* routes: longest prefix wins, bare prefixes are recognised, and a missing
 * folder is named in the error. */
#include "cmocka_prelude.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/config.h"
#include "site/routes.h"

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

#define FLOOD_THREADS 4
#define FLOOD_MISSES 20000

struct flood {
    const struct route *route;
    uint64_t seen;
    unsigned retries; /* misses told to open again */
};

static void *flood_misses(void *arg)
{
    struct flood *f = arg;
    for (int i = 0; i < FLOOD_MISSES; i++) {
        f->retries += routes_missed(f->route, f->seen);
    }
    return NULL;
}

/* A 404 flood: misses from several threads look at the folder at most once
 * per ROUTES_MISS_INTERVAL_MS, never wait for the lock a look takes (held
 * here by the test, they still all return), and a swap is still seen by a
 * miss, at once by the generation when someone else re-opened it. */
/* The default routes of the test root, opened; c is set up for them. */
static void open_default_routes(struct config *c, struct routes *r)
{
    config_init(c);
    free(c->root);
    c->root = strdup(root);
    char err[256];
    assert_true(routes_open(r, c, err, sizeof(err)));
}

static void test_misses_do_not_take_the_lock(void **state)
{
    struct config c;
    struct routes r;
    open_default_routes(&c, &r);
    char www[128], v3[128];
    snprintf(www, sizeof(www), "%s/www", root);
    snprintf(v3, sizeof(v3), "%s/www-v3", root);
    bool bare;
    const struct route *top = routes_match(&r, "/", &bare);

    /* The lock held (a look under way): every miss returns, none looks. */
    assert_int_equal(pthread_mutex_lock(&top->watch->lock), 0);
    uint64_t looks = atomic_load(&top->watch->looks);
    pthread_t threads[FLOOD_THREADS];
    struct flood floods[FLOOD_THREADS];
    for (int i = 0; i < FLOOD_THREADS; i++) {
        floods[i] = (struct flood){.route = top, .seen = routes_generation(top)};
        assert_int_equal(pthread_create(&threads[i], NULL, flood_misses, &floods[i]), 0);
    }
    for (int i = 0; i < FLOOD_THREADS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(floods[i].retries, 0);
    }
    assert_int_equal(atomic_load(&top->watch->looks), looks);
    assert_int_equal(pthread_mutex_unlock(&top->watch->lock), 0);

    /* Unlocked: at most one look per interval over the whole flood. */
    int64_t start = clock_now_ms();
    for (int i = 0; i < FLOOD_THREADS; i++) {
        assert_int_equal(pthread_create(&threads[i], NULL, flood_misses, &floods[i]), 0);
    }
    for (int i = 0; i < FLOOD_THREADS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(floods[i].retries, 0); /* nothing was swapped */
    }
    int64_t elapsed = clock_now_ms() - start;
    assert_in_range(atomic_load(&top->watch->looks) - looks, 0,
                    (uint64_t)(elapsed / ROUTES_MISS_INTERVAL_MS) + 1);

    /* A swap is seen by a miss: within the interval under a flood ... */
    uint64_t before = routes_generation(top);
    assert_int_equal(rename(www, v3), 0);
    assert_int_equal(mkdir(www, 0755), 0);
    bool retried = false;
    for (int64_t end = clock_now_ms() + 5000; !retried && clock_now_ms() < end;) {
        retried = routes_missed(top, before);
    }
    assert_true(retried);
    assert_true(holds(top, www));
    assert_true(routes_missed(top, before)); /* ... and by every miss that began before it */
    assert_false(routes_missed(top, routes_generation(top)));

    /* ... at once when the watcher re-opened it: no look of its own. */
    before = routes_generation(top);
    assert_int_equal(rmdir(www), 0);
    assert_int_equal(rename(v3, www), 0);
    assert_int_equal(routes_check(top, true), ROUTE_REOPENED);
    looks = atomic_load(&top->watch->looks);
    assert_true(routes_missed(top, before));
    assert_int_equal(atomic_load(&top->watch->looks), looks);
    routes_close(&r);
    config_finish(&c);
}

/* A file's path beneath its route's folder: the cache's key, one "/" between. */
static void test_path(void **state)
{
    (void)state;
    char out[64];
    struct route r = {.dir = "/srv/www"};
    assert_true(routes_path(&r, "a/b.html", out, sizeof(out)));
    assert_string_equal(out, "/srv/www/a/b.html");
    assert_true(routes_path(&r, "", out, sizeof(out))); /* the folder itself */
    assert_string_equal(out, "/srv/www/");
    assert_false(routes_path(&r, "a-name-that-is-far-too-long-for-the-buffer-it-is-given", out, 32));
    r.dir = "/srv/www/";
    assert_true(routes_path(&r, "x", out, sizeof(out)));
    assert_string_equal(out, "/srv/www/x");
    r.dir = "/"; /* a folder at the root: one slash */
    assert_true(routes_path(&r, "x", out, sizeof(out)));
    assert_string_equal(out, "/x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_replaced_folders_are_reopened),
        cmocka_unit_test(test_misses_do_not_take_the_lock),
        cmocka_unit_test(test_missing_folder),
        cmocka_unit_test(test_path),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
