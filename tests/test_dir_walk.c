/* Tests for dir_walk (src/base/dir_walk.c) on real temporary trees: every
 * folder of a deep chain and of a tree whose walk must re-open folders closed
 * for want of room, with the descriptors held counted at every folder; and
 * symlinks never followed, a link loop included. */
#include "cmocka_prelude.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir_walk.h"

/* What a walk saw. */
struct seen {
    size_t folders, files, links, failed;
    size_t max_fds;   /* the most descriptors this process held at a folder */
    size_t max_len;   /* the longest path handed over */
};

/* Descriptors open in this process now (/proc/self/fd's entries). */
static size_t open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    size_t n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    if (d != NULL) {
        closedir(d);
    }
    return n > 0 ? n - 1 : 0; /* the listing's own */
}

/* dir_walk: a folder: counted, with the descriptors held there. */
static bool seen_folder(void *arg, int fd, const char *rel)
{
    (void)fd;
    struct seen *s = arg;
    s->folders++;
    size_t fds = open_fds(), len = strlen(rel);
    s->max_fds = fds > s->max_fds ? fds : s->max_fds;
    s->max_len = len > s->max_len ? len : s->max_len;
    return true;
}

/* dir_walk: an entry: counted by type, folders walked into. */
static bool seen_entry(void *arg, int dirfd, const char *name, const char *rel, unsigned char type)
{
    (void)dirfd;
    (void)name;
    (void)rel;
    struct seen *s = arg;
    s->files += type == DT_REG;
    s->links += type == DT_LNK;
    return type == DT_DIR;
}

/* dir_walk: a failure: counted. */
static void seen_failed(void *arg, const char *rel, int err)
{
    (void)rel;
    (void)err;
    ((struct seen *)arg)->failed++;
}

static const struct dir_walk_ops seen_ops = {
    .folder = seen_folder, .entry = seen_entry, .failed = seen_failed};

/* Makes @depth nested folders named @name below folder @fd (a file at the
 * bottom when @file); each is made from its parent's descriptor. */
static void make_chain(int fd, const char *name, int depth, bool file)
{
    int cur = dup(fd);
    for (int i = 0; i < depth; i++) {
        assert_int_equal(mkdirat(cur, name, 0755), 0);
        int next = openat(cur, name, O_RDONLY | O_DIRECTORY);
        assert_true(next >= 0);
        close(cur);
        cur = next;
    }
    if (file) {
        int f = openat(cur, "bottom.txt", O_WRONLY | O_CREAT, 0644);
        assert_true(f >= 0);
        close(f);
    }
    close(cur);
}

/* Walks the folder at @path into @s. */
static void walk(const char *path, struct seen *s)
{
    *s = (struct seen){0};
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    assert_int_equal(dir_walk(fd, "", &seen_ops, s), 0);
}

static void remove_tree(const char *path)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", path);
    assert_int_equal(system(cmd), 0);
}

/* 3,000 levels (paths of 6,000 bytes, past PATH_MAX): every folder and the
 * file at the bottom seen, with no more descriptors than the window's. */
static void test_deep_chain(void **state)
{
    (void)state;
    char root[] = "/tmp/folio-dirwalk-XXXXXX";
    assert_non_null(mkdtemp(root));
    int fd = open(root, O_RDONLY | O_DIRECTORY);
    make_chain(fd, "d", 3000, true);
    close(fd);
    size_t before = open_fds();
    struct seen s;
    walk(root, &s);
    assert_int_equal(s.folders, 3001);
    assert_int_equal(s.files, 1);
    assert_int_equal(s.failed, 0);
    assert_int_equal(s.max_len, 2 * 3000 - 1);
    assert_true(s.max_fds <= before + DIR_WALK_WINDOW + 3);
    assert_int_equal(open_fds(), before); /* nothing left open */
    remove_tree(root);
}

/* Each of 40 levels holds the chain's next folder and a 20-level side
 * chain: whichever readdir gives first, coming back up finds the level
 * closed for want of room, so it is re-opened from an ancestor. */
static void test_reopened_levels(void **state)
{
    (void)state;
    char root[] = "/tmp/folio-dirwalk-XXXXXX";
    assert_non_null(mkdtemp(root));
    int cur = open(root, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < 40; i++) {
        make_chain(cur, "side", 20, true);
        assert_int_equal(mkdirat(cur, "main", 0755), 0);
        int next = openat(cur, "main", O_RDONLY | O_DIRECTORY);
        close(cur);
        cur = next;
    }
    close(cur);
    size_t before = open_fds();
    struct seen s;
    walk(root, &s);
    assert_int_equal(s.folders, 1 + 40 + 40 * 20);
    assert_int_equal(s.files, 40);
    assert_int_equal(s.failed, 0);
    assert_true(s.max_fds <= before + DIR_WALK_WINDOW + 3);
    remove_tree(root);
}

/* A link to a folder outside and a link loop: seen as links, never walked. */
static void test_symlinks_not_followed(void **state)
{
    (void)state;
    char root[] = "/tmp/folio-dirwalk-XXXXXX", path[128];
    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof path, "%s/a", root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/a/up", root);
    assert_int_equal(symlink("..", path), 0); /* a loop */
    snprintf(path, sizeof path, "%s/etc", root);
    assert_int_equal(symlink("/etc", path), 0); /* out of the tree */
    struct seen s;
    walk(root, &s);
    assert_int_equal(s.folders, 2);
    assert_int_equal(s.links, 2);
    assert_int_equal(s.files, 0);
    remove_tree(root);
}

/* dir_walk_open: below a folder one name at a time; a link on the way is refused. */
static void test_open_refuses_links(void **state)
{
    (void)state;
    char root[] = "/tmp/folio-dirwalk-XXXXXX", path[128];
    assert_non_null(mkdtemp(root));
    int fd = open(root, O_RDONLY | O_DIRECTORY);
    make_chain(fd, "d", 3, false);
    snprintf(path, sizeof path, "%s/d/link", root);
    assert_int_equal(symlink("d", path), 0);
    int sub = dir_walk_open(fd, "d/d/d");
    assert_true(sub >= 0);
    close(sub);
    assert_int_equal(dir_walk_open(fd, "d/link/"), -1);
    assert_true(errno == ELOOP || errno == ENOTDIR);
    assert_int_equal(dir_walk_open(fd, "d/../d"), -1);
    assert_int_equal(errno, EINVAL);
    close(fd);
    remove_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_reopened_levels),
        cmocka_unit_test(test_symlinks_not_followed),
        cmocka_unit_test(test_open_refuses_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
