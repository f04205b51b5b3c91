/* watch — see watch.h; the state and helpers it shares with the polling
 * backend (watch_poll.c) are in watch_internal.h. */
#include "watch_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "serve/routes.h"

/* IN_ATTRIB: `touch` changes the mtime and so the ETag; authors touch a file
 * to force a reload. IN_EXCL_UNLINK: no events for files already unlinked. */
#define WATCH_MASK                                                            \
    (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_DELETE |        \
     IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |           \
     IN_ONLYDIR | IN_EXCL_UNLINK)

/* A root's parent folder: only its name coming and going matters (rm -rf
 * and a rebuild, mv, `ln -sfn`'s rename of a new link over the old one).
 * IN_MASK_ADD: the parent may be a watched folder itself (a route inside
 * another), whose mask must not shrink. */
#define WATCH_PARENT_MASK                                                     \
    (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |  \
     IN_MOVE_SELF | IN_ONLYDIR | IN_MASK_ADD)


static atomic_bool watch_warned_limit;

/* See watch_internal.h. */
uint64_t watch_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* See watch_internal.h: dotfiles and editors' scratch files. */
bool watch_ignored_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || name[0] == '.') {
        return true; /* dotfiles: .git, .#lock (emacs), .name.swp (vim) */
    }
    if (name[n - 1] == '~') {
        return true; /* backups: vim, emacs, gedit */
    }
    if (strcmp(name, "4913") == 0) {
        return true; /* vim's probe for a writable directory */
    }
    if (name[0] == '#' && n > 1 && name[n - 1] == '#') {
        return true; /* emacs auto-save */
    }
    static const char *const suffixes[] = {
        ".swp", ".swx", ".swo", "___jb_tmp___", "___jb_old___",
    };
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t s = strlen(suffixes[i]);
        if (n >= s && strcmp(name + n - s, suffixes[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* See watch_internal.h. */
char *watch_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (s == NULL) {
        return NULL;
    }
    if (la > 0) {
        memcpy(s, a, la);
        s[la++] = '/';
    }
    memcpy(s + la, b, lb + 1);
    return s;
}

/* Once per process: the kernel refused more watches. */
static void watch_limit_warning(const struct watch *w)
{
    if (!atomic_exchange(&watch_warned_limit, true)) {
        fprintf(stderr,
                "folio: inotify watch limit reached (fs.inotify.max_user_watches):"
                " live reload misses changes in some folders; raise it with"
                " `sudo sysctl fs.inotify.max_user_watches=524288`%s\n",
                w->auto_mode ? ", or watch by polling with --watch poll" : "");
    }
}

/* Once per process, with --watch auto: a root on a file system whose
 * changes inotify often never hears of (made by another machine, the host
 * of a VM or container, or a FUSE daemon), and how to switch. */
static void watch_fs_hint(const struct watch *w, const char *path)
{
    static atomic_bool hinted;
    struct statfs sf;
    if (!w->auto_mode || statfs(path, &sf) != 0) {
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
            fprintf(stderr,
                    "folio: %s is on %s, where inotify may never hear of edits made"
                    " outside this machine (Docker Desktop, WSL, network folders);"
                    " if saves do not show, use --watch poll\n",
                    path, remote[i].name);
        }
    }
}

/* See watch_internal.h: merges into the window's entry for the path, if any. */
void watch_note(struct watch *w, int id, char *rel, bool appear, bool gone, int writing)
{
    if (rel == NULL) {
        w->overflow = true; /* out of memory: we cannot say what changed */
        return;
    }
    uint64_t now = watch_now_ms();
    if (w->first_ms == 0) {
        w->first_ms = now;
    }
    w->last_ms = now;
    for (size_t i = 0; i < w->npending; i++) {
        struct watch_pending *p = &w->pending[i];
        if (p->id == id && strcmp(p->rel, rel) == 0) {
            p->gone = gone;
            if (writing >= 0) {
                p->writing = writing != 0;
            }
            free(rel);
            return;
        }
    }
    if (w->npending >= WATCH_MAX_BATCH) {
        w->overflow = true;
        free(rel);
        return;
    }
    if (w->npending == w->cap_pending) {
        size_t cap = w->cap_pending ? w->cap_pending * 2 : 16;
        struct watch_pending *p = realloc(w->pending, cap * sizeof *p);
        if (p == NULL) {
            w->overflow = true;
            free(rel);
            return;
        }
        w->pending = p;
        w->cap_pending = cap;
    }
    w->pending[w->npending++] = (struct watch_pending){
        .id = id, .rel = rel, .appeared_first = appear, .gone = gone,
        .writing = writing > 0};
}

/* Makes room for index @wd in the node table. */
static bool watch_nodes_reserve(struct watch *w, size_t wd)
{
    if (wd < w->nnodes) {
        return true;
    }
    size_t cap = w->nnodes ? w->nnodes : 64;
    while (cap <= wd) {
        cap *= 2;
    }
    struct watch_node *n = realloc(w->nodes, cap * sizeof *n);
    if (n == NULL) {
        return false;
    }
    memset(n + w->nnodes, 0, (cap - w->nnodes) * sizeof *n);
    w->nodes = n;
    w->nnodes = cap;
    return true;
}

/* Forgets watch descriptor @wd's folder (its watch is gone or going). */
static void watch_node_free(struct watch *w, int wd)
{
    if (wd >= 0 && (size_t)wd < w->nnodes && w->nodes[wd].rel != NULL) {
        free(w->nodes[wd].rel);
        w->nodes[wd].rel = NULL;
        atomic_fetch_sub(&w->count, 1);
    }
}

/* True if folder @rel of root @root, watched as @wd, is another root's own
 * folder (a route inside another route's folder): that root's names win. */
static bool watch_is_other_root(const struct watch *w, size_t root, const char *rel, int wd)
{
    for (size_t k = 0; rel[0] != '\0' && k < w->nroots; k++) {
        if (k != root && w->roots[k].wd == wd) {
            return true;
        }
    }
    return false;
}

/* Watches root @root's folder @rel and everything under it. With @report,
 * files found inside are recorded as changes (they may have been written
 * before the watch existed). The watch is added before listing, so a file
 * created meanwhile is seen at least once. Returns 0, or the errno of
 * inotify_add_watch for @rel itself (already reported unless ENOENT or
 * ENOTDIR). */
static int watch_add_tree(struct watch *w, size_t root, const char *rel, bool report)
{
    char *path = rel[0] ? watch_join(w->roots[root].path, rel)
                        : strdup(w->roots[root].path);
    if (path == NULL) {
        w->overflow = true;
        return ENOMEM;
    }
    /* Roots may be symlinks (a route pointing elsewhere); folders inside are
     * not followed, so a link cycle cannot make us recurse forever. */
    uint32_t mask = WATCH_MASK | (rel[0] ? IN_DONT_FOLLOW : 0);
    int wd = inotify_add_watch(w->ifd, path, mask);
    if (wd < 0) {
        int err = errno;
        if (err == ENOSPC) {
            watch_limit_warning(w);
        } else if (err != ENOENT && err != ENOTDIR) {
            /* ENOENT/ENOTDIR: it vanished or was a symlink; nothing to do. */
            fprintf(stderr, "folio: cannot watch %s: %s\n", path, strerror(err));
        }
        free(path);
        return err;
    }
    if (watch_is_other_root(w, root, rel, wd)) {
        free(path);
        return 0; /* a route inside this one's folder: it watches its own tree */
    }
    if (!watch_nodes_reserve(w, (size_t)wd)) {
        w->overflow = true;
        free(path);
        return 0;
    }
    struct watch_node *node = &w->nodes[wd];
    char *copy = strdup(rel);
    if (copy == NULL) {
        w->overflow = true;
        free(path);
        return 0;
    }
    if (node->rel == NULL) {
        atomic_fetch_add(&w->count, 1);
    }
    free(node->rel); /* already watched (a rescan, a move): refresh the name */
    node->rel = copy;
    node->root = root;
    if (rel[0] == '\0') {
        w->roots[root].wd = wd;
    }

    DIR *d = opendir(path);
    if (d == NULL) {
        free(path);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (watch_ignored_name(e->d_name)) {
            continue; /* also skips "." and ".." */
        }
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                continue;
            }
            type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
        }
        char *child = watch_join(rel, e->d_name);
        if (child == NULL) {
            w->overflow = true;
            break;
        }
        if (type == DT_DIR) {
            watch_add_tree(w, root, child, report);
            free(child);
        } else if (report) {
            watch_note(w, (int)root, child, true, false, -1);
        } else {
            free(child);
        }
    }
    closedir(d);
    free(path);
    return 0;
}

