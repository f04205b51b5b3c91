/* Tests for the watcher: the backends (watch_inotify.c, the stat walk in watch_poll.c) against
 * a real temporary folder, most tests against both (the window's own rules:
 * test_watch_window.c). The backends run
 * stepped (no thread) on a fake clock: what the kernel queued, or what a
 * walk finds, is real; the time that passes is stepped, so a test waits for
 * no deadline. One test runs each backend on its own thread and clock. */
#include "cmocka_prelude.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test_helpers.h"
#include "live/watch.h"
#include "live/watch_path.h"
#include "live/watch_missed.h"


struct fixture {
    char root[64];
    char root2[64];
    const char *roots[2]; /* borrowed by the watch: lives as long */
    struct th_rig t;
};

static bool batch_has(const struct th_seen_batch *b, int id, const char *path)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->ids[i] == id && strcmp(b->paths[i], path) == 0) {
            return true;
        }
    }
    return false;
}

static void path_of(char *out, size_t size, const char *dir, const char *rel)
{
    snprintf(out, size, "%s/%s", dir, rel);
}

static int setup_mode(void **state, enum watch_mode mode)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->root, sizeof f->root, "/tmp/folio-watch-XXXXXX");
    snprintf(f->root2, sizeof f->root2, "/tmp/folio-watch2-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    assert_non_null(mkdtemp(f->root2));
    th_rig_init(&f->t);
    /* Present before the watch starts: a subfolder, a file, a dot-folder. */
    char p[256];
    path_of(p, sizeof p, f->root, "sub");
    assert_int_equal(mkdir(p, 0755), 0);
    path_of(p, sizeof p, f->root, ".git");
    assert_int_equal(mkdir(p, 0755), 0);
    th_write_file(f->root, "style.css", "a{}");
    th_write_file(f->root, "sub/page.html", "<p>");
    f->roots[0] = f->root;
    f->roots[1] = f->root2;
    assert_non_null(th_rig_watch(&f->t, f->roots, 2, mode));
    *state = f;
    return 0;
}

static int setup(void **state) { return setup_mode(state, WATCH_INOTIFY); }
static int setup_poll(void **state) { return setup_mode(state, WATCH_POLL); }

static int teardown(void **state)
{
    struct fixture *f = *state;
    th_rig_finish(&f->t);
    th_remove_tree(f->root);
    th_remove_tree(f->root2);
    free(f);
    return 0;
}

static void test_ignored_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bool ignored;
    } cases[] = {
        {"style.css", false}, {"index.html", false}, {"4913.css", false},
        {"a~b", false},       {"#a", false},         {"swp", false},
        {".style.css.swp", true}, {"style.css.swp", true}, {"x.swx", true},
        {"x.swo", true},      {"style.css~", true},  {"4913", true},
        {".#style.css", true}, {"#style.css#", true}, {".git", true},
        {".env", true},       {".", true},           {"..", true},
        {"", true},           {"style.css___jb_tmp___", true},
        {"style.css___jb_old___", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (watch_ignored_name(cases[i].name) != cases[i].ignored) {
            fail_msg("watch_ignored_name(\"%s\") != %d", cases[i].name,
                     cases[i].ignored);
        }
    }
}

static void test_count(void **state)
{
    struct fixture *f = *state;
    /* root, root/sub, root2; never .git */
    assert_int_equal(watch_count(f->t.w), 3);
    assert_int_equal(watch_count(NULL), 0);
    /* Nothing happened: no batch. */
    assert_null(th_next_batch(&f->t, 150));
}

