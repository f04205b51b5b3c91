/* resolve: the URL normaliser as a table, and opening beneath a folder
 * against a real tree with symlinks pointing in and out. */
#include "cmocka_prelude.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "site/resolve.h"

static const struct {
    const char *raw;
    const char *normal; /* NULL: rejected with 400 */
} normalise_cases[] = {
    {"/", "/"},
    {"/index.html", "/index.html"},
    {"/a/b/c.css", "/a/b/c.css"},
    {"/a/", "/a/"},
    {"/a//b", "/a/b"},
    {"//a", "/a"},
    {"/a/./b", "/a/b"},
    {"/a/.", "/a/"},
    {"/a/..", "/"},
    {"/a/../b", "/b"},
    {"/..", "/"},
    {"/../../etc/passwd", "/etc/passwd"},
    {"/a/b/../../../../x", "/x"},
    {"/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd"},
    {"/%2E%2E/x", "/x"},
    {"/.%2e/x", "/x"},
    {"/a/%2e/b", "/a/b"},
    {"/...", "/..."},
    {"/a/..b", "/a/..b"},
    {"/assets/read%20aloud%2C%20intro.mp3", "/assets/read aloud, intro.mp3"},
    {"/%25", "/%"},
    {"/%252e%252e/x", "/%2e%2e/x"}, /* decoded once, never twice */
    {"/caf%C3%A9", "/caf\xc3\xa9"},
    {"/a%2fb", NULL},
    {"/a%2F..%2Fb", NULL},
    {"/a%00b", NULL},
    {"/%", NULL},
    {"/%4", NULL},
    {"/%zz", NULL},
    {"/%g0", NULL},
    {"", NULL},
    {"a/b", NULL},
    {"*", NULL},
    {"http://example.com/", NULL},
    {"/a\\..\\b", "/a\\..\\b"}, /* a backslash is a name character on Linux */
};

static void test_normalise_table(void **state)
{
    for (size_t i = 0; i < sizeof(normalise_cases) / sizeof(normalise_cases[0]); i++) {
        const char *raw = normalise_cases[i].raw;
        char out[256];
        bool ok = resolve_normalize(raw, strlen(raw), out, sizeof(out));
        if (!normalise_cases[i].normal) {
            if (ok) {
                fail_msg("'%s' should be refused, got '%s'", raw, out);
            }
        } else {
            if (!ok) {
                fail_msg("'%s' should give '%s', was refused", raw, normalise_cases[i].normal);
            }
            assert_string_equal(out, normalise_cases[i].normal);
        }
    }
}

static void test_normalise_never_leaves_dot_segments(void **state)
{
    /* Every combination of a few hostile pieces: the invariant of the fuzzer. */
    const char *pieces[] = {"/", "..", ".", "%2e", "a", "%2E%2e", "//", "b/"};
    char raw[64], out[64];
    for (unsigned n = 0; n < 8 * 8 * 8 * 8; n++) {
        snprintf(raw, sizeof(raw), "/%s%s%s%s", pieces[n % 8], pieces[n / 8 % 8], pieces[n / 64 % 8],
                 pieces[n / 512 % 8]);
        if (!resolve_normalize(raw, strlen(raw), out, sizeof(out))) {
            continue;
        }
        assert_int_equal(out[0], '/');
        assert_null(strstr(out, "/../"));
        assert_null(strstr(out, "/./"));
        assert_null(strstr(out, "//"));
        size_t len = strlen(out);
        assert_false(len >= 3 && strcmp(out + len - 3, "/..") == 0);
        assert_false(len >= 2 && strcmp(out + len - 2, "/.") == 0);
    }
}

static void test_out_buffer_too_small(void **state)
{
    char out[4];
    assert_false(resolve_normalize("/abcdef", 7, out, sizeof(out)));
}

static void test_dot_segments(void **state)
{
    assert_true(resolve_has_dot_segment("/.git/config"));
    assert_true(resolve_has_dot_segment("/a/.env"));
    assert_true(resolve_has_dot_segment("/assets/.hidden/x.png"));
    assert_false(resolve_has_dot_segment("/a.b/c.d"));
    assert_false(resolve_has_dot_segment("/"));
}