/* True if @wd is some root's parent watch. */
static bool watch_is_parent(const struct watch *w, int wd)
{
    for (size_t r = 0; r < w->nroots; r++) {
        for (size_t k = 0; k < 2; k++) {
            if (w->roots[r].parents[k].wd == wd) {
                return true;
            }
        }
    }
    return false;
}

/* A folder moved out of the tree keeps its watch (inotify follows the
 * inode), so drop the watches of @rel and everything under it ourselves
 * ("" : the whole root). A watch that is also a root's parent watch stays
 * (as that only). */
static void watch_remove_tree(struct watch *w, size_t root, const char *rel)
{
    size_t len = strlen(rel);
    for (size_t wd = 0; wd < w->nnodes; wd++) {
        struct watch_node *n = &w->nodes[wd];
        if (n->rel != NULL && n->root == root && strncmp(n->rel, rel, len) == 0 &&
            (len == 0 || n->rel[len] == '\0' || n->rel[len] == '/')) {
            if (!watch_is_parent(w, (int)wd)) {
                inotify_rm_watch(w->ifd, (int)wd);
            }
            watch_node_free(w, (int)wd);
        }
    }
    if (len == 0) {
        w->roots[root].wd = -1;
    }
}

/* Splits @path into its parent folder and its name there (trailing
 * slashes dropped) into @p, replacing what it held; both stay NULL for a
 * path whose last part is "." or "..": only the periodic look sees that
 * one swapped. False when memory runs out. */