static void test_write_is_one_batch(void **state)
{
    struct fixture *f = *state;
    /* Several writes in a burst: one callback, one deduplicated change. */
    int64_t start = th_rig_now(&f->t);
    for (int i = 0; i < 5; i++) {
        th_write_file(f->root, "style.css", "b{}");
    }
    int64_t burst = th_rig_now(&f->t) - start;
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "style.css"));
    if (burst < 50) {
        assert_null(th_next_batch(&f->t, 150));
    } else {
        /* A starved test thread (a loaded CI machine) spread the burst past
         * the window: a second batch is right then, but still only this file. */
        while ((b = th_next_batch(&f->t, 150)) != NULL) {
            assert_int_equal(b->n, 1);
            assert_true(batch_has(b, 0, "style.css"));
        }
    }

    th_write_file(f->root, "sub/page.html", "<p>x");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "sub/page.html"));

    th_write_file(f->root2, "x.js", "1");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 1, "x.js"));
}

static void test_atomic_saves(void **state)
{
    struct fixture *f = *state;
    char from[256], to[256];
    /* sed -i: a temp file with an ordinary name, renamed over the target. */
    th_write_file(f->root, "sedAb12Cd", "c{}");
    path_of(from, sizeof from, f->root, "sedAb12Cd");
    path_of(to, sizeof to, f->root, "style.css");
    assert_int_equal(rename(from, to), 0);
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "style.css"));

    /* vim (backupcopy=no): probe 4913, move the original to a backup,
     * write anew, delete the backup; swap files all along. */
    th_write_file(f->root, ".style.css.swp", "swap");
    th_write_file(f->root, "4913", "");
    path_of(from, sizeof from, f->root, "4913");
    assert_int_equal(unlink(from), 0);
    path_of(from, sizeof from, f->root, "style.css");
    path_of(to, sizeof to, f->root, "style.css~");
    assert_int_equal(rename(from, to), 0);
    th_write_file(f->root, "style.css", "d{}");
    assert_int_equal(unlink(to), 0);
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "style.css"));

    /* Only scratch files: no callback at all. */
    th_write_file(f->root, "x.swp", "1");
    th_write_file(f->root, "notes~", "1");
    th_write_file(f->root, ".#style.css", "1");
    th_write_file(f->root, "#style.css#", "1");
    th_write_file(f->root, "sub/.hidden", "1");
    assert_null(th_next_batch(&f->t, 200));
}

static void test_delete_and_create(void **state)
{
    struct fixture *f = *state;
    char p[256];
    path_of(p, sizeof p, f->root, "sub/page.html");
    assert_int_equal(unlink(p), 0);
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "sub/page.html"));

    th_write_file(f->root, "new.html", "n");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "new.html"));
}

static void test_new_folders(void **state)
{
    struct fixture *f = *state;
    char p[256];
    /* A tree made at once, files written right away: the files inside may
     * predate the watch on their folder, and must be reported anyway. */
    path_of(p, sizeof p, f->root, "a");
    assert_int_equal(mkdir(p, 0755), 0);
    path_of(p, sizeof p, f->root, "a/b");
    assert_int_equal(mkdir(p, 0755), 0);
    th_write_file(f->root, "a/b/c.css", "c");
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 0, "a/b/c.css"));
    assert_int_equal(watch_count(f->t.w), 5);

    /* The new folders are watched: a later write there is seen. */
    th_write_file(f->root, "a/b/d.css", "d");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "a/b/d.css"));

    /* A folder moved in from outside, with content. */
    char outside[64] = "/tmp/folio-watch-out-XXXXXX";
    assert_non_null(mkdtemp(outside));
    th_write_file(outside, "moved.html", "m");
    path_of(p, sizeof p, f->root, "in");
    assert_int_equal(rename(outside, p), 0);
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 0, "in/moved.html"));
    assert_int_equal(watch_count(f->t.w), 6);

    /* Moved out again: reported, and no longer watched. */
    assert_int_equal(rename(p, outside), 0);
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 0, "in"));
    assert_int_equal(watch_count(f->t.w), 5);
    th_write_file(outside, "moved.html", "again");
    assert_null(th_next_batch(&f->t, 200));
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", outside);
    assert_int_equal(system(cmd), 0);

    /* A folder deleted: reported; its watches go. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/a'", f->root);
    assert_int_equal(system(cmd), 0);
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 0, "a"));
    assert_true(th_wait_count(&f->t, 3, 2000));
}

static void test_max_wait(void **state)
{
    struct fixture *f = *state;
    /* Writes every 10 ms for 1.3 s never leave a 100 ms gap, yet the window
     * is capped at 8 x 100 ms: a batch must come while the writes go on,
     * and each batch is exactly that one file. */
    int64_t first = th_rig_now(&f->t), last = first;
    for (int i = 0; i < 130; i++) {
        th_write_file(f->root, "style.css", "s");
        last = th_rig_now(&f->t);
        th_pass(&f->t, 10);
    }
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    if (b->at_ms >= last) {
        fail_msg("the first batch came %lld ms after the first write, after the last one (%lld ms)",
                 (long long)(b->at_ms - first), (long long)(last - first));
    }
    do {
        assert_false(b->overflow);
        assert_int_equal(b->n, 1);
        assert_true(batch_has(b, 0, "style.css"));
    } while ((b = th_next_batch(&f->t, 400)) != NULL);
    /* And the stream's tail was flushed after it ended. */
    pthread_mutex_lock(&f->t.mu);
    int64_t tail = f->t.batches[f->t.nbatches - 1].at_ms;
    pthread_mutex_unlock(&f->t.mu);
    assert_true(tail >= last);
}