static char tree[64];
static int tree_fd = -1;

static void write_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", tree, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_at(const char *target, const char *rel)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", tree, rel);
    assert_int_equal(symlink(target, path), 0);
}

static int setup_tree(void **state)
{
    strcpy(tree, "/tmp/folio-resolve-XXXXXX");
    assert_non_null(mkdtemp(tree));
    char path[256];
    snprintf(path, sizeof(path), "%s/root", tree);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/root/sub", tree);
    mkdir(path, 0755);
    write_file("secret.txt", "outside\n");
    write_file("root/page.html", "<p>in</p>\n");
    write_file("root/sub/deep.css", "p{}\n");
    link_at("page.html", "root/inside-link.html");
    link_at("sub", "root/sub-link");
    link_at("../secret.txt", "root/escape.txt");
    link_at("/etc/passwd", "root/absolute.txt");
    link_at("..", "root/parent");
    snprintf(path, sizeof(path), "%s/root/fifo", tree);
    assert_int_equal(mkfifo(path, 0644), 0);
    snprintf(path, sizeof(path), "%s/root", tree);
    tree_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(tree_fd >= 0);
    return 0;
}

static int teardown_tree(void **state)
{
    close(tree_fd);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
    return system(cmd);
}

static void check_open(const char *rel, enum resolve_status want)
{
    int fd, err;
    struct stat st;
    enum resolve_status got = resolve_open(tree_fd, rel, &fd, &st, &err);
    if (got != want) {
        fail_msg("'%s': got status %d, want %d", rel, got, want);
    }
    if (got == RESOLVED_FILE || got == RESOLVED_DIRECTORY) {
        assert_true(fd >= 0);
        close(fd);
    } else {
        assert_int_equal(fd, -1);
    }
}

static void run_open_cases(void)
{
    check_open("page.html", RESOLVED_FILE);
    check_open("sub/deep.css", RESOLVED_FILE);
    check_open("", RESOLVED_DIRECTORY);
    check_open("sub", RESOLVED_DIRECTORY);
    check_open("sub/", RESOLVED_DIRECTORY);
    check_open("missing.html", RESOLVED_NOT_FOUND);
    check_open("page.html/", RESOLVED_NOT_FOUND);
    check_open("page.html/x", RESOLVED_NOT_FOUND);
    check_open("escape.txt", RESOLVED_NOT_FOUND);   /* symlink out of the folder */
    check_open("absolute.txt", RESOLVED_NOT_FOUND); /* absolute symlink */
    check_open("parent/secret.txt", RESOLVED_NOT_FOUND);
    check_open("fifo", RESOLVED_NOT_FOUND);         /* never blocks, never served */
}

static void test_open_beneath(void **state)
{
    if (!resolve_init(tree_fd)) {
        skip(); /* covered by the walk test below; this kernel lacks openat2 */
    }
    run_open_cases();
    check_open("inside-link.html", RESOLVED_FILE); /* symlinks inside the folder work */
    check_open("sub-link/deep.css", RESOLVED_FILE);
}

static void test_open_walk_fallback(void **state)
{
    /* Force the fallback by probing with a bad fd, then restore. */
    bool had_openat2 = resolve_init(tree_fd);
    resolve_force_walk_for_tests(true);
    run_open_cases();
    check_open("inside-link.html", RESOLVED_NOT_FOUND); /* the walk follows no symlink */
    resolve_force_walk_for_tests(false);
    assert_int_equal(resolve_init(tree_fd), had_openat2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalise_table),
        cmocka_unit_test(test_normalise_never_leaves_dot_segments),
        cmocka_unit_test(test_out_buffer_too_small),
        cmocka_unit_test(test_dot_segments),
        cmocka_unit_test(test_open_beneath),
        cmocka_unit_test(test_open_walk_fallback),
    };
    return cmocka_run_group_tests(tests, setup_tree, teardown_tree);
}
