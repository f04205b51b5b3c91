/* watch_poll — the polling backend of watch.h: a stat walk of every root per
 * interval, compared with the last walk's snapshot.
 *
 * A snapshot is one array of entries (root, relative path, type, inode,
 * size, mtime, ctime) sorted by root and path, with the paths in one string
 * arena: two snapshots are compared by one merge, and a walk allocates
 * nothing once the buffers have grown to the tree's size. */
#include "watch_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper than any article; a bound all the same, for a pathological tree. */
#define WATCH_POLL_MAX_DEPTH 64

struct watch_entry {
    size_t root;
    size_t rel;         /* offset into the arena while walking */
    const char *path;   /* into the arena once the walk is done */
    bool dir;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

/* A root folder as one walk found it. */
struct watch_rootid {
    bool present; /* could it be opened */
    dev_t dev;    /* which folder it was */
    ino_t ino;
    int fd;       /* held until the walk after next: while it is open, no
                   * new folder can be given its inode number */
};

struct watch_snap {
    struct watch_entry *e;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
    size_t folders;
    struct watch_rootid *roots; /* per root */
    bool failed;   /* out of memory: this snapshot is incomplete */
};

struct watch_poll {
    struct watch_snap a, b;
    struct watch_snap *cur, *next;
};

/* Appends one entry named @rel (@len bytes) to @s. */
static struct watch_entry *watch_snap_add(struct watch_snap *s, size_t root,
                                          const char *rel, size_t len)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct watch_entry *e = realloc(s->e, cap * sizeof *e);
        if (e == NULL) {
            s->failed = true;
            return NULL;
        }
        s->e = e;
        s->cap = cap;
    }
    if (s->alen + len + 1 > s->acap) {
        size_t cap = s->acap ? s->acap : 8192;
        while (cap < s->alen + len + 1) {
            cap *= 2;
        }
        char *a = realloc(s->arena, cap);
        if (a == NULL) {
            s->failed = true;
            return NULL;
        }
        s->arena = a;
        s->acap = cap;
    }
    memcpy(s->arena + s->alen, rel, len);
    s->arena[s->alen + len] = '\0';
    struct watch_entry *e = &s->e[s->n++];
    *e = (struct watch_entry){.root = root, .rel = s->alen};
    s->alen += len + 1;
    return e;
}

/* Records folder @dfd (named @rel under root @root) and everything under
 * it into @s. Takes ownership of @dfd. Folders are not followed through
 * symlinks, as inotify does not. */
static void watch_walk(struct watch_snap *s, size_t root, int dfd, const char *rel, int depth)
{
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return;
    }
    s->folders++;
    char path[4096];
    struct dirent *de;
    while ((de = readdir(d)) != NULL && !s->failed) {
        if (watch_ignored_name(de->d_name)) {
            continue; /* also "." and ".." */
        }
        int len = snprintf(path, sizeof path, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
        if (len < 0 || (size_t)len >= sizeof path) {
            continue;
        }
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            continue; /* gone since readdir: the next walk says so */
        }
        struct watch_entry *e = watch_snap_add(s, root, path, (size_t)len);
        if (e == NULL) {
            break;
        }
        e->dir = S_ISDIR(st.st_mode);
        if (!e->dir) {
            e->ino = st.st_ino;
            e->size = st.st_size;
            e->mtime = st.st_mtim;
            e->ctime = st.st_ctim;
        } else if (depth < WATCH_POLL_MAX_DEPTH) {
            int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                watch_walk(s, root, sub, path, depth + 1);
            }
        }
    }
    closedir(d);
}

/* qsort order: by root, then by path. */
static int watch_entry_cmp(const void *a, const void *b)
{
    const struct watch_entry *x = a, *y = b;
    if (x->root != y->root) {
        return x->root < y->root ? -1 : 1;
    }
    return strcmp(x->path, y->path);
}