static bool watch_split(const char *path, struct watch_parent *p)
{
    free(p->dir);
    free(p->name);
    p->dir = p->name = NULL;
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    size_t slash = n;
    while (slash > 0 && path[slash - 1] != '/') {
        slash--;
    }
    const char *name = path + slash;
    size_t nlen = n - slash;
    if (nlen == 0 || strncmp(name, ".", nlen) == 0 || strncmp(name, "..", nlen) == 0) {
        return true;
    }
    p->dir = slash == 0 ? strdup(".") : strndup(path, slash > 1 ? slash - 1 : 1);
    p->name = strndup(name, nlen);
    return p->dir != NULL && p->name != NULL;
}

/* Forgets @p's watch, and removes it unless something else uses it. */
static void watch_parent_drop(struct watch *w, struct watch_parent *p)
{
    int wd = p->wd;
    p->wd = -1;
    if (wd >= 0 && !watch_is_parent(w, wd) &&
        !((size_t)wd < w->nnodes && w->nodes[wd].rel != NULL)) {
        inotify_rm_watch(w->ifd, wd);
    }
}

/* Watches @p's folder for its name, if not yet. Quiet when it cannot (the
 * folder is gone too): the periodic look tries again. */
static void watch_parent_watch(struct watch *w, struct watch_parent *p)
{
    if (p->dir == NULL || p->wd >= 0) {
        return;
    }
    p->wd = inotify_add_watch(w->ifd, p->dir, WATCH_PARENT_MASK);
    if (p->wd < 0 && errno == ENOSPC) {
        watch_limit_warning(w);
    }
}

/* Watches root @r's parent folders: its path's, and when the path is a
 * symlink, its target's (a target deleted and built again is heard there).
 * The target is looked up again each time (ln -sfn changes it). */
static void watch_parent_add(struct watch *w, size_t r)
{
    struct watch_root *root = &w->roots[r];
    watch_parent_watch(w, &root->parents[0]);
    struct watch_parent *t = &root->parents[1];
    char *real = realpath(root->path, NULL);
    struct watch_parent now = {.wd = -1};
    bool ok = real != NULL && watch_split(real, &now);
    free(real);
    if (!ok || now.dir == NULL ||
        (root->parents[0].dir != NULL && strcmp(now.dir, root->parents[0].dir) == 0 &&
         strcmp(now.name, root->parents[0].name) == 0)) {
        free(now.dir); /* no target of its own (or none now): the path's parent says all */
        free(now.name);
        watch_parent_drop(w, t);
        watch_split("", t);
        return;
    }
    if (t->dir != NULL && strcmp(t->dir, now.dir) == 0 && strcmp(t->name, now.name) == 0) {
        free(now.dir);
        free(now.name);
        watch_parent_watch(w, t);
        return;
    }
    watch_parent_watch(w, &now); /* the new one first: no moment unwatched */
    int old = t->wd;
    free(t->dir);
    free(t->name);
    *t = now;
    if (old >= 0 && old != now.wd) {
        struct watch_parent gone = {.wd = old};
        watch_parent_drop(w, &gone);
    }
}