static void test_slow_write_is_one_change(void **state)
{
    struct fixture *f = *state;
    /* A writer that keeps the file open for longer than the window's cap
     * (800 ms) is announced once, after it closes the file: never half-written. */
    char path[256];
    path_of(path, sizeof path, f->root, "big.css");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(write(fd, "p{}\n", 4), 4);
        th_pass(&f->t, 60);
    }
    assert_null(th_next_batch(&f->t, 1));
    assert_int_equal(close(fd), 0);
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 0, "big.css"));
    assert_null(th_next_batch(&f->t, 300));
}

static void test_root_removed_is_held_then_back(void **state)
{
    struct fixture *f = *state;
    th_remove_tree(f->root2);
    /* A swap under way: no reload while the folder is missing ... */
    assert_null(th_next_batch(&f->t, 300));
    /* ... but not forever: at the cap the consumer is told all the same. */
    const struct th_seen_batch *b = th_next_batch(&f->t, WATCH_SWAP_CAP_MS + 2000);
    assert_non_null(b);
    assert_true(b->overflow);
    /* Back again: an overflow too (its files may all be new), then it is
     * watched as before. */
    assert_int_equal(mkdir(f->root2, 0755), 0);
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(b->overflow);
    th_write_file(f->root2, "back.css", "b");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 1, "back.css"));
}

/* rm -rf, then a rebuild that takes a while (folders made one by one, a
 * file in each): every new folder ends up watched. */
static void test_root_rebuilt_slowly(void **state)
{
    struct fixture *f = *state;
    th_remove_tree(f->root2);
    assert_int_equal(mkdir(f->root2, 0755), 0);
    char p[256];
    for (int i = 0; i < 5; i++) {
        char rel[32];
        snprintf(rel, sizeof rel, "d%d", i);
        path_of(p, sizeof p, f->root2, rel);
        assert_int_equal(mkdir(p, 0755), 0);
        th_pass(&f->t, 40); /* a slow copy */
        snprintf(rel, sizeof rel, "d%d/f.css", i);
        th_write_file(f->root2, rel, "f");
    }
    const struct th_seen_batch *b = th_next_batch(&f->t, 3000);
    assert_non_null(b);
    assert_true(b->overflow);
    /* root, sub; root2 and its five folders */
    assert_true(th_wait_count(&f->t, 2 + 6, 3000));
    while (th_next_batch(&f->t, 300) != NULL) {
        /* a window that closed mid-copy: more of the same */
    }
    th_write_file(f->root2, "d4/late.css", "l");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_true(batch_has(b, 1, "d4/late.css"));
}

