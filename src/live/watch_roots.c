/* watch_roots — see watch_roots.h. */
#include "watch_roots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* A root's parent folder: only its name coming and going matters (rm -rf
 * and a rebuild, mv, `ln -sfn`'s rename of a new link over the old one).
 * IN_MASK_ADD: the parent may be a watched folder itself (a route inside
 * another), whose mask must not shrink. */
#define WATCH_PARENT_MASK                                                     \
    (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |  \
     IN_MOVE_SELF | IN_ONLYDIR | IN_MASK_ADD)

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

/* See watch_roots.h. */
bool watch_roots_init(struct watch_roots *roots, const char *const *paths, size_t n,
                      struct watch_window *window, watch_swap_fn swapped, void *ctx)
{
    *roots = (struct watch_roots){
        .window = window, .swapped = swapped, .ctx = ctx, .ifd = -1};
    roots->items = calloc(n ? n : 1, sizeof *roots->items);
    if (roots->items == NULL) {
        return false;
    }
    roots->n = n;
    for (size_t i = 0; i < n; i++) {
        roots->items[i] = (struct watch_root){
            .path = paths[i], .wd = -1, .fd = -1, .parents = {{.wd = -1}, {.wd = -1}}};
    }
    for (size_t i = 0; i < n; i++) {
        if (!watch_split(paths[i], &roots->items[i].parents[0])) {
            return false;
        }
    }
    return true;
}

