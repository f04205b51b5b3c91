/* config: the four layers and their precedence, and a clear reason for every
 * bad value (what the user sees on stderr comes from these strings). */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/config_table.h"
#include "serve/log.h"

static void test_defaults(void **state)
{
    struct config c;
    config_init(&c);
    assert_string_equal(c.root, ".");
    assert_string_equal(c.host, "127.0.0.1");
    assert_int_equal(c.port, 8000);
    assert_false(c.production);
    assert_true(config_live_reload(&c));
    c.production = true;
    assert_false(config_live_reload(&c)); /* production turns it off unless asked */
    c.live_reload = 1;
    assert_true(config_live_reload(&c));
    assert_int_equal(c.route_count, 3);
    assert_string_equal(c.routes[0].prefix, "/");
    assert_string_equal(c.routes[0].dir, "www");
    config_finish(&c);
}

static const struct {
    const char *key, *value;
    const char *error; /* NULL: accepted; else a piece of the reason */
} set_cases[] = {
    {"port", "0", NULL},
    {"port", "65535", NULL},
    {"port", "65536", "not a number from 0 to 65535"},
    {"port", "-1", "not a number"},
    {"port", "80x", "not a number"},
    {"port", "", "not a number"},
    {"threads", "0", NULL},
    {"threads", "257", "from 0 to 256"},
    {"live-reload", "off", NULL},
    {"live_reload", "yes", NULL},
    {"LIVE_RELOAD", "0", NULL},
    {"live-reload", "maybe", "not a yes/no value"},
    {"log-format", "json", NULL},
    {"log-format", "xml", "not a log format"},
    {"cache-size", "64M", NULL},
    {"cache-size", "5G", "'5G' is not a byte size from 0 to 4095M (bytes, or with K, M or G: 1024s)"},
    {"cache-size", "12Q", "not a byte size"},
    {"cache-size", "12KBB", "not a byte size"},
    {"cache-size", "12iB", "not a byte size"},
    {"header-limit", "1K", "from 4K to 16M"},
    {"header-limit", "16K", NULL},
    {"header-limit", "16kib", NULL},
    {"header-limit", "16KB", NULL},
    {"send-rate", "1073741825", "from 0 to 1G"},
    {"base-path", "/article/", NULL},
    {"base-path", "/", NULL},
    {"base-path", "", NULL},
    {"base-path", "article", "not a URL path"},
    {"base-path", "/a/../b", "not a URL path"},
    {"base-path", "/a\"b", "not a URL path"},
    {"host", "", "needs a value"},
    {"colour", "blue", "unknown setting 'colour'"},
};

static void test_set_table(void **state)
{
    for (size_t i = 0; i < sizeof(set_cases) / sizeof(set_cases[0]); i++) {
        struct config c;
        config_init(&c);
        char err[256] = "";
        bool ok = config_set(&c, set_cases[i].key, set_cases[i].value, err, sizeof(err));
        if (set_cases[i].error) {
            if (ok) {
                fail_msg("%s=%s should fail", set_cases[i].key, set_cases[i].value);
            }
            if (!strstr(err, set_cases[i].error)) {
                fail_msg("%s=%s: '%s' lacks '%s'", set_cases[i].key, set_cases[i].value, err,
                         set_cases[i].error);
            }
        } else if (!ok) {
            fail_msg("%s=%s should pass: %s", set_cases[i].key, set_cases[i].value, err);
        }
        config_finish(&c);
    }
}

static void test_base_path_is_tidied(void **state)
{
    struct config c;
    config_init(&c);
    char err[256];
    assert_string_equal(c.base_path, "");
    assert_true(config_set(&c, "base-path", "/article/", err, sizeof(err)));
    assert_string_equal(c.base_path, "/article");
    assert_true(config_set(&c, "base-path", "/", err, sizeof(err)));
    assert_string_equal(c.base_path, "");
    config_finish(&c);
}

static void test_ini(void **state)
{
    struct config c;
    config_init(&c);
    struct config_error err;
    assert_true(config_apply_ini(&c,
                                 "; comment\n[server]\nport = 9000\nlog-format = combined\n"
                                 "production = true\n[routes]\n/data/ = datasets\n/assets = media\n"
                                 "/fragments/ =\n",
                                 &err));
    assert_int_equal(c.port, 9000);
    assert_int_equal(c.log_format, LOG_FORMAT_COMBINED);
    assert_true(c.production);
    assert_int_equal(c.route_count, 3); /* fragments removed, data added, assets replaced */
    bool saw_data = false, saw_assets = false;
    for (size_t i = 0; i < c.route_count; i++) {
        assert_string_not_equal(c.routes[i].prefix, "/fragments/");
        if (strcmp(c.routes[i].prefix, "/data/") == 0) {
            saw_data = !strcmp(c.routes[i].dir, "datasets");
        }
        if (strcmp(c.routes[i].prefix, "/assets/") == 0) {
            saw_assets = !strcmp(c.routes[i].dir, "media");
        }
    }
    assert_true(saw_data && saw_assets);
    config_finish(&c);
}

