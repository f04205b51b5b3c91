/* watch_inotify — see watch_inotify.h. */
#include "watch_inotify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/array.h"
#include "base/dir_walk.h"
#include "base/escape.h"
#include "watch_path.h"

/* IN_ATTRIB: `touch` changes the mtime and so the ETag; authors touch a file
 * to force a reload. IN_EXCL_UNLINK: no events for files already unlinked. */
#define WATCH_MASK                                                            \
    (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_DELETE |        \
     IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |           \
     IN_ONLYDIR | IN_EXCL_UNLINK)

/* One watched directory; indexed by its watch descriptor. */
struct watch_node {
    char *rel;  /* relative to its root, "" for the root; NULL: slot unused */
    size_t root;
};

struct watch_inotify {
    struct watch_core *core; /* borrowed */
    int ifd;
    struct watch_node *nodes;
    size_t nnodes;       /* capacity, indexed by wd */
    uint64_t recheck_ms; /* when the roots' paths are looked at next */
};

/* Says once what the tree walks could not watch, and that live reload
 * misses it; not when --watch auto met the watch limit: watch.c then polls
 * instead, and says that. */
static void watch_say_missed(const struct watch_inotify *ino)
{
    if (ino->core->auto_mode && ino->core->missed.limit > 0) {
        return;
    }
    watch_missed_say(&ino->core->missed,
                     ino->core->auto_mode ? WATCH_MISSED_AUTO : WATCH_MISSED_MISSES);
}

/* Once per process, with --watch auto: a root on a file system whose
 * changes inotify often never hears of (made by another machine, the host
 * of a VM or container, or a FUSE daemon), and how to switch. */
static void watch_fs_hint(const struct watch_inotify *ino, const char *path)
{
    static atomic_bool hinted;
    struct statfs sf;
    if (!ino->core->auto_mode || statfs(path, &sf) != 0) {
        return;
    }
    static const struct {
        unsigned long magic;
        const char *name;
    } remote[] = {
        {0x6969, "NFS"},          {0xFF534D42, "CIFS"}, {0xFE534D42, "SMB2"},
        {0x01021997, "9p (WSL)"}, {0x65735546, "FUSE"}, {0x6a656a63, "virtiofs"},
    };
    for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++) {
        if ((unsigned long)sf.f_type == remote[i].magic && !atomic_exchange(&hinted, true)) {
            char shown[ESCAPE_PATH_SIZE];
            escape_text(path, shown, sizeof(shown));
            fprintf(stderr,
                    "folio: %s is on %s, where inotify may never hear of edits made"
                    " outside this machine (Docker Desktop, WSL, network folders);"
                    " if saves do not show, use --watch poll\n",
                    shown, remote[i].name);
        }
    }
}

/* Makes room for index @wd in the node table. */
static bool watch_nodes_reserve(struct watch_inotify *ino, size_t wd)
{
    size_t had = ino->nnodes;
    struct watch_node *n = array_grow(ino->nodes, &ino->nnodes, wd + 1, sizeof *n, 64);
    if (n == NULL) {
        return false;
    }
    memset(n + had, 0, (ino->nnodes - had) * sizeof *n);
    ino->nodes = n;
    return true;
}

/* The root tracker's question: is @wd one of our folders' watches. */
static bool watch_in_tree(void *arg, int wd)
{
    const struct watch_inotify *ino = arg;
    return wd >= 0 && (size_t)wd < ino->nnodes && ino->nodes[wd].rel != NULL;
}

/* Forgets watch descriptor @wd's folder (its watch is gone or going). */
static void watch_node_free(struct watch_inotify *ino, int wd)
{
    if (watch_in_tree(ino, wd)) {
        free(ino->nodes[wd].rel);
        ino->nodes[wd].rel = NULL;
        atomic_fetch_sub(&ino->core->count, 1);
    }
}