/* See watch_internal.h. */
void watch_root_swapped(struct watch *w, size_t r, bool there)
{
    struct watch_root *root = &w->roots[r];
    if (root->route != NULL && root->route->configured != NULL) {
        routes_check(root->route, true); /* logs the re-open (or that it is gone) */
    }
    uint64_t now = watch_now_ms();
    w->overflow = true; /* the whole page may have changed */
    if (w->first_ms == 0) {
        w->first_ms = now;
    }
    w->last_ms = w->swap_ms = now;
    root->missing = !there;
    if (there) {
        /* One line, like routes_check's; the browsers get one reload. A
         * symlink's target is named: which build is live now. */
        char *real = realpath(root->path, NULL);
        bool link = real != NULL && strcmp(real, root->path) != 0;
        fprintf(stderr, "folio: live reload: route %s: watching the folder now at %s%s%s\n",
                root->route != NULL && root->route->prefix != NULL ? root->route->prefix : "",
                root->path, link ? " -> " : "", link ? real : "");
        free(real);
    }
}

/* See watch_internal.h. */
uint64_t watch_window_cap(const struct watch *w)
{
    return w->swap_ms != 0 ? w->swap_ms + WATCH_SWAP_CAP_MS : w->first_ms + w->max_wait_ms;
}

/* See watch_internal.h. */
bool watch_window_held(const struct watch *w)
{
    for (size_t r = 0; w->swap_ms != 0 && r < w->nroots; r++) {
        if (w->roots[r].missing) {
            return watch_now_ms() < watch_window_cap(w);
        }
    }
    return false;
}

/* Opens root @r's path (following symlinks) into *fd and *st: 1 a folder
 * is there, 0 none is, -1 cannot tell now (out of descriptors). */
static int watch_root_open(const struct watch_root *root, int *fd, struct stat *st)
{
    *fd = open(root->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd >= 0 && fstat(*fd, st) == 0) {
        return 1;
    }
    int err = errno;
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return err == ENOENT || err == ENOTDIR || err == ELOOP || err == EACCES ? 0 : -1;
}

/* Whether root @r's path still names the folder watched there (held open:
 * while it is, no new folder can be given its inode number). If not
 * (replaced, gone, back), the route is re-opened, the old folder's watches
 * dropped and the new one's tree added, as one overflow (watch_root_swapped).
 * Also re-adds a root watch that was lost. */
static void watch_root_recheck(struct watch *w, size_t r)
{
    struct watch_root *root = &w->roots[r];
    int fd;
    struct stat st;
    int there = watch_root_open(root, &fd, &st);
    bool same = there == 1 && root->fd >= 0 && st.st_dev == root->dev && st.st_ino == root->ino;
    if (there < 0 || (same && root->wd >= 0) || (there == 0 && root->fd < 0)) {
        if (fd >= 0) {
            close(fd);
        }
        return;
    }
    if (same) {
        close(fd); /* the same folder, whose watch was lost: watched again */
    } else {
        watch_remove_tree(w, r, "");
        watch_root_swapped(w, r, there == 1);
        if (root->fd >= 0) {
            close(root->fd);
        }
        root->fd = fd;
        root->dev = st.st_dev;
        root->ino = st.st_ino;
    }
    if (root->fd >= 0) {
        /* Who swaps it again before the watch is added makes another event
         * (or the periodic look sees it): this converges. */
        watch_parent_add(w, r);
        watch_add_tree(w, r, "", false);
    }
}

/* An event on some root's parent watch: that root's name came or went, or
 * the parent itself went (its watch is dropped, added again later). */
