/* watch_poll — see watch_poll.h.
 *
 * A snapshot is one array of entries (root, relative path, type, inode,
 * size, mtime, ctime) sorted by root and path, with the paths in one string
 * arena: two snapshots are compared by one merge, and a walk allocates
 * nothing once the buffers have grown to the tree's size. */
#include "watch_poll.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/dir_walk.h"
#include "base/escape.h"
#include "watch_path.h"

struct watch_entry {
    size_t root;
    size_t rel;         /* offset into the arena while walking */
    const char *path;   /* into the arena once the walk is done */
    bool dir;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

struct watch_snap {
    struct watch_entry *e;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
    size_t folders;
    bool *present; /* per root: was its folder there (and walked) */
    bool failed;   /* out of memory: this snapshot is incomplete */
};

struct watch_poll {
    struct watch_core *core; /* borrowed */
    struct watch_snap a, b;
    struct watch_snap *cur, *next;
    uint64_t walk_ms; /* when the next walk is due */
};

/* Appends one entry named @rel (@len bytes) to @s. */
static struct watch_entry *watch_snap_add(struct watch_snap *s, size_t root,
                                          const char *rel, size_t len)
{
    struct watch_entry *entries = array_grow(s->e, &s->cap, s->n + 1, sizeof *entries, 256);
    if (entries == NULL) {
        s->failed = true;
        return NULL;
    }
    s->e = entries;
    char *a = array_grow(s->arena, &s->acap, s->alen + len + 1, 1, 8192);
    if (a == NULL) {
        s->failed = true;
        return NULL;
    }
    s->arena = a;
    memcpy(s->arena + s->alen, rel, len);
    s->arena[s->alen + len] = '\0';
    struct watch_entry *e = &s->e[s->n++];
    *e = (struct watch_entry){.root = root, .rel = s->alen};
    s->alen += len + 1;
    return e;
}

/* One walk of one root, for dir_walk's callbacks. */
struct watch_poll_walk {
    struct watch_snap *s;
    struct watch_core *core;
    size_t root;
};

/* dir_walk: a folder reached: counted. */
static bool watch_poll_folder(void *arg, int fd, const char *rel)
{
    (void)fd;
    (void)rel;
    struct watch_poll_walk *w = arg;
    w->s->folders++;
    return !w->s->failed;
}

/* dir_walk: one entry recorded (its inode, size and times for a file);
 * folders walked into, whatever the depth; symlinks never followed, as
 * inotify does not. */
static bool watch_poll_entry(void *arg, int dirfd, const char *name, const char *rel,
                             unsigned char type)
{
    (void)type;
    struct watch_poll_walk *w = arg;
    struct stat st;
    if (w->s->failed || watch_ignored_name(name) ||
        fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return false; /* gone since readdir: the next walk says so */
    }
    struct watch_entry *e = watch_snap_add(w->s, w->root, rel, strlen(rel));
    if (e == NULL) {
        return false;
    }
    e->dir = S_ISDIR(st.st_mode);
    if (!e->dir) {
        e->ino = st.st_ino;
        e->size = st.st_size;
        e->mtime = st.st_mtim;
        e->ctime = st.st_ctim;
    }
    return e->dir;
}

/* dir_walk: a folder that could not be opened or listed: counted missed. */
static void watch_poll_failed(void *arg, const char *rel, int err)
{
    struct watch_poll_walk *w = arg;
    watch_missed_note(&w->core->missed, w->core->roots.items[w->root].path, rel, err);
}

/* Records folder @dfd (root @root's own) and everything under it into @s,
 * with bounded descriptors whatever the depth. Takes ownership of @dfd. */
static void watch_walk(struct watch_poll *p, struct watch_snap *s, size_t root, int dfd)
{
    static const struct dir_walk_ops ops = {
        .folder = watch_poll_folder, .entry = watch_poll_entry, .failed = watch_poll_failed};
    struct watch_poll_walk w = {.s = s, .core = p->core, .root = root};
    if (dir_walk(dfd, "", &ops, &w) != 0) {
        s->failed = true;
    }
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

/* One walk of every root into @s, sorted. Each root's path is looked at
 * first (the tracker reports a swap, and holds the folder it found: while it
 * is open no new folder can be given its inode number); true if one was
 * swapped. */
static bool watch_snap_take(struct watch_poll *p, struct watch_snap *s)
{
    struct watch_roots *roots = &p->core->roots;
    s->n = s->alen = s->folders = 0;
    s->failed = false;
    bool swapped = false;
    for (size_t r = 0; r < roots->n; r++) {
        /* Roots may be symlinks (a route pointing elsewhere): followed. */
        enum watch_root_state st = watch_roots_look(roots, r);
        swapped = swapped || st == WATCH_ROOT_SWAPPED;
        int held = roots->items[r].fd;
        s->present[r] = st != WATCH_ROOT_UNKNOWN && held >= 0;
        /* A new open file description: a dup would share the held one's
         * directory offset, left at the end by the last walk. */
        int walk = s->present[r] ? openat(held, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (walk >= 0) {
            watch_walk(p, s, r, walk);
        } else if (s->present[r] || st == WATCH_ROOT_UNKNOWN) {
            s->failed = true; /* out of descriptors: this walk saw nothing */
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        s->e[i].path = s->arena + s->e[i].rel;
    }
    if (s->n > 1) {
        qsort(s->e, s->n, sizeof *s->e, watch_entry_cmp);
    }
    atomic_store(&p->core->count, s->folders);
    return swapped;
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

/* Notes every difference between @o and @n (entries of roots there in both
 * walks: a swapped root is an overflow already); true if there was one. */
static bool watch_snap_compare(struct watch_window *win, const struct watch_snap *o,
                               const struct watch_snap *n)
{
    if (n->failed) {
        watch_window_overflow(win);
        return true;
    }
    bool changed = false;
    size_t i = 0, j = 0;
    while (i < o->n || j < n->n) {
        const struct watch_entry *a = i < o->n ? &o->e[i] : NULL;
        const struct watch_entry *b = j < n->n ? &n->e[j] : NULL;
        int c = a == NULL ? 1 : b == NULL ? -1 : watch_entry_cmp(a, b);
        const struct watch_entry *e = c < 0 ? a : b;
        bool both = o->present[e->root] && n->present[e->root];
        bool gone = c < 0, appeared = c > 0;
        i += c <= 0;
        j += c >= 0;
        if (both && (gone || appeared || watch_entry_changed(a, b))) {
            watch_window_note(win, (int)e->root, strdup(e->path), appeared, gone, gone ? 0 : -1);
            changed = true;
        }
    }
    return changed;
}

/* See watch_poll.h: the first walk, the baseline. */
struct watch_poll *watch_poll_create(struct watch_core *core)
{
    struct watch_poll *p = calloc(1, sizeof *p);
    if (p == NULL) {
        return NULL;
    }
    p->core = core;
    size_t n = core->roots.n;
    p->a.present = calloc(n ? n : 1, sizeof *p->a.present);
    p->b.present = calloc(n ? n : 1, sizeof *p->b.present);
    if (p->a.present == NULL || p->b.present == NULL) {
        watch_poll_destroy(p);
        errno = ENOMEM;
        return NULL;
    }
    p->cur = &p->a;
    p->next = &p->b;
    for (size_t r = 0; r < n; r++) {
        if (watch_roots_hold(&core->roots, r) != 1) {
            char shown[ESCAPE_PATH_SIZE];
            escape_text(core->roots.items[r].path, shown, sizeof(shown));
            fprintf(stderr, "folio: not watching %s: %s\n", shown, strerror(ENOENT));
        }
    }
    watch_snap_take(p, p->cur); /* the same folders: nothing swapped */
    watch_missed_say(&core->missed, WATCH_MISSED_MISSES);
    p->walk_ms = watch_window_now(&core->window) + core->poll_ms;
    return p;
}

/* See watch_poll.h: walk, compare, flush. */
int watch_poll_turn(struct watch_poll *p)
{
    struct watch_window *win = &p->core->window;
    uint64_t now = watch_window_now(win);
    if (now < p->walk_ms) {
        return (int)(p->walk_ms - now);
    }
    bool changed = watch_snap_take(p, p->next);
    watch_missed_say(&p->core->missed, WATCH_MISSED_MISSES);
    changed = watch_snap_compare(win, p->cur, p->next) || changed;
    struct watch_snap *t = p->cur;
    p->cur = p->next;
    p->next = t;
    /* A swapped root that is still missing holds the window (up to its
     * cap): a rebuild is one reload, not a 404 and a reload. */
    if (watch_window_settled(win, changed, watch_roots_missing(&p->core->roots))) {
        watch_window_flush(win, p->core->fn, p->core->ctx);
    }
    /* Idle: one walk per interval. In a window: walk again soon, and flush
     * once a walk finds nothing new or the window has lasted its cap. */
    unsigned wait = watch_window_is_open(win) ? win->debounce_ms : p->core->poll_ms;
    p->walk_ms = watch_window_now(win) + wait;
    return (int)wait;
}

/* See watch_poll.h. */
void watch_poll_destroy(struct watch_poll *p)
{
    if (p == NULL) {
        return;
    }
    struct watch_snap *snaps[] = {&p->a, &p->b};
    for (size_t i = 0; i < 2; i++) {
        free(snaps[i]->e);
        free(snaps[i]->arena);
        free(snaps[i]->present);
    }
    free(p);
}
