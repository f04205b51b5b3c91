/* check_walk — see check_walk.h. */
#include "check_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/dir_walk.h"
#include "check_near.h"
#include "site/resolve.h"
#include "site/routes.h"

/* A route's folder as the report names it: relative to the root when inside it. */
static const char *check_route_name(const struct routes *routes, const struct route *route)
{
    size_t n = strlen(routes->root);
    if (strncmp(route->dir, routes->root, n) == 0 && route->dir[n] == '/') {
        return route->dir + n + 1;
    }
    return strcmp(route->dir, routes->root) == 0 ? "" : route->dir;
}

/* "www" + "a/b.html" -> "www/a/b.html", malloc'd. */
static char *check_file_name(const struct routes *routes, const struct route *route, const char *rel)
{
    const char *dir = check_route_name(routes, route);
    char *s = NULL;
    return asprintf(&s, "%s%s%s", dir, *dir ? "/" : "", rel) < 0 ? NULL : s;
}

/* True when @name ends with @ext in any case. */
static bool check_has_ext(const char *name, const char *ext)
{
    size_t n = strlen(name), e = strlen(ext);
    return n > e && strcasecmp(name + n - e, ext) == 0;
}

/* Adds the file at @rel of @route, unless a longer route hides its URL. */
static void check_add_file(struct check_run *r, const struct route *route, const char *rel)
{
    char *url = NULL;
    bool bare;
    if (asprintf(&url, "%s%s", route->prefix, rel) < 0) {
        r->failed = true;
        return;
    }
    if (routes_match(r->routes, url, &bare) != route) {
        free(url);
        return;
    }
    struct check_file *grown = array_grow(r->files, &r->files_cap, r->nfiles + 1, sizeof(*grown), 64);
    if (grown == NULL) {
        free(url);
        r->failed = true;
        return;
    }
    r->files = grown;
    bool html = check_has_ext(rel, ".html") || check_has_ext(rel, ".htm");
    struct check_file *f = &r->files[r->nfiles++];
    *f = (struct check_file){
        .url = url,
        .name = check_file_name(r->routes, route, rel),
        .route = route,
        .type = html ? CHECK_HTML : check_has_ext(rel, ".css") ? CHECK_CSS : CHECK_OTHER,
        .fragment = html && route->is_fragments,
        .status = -1,
    };
    r->failed |= f->name == NULL;
}

/* One route's walk, for dir_walk's callbacks. */
struct check_walk_state {
    struct check_run *r;
    const struct route *route;
    char *err;
    size_t err_size;
    bool ok;
};

/* dir_walk: one entry: dot entries skipped, as folio never serves them;
 * folders walked into, whatever the depth; the rest are the route's files. */
static bool check_walk_entry(void *arg, int dirfd, const char *name, const char *rel,
                             unsigned char type)
{
    (void)dirfd;
    struct check_walk_state *w = arg;
    if (name[0] == '.' || w->r->failed) {
        return false;
    }
    if (type == DT_DIR) {
        return true;
    }
    check_add_file(w->r, w->route, rel); /* symlinks too: resolve_open judges them */
    return false;
}

/* dir_walk: a folder not readable is passed by (references into it say
 * so); any other failure (out of descriptors) fails the walk. */
static void check_walk_failed(void *arg, const char *rel, int err)
{
    struct check_walk_state *w = arg;
    if (err != EACCES && w->ok) {
        snprintf(w->err, w->err_size, "%s/%s: %s", w->route->dir, rel, strerror(err));
        w->ok = false;
    }
}

/* Every file beneath @route's folder, with bounded descriptors whatever the
 * depth (base/dir_walk.h). False when a folder cannot be read. */
static bool check_walk(struct check_run *r, const struct route *route, char *err, size_t err_size)
{
    int fd = openat(route->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_size, "%s: %s", route->dir, strerror(errno));
        return false;
    }
    static const struct dir_walk_ops ops = {.entry = check_walk_entry, .failed = check_walk_failed};
    struct check_walk_state w = {.r = r, .route = route, .err = err, .err_size = err_size, .ok = true};
    if (dir_walk(fd, "", &ops, &w) != 0) {
        r->failed = true;
    }
    return w.ok;
}