static void watch_parent_event(struct watch *w, const struct inotify_event *ev)
{
    bool self = (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) != 0;
    bool mine = false;
    for (size_t r = 0; r < w->nroots; r++) {
        for (size_t k = 0; k < 2; k++) {
            struct watch_parent *p = &w->roots[r].parents[k];
            if (p->wd != ev->wd) {
                continue;
            }
            mine = true;
            if (self) {
                p->wd = -1;
                watch_root_recheck(w, r);
            } else if (ev->len > 0 && strcmp(ev->name, p->name) == 0 &&
                       (ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))) {
                /* mkdir (cp -r, a build): what is in it is still coming */
                if ((ev->mask & (IN_CREATE | IN_ISDIR)) == (IN_CREATE | IN_ISDIR)) {
                    w->swap_filling = true;
                }
                watch_root_recheck(w, r); /* rm -rf, mv, ln -sfn's rename */
            }
        }
    }
    /* A parent moved away keeps its watch (inotify follows the inode). */
    if (mine && (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF))) {
        struct watch_parent gone = {.wd = ev->wd};
        watch_parent_drop(w, &gone);
    }
}

/* inotify, once a WATCH_RECHECK_MS: every root's path looked at again. */
static void watch_recheck_all(struct watch *w)
{
    for (size_t r = 0; r < w->nroots; r++) {
        watch_parent_add(w, r);
        watch_root_recheck(w, r);
    }
    w->recheck_ms = watch_now_ms() + WATCH_RECHECK_MS;
}

/* The root folder watch @wd is under, and whether it is that root itself. */
static size_t watch_root_of_wd(const struct watch *w, int wd, bool *is_root)
{
    size_t root = w->nodes[wd].root;
    *is_root = w->roots[root].wd == wd;
    return root;
}

/* Turns one inotify event into a note in the window (or new watches). */
static void watch_handle(struct watch *w, const struct inotify_event *ev)
{
    if (ev->mask & IN_Q_OVERFLOW) {
        /* Events were lost, folders created meanwhile among them: watch
         * whatever is new, and let the consumer reload everything. */
        w->overflow = true;
        if (w->first_ms == 0) {
            w->first_ms = watch_now_ms();
        }
        w->last_ms = watch_now_ms();
        for (size_t r = 0; r < w->nroots; r++) {
            watch_root_recheck(w, r); /* a swap among the lost events */
            watch_add_tree(w, r, "", false);
        }
        return;
    }
    watch_parent_event(w, ev);
    if (ev->wd < 0 || (size_t)ev->wd >= w->nnodes || w->nodes[ev->wd].rel == NULL) {
        return; /* a watch we already dropped */
    }
    bool is_root = false;
    size_t root = watch_root_of_wd(w, ev->wd, &is_root);
    if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
        if (is_root) {
            /* A route folder itself went away: nothing under it is watched
             * any more. Say so; the consumer reloads everything. */
            w->overflow = true;
            if (w->first_ms == 0) {
                w->first_ms = watch_now_ms();
            }
            w->last_ms = watch_now_ms();
            if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
                watch_root_recheck(w, root); /* moved away: its watches go too */
                return;
            }
        }
        if (ev->mask & IN_IGNORED) {
            if (is_root) {
                w->roots[root].wd = -1;
            }
            watch_node_free(w, ev->wd);
        }
        return;
    }
    if (ev->len == 0 || watch_ignored_name(ev->name)) {
        return;
    }
    char *rel = watch_join(w->nodes[ev->wd].rel, ev->name);
    if (rel == NULL) {
        w->overflow = true;
        return;
    }
    bool appear = (ev->mask & (IN_CREATE | IN_MOVED_TO)) != 0;
    bool gone = (ev->mask & (IN_DELETE | IN_MOVED_FROM)) != 0;
    if (ev->mask & IN_ISDIR) {
        if (appear) {
            watch_add_tree(w, root, rel, true);
        } else if (ev->mask & IN_MOVED_FROM) {
            watch_remove_tree(w, root, rel);
        }
        /* IN_DELETE of a folder: the kernel drops its watch (IN_IGNORED). */
    }
    int writing = -1;
    if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)) {
        writing = 0;
    } else if ((ev->mask & IN_MODIFY) && !(ev->mask & IN_ISDIR)) {
        writing = 1;
    }
    watch_note(w, (int)root, rel, appear, gone, writing);
}

/* True while some changed file is still open for writing. */
static bool watch_writing(const struct watch *w)
{
    for (size_t i = 0; i < w->npending; i++) {
        if (w->pending[i].writing && !w->pending[i].gone) {
            return true;
        }
    }
    return false;
}