/* mv away, and a new folder moved in its place: the old one is not heard. */
static void test_root_moved_away_and_replaced(void **state)
{
    struct fixture *f = *state;
    char old[80], staged[80];
    snprintf(old, sizeof old, "%s.old", f->root2);
    snprintf(staged, sizeof staged, "%s.new", f->root2);
    assert_int_equal(mkdir(staged, 0755), 0);
    th_write_file(staged, "a.css", "a");
    assert_int_equal(rename(f->root2, old), 0);
    assert_int_equal(rename(staged, f->root2), 0);
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(b->overflow);
    assert_null(th_next_batch(&f->t, 300));
    th_write_file(old, "z.css", "z");
    assert_null(th_next_batch(&f->t, 400));
    th_write_file(f->root2, "b.css", "b");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 1, "b.css"));
    th_remove_tree(old);
}

/* A root that is a symlink, pointed elsewhere (`ln -sfn v2 www`): the new
 * target is watched, the old one no longer. */
static void symlinked_root_swapped(enum watch_mode mode)
{
    char base[64], p[128], link[128], tmp[128];
    snprintf(base, sizeof base, "/tmp/folio-watch-ln-XXXXXX");
    assert_non_null(mkdtemp(base));
    const char *const versions[] = {"v1", "v2"};
    for (size_t i = 0; i < 2; i++) {
        path_of(p, sizeof p, base, versions[i]);
        assert_int_equal(mkdir(p, 0755), 0);
        th_write_file(p, "page.html", versions[i]);
    }
    path_of(link, sizeof link, base, "www");
    path_of(tmp, sizeof tmp, base, "www.new");
    assert_int_equal(symlink("v1", link), 0);
    struct th_rig t;
    th_rig_init(&t);
    const char *roots[] = {link};
    assert_non_null(th_rig_watch(&t, roots, 1, mode));
    assert_int_equal(symlink("v2", tmp), 0);
    assert_int_equal(rename(tmp, link), 0);
    const struct th_seen_batch *b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_true(b->overflow);
    th_write_file(base, "v1/old.css", "o");
    assert_null(th_next_batch(&t, 400));
    th_write_file(base, "v2/new.css", "n");
    b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "new.css"));
    assert_int_equal(t.swaps, 1);
    th_rig_finish(&t);
    th_remove_tree(base);
}

static void test_symlinked_root_swapped(void **state)
{
    (void)state;
    symlinked_root_swapped(WATCH_INOTIFY);
}

static void test_poll_symlinked_root_swapped(void **state)
{
    (void)state;
    symlinked_root_swapped(WATCH_POLL);
}

/* A route inside another route's folder: its parent watch is the outer
 * route's own, which must keep hearing everything (IN_MASK_ADD). */
static void test_parent_is_a_watched_folder(void **state)
{
    struct fixture *f = *state;
    char inner[128];
    path_of(inner, sizeof inner, f->root, "sub");
    struct th_rig t;
    th_rig_init(&t);
    const char *roots[] = {f->root, inner};
    assert_non_null(th_rig_watch(&t, roots, 2, WATCH_INOTIFY));
    th_write_file(f->root, "style.css", "changed");
    const struct th_seen_batch *b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_true(batch_has(b, 0, "style.css"));
    /* The inner one built again: one overflow, then watched as before. */
    th_remove_tree(inner);
    assert_int_equal(mkdir(inner, 0755), 0);
    b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_true(b->overflow);
    th_write_file(inner, "x.css", "x");
    b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_true(batch_has(b, 1, "x.css"));
    th_write_file(f->root, "style.css", "again");
    b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 0, "style.css"));
    th_rig_finish(&t);
}