/* True if folder @rel of root @root, watched as @wd, is another root's own
 * folder (a route inside another route's folder): that root's names win. */
static bool watch_is_other_root(const struct watch_inotify *ino, size_t root, const char *rel,
                                int wd)
{
    const struct watch_roots *roots = &ino->core->roots;
    for (size_t k = 0; rel[0] != '\0' && k < roots->n; k++) {
        if (k != root && roots->items[k].wd == wd) {
            return true;
        }
    }
    return false;
}

/* inotify_add_watch on folder @rel of root @root, open as @fd. The root by
 * its path (a symlink is followed: a route may point elsewhere); a folder
 * below by its descriptor, which the walk opened following no symlink, so
 * no path length bounds the depth and no link swapped in meanwhile is
 * followed. Without /proc, by its path, not following the last name. */
static int watch_add_inotify(struct watch_inotify *ino, size_t root, const char *rel, int fd)
{
    const char *top = ino->core->roots.items[root].path;
    if (rel[0] == '\0') {
        return inotify_add_watch(ino->ifd, top, WATCH_MASK);
    }
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    int wd = inotify_add_watch(ino->ifd, self, WATCH_MASK);
    if (wd >= 0 || errno != ENOENT) {
        return wd;
    }
    char *path = watch_join(top, rel);
    if (path == NULL) {
        errno = ENOMEM;
        return -1;
    }
    wd = inotify_add_watch(ino->ifd, path, WATCH_MASK | IN_DONT_FOLLOW);
    int err = errno;
    free(path);
    errno = err;
    return wd;
}

/* Adds the watch on root @root's folder @rel (open as @fd) and records it
 * in the table. Returns 0, or the errno of inotify_add_watch (counted as
 * missed unless ENOENT or ENOTDIR: it vanished or is a symlink now).
 * *list says whether the folder is ours to list. */
static int watch_add_node(struct watch_inotify *ino, size_t root, const char *rel, int fd,
                          bool *list)
{
    *list = false;
    int wd = watch_add_inotify(ino, root, rel, fd);
    if (wd < 0) {
        int err = errno;
        if (err != ENOENT && err != ENOTDIR) {
            watch_missed_note(&ino->core->missed, ino->core->roots.items[root].path, rel, err);
        }
        return err;
    }
    if (watch_is_other_root(ino, root, rel, wd)) {
        return 0; /* a route inside this one's folder: it watches its own tree */
    }
    char *copy = watch_nodes_reserve(ino, (size_t)wd) ? strdup(rel) : NULL;
    if (copy == NULL) {
        watch_window_overflow(&ino->core->window);
        return 0;
    }
    struct watch_node *node = &ino->nodes[wd];
    if (node->rel == NULL) {
        atomic_fetch_add(&ino->core->count, 1);
    }
    free(node->rel); /* already watched (a rescan, a move): refresh the name */
    node->rel = copy;
    node->root = root;
    if (rel[0] == '\0') {
        ino->core->roots.items[root].wd = wd;
    }
    *list = true;
    return 0;
}

/* One tree walk's state, for dir_walk's callbacks. */
struct watch_tree_walk {
    struct watch_inotify *ino;
    size_t root;
    bool report; /* files found are noted as changes */
    bool started;
    int err;     /* the start folder's own inotify_add_watch: 0 or errno */
};

/* dir_walk: a folder reached: watched before it is listed, so a file
 * created meanwhile is seen at least once. */
static bool watch_tree_folder(void *arg, int fd, const char *rel)
{
    struct watch_tree_walk *w = arg;
    bool list;
    int err = watch_add_node(w->ino, w->root, rel, fd, &list);
    if (!w->started) {
        w->started = true;
        w->err = err;
    }
    /* Out of watches: its folders are walked all the same, only to be
     * counted (each is refused too), so the line says how many are missed. */
    return list || err == ENOSPC;
}