/* qsort/bsearch order of files: by URL path. */
static int check_file_cmp(const void *a, const void *b)
{
    return strcmp(((const struct check_file *)a)->url, ((const struct check_file *)b)->url);
}

struct check_file *check_find(struct check_run *r, const char *url)
{
    struct check_file key = {.url = (char *)url};
    return bsearch(&key, r->files, r->nfiles, sizeof(key), check_file_cmp);
}

/* As folio opens it: a file that resolve_open refuses keeps only its status. */
void check_read(struct check_run *r, struct check_file *f)
{
    int fd, e;
    struct stat st;
    f->status = (int)resolve_open(f->route->dir_fd, f->url + f->route->prefix_len, &fd, &st, &e);
    if (f->status != RESOLVED_FILE) {
        if (fd >= 0) {
            close(fd);
        }
        return;
    }
    f->text = malloc((size_t)st.st_size + 1);
    size_t n = 0;
    for (ssize_t got = 1; f->text && n < (size_t)st.st_size && got > 0; n += (size_t)(got > 0 ? got : 0)) {
        got = read(fd, f->text + n, (size_t)st.st_size - n);
    }
    close(fd);
    if (f->text == NULL) {
        r->failed = true;
        return;
    }
    f->len = n;
    f->text[n] = '\0';
    bool ok = f->type == CHECK_HTML ? check_refs_html(f->text, n, &f->doc)
                                    : check_refs_css(f->text, n, 0, &f->doc);
    r->failed |= !ok;
}

bool check_walk_all(struct check_run *r, char *err, size_t err_size)
{
    for (size_t i = 0; i < r->routes->count; i++) {
        if (!check_walk(r, &r->routes->items[i], err, err_size) || r->failed) {
            return false;
        }
    }
    if (r->nfiles > 1) {
        qsort(r->files, r->nfiles, sizeof(*r->files), check_file_cmp);
    }
    return true;
}

/* Why folio would not serve a file that resolve_open refused. */
static const char *check_open_problem(enum resolve_status st, int err)
{
    switch (st) {
    case RESOLVED_FILE:
    case RESOLVED_DIRECTORY:
        return NULL;
    case RESOLVED_FORBIDDEN:
        return "is not readable";
    case RESOLVED_NOT_FOUND:
        return err == EXDEV || err == ELOOP ? "leads outside the article's folders" : "not found";
    case RESOLVED_ERROR:
        break;
    }
    return "cannot be opened";
}

/* Opens @rel beneath @route as folio would serve it: a folder is its
 * index.html (folio redirects a folder without its slash there first);
 * @folder: @rel is that index.html already. */
static void check_open(struct check_run *r, const struct route *route, const char *rel,
                       bool folder, struct check_target *t)
{
    char url[PATH_MAX];
    snprintf(url, sizeof(url), "%s%s", route->prefix, rel);
    struct check_file *f = check_find(r, url);
    if (f != NULL && f->status < 0 && f->type == CHECK_OTHER) {
        int fd, e;
        struct stat st;
        f->status = (int)resolve_open(route->dir_fd, rel, &fd, &st, &e);
        f->status = f->status == RESOLVED_DIRECTORY ? RESOLVED_NOT_FOUND : f->status;
        if (fd >= 0) {
            close(fd);
        }
    }
    t->file = f; /* referenced, even when it cannot be served */
    if (f != NULL && f->status == RESOLVED_FILE) {
        return;
    }
    int fd, e = 0;
    struct stat st;
    enum resolve_status s = resolve_open(route->dir_fd, rel, &fd, &st, &e);
    if (fd >= 0) {
        close(fd);
    }
    size_t n = strlen(rel);
    if (s == RESOLVED_DIRECTORY && !folder) {
        char index[PATH_MAX];
        snprintf(index, sizeof(index), "%s%sindex.html", rel, n == 0 || rel[n - 1] == '/' ? "" : "/");
        check_open(r, route, index, true, t);
        t->problem = !t->problem                               ? NULL
                     : strcmp(t->problem, "not found") == 0 ? "is a folder without index.html"
                     : strcmp(t->problem, "is not readable") == 0
                         ? "is a folder whose index.html is not readable"
                         : "is a folder whose index.html cannot be served";
        return;
    }
    t->problem = check_open_problem(s, e);
}

