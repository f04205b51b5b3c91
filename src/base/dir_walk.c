/* dir_walk — see dir_walk.h. */
#include "dir_walk.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"

/* A folder below another, never through a symlink. */
#define DIR_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* One folder of the current path. */
struct dir_frame {
    char *rel;     /* its path from the start */
    size_t name;   /* where its own name starts in rel */
    int fd;        /* -1: closed for want of room (the start never is) */
    dev_t dev;     /* which folder it is, to know it again when re-opened */
    ino_t ino;
    char *subs;    /* the subfolders still to walk: names, each NUL-ended */
    size_t len;    /* bytes in subs */
    size_t next;   /* the next one's offset */
};

struct dir_walk_state {
    struct dir_frame *f;
    size_t depth, cap;
    size_t open;   /* frames open besides the start */
    char *buf;     /* an entry's path, built here */
    size_t bufcap;
    const struct dir_walk_ops *ops;
    void *ctx;
};

/* Errors that say a folder is gone, or is not one (a symlink, a file): the
 * walk passes by; whoever watches hears of the change itself. */
static bool dir_gone(int err)
{
    return err == ENOENT || err == ENOTDIR || err == ELOOP || err == ESTALE;
}

/* Closes frame @i's descriptor, if open. */
static void dir_frame_close(struct dir_walk_state *s, size_t i)
{
    if (s->f[i].fd >= 0) {
        close(s->f[i].fd);
        s->f[i].fd = -1;
        s->open -= i > 0;
    }
}

/* Keeps at most DIR_WALK_WINDOW frames open besides the start by closing
 * the shallowest: the deepest are the ones the walk needs next. */
static void dir_window_trim(struct dir_walk_state *s)
{
    for (size_t i = 1; s->open > DIR_WALK_WINDOW && i < s->depth; i++) {
        dir_frame_close(s, i);
    }
}

/* Opens @name below open frame @parent as frame @child's folder again, if
 * it still is that folder. Returns 0 or an errno (ESTALE: another one). */
static int dir_reopen_one(struct dir_walk_state *s, size_t parent, size_t child)
{
    struct dir_frame *c = &s->f[child];
    int fd = openat(s->f[parent].fd, c->rel + c->name, DIR_OPEN_FLAGS);
    if (fd < 0) {
        return errno;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_dev != c->dev || st.st_ino != c->ino) {
        close(fd);
        return ESTALE; /* replaced meanwhile: its listing is stale */
    }
    c->fd = fd;
    s->open++;
    return 0;
}

/* Makes frame @i open, from its nearest open ancestor down. On failure the
 * frames that could not be opened have nothing left to walk. */
static bool dir_reopen(struct dir_walk_state *s, size_t i)
{
    size_t j = i;
    while (s->f[j].fd < 0) {
        j--; /* the start is always open */
    }
    for (size_t k = j + 1; k <= i; k++) {
        int err = dir_reopen_one(s, k - 1, k);
        if (err != 0) {
            for (size_t m = k; m <= i; m++) {
                s->f[m].next = s->f[m].len;
            }
            if (!dir_gone(err) && s->ops->failed != NULL) {
                s->ops->failed(s->ctx, s->f[k].rel, err);
            }
            return false;
        }
        dir_window_trim(s);
    }
    return true;
}

/* Builds "@rel/@name" ("@name" when @rel is "") into s->buf. */
static const char *dir_join(struct dir_walk_state *s, const char *rel, const char *name)
{
    size_t a = strlen(rel), b = strlen(name), need = a + b + 2;
    char *grown = array_grow(s->buf, &s->bufcap, need, 1, 256);
    if (grown == NULL) {
        return NULL;
    }
    s->buf = grown;
    memcpy(s->buf, rel, a);
    size_t n = a;
    if (a > 0) {
        s->buf[n++] = '/';
    }
    memcpy(s->buf + n, name, b + 1);
    return s->buf;
}

/* Adds @name to frame @f's subfolders to walk. False when memory runs out. */
static bool dir_keep(struct dir_frame *f, const char *name, size_t *cap)
{
    size_t n = strlen(name) + 1;
    char *grown = array_grow(f->subs, cap, f->len + n, 1, 256);
    if (grown == NULL) {
        return false;
    }
    f->subs = grown;
    memcpy(f->subs + f->len, name, n);
    f->len += n;
    return true;
}

/* The entry's type, resolved without following it when readdir did not say. */
static unsigned char dir_type(int dirfd, const struct dirent *e)
{
    struct stat st;
    if (e->d_type != DT_UNKNOWN) {
        return e->d_type;
    }
    if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return DT_REG; /* gone since readdir: reported as the file it was */
    }
    return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
}

/* Hands the top frame's folder and each of its entries to the callbacks,
 * keeping the subfolders to walk. Returns 0 or ENOMEM. */