/* dir_walk: one entry: folders walked into, files noted with @report. */
static bool watch_tree_entry(void *arg, int dirfd, const char *name, const char *rel,
                             unsigned char type)
{
    (void)dirfd;
    struct watch_tree_walk *w = arg;
    if (watch_ignored_name(name)) {
        return false;
    }
    if (type != DT_DIR && w->report) {
        char *copy = strdup(rel);
        if (copy == NULL) {
            watch_window_overflow(&w->ino->core->window);
        } else {
            watch_window_note(&w->ino->core->window, (int)w->root, copy, true, false, -1);
        }
    }
    return type == DT_DIR;
}

/* dir_walk: a folder that could not be opened or listed. */
static void watch_tree_failed(void *arg, const char *rel, int err)
{
    struct watch_tree_walk *w = arg;
    watch_missed_note(&w->ino->core->missed, w->ino->core->roots.items[w->root].path, rel, err);
}

/* Watches root @root's folder @rel and everything under it, with bounded
 * descriptors whatever the depth (dir_walk.h). With @report, files found
 * inside are recorded as changes (they may have been written before the
 * watch existed). Returns 0, or the errno of opening or watching @rel
 * itself (counted as missed unless ENOENT or ENOTDIR). */
static int watch_add_tree(struct watch_inotify *ino, size_t root, const char *rel, bool report)
{
    const char *top = ino->core->roots.items[root].path;
    int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the root: links followed */
    if (fd >= 0 && rel[0] != '\0') {
        int sub = dir_walk_open(fd, rel); /* below it: none */
        int err = errno;
        close(fd);
        fd = sub;
        errno = err;
    }
    if (fd < 0) {
        int err = errno;
        if (err != ENOENT && err != ENOTDIR && err != ELOOP) {
            watch_missed_note(&ino->core->missed, top, rel, err);
        }
        return err == ELOOP ? ENOTDIR : err;
    }
    static const struct dir_walk_ops ops = {
        .folder = watch_tree_folder, .entry = watch_tree_entry, .failed = watch_tree_failed};
    struct watch_tree_walk w = {.ino = ino, .root = root, .report = report};
    if (dir_walk(fd, rel, &ops, &w) != 0) {
        watch_window_overflow(&ino->core->window);
    }
    return w.err;
}

/* A folder moved out of the tree keeps its watch (inotify follows the
 * inode), so drop the watches of @rel and everything under it ourselves
 * ("" : the whole root). A watch that is also a root's parent watch stays
 * (as that only). */
static void watch_remove_tree(struct watch_inotify *ino, size_t root, const char *rel)
{
    size_t len = strlen(rel);
    for (size_t wd = 0; wd < ino->nnodes; wd++) {
        struct watch_node *n = &ino->nodes[wd];
        if (n->rel != NULL && n->root == root && strncmp(n->rel, rel, len) == 0 &&
            (len == 0 || n->rel[len] == '\0' || n->rel[len] == '/')) {
            if (!watch_roots_is_parent(&ino->core->roots, (int)wd)) {
                inotify_rm_watch(ino->ifd, (int)wd);
            }
            watch_node_free(ino, (int)wd);
        }
    }
    if (len == 0) {
        ino->core->roots.items[root].wd = -1;
    }
}

/* Watches root @r's parent folders; one the kernel refused is missed. */
static void watch_parents(struct watch_inotify *ino, size_t r)
{
    struct watch_root *root = &ino->core->roots.items[r];
    if (!watch_roots_parent_add(&ino->core->roots, r) && root->parents[0].dir != NULL) {
        watch_missed_note(&ino->core->missed, root->parents[0].dir, "", ENOSPC);
    }
}

/* Whether root @r's path still names the folder watched there. If not
 * (replaced, gone, back: the tracker reports the swap), the old folder's
 * watches are dropped and the new one's tree added. Also re-adds a root
 * watch that was lost. Who swaps it again before the watch is added makes
 * another event (or the periodic look sees it): this converges. */