void check_follow(struct check_run *r, const char *path, struct check_target *t)
{
    *t = (struct check_target){0};
    bool bare;
    const struct route *route = routes_match(r->routes, path, &bare);
    snprintf(t->resolved, sizeof(t->resolved), "%s", path);
    if (route == NULL) {
        t->problem = "is served by no route";
        return;
    }
    const char *rel = bare ? "" : path + route->prefix_len;
    char *name = check_file_name(r->routes, route, rel);
    snprintf(t->resolved, sizeof(t->resolved), "%s", name ? name : path);
    free(name);
    if (resolve_has_dot_segment(path)) {
        t->problem = "names a hidden file or folder, which folio never serves";
        return;
    }
    check_open(r, route, rel, false, t);
}
/* A page's fragment elements: the fragments it loads (those that exist). */
static void check_page_frags(struct check_run *r, struct check_file *page)
{
    for (size_t i = 0; i < page->doc.nrefs && !r->failed; i++) {
        const struct check_ref *ref = &page->doc.refs[i];
        struct check_url u;
        if (!ref->fragment || !check_url_resolve(ref->url, page->url, &u)) {
            continue;
        }
        char *norm = u.kind == CHECK_URL_PATH ? malloc(strlen(u.path) + 1) : NULL;
        struct check_target t = {0};
        if (norm != NULL && resolve_normalize(u.path, strlen(u.path), norm, strlen(u.path) + 1)) {
            check_follow(r, norm, &t);
        }
        struct check_file **grown = NULL;
        if (t.problem == NULL && t.file != NULL && t.file->type == CHECK_HTML && t.file != page &&
            (grown = realloc(page->frags, (page->nfrags + 1) * sizeof(*grown))) != NULL) {
            page->frags = grown;
            page->frags[page->nfrags++] = t.file;
            t.file->loaded = true;
        }
        free(norm);
        check_url_free(&u);
    }
}

void check_read_frags(struct check_run *r, struct check_file *page)
{
    check_page_frags(r, page);
    for (size_t k = 0; k < page->nfrags && !r->failed; k++) {
        if (page->frags[k]->status < 0) {
            check_read(r, page->frags[k]);
        }
    }
}

void check_read_needed(struct check_run *r)
{
    bool pages = !r->focus || r->o->focus_pages;
    for (size_t i = 0; r->focus && i < r->nfiles; i++) {
        pages |= r->files[i].focus && r->files[i].fragment; /* its pages say how it resolves */
    }
    for (size_t i = 0; i < r->nfiles && !r->failed; i++) {
        struct check_file *f = &r->files[i];
        bool page = f->type == CHECK_HTML && !f->fragment;
        if (f->type != CHECK_OTHER && (!r->focus || f->focus || (page && pages))) {
            check_read(r, f);
        }
    }
    for (size_t i = 0; i < r->nfiles && !r->failed; i++) {
        struct check_file *f = &r->files[i];
        if (f->type == CHECK_HTML && !f->fragment && f->text) {
            check_read_frags(r, f);
        }
    }
}

void check_mark_focus(struct check_run *r)
{
    const struct check_options *o = r->o;
    r->focus = o->nfocus > 0 || o->focus_pages;
    for (size_t i = 0; i < o->nfocus; i++) {
        struct check_file *f = check_find(r, o->focus[i]);
        if (f != NULL) {
            f->focus = true;
        }
    }
    for (size_t i = 0; o->focus_pages && i < r->nfiles; i++) {
        r->files[i].focus |= r->files[i].type == CHECK_HTML && !r->files[i].fragment;
    }
}

void check_files_free(struct check_run *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        struct check_file *f = &r->files[i];
        free(f->url);
        free(f->name);
        free(f->text);
        free(f->frags);
        free(f->anchors);
        check_near_free(f->near);
        check_doc_free(&f->doc);
    }
    free(r->files);
    r->files = NULL;
    r->nfiles = r->files_cap = 0;
}