/* One walk of every root into @s, sorted. */
static void watch_snap_take(struct watch *w, struct watch_snap *s)
{
    s->n = s->alen = s->folders = 0;
    s->failed = false;
    for (size_t r = 0; r < w->nroots; r++) {
        /* Roots may be symlinks (a route pointing elsewhere): followed. */
        struct watch_rootid *id = &s->roots[r];
        if (id->fd >= 0) {
            close(id->fd);
        }
        id->fd = open(w->roots[r].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        id->present = id->fd >= 0 && fstat(id->fd, &st) == 0;
        int walk = id->present ? dup(id->fd) : -1;
        if (walk >= 0) {
            id->dev = st.st_dev;
            id->ino = st.st_ino;
            watch_walk(s, r, walk, "", 0);
        } else if (id->present) {
            s->failed = true; /* out of descriptors: this walk saw nothing */
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        s->e[i].path = s->arena + s->e[i].rel;
    }
    if (s->n > 1) {
        qsort(s->e, s->n, sizeof *s->e, watch_entry_cmp);
    }
    atomic_store(&w->count, s->folders);
}

/* Whether an entry in both walks changed: a write, a touch, a rename over it. */
static bool watch_entry_changed(const struct watch_entry *o, const struct watch_entry *n)
{
    if (o->dir != n->dir) {
        return true;
    }
    /* A folder's own times change with every file added: its files tell. */
    return !o->dir && (o->ino != n->ino || o->size != n->size ||
                       o->mtime.tv_sec != n->mtime.tv_sec || o->mtime.tv_nsec != n->mtime.tv_nsec ||
                       o->ctime.tv_sec != n->ctime.tv_sec || o->ctime.tv_nsec != n->ctime.tv_nsec);
}

/* Opens the window as an overflow: the consumer reloads everything. */
static void watch_poll_overflow(struct watch *w)
{
    uint64_t now = watch_now_ms();
    w->overflow = true;
    if (w->first_ms == 0) {
        w->first_ms = now;
    }
    w->last_ms = now;
}

/* Notes every difference between @o and @n; true if there was one. */
static bool watch_snap_compare(struct watch *w, const struct watch_snap *o, const struct watch_snap *n)
{
    bool changed = false;
    for (size_t r = 0; r < w->nroots; r++) {
        const struct watch_rootid *a = &o->roots[r], *b = &n->roots[r];
        if (a->present != b->present ||
            (b->present && (a->dev != b->dev || a->ino != b->ino))) {
            /* A route folder went, came back, or another is at its path. */
            watch_root_swapped(w, r, b->present);
            changed = true;
        }
    }
    if (n->failed) {
        watch_poll_overflow(w);
        return true;
    }
    size_t i = 0, j = 0;
    while (i < o->n || j < n->n) {
        const struct watch_entry *a = i < o->n ? &o->e[i] : NULL;
        const struct watch_entry *b = j < n->n ? &n->e[j] : NULL;
        int c = a == NULL ? 1 : b == NULL ? -1 : watch_entry_cmp(a, b);
        const struct watch_entry *e = c < 0 ? a : b;
        bool both = o->roots[e->root].present && n->roots[e->root].present;
        if (c < 0) {
            i++;
            if (both) {
                watch_note(w, (int)e->root, strdup(e->path), false, true, 0);
                changed = true;
            }
        } else if (c > 0) {
            j++;
            if (both) {
                watch_note(w, (int)e->root, strdup(e->path), true, false, -1);
                changed = true;
            }
        } else {
            i++;
            j++;
            if (both && watch_entry_changed(a, b)) {
                watch_note(w, (int)e->root, strdup(e->path), false, false, -1);
                changed = true;
            }
        }
    }
    return changed;
}

/* See watch_internal.h: the first walk, the baseline. */
bool watch_poll_init(struct watch *w)
{
    struct watch_poll *p = calloc(1, sizeof *p);
    if (p == NULL) {
        return false;
    }
    w->poll = p;
    p->a.roots = calloc(w->nroots ? w->nroots : 1, sizeof *p->a.roots);
    p->b.roots = calloc(w->nroots ? w->nroots : 1, sizeof *p->b.roots);
    for (size_t r = 0; r < w->nroots; r++) {
        if (p->a.roots != NULL) {
            p->a.roots[r].fd = -1;
        }
        if (p->b.roots != NULL) {
            p->b.roots[r].fd = -1;
        }
    }
    if (p->a.roots == NULL || p->b.roots == NULL) {
        errno = ENOMEM;
        return false;
    }
    p->cur = &p->a;
    p->next = &p->b;
    watch_snap_take(w, p->cur);
    for (size_t r = 0; r < w->nroots; r++) {
        if (!p->cur->roots[r].present) {
            fprintf(stderr, "folio: not watching %s: %s\n", w->roots[r].path, strerror(ENOENT));
        }
    }
    return true;
}

/* See watch_internal.h: walk, compare, flush, until stopped. */
void *watch_poll_thread(void *arg)
{
    struct watch *w = arg;
    struct watch_poll *p = w->poll;
    for (;;) {
        /* Idle: one walk per interval. In a window: walk again soon, and
         * flush once a walk finds nothing new (the debounce's trailing
         * edge) or the window has lasted max_wait_ms. */
        int wait = (int)(w->first_ms != 0 ? w->debounce_ms : w->poll_ms);
        struct pollfd pfd = {.fd = w->stopfd, .events = POLLIN};
        int r = poll(&pfd, 1, wait);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r != 0) {
            break; /* stopped (or poll failed: nothing sensible to do) */
        }
        watch_snap_take(w, p->next);
        bool changed = watch_snap_compare(w, p->cur, p->next);
        struct watch_snap *t = p->cur;
        p->cur = p->next;
        p->next = t;
        /* A swapped root that is still missing holds the window (up to
         * its cap): a rebuild is one reload, not a 404 and a reload. A poll
         * cannot tell a folder renamed into place from one being filled:
         * after a swap, quiet for WATCH_SWAP_QUIET_MS. */
        uint64_t now = watch_now_ms();
        bool settled = !changed && (w->swap_ms == 0 || now - w->last_ms >= WATCH_SWAP_QUIET_MS);
        if (w->first_ms != 0 && !watch_window_held(w) &&
            (settled || now >= watch_window_cap(w))) {
            watch_flush(w);
        }
    }
    return NULL;
}

/* See watch_internal.h. */
void watch_poll_free(struct watch *w)
{
    struct watch_poll *p = w->poll;
    if (p == NULL) {
        return;
    }
    struct watch_snap *snaps[] = {&p->a, &p->b};
    for (size_t i = 0; i < 2; i++) {
        for (size_t r = 0; snaps[i]->roots != NULL && r < w->nroots; r++) {
            if (snaps[i]->roots[r].fd >= 0) {
                close(snaps[i]->roots[r].fd);
            }
        }
        free(snaps[i]->e);
        free(snaps[i]->arena);
        free(snaps[i]->roots);
    }
    free(p);
    w->poll = NULL;
}