static void watch_root_recheck(void *arg, size_t r)
{
    struct watch_inotify *ino = arg;
    struct watch_root *root = &ino->core->roots.items[r];
    enum watch_root_state st = watch_roots_look(&ino->core->roots, r);
    if (st == WATCH_ROOT_UNKNOWN || st == WATCH_ROOT_ABSENT ||
        (st == WATCH_ROOT_SAME && root->wd >= 0)) {
        return;
    }
    if (st == WATCH_ROOT_SWAPPED) {
        watch_remove_tree(ino, r, "");
    }
    if (root->fd >= 0) {
        watch_parents(ino, r);
        watch_add_tree(ino, r, "", false);
    }
}

/* Once a WATCH_RECHECK_MS: every root's path looked at again. */
static void watch_recheck_all(struct watch_inotify *ino)
{
    for (size_t r = 0; r < ino->core->roots.n; r++) {
        watch_parents(ino, r);
        watch_root_recheck(ino, r);
    }
    ino->recheck_ms = watch_window_now(&ino->core->window) + WATCH_RECHECK_MS;
}

/* An event on a folder of the tree that is about the folder itself: a root
 * gone is an overflow (nothing under it is watched any more); a watch the
 * kernel dropped is forgotten. */
static void watch_handle_self(struct watch_inotify *ino, const struct inotify_event *ev,
                              size_t root, bool is_root)
{
    if (is_root) {
        watch_window_overflow(&ino->core->window);
        if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
            watch_root_recheck(ino, root); /* moved away: its watches go too */
            return;
        }
    }
    if (ev->mask & IN_IGNORED) {
        if (is_root) {
            ino->core->roots.items[root].wd = -1;
        }
        watch_node_free(ino, ev->wd);
    }
}

/* Events were lost, folders created meanwhile among them: watch whatever
 * is new, and let the consumer reload everything. */
static void watch_handle_lost(struct watch_inotify *ino)
{
    watch_window_overflow(&ino->core->window);
    for (size_t r = 0; r < ino->core->roots.n; r++) {
        watch_root_recheck(ino, r); /* a swap among the lost events */
        watch_add_tree(ino, r, "", false);
    }
}

/* Turns one inotify event into a note in the window (or new watches). */
static void watch_handle(struct watch_inotify *ino, const struct inotify_event *ev)
{
    if (ev->mask & IN_Q_OVERFLOW) {
        watch_handle_lost(ino);
        return;
    }
    watch_roots_parent_event(&ino->core->roots, ev, watch_root_recheck, ino);
    if (!watch_in_tree(ino, ev->wd)) {
        return; /* a watch we already dropped */
    }
    size_t root = ino->nodes[ev->wd].root;
    bool is_root = ino->core->roots.items[root].wd == ev->wd;
    if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
        watch_handle_self(ino, ev, root, is_root);
        return;
    }
    if (ev->len == 0 || watch_ignored_name(ev->name)) {
        return;
    }
    char *rel = watch_join(ino->nodes[ev->wd].rel, ev->name);
    if (rel == NULL) {
        watch_window_overflow(&ino->core->window);
        return;
    }
    bool appear = (ev->mask & (IN_CREATE | IN_MOVED_TO)) != 0;
    bool gone = (ev->mask & (IN_DELETE | IN_MOVED_FROM)) != 0;
    if (ev->mask & IN_ISDIR) {
        if (appear) {
            watch_add_tree(ino, root, rel, true);
        } else if (ev->mask & IN_MOVED_FROM) {
            watch_remove_tree(ino, root, rel);
        }
        /* IN_DELETE of a folder: the kernel drops its watch (IN_IGNORED). */
    }
    int writing = -1;
    if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)) {
        writing = 0;
    } else if ((ev->mask & IN_MODIFY) && !(ev->mask & IN_ISDIR)) {
        writing = 1;
    }
    watch_window_note(&ino->core->window, (int)root, rel, appear, gone, writing);
}