/* inotify: when the current window is to be flushed. */
static uint64_t watch_window_due(const struct watch *w)
{
    uint64_t due = w->last_ms + w->debounce_ms;
    uint64_t cap = watch_window_cap(w);
    if (w->swap_ms != 0) {
        /* A rebuild: wait for the folder, then (made in place) for quiet. */
        uint64_t quiet = w->swap_filling && w->debounce_ms < WATCH_SWAP_QUIET_MS
                             ? WATCH_SWAP_QUIET_MS
                             : w->debounce_ms;
        due = watch_window_held(w) ? cap : w->last_ms + quiet;
    } else if (!w->overflow && watch_writing(w)) {
        due = w->last_ms + WATCH_WRITE_IDLE_MS;
        cap = w->first_ms + WATCH_WRITE_CAP_MS;
    }
    return cap < due ? cap : due;
}

/* See watch_internal.h. */
void watch_flush(struct watch *w)
{
    /* A route folder that was removed and has come back (rm -rf, then a
     * checkout) is watched again, if no event said so yet. */
    for (size_t r = 0; w->mode == WATCH_INOTIFY && r < w->nroots; r++) {
        if (w->roots[r].wd < 0) {
            watch_root_recheck(w, r);
        }
    }
    struct watch_change *ch = NULL;
    size_t n = 0;
    if (w->npending > 0) {
        ch = malloc(w->npending * sizeof *ch);
        if (ch == NULL) {
            w->overflow = true;
        }
    }
    for (size_t i = 0; ch != NULL && i < w->npending; i++) {
        const struct watch_pending *p = &w->pending[i];
        if (p->appeared_first && p->gone) {
            continue; /* a temp file that came and went: never visible */
        }
        ch[n++] = (struct watch_change){.id = p->id, .relpath = p->rel};
    }
    if (n > 0 || w->overflow) {
        struct watch_batch b = {.changes = ch, .n = n, .overflow = w->overflow};
        w->fn(w->ctx, &b);
    }
    free(ch);
    for (size_t i = 0; i < w->npending; i++) {
        free(w->pending[i].rel);
    }
    w->npending = 0;
    w->overflow = false;
    w->first_ms = w->last_ms = w->swap_ms = 0;
    w->swap_filling = false;
}

/* inotify: the watcher thread, reading events and flushing windows until stopped. */
static void *watch_thread(void *arg)
{
    struct watch *w = arg;
    /* Each inotify_event is followed by its name; align as inotify(7) does. */
    _Alignas(struct inotify_event) char buf[16384];
    for (;;) {
        uint64_t now = watch_now_ms();
        if (now >= w->recheck_ms) {
            watch_recheck_all(w);
            continue;
        }
        int timeout = (int)(w->recheck_ms - now);
        if (w->first_ms != 0) {
            uint64_t due = watch_window_due(w);
            if (due <= now) {
                watch_flush(w);
                continue;
            }
            if (due - now < (uint64_t)timeout) {
                timeout = (int)(due - now);
            }
        }
        struct pollfd pfd[2] = {
            {.fd = w->ifd, .events = POLLIN},
            {.fd = w->stopfd, .events = POLLIN},
        };
        int r = poll(pfd, 2, timeout);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "folio: watch: poll: %s\n", strerror(errno));
            break;
        }
        if (pfd[1].revents) {
            break;
        }
        if (!(pfd[0].revents & POLLIN)) {
            continue;
        }
        for (;;) {
            ssize_t len = read(w->ifd, buf, sizeof buf);
            if (len <= 0) {
                break; /* EAGAIN: drained */
            }
            for (char *p = buf; p < buf + len;) {
                const struct inotify_event *ev = (const struct inotify_event *)p;
                watch_handle(w, ev);
                p += sizeof *ev + ev->len;
            }
        }
    }
    return NULL;
}

/* Frees what watch_create() made, whichever step it got to. */
static void watch_free(struct watch *w)
{
    if (w->stopfd >= 0) {
        close(w->stopfd);
    }
    if (w->ifd >= 0) {
        close(w->ifd);
    }
    for (size_t i = 0; i < w->npending; i++) {
        free(w->pending[i].rel);
    }
    free(w->pending);
    for (size_t i = 0; i < w->nnodes; i++) {
        free(w->nodes[i].rel);
    }
    free(w->nodes);
    watch_poll_free(w);
    for (size_t i = 0; w->roots != NULL && i < w->nroots; i++) {
        if (w->roots[i].fd >= 0) {
            close(w->roots[i].fd);
        }
        for (size_t k = 0; k < 2; k++) {
            free(w->roots[i].parents[k].dir);
            free(w->roots[i].parents[k].name);
        }
    }
    free(w->roots);
    free(w);
}