/* Many swaps leave no descriptor, no kernel watch and no folder behind. */
static void test_swaps_leak_nothing(void **state)
{
    struct fixture *f = *state;
    char fdinfo[64], staged[80], rel[32];
    snprintf(fdinfo, sizeof fdinfo, "/proc/self/fdinfo/%d", th_inotify_fd());
    snprintf(staged, sizeof staged, "%s.new", f->root2);
    char p[128];
    path_of(p, sizeof p, f->root2, "s");
    assert_int_equal(mkdir(p, 0755), 0);
    th_write_file(f->root2, "s/x.css", "x");
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    size_t fds = th_count_fds(), watches = th_count_lines(fdinfo, "inotify wd:");
    size_t folders = watch_count(f->t.w);
    for (int i = 0; i < 12; i++) {
        assert_int_equal(mkdir(staged, 0755), 0);
        path_of(p, sizeof p, staged, "s");
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(rel, sizeof rel, "s/x%d.css", i);
        th_write_file(staged, rel, "x");
        th_remove_tree(f->root2);
        assert_int_equal(rename(staged, f->root2), 0);
        b = th_next_batch(&f->t, 2000);
        assert_non_null(b);
        assert_true(b->overflow);
    }
    assert_true(th_wait_count(&f->t, folders, 2000));
    assert_int_equal(th_count_fds(), fds);
    assert_int_equal(th_count_lines(fdinfo, "inotify wd:"), watches);
    th_write_file(f->root2, "s/after.css", "a");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 1, "s/after.css"));
}

static void test_poll_touch_and_new_file_in_new_folder(void **state)
{
    struct fixture *f = *state;
    char p[256];
    /* touch: only the times change (an author forcing a reload). */
    path_of(p, sizeof p, f->root, "style.css");
    struct timespec times[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    assert_int_equal(utimensat(AT_FDCWD, p, times, 0), 0);
    const struct th_seen_batch *b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "style.css"));
    /* A new folder: it and its file, in one batch. */
    path_of(p, sizeof p, f->root, "new");
    assert_int_equal(mkdir(p, 0755), 0);
    th_write_file(f->root, "new/x.css", "x");
    b = th_next_batch(&f->t, 2000);
    assert_non_null(b);
    assert_true(batch_has(b, 0, "new/x.css"));
    assert_true(batch_has(b, 0, "new"));
    assert_int_equal(b->n, 2);
    assert_null(th_next_batch(&f->t, 200));
}

static void test_create_errors(void **state)
{
    (void)state;
    struct th_rig r;
    th_rig_init(&r);
    const char *missing[] = {"/nonexistent/folio/dir"};
    /* A missing root is reported and skipped, not fatal, in either mode. */
    const enum watch_mode modes[] = {WATCH_AUTO, WATCH_INOTIFY, WATCH_POLL};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        const struct watch_options opt = {.mode = modes[i]};
        struct watch *w = watch_create(missing, 1, &opt, th_record, NULL, &r);
        assert_non_null(w);
        assert_int_equal(watch_count(w), 0);
        watch_destroy(w);
    }
    watch_destroy(NULL);
    th_rig_finish(&r);
}

/* Each backend on its own thread and the real clock: a write is one batch,
 * awaited; watch_destroy stops the thread. */
static void threaded(enum watch_mode mode)
{
    char dir[64] = "/tmp/folio-watch-th-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct th_rig t;
    th_rig_init(&t);
    t.threaded = true;
    const char *roots[] = {dir};
    const struct watch_options opt = {.mode = mode, .debounce_ms = 20, .poll_interval_ms = 20};
    t.w = watch_create(roots, 1, &opt, th_record, th_record_swap, &t);
    assert_non_null(t.w);
    th_write_file(dir, "a.css", "a");
    const struct th_seen_batch *b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_int_equal(b->n, 1);
    assert_true(batch_has(b, 0, "a.css"));
    th_rig_finish(&t);
    th_remove_tree(dir);
}

static void test_threaded(void **state)
{
    (void)state;
    threaded(WATCH_INOTIFY);
}