static int dir_list(struct dir_walk_state *s)
{
    struct dir_frame *f = &s->f[s->depth - 1];
    if (s->ops->folder != NULL && !s->ops->folder(s->ctx, f->fd, f->rel)) {
        return 0;
    }
    /* A description of its own: the frame's stays at offset 0 for openat. */
    int lfd = openat(f->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (d == NULL) {
        int err = errno;
        if (lfd >= 0) {
            close(lfd);
        }
        if (!dir_gone(err) && s->ops->failed != NULL) {
            s->ops->failed(s->ctx, f->rel, err);
        }
        return 0;
    }
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        unsigned char type = dir_type(dirfd(d), e);
        const char *rel = dir_join(s, f->rel, e->d_name);
        if (rel == NULL) {
            rc = ENOMEM;
        } else if (s->ops->entry(s->ctx, dirfd(d), e->d_name, rel, type) && type == DT_DIR &&
                   !dir_keep(f, e->d_name, &cap)) {
            rc = ENOMEM;
        }
    }
    closedir(d);
    return rc;
}

/* Pushes folder @fd (taken), named @rel, as the new top frame. Returns 0
 * or ENOMEM (@fd closed). */
static int dir_push(struct dir_walk_state *s, int fd, const char *rel)
{
    struct stat st;
    char *copy = strdup(rel);
    struct dir_frame *grown = copy ? array_grow(s->f, &s->cap, s->depth + 1, sizeof *grown, 32) : NULL;
    if (grown == NULL) {
        free(copy);
        copy = NULL;
    } else {
        s->f = grown;
    }
    if (copy == NULL || fstat(fd, &st) != 0) {
        close(fd);
        free(copy);
        return copy == NULL ? ENOMEM : 0;
    }
    const char *slash = strrchr(copy, '/');
    s->f[s->depth] = (struct dir_frame){
        .rel = copy, .name = slash ? (size_t)(slash + 1 - copy) : 0, .fd = fd,
        .dev = st.st_dev, .ino = st.st_ino};
    s->open += s->depth > 0;
    s->depth++;
    assert(s->depth <= s->cap && s->open < s->depth);
    dir_window_trim(s);
    return 0;
}

/* Pops the top frame, its walk done. */
static void dir_pop(struct dir_walk_state *s)
{
    dir_frame_close(s, s->depth - 1);
    s->depth--;
    free(s->f[s->depth].rel);
    free(s->f[s->depth].subs);
}

/* Opens the top frame's next subfolder and pushes it, or passes by one that
 * went. Returns 0 or ENOMEM. */
static int dir_descend(struct dir_walk_state *s)
{
    size_t top = s->depth - 1;
    struct dir_frame *f = &s->f[top];
    const char *name = f->subs + f->next;
    f->next += strlen(name) + 1;
    if (f->fd < 0 && !dir_reopen(s, top)) {
        return 0; /* f->subs stays: the frames are not moved by a re-open */
    }
    const char *rel = dir_join(s, f->rel, name);
    if (rel == NULL) {
        return ENOMEM;
    }
    int fd = openat(f->fd, name, DIR_OPEN_FLAGS);
    if (fd < 0) {
        int err = errno;
        if (!dir_gone(err) && s->ops->failed != NULL) {
            s->ops->failed(s->ctx, rel, err);
        }
        return 0;
    }
    int rc = dir_push(s, fd, rel);
    return rc != 0 ? rc : dir_list(s);
}

/* See dir_walk.h. */
int dir_walk(int fd, const char *rel, const struct dir_walk_ops *ops, void *ctx)
{
    struct dir_walk_state s = {.ops = ops, .ctx = ctx};
    int rc = dir_push(&s, fd, rel);
    if (rc == 0 && s.depth == 1) {
        rc = dir_list(&s);
    }
    while (rc == 0 && s.depth > 0) {
        struct dir_frame *f = &s.f[s.depth - 1];
        if (f->next >= f->len) {
            dir_pop(&s);
        } else {
            rc = dir_descend(&s);
        }
    }
    while (s.depth > 0) {
        dir_pop(&s);
    }
    free(s.f);
    free(s.buf);
    return rc;
}

/* See dir_walk.h. */
int dir_walk_open(int fd, const char *rel)
{
    int cur = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char name[NAME_MAX + 1];
    for (const char *p = rel; cur >= 0 && *p != '\0';) {
        size_t n = strcspn(p, "/");
        if (n == 0) {
            p++;
            continue;
        }
        int err = n > NAME_MAX ? ENAMETOOLONG : 0;
        if (err == 0) {
            memcpy(name, p, n);
            name[n] = '\0';
            err = strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ? EINVAL : 0;
        }
        int next = err == 0 ? openat(cur, name, DIR_OPEN_FLAGS) : -1;
        err = err != 0 ? err : errno;
        close(cur);
        cur = next;
        errno = err;
        p += n;
    }
    return cur;
}