/* Hands the window over; a route folder that was removed and has come back
 * (rm -rf, then a checkout) is watched again first, if no event said so. */
static void watch_inotify_flush(struct watch_inotify *ino)
{
    for (size_t r = 0; r < ino->core->roots.n; r++) {
        if (ino->core->roots.items[r].wd < 0) {
            watch_root_recheck(ino, r);
        }
    }
    watch_window_flush(&ino->core->window, ino->core->fn, ino->core->ctx);
}

/* Reads and handles every event queued (the descriptor is non-blocking). */
static void watch_inotify_drain(struct watch_inotify *ino)
{
    /* Each inotify_event is followed by its name; align as inotify(7) does. */
    _Alignas(struct inotify_event) char buf[16384];
    for (;;) {
        ssize_t len = read(ino->ifd, buf, sizeof buf);
        if (len <= 0) {
            break; /* EAGAIN: drained */
        }
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            watch_handle(ino, ev);
            p += sizeof *ev + ev->len;
        }
    }
}

/* See watch_inotify.h. */
int watch_inotify_turn(struct watch_inotify *ino)
{
    watch_inotify_drain(ino);
    watch_say_missed(ino); /* what start-up or the last events could not watch */
    struct watch_window *win = &ino->core->window;
    for (;;) {
        uint64_t now = watch_window_now(win);
        if (now >= ino->recheck_ms) {
            watch_recheck_all(ino);
            continue;
        }
        int timeout = (int)(ino->recheck_ms - now);
        if (watch_window_is_open(win)) {
            uint64_t due = watch_window_due(win, watch_roots_missing(&ino->core->roots));
            if (due <= now) {
                watch_inotify_flush(ino);
                continue;
            }
            if (due - now < (uint64_t)timeout) {
                timeout = (int)(due - now);
            }
        }
        return timeout;
    }
}

/* See watch_inotify.h. */
int watch_inotify_fd(const struct watch_inotify *ino)
{
    return ino->ifd;
}

/* See watch_inotify.h: one watch per folder, added before the thread starts. */
struct watch_inotify *watch_inotify_create(struct watch_core *core)
{
    struct watch_inotify *ino = calloc(1, sizeof *ino);
    if (ino == NULL) {
        return NULL;
    }
    ino->core = core;
    ino->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (ino->ifd < 0) {
        int err = errno;
        fprintf(stderr, "folio: inotify_init1: %s%s%s\n", strerror(err),
                err == EMFILE ? " (raise fs.inotify.max_user_instances)" : "",
                core->auto_mode ? "; watching by polling instead (--watch poll)" : "");
        free(ino);
        errno = err;
        return NULL;
    }
    struct watch_roots *roots = &core->roots;
    roots->ifd = ino->ifd;
    roots->in_tree = watch_in_tree;
    roots->tree = ino;
    for (size_t i = 0; i < roots->n; i++) {
        watch_parents(ino, i); /* the parent first: a swap from now on is heard */
        watch_roots_hold(roots, i);
        int err = watch_add_tree(ino, i, "", false);
        if (err == ENOENT || err == ENOTDIR) {
            char shown[ESCAPE_PATH_SIZE];
            escape_text(roots->items[i].path, shown, sizeof(shown));
            fprintf(stderr, "folio: not watching %s: %s\n", shown, strerror(err));
        } else if (err == 0) {
            watch_fs_hint(ino, roots->items[i].path);
        }
    }
    ino->recheck_ms = watch_window_now(&core->window) + WATCH_RECHECK_MS;
    return ino;
}

/* See watch_inotify.h. */
void watch_inotify_destroy(struct watch_inotify *ino)
{
    if (ino == NULL) {
        return;
    }
    close(ino->ifd);
    for (size_t i = 0; i < ino->nnodes; i++) {
        free(ino->nodes[i].rel);
    }
    free(ino->nodes);
    free(ino);
}