static void test_poll_threaded(void **state)
{
    (void)state;
    threaded(WATCH_POLL);
}

/* A 200-level chain, made before the watch: every folder watched (polling
 * looked no deeper than 64 levels before) and a write at the bottom is one
 * batch naming it. */
static void deep_tree(enum watch_mode mode)
{
    char dir[64] = "/tmp/folio-watch-deep-XXXXXX", rel[512] = "";
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 200; i++) {
        char p[700];
        strcat(rel, i ? "/d" : "d");
        path_of(p, sizeof p, dir, rel);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    struct th_rig t;
    th_rig_init(&t);
    const char *roots[] = {dir};
    assert_non_null(th_rig_watch(&t, roots, 1, mode));
    assert_int_equal(watch_count(t.w), 201);
    strcat(rel, "/bottom.css");
    th_write_file(dir, rel, "b");
    const struct th_seen_batch *b = th_next_batch(&t, 2000);
    assert_non_null(b);
    assert_false(b->overflow);
    assert_int_equal(b->n, 1);
    /* the rig keeps 127 bytes of a path: the rest is the count's to prove */
    assert_int_equal(strncmp(b->paths[0], rel, sizeof b->paths[0] - 1), 0);
    th_rig_finish(&t);
    th_remove_tree(dir);
}

static void test_deep_tree(void **state)
{
    (void)state;
    deep_tree(WATCH_INOTIFY);
}

static void test_poll_deep_tree(void **state)
{
    (void)state;
    deep_tree(WATCH_POLL);
}

/* Folders missed are counted and said once, with the first one's reason. */
static void test_missed_said_once(void **state)
{
    (void)state;
    struct watch_missed m = {0};
    assert_false(watch_missed_say(&m, WATCH_MISSED_MISSES)); /* nothing missed: nothing said */
    watch_missed_note(&m, "/r", "a/b", EMFILE);
    watch_missed_note(&m, "/r", "c", ENOSPC);
    watch_missed_note(&m, "/r", "d", ENOSPC);
    assert_int_equal(m.n, 3);
    assert_int_equal(m.limit, 2);
    assert_string_equal(m.first, "/r/a/b");
    assert_int_equal(m.err, EMFILE);
    assert_true(watch_missed_say(&m, WATCH_MISSED_POLLING));
    watch_missed_note(&m, "/r", "e", ENOSPC);
    assert_false(watch_missed_say(&m, WATCH_MISSED_POLLING));
    assert_non_null(strstr(watch_missed_why(ENOSPC), "fs.inotify.max_user_watches"));
    assert_non_null(strstr(watch_missed_why(EMFILE), "RLIMIT_NOFILE"));
    watch_missed_finish(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ignored_names),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_threaded),
        cmocka_unit_test(test_poll_threaded),
        cmocka_unit_test(test_deep_tree),
        cmocka_unit_test(test_poll_deep_tree),
        cmocka_unit_test(test_missed_said_once),
        cmocka_unit_test_setup_teardown(test_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_is_one_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomic_saves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_and_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_folders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_write_is_one_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_removed_is_held_then_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_rebuilt_slowly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_moved_away_and_replaced, setup, teardown),
        cmocka_unit_test(test_symlinked_root_swapped),
        cmocka_unit_test_setup_teardown(test_swaps_leak_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parent_is_a_watched_folder, setup, teardown),
        /* The same events from the stat walk. */
        cmocka_unit_test_setup_teardown(test_count, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_write_is_one_batch, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_atomic_saves, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_delete_and_create, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_new_folders, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_max_wait, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_root_removed_is_held_then_back, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_root_rebuilt_slowly, setup_poll, teardown),
        cmocka_unit_test_setup_teardown(test_root_moved_away_and_replaced, setup_poll, teardown),
        cmocka_unit_test(test_poll_symlinked_root_swapped),
        cmocka_unit_test_setup_teardown(test_poll_touch_and_new_file_in_new_folder, setup_poll, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