/* See watch_roots.h. */
void watch_roots_finish(struct watch_roots *roots)
{
    for (size_t i = 0; roots->items != NULL && i < roots->n; i++) {
        if (roots->items[i].fd >= 0) {
            close(roots->items[i].fd);
        }
        for (size_t k = 0; k < 2; k++) {
            free(roots->items[i].parents[k].dir);
            free(roots->items[i].parents[k].name);
        }
    }
    free(roots->items);
    roots->items = NULL;
    roots->n = 0;
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

/* See watch_roots.h. */
int watch_roots_hold(struct watch_roots *roots, size_t r)
{
    struct watch_root *root = &roots->items[r];
    struct stat st;
    if (root->fd >= 0) {
        close(root->fd);
    }
    int there = watch_root_open(root, &root->fd, &st);
    if (there == 1) {
        root->dev = st.st_dev;
        root->ino = st.st_ino;
    }
    return there;
}

/* Root @r's folder was replaced, went away (@there false) or came back: the
 * consumer is told (it re-opens its route), the window opens as a swap. */
static void watch_roots_swapped(struct watch_roots *roots, size_t r, bool there)
{
    if (roots->swapped != NULL) {
        roots->swapped(roots->ctx, (int)r, there);
    }
    watch_window_swap(roots->window);
    roots->items[r].missing = !there;
}

/* See watch_roots.h. Held open: while the old folder is, no new folder can
 * be given its inode number, so (device, inode) tells them apart. */
enum watch_root_state watch_roots_look(struct watch_roots *roots, size_t r)
{
    struct watch_root *root = &roots->items[r];
    int fd;
    struct stat st;
    int there = watch_root_open(root, &fd, &st);
    if (there < 0) {
        return WATCH_ROOT_UNKNOWN;
    }
    if (there == 1 && root->fd >= 0 && st.st_dev == root->dev && st.st_ino == root->ino) {
        close(fd);
        return WATCH_ROOT_SAME;
    }
    if (there == 0 && root->fd < 0) {
        return WATCH_ROOT_ABSENT;
    }
    watch_roots_swapped(roots, r, there == 1);
    if (root->fd >= 0) {
        close(root->fd);
    }
    root->fd = fd;
    if (there == 1) {
        root->dev = st.st_dev;
        root->ino = st.st_ino;
    }
    return WATCH_ROOT_SWAPPED;
}

/* See watch_roots.h. */
bool watch_roots_missing(const struct watch_roots *roots)
{
    for (size_t r = 0; r < roots->n; r++) {
        if (roots->items[r].missing) {
            return true;
        }
    }
    return false;
}

/* See watch_roots.h. */
bool watch_roots_is_parent(const struct watch_roots *roots, int wd)
{
    for (size_t r = 0; r < roots->n; r++) {
        for (size_t k = 0; k < 2; k++) {
            if (roots->items[r].parents[k].wd == wd) {
                return true;
            }
        }
    }
    return false;
}

/* Forgets @p's watch, and removes it unless something else uses it. */
static void watch_parent_drop(struct watch_roots *roots, struct watch_parent *p)
{
    int wd = p->wd;
    p->wd = -1;
    if (wd >= 0 && !watch_roots_is_parent(roots, wd) && !roots->in_tree(roots->tree, wd)) {
        inotify_rm_watch(roots->ifd, wd);
    }
}

/* Watches @p's folder for its name, if not yet. Quiet when it cannot (the
 * folder is gone too): the periodic look tries again. False on ENOSPC. */
static bool watch_parent_watch(struct watch_roots *roots, struct watch_parent *p)
{
    if (p->dir == NULL || p->wd >= 0) {
        return true;
    }
    p->wd = inotify_add_watch(roots->ifd, p->dir, WATCH_PARENT_MASK);
    return !(p->wd < 0 && errno == ENOSPC);
}

/* True if @a and @b name the same entry of the same folder. */
static bool watch_parent_same(const struct watch_parent *a, const struct watch_parent *b)
{
    return a->dir != NULL && b->dir != NULL && strcmp(a->dir, b->dir) == 0 &&
           strcmp(a->name, b->name) == 0;
}

/* See watch_roots.h. */
bool watch_roots_parent_add(struct watch_roots *roots, size_t r)
{
    struct watch_root *root = &roots->items[r];
    bool ok = watch_parent_watch(roots, &root->parents[0]);
    struct watch_parent *t = &root->parents[1];
    char *real = realpath(root->path, NULL);
    struct watch_parent now = {.wd = -1};
    bool split = real != NULL && watch_split(real, &now);
    free(real);
    if (!split || now.dir == NULL || watch_parent_same(&now, &root->parents[0])) {
        free(now.dir); /* no target of its own (or none now): the path's parent says all */
        free(now.name);
        watch_parent_drop(roots, t);
        watch_split("", t);
        return ok;
    }
    if (watch_parent_same(t, &now)) {
        free(now.dir);
        free(now.name);
        return watch_parent_watch(roots, t) && ok;
    }
    ok = watch_parent_watch(roots, &now) && ok; /* the new one first: no moment unwatched */
    int old = t->wd;
    free(t->dir);
    free(t->name);
    *t = now;
    if (old >= 0 && old != now.wd) {
        struct watch_parent gone = {.wd = old};
        watch_parent_drop(roots, &gone);
    }
    return ok;
}

/* See watch_roots.h. */
void watch_roots_parent_event(struct watch_roots *roots, const struct inotify_event *ev,
                              void (*recheck)(void *ctx, size_t r), void *ctx)
{
    bool self = (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) != 0;
    bool mine = false;
    for (size_t r = 0; r < roots->n; r++) {
        for (size_t k = 0; k < 2; k++) {
            struct watch_parent *p = &roots->items[r].parents[k];
            if (p->wd != ev->wd) {
                continue;
            }
            mine = true;
            if (self) {
                p->wd = -1;
                recheck(ctx, r);
            } else if (ev->len > 0 && strcmp(ev->name, p->name) == 0 &&
                       (ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))) {
                /* mkdir (cp -r, a build): what is in it is still coming */
                if ((ev->mask & (IN_CREATE | IN_ISDIR)) == (IN_CREATE | IN_ISDIR)) {
                    watch_window_filling(roots->window);
                }
                recheck(ctx, r); /* rm -rf, mv, ln -sfn's rename */
            }
        }
    }
    /* A parent moved away keeps its watch (inotify follows the inode). */
    if (mine && (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF))) {
        struct watch_parent gone = {.wd = ev->wd};
        watch_parent_drop(roots, &gone);
    }
}