static void test_fragments_route_mark(void **state)
{
    /* Fragment behaviour follows a mark on the route, not its name. */
    struct config c;
    config_init(&c);
    struct config_error err;
    assert_true(config_apply_ini(&c,
                                 "[routes]\n/parts/ = parts, fragments\n/more/ = more ,  fragments\n"
                                 "/odd/ = a, b\n/fragments/ = elsewhere\n",
                                 &err));
    const struct {
        const char *prefix, *dir;
        bool fragments;
    } want[] = {
        {"/", "www", false}, {"/assets/", "assets", false}, {"/parts/", "parts", true},
        {"/more/", "more", true}, {"/odd/", "a, b", false}, {"/fragments/", "elsewhere", true},
    };
    for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
        bool found = false;
        for (size_t i = 0; i < c.route_count; i++) {
            if (strcmp(c.routes[i].prefix, want[w].prefix) == 0) {
                found = true;
                assert_string_equal(c.routes[i].dir, want[w].dir);
                if (c.routes[i].fragments != want[w].fragments) {
                    fail_msg("%s: fragments %d", want[w].prefix, c.routes[i].fragments);
                }
            }
        }
        assert_true(found);
    }
    config_finish(&c);
}

/* Keys indented under their section are keys (inih would continue the first
 * one's value with the others), inline comments dropped as on a key line. */
static void test_ini_indented_keys(void **state)
{
    (void)state;
    struct config c;
    config_init(&c);
    struct config_error err;
    assert_true(config_apply_ini(&c, "[server]\n  port = 9000\n  log-format = json ; a comment\n\n\t grace: 3\n"
                                     "[routes]\n  /data/ = datasets\n  /more/ = more, fragments\n", &err));
    assert_int_equal(c.port, 9000);
    assert_int_equal(c.log_format, LOG_FORMAT_JSON);
    assert_int_equal(c.grace, 3);
    size_t found = 0;
    for (size_t i = 0; i < c.route_count; i++) {
        found += strcmp(c.routes[i].prefix, "/data/") == 0 && strcmp(c.routes[i].dir, "datasets") == 0;
        found += strcmp(c.routes[i].prefix, "/more/") == 0 && c.routes[i].fragments;
    }
    assert_int_equal(found, 2);
    config_finish(&c);
}

static const struct {
    const char *text, *error;
} bad_ini[] = {
    {"[server]\nport = 9000\nport = 70000\n", "line 3: port: '70000' is not a number"},
    {"[server]\n\nnope\n", "line 3: not a [section] or key = value"},
    {"[sever]\nport = 1\n", "line 2: unknown section [sever]"},
    {"[server]\ncolour = blue\n", "line 2: colour: unknown setting 'colour'"},
    {"[routes]\nassets/ = x\n", "line 2: route 'assets/' is not a URL path"},
    {"[routes]\n/__folio/x = y\n", "line 2: route '/__folio/x' is inside /__folio/"},
    {"[routes]\n/a/../b/ = y\n", "not a URL path"},
    /* A syntax error before a bad value: each error at its own line. */
    {"[server]\nbogus line\nport = x\n", "line 2: not a [section] or key = value"},
    {"[server]\nport = x\nbogus line\n", "line 2: port: 'x' is not a number"},
    {"[server\nport = 1\n", "line 1: not a [section] or key = value"},
    /* Given twice: refused, as nginx and lighttpd refuse it (the last would win unseen). */
    {"[server]\nport = 9000\n; again\nport = 9001\n", "line 4: port: is given twice (first on line 2)"},
    {"[routes]\n/a/ = x\n/a = y\n", "line 3: route /a is given twice (first on line 2)"},
    {"[server]\nport = 1\n  nonsense\n", "line 3: an indented line that is not key = value"},
    {"port = 1\n", "line 1: 'port' is outside any section: put it under [server]"},
    {"[server]\nroot = /a/very/long/path/that/goes/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/"
     "and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/x\n",
     "line 2: longer than the 198 characters a line may have"},
};