/* inotify: one watch per folder, added before the thread starts. */
static bool watch_inotify_start(struct watch *w)
{
    w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->ifd < 0) {
        int err = errno;
        fprintf(stderr, "folio: inotify_init1: %s%s%s\n", strerror(err),
                err == EMFILE ? " (raise fs.inotify.max_user_instances)" : "",
                w->auto_mode ? "; watching by polling instead (--watch poll)" : "");
        errno = err;
        return false;
    }
    for (size_t i = 0; i < w->nroots; i++) {
        /* The parent first: a swap from now on is heard. */
        watch_parent_add(w, i);
        struct watch_root *root = &w->roots[i];
        struct stat st;
        if (watch_root_open(root, &root->fd, &st) == 1) {
            root->dev = st.st_dev;
            root->ino = st.st_ino;
        }
        int err = watch_add_tree(w, i, "", false);
        if (err == ENOENT || err == ENOTDIR) {
            fprintf(stderr, "folio: not watching %s: %s\n", w->roots[i].path, strerror(err));
        } else if (err == 0) {
            watch_fs_hint(w, w->roots[i].path);
        }
    }
    w->recheck_ms = watch_now_ms() + WATCH_RECHECK_MS;
    return true;
}

struct watch *watch_create(const struct route *roots, size_t n,
                           const struct watch_options *opt, watch_fn fn, void *ctx)
{
    struct watch *w = calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    w->ifd = w->stopfd = -1;
    w->fn = fn;
    w->ctx = ctx;
    w->auto_mode = opt == NULL || opt->mode == WATCH_AUTO;
    w->mode = opt != NULL && opt->mode == WATCH_POLL ? WATCH_POLL : WATCH_INOTIFY;
    w->debounce_ms = opt && opt->debounce_ms ? opt->debounce_ms : WATCH_DEBOUNCE_DEFAULT_MS;
    w->max_wait_ms = w->debounce_ms * 8 > 100 ? w->debounce_ms * 8 : 100;
    w->poll_ms = opt && opt->poll_interval_ms ? opt->poll_interval_ms : WATCH_POLL_DEFAULT_MS;
    atomic_init(&w->count, 0);
    w->roots = calloc(n ? n : 1, sizeof *w->roots);
    w->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->roots == NULL || w->stopfd < 0) {
        goto error;
    }
    w->nroots = n;
    for (size_t i = 0; i < n; i++) {
        /* Watched by the path it is configured as, like routes_check
         * re-opens it: a symlinked root is followed to its new target. */
        w->roots[i] = (struct watch_root){
            .path = roots[i].configured ? roots[i].configured : roots[i].dir,
            .route = &roots[i], .wd = -1, .fd = -1,
            .parents = {{.wd = -1}, {.wd = -1}}};
        if (!watch_split(w->roots[i].path, &w->roots[i].parents[0])) {
            goto error;
        }
    }
    if (w->mode == WATCH_INOTIFY && !watch_inotify_start(w)) {
        if (!w->auto_mode) {
            goto error;
        }
        w->mode = WATCH_POLL; /* auto: no inotify at all, so poll rather than not watch */
    }
    if (w->mode == WATCH_POLL && !watch_poll_init(w)) {
        goto error;
    }
    /* Nothing happened yet: what the initial walk set is not a change. */
    w->overflow = false;
    int err = pthread_create(&w->thread, NULL,
                             w->mode == WATCH_POLL ? watch_poll_thread : watch_thread, w);
    if (err != 0) {
        errno = err;
        goto error;
    }
    return w;

error:;
    int saved = errno;
    watch_free(w);
    errno = saved;
    return NULL;
}

/* See watch.h. */
size_t watch_count(const struct watch *w)
{
    return w ? atomic_load(&((struct watch *)w)->count) : 0;
}

/* See watch.h. */
void watch_destroy(struct watch *w)
{
    if (w == NULL) {
        return;
    }
    uint64_t one = 1;
    ssize_t r = write(w->stopfd, &one, sizeof one);
    (void)r; /* an eventfd write of 1 cannot fail short of overflowing it */
    pthread_join(w->thread, NULL);
    watch_free(w);
}