static void test_bad_ini(void **state)
{
    for (size_t i = 0; i < sizeof(bad_ini) / sizeof(bad_ini[0]); i++) {
        struct config c;
        config_init(&c);
        struct config_error e;
        char err[sizeof(e.message) + 32];
        assert_false(config_apply_ini(&c, bad_ini[i].text, &e));
        snprintf(err, sizeof(err), "line %d: %s", e.source.line, e.message); /* as the table says it */
        if (!strstr(err, bad_ini[i].error)) {
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad_ini[i].error);
        }
        config_finish(&c);
    }
}

static enum config_result load(struct config *c, char **argv, char **envp)
{
    int argc = 0;
    while (argv[argc]) {
        argc++;
    }
    struct config_error err;
    return config_load(c, argc, argv, envp, &err);
}

static void test_layers(void **state)
{
    char dir[] = "/tmp/folio-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[128];
    snprintf(file, sizeof(file), "%s/folio.conf", dir);
    FILE *f = fopen(file, "w");
    fputs("[server]\nport = 1111\nthreads = 3\nhost = 0.0.0.0\nquiet = yes\n", f);
    fclose(f);

    char *argv[] = {"folio", "--config", file, "--port", "3333", "--no-quiet", NULL};
    char *envp[] = {"PORT=2222", "FOLIO_THREADS=5", "FOLIO_BIN=/not/a/setting", NULL};
    struct config c;
    assert_int_equal(load(&c, argv, envp), CONFIG_OK);
    assert_int_equal(c.port, 3333);   /* flag > env */
    assert_int_equal(c.threads, 5);   /* env > file */
    assert_string_equal(c.host, "0.0.0.0"); /* file > default */
    assert_false(c.quiet);            /* --no-x turns a yes/no off */
    config_finish(&c);

    char *argv2[] = {"folio", "--config", file, NULL};
    char *envp2[] = {"PORT=2222", "FOLIO_PORT=4444", NULL};
    assert_int_equal(load(&c, argv2, envp2), CONFIG_OK);
    assert_int_equal(c.port, 4444); /* FOLIO_PORT over PORT */
    config_finish(&c);

    char *argv3[] = {"folio", "--no-live-reload", "--production", NULL};
    assert_int_equal(load(&c, argv3, NULL), CONFIG_OK);
    assert_false(config_live_reload(&c));
    assert_true(c.production);
    config_finish(&c);
    unlink(file);
    rmdir(dir);
}

static void test_load_failures(void **state)
{
    struct config c;
    char *bad_flag[] = {"folio", "--port", "http", NULL};
    char *unknown[] = {"folio", "--colour", NULL};
    char *missing_value[] = {"folio", "--port", NULL};
    char *stray[] = {"folio", "extra", NULL};
    char *no_file[] = {"folio", "--config", "/nonexistent/folio.conf", NULL};
    char *bad_env[] = {"FOLIO_LOG_FORMAT=yaml", NULL};
    char *plain[] = {"folio", NULL};
    char **cases[][2] = {{bad_flag, NULL}, {unknown, NULL}, {missing_value, NULL},
                         {stray, NULL},    {no_file, NULL}, {plain, bad_env}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (load(&c, cases[i][0], cases[i][1]) != CONFIG_INVALID) {
            fail_msg("case %zu should be invalid", i);
        }
        config_finish(&c);
    }
    char *help[] = {"folio", "--help", NULL};
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    assert_int_equal(load(&c, help, NULL), CONFIG_EXIT);
    fclose(stdout);
    stdout = saved;
    config_finish(&c);
}

/* A variable two slips from a setting's is taken for it: a swap is one. */
static void test_nearest_setting(void **state)
{
    assert_string_equal(config_nearest_setting("GZIP_LEVLE")->name, "gzip-level"); /* a swap */
    assert_string_equal(config_nearest_setting("PRT")->name, "port");              /* a deletion */
    assert_string_equal(config_nearest_setting("thredss")->name, "threads");       /* one more, one case */
    assert_null(config_nearest_setting("EDITOR"));
    assert_null(config_nearest_setting("A_VARIABLE_FAR_LONGER_THAN_ANY_SETTING_WHATEVER_IT_NAMES_AT_ALL"));
}

int main(void)
{
    /* config_load reads config/folio.conf from the working folder when present. */
    if (chdir("/tmp") != 0) {
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_set_table),
        cmocka_unit_test(test_base_path_is_tidied),
        cmocka_unit_test(test_ini),
        cmocka_unit_test(test_ini_indented_keys),
        cmocka_unit_test(test_fragments_route_mark),
        cmocka_unit_test(test_bad_ini),
        cmocka_unit_test(test_layers),
        cmocka_unit_test(test_load_failures),
        cmocka_unit_test(test_nearest_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
