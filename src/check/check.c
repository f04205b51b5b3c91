/* check — see check.h. The walk, the resolution of each reference through
 * folio's own routes and resolver, and the report. */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_refs.h"
#include "base/config.h"
#include "base/html.h"
#include "serve/resolve.h"
#include "serve/rewrite.h"
#include "serve/routes.h"

enum check_type { CHECK_OTHER, CHECK_HTML, CHECK_CSS };

struct check_anchor {
    const char *id;
    const struct check_file *file;
    size_t offset, seq;
    bool is_name;
};

/* One file of a route, found by the walk. */
struct check_file {
    char *url;   /* the URL path folio serves it at, decoded: "/assets/a b.png" */
    char *name;  /* relative to the root: "assets/a b.png" */
    const struct route *route;
    enum check_type type;
    bool fragment;   /* HTML in the fragments route */
    bool referenced; /* some reference resolved to it */
    bool loaded;     /* some page loads it as a fragment */
    bool focus;      /* live: its problems are wanted */
    bool anchors_built;
    int status;      /* an enum resolve_status, or -1 before it was opened */
    char *text;      /* HTML and CSS: the bytes read */
    size_t len;
    struct check_doc doc;
    struct check_file **frags; /* pages: the fragments they load */
    size_t nfrags;
    struct check_anchor *anchors; /* HTML: the ids an anchor may name, sorted */
    size_t nanchors;
};

/* A problem before it is sorted and given a line. */
struct check_pending {
    enum check_severity severity;
    const struct check_file *file;
    size_t offset;
    char *message, *reference, *resolved;
};

struct check_run {
    const struct routes *routes;
    const struct check_options *o;
    const char *prefix; /* NULL: no --base-path */
    struct check_file *files;
    size_t nfiles, files_cap;
    struct check_pending *pending;
    size_t npending, pending_cap;
    size_t references;
    bool focus;  /* only the files marked focus are reported */
    bool failed; /* out of memory */
};

/* How a document's references resolve: against which URL, at what depth
 * (for rewrite.c), and which ids its in-page anchors may name. */
struct check_base {
    const char *url;
    size_t depth;
    struct check_file *page; /* NULL: no page, no in-page anchors */
};

static char *check_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static char *check_vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

/* Records a problem in @file at @offset; the message is printf-formatted. */
static void check_report(struct check_run *r, enum check_severity sev, const struct check_file *file,
                         size_t offset, const char *ref, const char *resolved, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void check_report(struct check_run *r, enum check_severity sev, const struct check_file *file,
                         size_t offset, const char *ref, const char *resolved, const char *fmt, ...)
{
    if (r->npending == r->pending_cap) {
        size_t cap = r->pending_cap ? r->pending_cap * 2 : 32;
        struct check_pending *grown = realloc(r->pending, cap * sizeof(*grown));
        if (grown == NULL) {
            r->failed = true;
            return;
        }
        r->pending = grown;
        r->pending_cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    struct check_pending p = {sev, file, offset, check_vformat(fmt, ap), strdup(ref ? ref : ""),
                              strdup(resolved ? resolved : "")};
    va_end(ap);
    if (!p.message || !p.reference || !p.resolved) {
        free(p.message);
        free(p.reference);
        free(p.resolved);
        r->failed = true;
        return;
    }
    r->pending[r->npending++] = p;
}

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
    if (r->nfiles == r->files_cap) {
        size_t cap = r->files_cap ? r->files_cap * 2 : 64;
        struct check_file *grown = realloc(r->files, cap * sizeof(*grown));
        if (grown == NULL) {
            free(url);
            r->failed = true;
            return;
        }
        r->files = grown;
        r->files_cap = cap;
    }
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

/* Every file beneath @rel of @route; dot entries are skipped, as folio
 * never serves them. False when the route's folder cannot be read. */
static bool check_walk(struct check_run *r, const struct route *route, const char *rel,
                       char *err, size_t err_size)
{
    int fd = openat(route->dir_fd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (dir == NULL && rel[0] && (errno == ENOENT || errno == ENOTDIR || errno == EACCES)) {
        return true; /* gone since it was listed, or unreadable: references into it say so */
    }
    if (dir == NULL) {
        snprintf(err, err_size, "%s/%s: %s", route->dir, rel, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return false;
    }
    bool ok = true;
    for (struct dirent *e; ok && !r->failed && (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char *child = NULL;
        if (asprintf(&child, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) < 0) {
            r->failed = true;
            break;
        }
        struct stat st;
        bool is_dir = e->d_type == DT_DIR ||
                      (e->d_type == DT_UNKNOWN && fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                       S_ISDIR(st.st_mode));
        if (is_dir) {
            ok = check_walk(r, route, child, err, err_size);
        } else {
            check_add_file(r, route, child); /* symlinks too: resolve_open judges them */
        }
        free(child);
    }
    closedir(dir);
    return ok;
}

/* qsort/bsearch order of files: by URL path. */
static int check_file_cmp(const void *a, const void *b)
{
    return strcmp(((const struct check_file *)a)->url, ((const struct check_file *)b)->url);
}

/* The walked file served at the decoded URL path @url, or NULL. */
static struct check_file *check_find(struct check_run *r, const char *url)
{
    struct check_file key = {.url = (char *)url};
    return bsearch(&key, r->files, r->nfiles, sizeof(key), check_file_cmp);
}

/* Reads an HTML or CSS file through resolve_open, as folio opens it. */
static void check_read(struct check_run *r, struct check_file *f)
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

/* The outcome of following one decoded URL path through folio. */
struct check_target {
    const char *problem;       /* NULL: folio serves a file for it */
    struct check_file *file;   /* the walked file, when it is one */
    char resolved[PATH_MAX];   /* what the report shows it came to */
};

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
        t->problem = t->problem ? "is a folder without index.html" : NULL;
        return;
    }
    t->problem = check_open_problem(s, e);
}

/* Follows the normalised path @path through the routes and the resolver. */
static void check_follow(struct check_run *r, const char *path, struct check_target *t)
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

/* True when @id is among @f's anchors (ids, <a name>s, its fragments' ids). */
static bool check_has_anchor(const struct check_file *f, const char *id)
{
    size_t lo = 0, hi = f->nanchors;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->anchors[mid].id, id);
        if (c == 0) {
            return true;
        }
        c < 0 ? (lo = mid + 1) : (hi = mid);
    }
    return false;
}

static void check_ensure_anchors(struct check_run *r, struct check_file *f);

/* An in-page anchor: "#" and "#top" always scroll (HTML 7.4.6.4). */
static void check_anchor(struct check_run *r, const struct check_file *doc, const struct check_ref *ref,
                         struct check_file *target, const char *id)
{
    if (target != NULL) {
        check_ensure_anchors(r, target); /* a live check reads another page only now */
    }
    if (target == NULL || id[0] == '\0' || strcasecmp(id, "top") == 0 || check_has_anchor(target, id)) {
        return;
    }
    char resolved[PATH_MAX];
    snprintf(resolved, sizeof(resolved), "%s#%s", target->name, id);
    check_report(r, CHECK_ERROR, doc, ref->offset, ref->url, resolved,
                 "%s \"%s\" points at no element with id \"%s\"", ref->what, ref->url, id);
}

/* Under --base-path: what the browser loads once rewrite.c has rewritten
 * @value (one URL of @ref) in a document served below the prefix. @at_root
 * is the normalised path it loads at "/". */
static void check_prefix(struct check_run *r, const struct check_file *doc, const struct check_ref *ref,
                         const struct check_base *b, const char *at_root)
{
    struct rewrite_context ctx = {r->prefix, b->depth, routes_owns, (void *)r->routes};
    size_t n, plen = strlen(r->prefix);
    char *rewritten = rewrite_url(ref->url, strlen(ref->url), &ctx, &n);
    char *base = NULL;
    struct check_url u = {0};
    if (rewritten == NULL || asprintf(&base, "%s%s", r->prefix, b->url) < 0 ||
        !check_url_resolve(rewritten, base, &u)) {
        r->failed = true;
    } else if (u.kind == CHECK_URL_PATH) {
        char *norm = malloc(strlen(u.path) + 1);
        r->failed |= norm == NULL;
        if (norm != NULL && resolve_normalize(u.path, strlen(u.path), norm, strlen(u.path) + 1)) {
            bool inside = strncmp(norm, r->prefix, plen) == 0 && (norm[plen] == '/' || norm[plen] == '\0');
            if (!inside) {
                check_report(r, CHECK_ERROR, doc, ref->offset, ref->url, norm,
                             "%s \"%s\" leaves --base-path %s, and folio does not rewrite it", ref->what,
                             ref->url, r->prefix);
            } else if (strcmp(norm[plen] ? norm + plen : "/", at_root) != 0) {
                check_report(r, CHECK_ERROR, doc, ref->offset, ref->url, norm,
                             "%s \"%s\" loads another file under --base-path %s than at /", ref->what,
                             ref->url, r->prefix);
            }
        }
        free(norm);
    }
    check_url_free(&u);
    free(base);
    free(rewritten);
}

/* A walked file whose URL is @url but for letter case (a typo a case-blind
 * file system on the author's machine would hide), or NULL. */
static const struct check_file *check_near(struct check_run *r, const char *url)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        if (strcasecmp(r->files[i].url, url) == 0) {
            return &r->files[i];
        }
    }
    return NULL;
}

/* A reference that names a path: follow it, then its anchor and prefix. */
static void check_path(struct check_run *r, const struct check_file *doc, const struct check_ref *ref,
                       const struct check_base *b, const struct check_url *u)
{
    size_t n = strlen(u->path);
    char *norm = malloc(n + 1);
    if (norm == NULL) {
        r->failed = true;
        return;
    }
    if (!resolve_normalize(u->path, n, norm, n + 1)) {
        check_report(r, CHECK_ERROR, doc, ref->offset, ref->url, u->path,
                     "%s \"%s\" is not a valid URL path (folio answers 400)", ref->what, ref->url);
        free(norm);
        return;
    }
    if (strncmp(norm, "/__folio/", 9) == 0) { /* folio's own (health, events, reload.js) */
        free(norm);
        return;
    }
    struct check_target t;
    check_follow(r, norm, &t);
    if (t.file != NULL) {
        t.file->referenced = true;
    }
    const struct check_file *near = t.problem && !strcmp(t.problem, "not found") ? check_near(r, norm) : NULL;
    if (near != NULL) {
        check_report(r, CHECK_ERROR, doc, ref->offset, ref->url, t.resolved,
                     "%s \"%s\" not found; %s differs only in case", ref->what, ref->url, near->name);
    } else if (t.problem != NULL) {
        check_report(r, CHECK_ERROR, doc, ref->offset, ref->url, t.resolved, "%s \"%s\" %s",
                     ref->what, ref->url, t.problem);
    } else {
        if (u->fragment != NULL && ref->link && t.file != NULL && t.file->type == CHECK_HTML) {
            check_anchor(r, doc, ref, t.file, u->fragment);
        }
        if (r->prefix != NULL) {
            check_prefix(r, doc, ref, b, norm);
        }
    }
    free(norm);
}

/* One reference of @doc, which resolves against @b. */
static void check_one(struct check_run *r, const struct check_file *doc, const struct check_ref *ref,
                      const struct check_base *b)
{
    r->references++;
    struct check_url u;
    if (!check_url_resolve(ref->url, b->url, &u)) {
        r->failed = true;
        return;
    }
    bool href = strstr(ref->what, "href") != NULL;
    if (u.kind == CHECK_URL_EXTERNAL) {
        check_report(r, CHECK_EXTERNAL, doc, ref->offset, ref->url, "", "%s", ref->url);
    } else if (u.kind == CHECK_URL_DOCUMENT && !href && strspn(ref->url, " \t\r\n\f") == strlen(ref->url)) {
        check_report(r, CHECK_ERROR, doc, ref->offset, ref->url, "", "%s is empty", ref->what);
    } else if (u.kind == CHECK_URL_DOCUMENT && u.fragment != NULL && ref->link) {
        check_anchor(r, doc, ref, b->page, u.fragment);
    } else if (u.kind == CHECK_URL_PATH) {
        check_path(r, doc, ref, b, &u);
    }
    check_url_free(&u);
}

/* Every reference of @doc against @b. */
static void check_doc_refs(struct check_run *r, const struct check_file *doc, const struct check_base *b)
{
    for (size_t i = 0; i < doc->doc.nrefs && !r->failed; i++) {
        check_one(r, doc, &doc->doc.refs[i], b);
    }
}

/* Folders between the root and the document at @url: rewrite.c's depth. */
static size_t check_depth(const char *url)
{
    size_t depth = 0;
    for (const char *p = url + 1; *p; p++) {
        depth += *p == '/';
    }
    return depth;
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

/* qsort order of anchors: by id, then in document order. */
static int check_anchor_cmp(const void *a, const void *b)
{
    const struct check_anchor *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Appends the ids of @from to @to's anchors. */
static void check_add_anchors(struct check_run *r, struct check_file *to, const struct check_file *from)
{
    size_t n = to->nanchors + from->doc.nids;
    struct check_anchor *grown = realloc(to->anchors, (n ? n : 1) * sizeof(*grown));
    if (grown == NULL) {
        r->failed = true;
        return;
    }
    to->anchors = grown;
    for (size_t i = 0; i < from->doc.nids; i++) {
        const struct check_id *id = &from->doc.ids[i];
        to->anchors[to->nanchors] = (struct check_anchor){id->id, from, id->offset, to->nanchors, id->is_name};
        to->nanchors++;
    }
}

/* The anchors of an HTML file (a page's include its fragments'), sorted. */
static void check_build_anchors(struct check_run *r, struct check_file *f)
{
    f->anchors_built = true;
    check_add_anchors(r, f, f);
    for (size_t i = 0; i < f->nfrags; i++) {
        check_add_anchors(r, f, f->frags[i]);
    }
    if (f->nanchors > 1) {
        qsort(f->anchors, f->nanchors, sizeof(*f->anchors), check_anchor_cmp);
    }
}

/* Reads @f and, for a page, the fragments it loads, if that was not done
 * yet, and builds its anchors: an anchor into a page no pass read. */
static void check_ensure_anchors(struct check_run *r, struct check_file *f)
{
    if (f->anchors_built || f->type != CHECK_HTML) {
        return;
    }
    if (f->status < 0) {
        check_read(r, f);
    }
    if (!f->fragment && f->text != NULL && f->nfrags == 0) {
        check_page_frags(r, f);
        for (size_t k = 0; k < f->nfrags && !r->failed; k++) {
            if (f->frags[k]->status < 0) {
                check_read(r, f->frags[k]);
            }
        }
    }
    check_build_anchors(r, f);
}

/* Duplicate ids among @f's anchors (a page and the fragments it loads). */
static void check_duplicates(struct check_run *r, const struct check_file *f)
{
    for (size_t i = 0; i < f->nanchors; i++) {
        const struct check_anchor *a = &f->anchors[i];
        if (a->is_name) {
            continue;
        }
        for (size_t j = i + 1; j < f->nanchors && strcmp(f->anchors[j].id, a->id) == 0; j++) {
            const struct check_anchor *d = &f->anchors[j];
            if (d->is_name) {
                continue;
            }
            struct html_cursor c = {0};
            html_cursor_seek(&c, a->file->text, a->offset);
            char first[PATH_MAX];
            snprintf(first, sizeof(first), "first at %s:%u:%u", a->file->name, c.line, c.column);
            check_report(r, CHECK_ERROR, d->file, d->offset, d->id, first, "duplicate id \"%s\"", d->id);
        }
        while (i + 1 < f->nanchors && strcmp(f->anchors[i + 1].id, a->id) == 0) {
            i++;
        }
    }
}

/* Files of the routes other than "/" that nothing references. */
static void check_unreferenced(struct check_run *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        const struct check_file *f = &r->files[i];
        if (f->referenced || f->loaded || f->route->prefix_len <= 1) {
            continue;
        }
        size_t n = strlen(f->url);
        if (n > 3 && strcmp(f->url + n - 3, ".gz") == 0) { /* a sidecar is served for its file */
            char plain[PATH_MAX];
            snprintf(plain, sizeof(plain), "%.*s", (int)(n - 3), f->url);
            const struct check_file *of = check_find(r, plain);
            if (of != NULL && (of->referenced || of->loaded)) {
                continue;
            }
        }
        check_report(r, CHECK_WARNING, f, 0, "", f->name, "nothing references this file");
    }
}

/* Every document's references, each against the URL it resolves from. */
static void check_all_refs(struct check_run *r)
{
    for (size_t i = 0; i < r->nfiles && !r->failed; i++) {
        struct check_file *f = &r->files[i];
        if (f->text == NULL) {
            continue;
        }
        if (f->type == CHECK_CSS || !f->fragment) {
            struct check_base b = {f->url, check_depth(f->url), f->type == CHECK_HTML ? f : NULL};
            if (!r->focus || f->focus) {
                check_doc_refs(r, f, &b);
            }
            for (size_t k = 0; k < f->nfrags; k++) { /* fragments resolve against their page */
                if (!r->focus || f->frags[k]->focus) {
                    check_doc_refs(r, f->frags[k], &b);
                }
            }
        } else if (!f->loaded && (!r->focus || f->focus)) { /* no page loads it: as if "/" did */
            struct check_base b = {"/", 0, NULL}; /* its page unknown: anchors unchecked */
            check_doc_refs(r, f, &b);
        }
    }
}

/* Report order: errors, warnings, external; by file, then place. */
static int check_pending_cmp(const void *a, const void *b)
{
    const struct check_pending *x = a, *y = b;
    if (x->severity != y->severity) {
        return x->severity < y->severity ? -1 : 1;
    }
    int c = strcmp(x->file->name, y->file->name);
    if (c != 0) {
        return c;
    }
    if (x->offset != y->offset) {
        return x->offset < y->offset ? -1 : 1;
    }
    return strcmp(x->message, y->message);
}

/* Sorts the problems, drops repeats (a fragment two pages load), gives
 * each its line and column, and hands the strings to @rep. */
static bool check_finish(struct check_run *r, struct check_report *rep)
{
    if (r->npending > 1) {
        qsort(r->pending, r->npending, sizeof(*r->pending), check_pending_cmp);
    }
    rep->problems = calloc(r->npending ? r->npending : 1, sizeof(*rep->problems));
    if (rep->problems == NULL) {
        return false;
    }
    struct html_cursor c = {0};
    const struct check_file *at = NULL;
    for (size_t i = 0; i < r->npending; i++) {
        struct check_pending *p = &r->pending[i];
        if ((i > 0 && check_pending_cmp(p, p - 1) == 0) || (r->focus && !p->file->focus)) {
            continue;
        }
        if (p->file != at) {
            c = (struct html_cursor){0};
            at = p->file;
        }
        html_cursor_seek(&c, p->file->text ? p->file->text : "", p->file->text ? p->offset : 0);
        struct check_problem *q = &rep->problems[rep->count++];
        *q = (struct check_problem){p->severity, strdup(p->file->name), strdup(p->file->url), c.line,
                                    c.column, p->message, p->reference, p->resolved};
        p->message = p->reference = p->resolved = NULL;
        rep->errors += p->severity == CHECK_ERROR;
        rep->warnings += p->severity == CHECK_WARNING;
        rep->externals += p->severity == CHECK_EXTERNAL;
        if (q->file == NULL || q->url == NULL) {
            return false;
        }
    }
    return true;
}

/* Frees what a run holds (the report keeps only what check_finish gave it). */
static void check_run_free(struct check_run *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        struct check_file *f = &r->files[i];
        free(f->url);
        free(f->name);
        free(f->text);
        free(f->frags);
        free(f->anchors);
        check_doc_free(&f->doc);
    }
    for (size_t i = 0; i < r->npending; i++) {
        free(r->pending[i].message);
        free(r->pending[i].reference);
        free(r->pending[i].resolved);
    }
    free(r->files);
    free(r->pending);
}

/* The passes of a run, in order; false when memory ran out. */
/* Which files to read: all, or (live, with a focus) the focused ones and
 * the pages their problems depend on; then the fragments those pages load. */
static void check_read_needed(struct check_run *r)
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
            check_page_frags(r, f);
            for (size_t k = 0; k < f->nfrags && !r->failed; k++) {
                if (f->frags[k]->status < 0) {
                    check_read(r, f->frags[k]);
                }
            }
        }
    }
}

/* With a focus (live checks): marks the files whose problems are wanted. */
static void check_mark_focus(struct check_run *r)
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

/* The passes of a run, in order; false when memory ran out. */
static bool check_passes(struct check_run *r)
{
    if (r->nfiles > 1) {
        qsort(r->files, r->nfiles, sizeof(*r->files), check_file_cmp);
    }
    check_mark_focus(r);
    check_read_needed(r);
    for (size_t i = 0; i < r->nfiles && !r->failed; i++) {
        if (r->files[i].type == CHECK_HTML && r->files[i].text) {
            check_build_anchors(r, &r->files[i]);
        }
    }
    for (size_t i = 0; i < r->nfiles && !r->failed; i++) {
        if (r->files[i].type == CHECK_HTML && r->files[i].text && !r->files[i].loaded) {
            check_duplicates(r, &r->files[i]);
        }
    }
    check_all_refs(r);
    if (r->o->unreferenced && !r->failed) {
        check_unreferenced(r);
    }
    return !r->failed;
}

struct check_report *check_run(const struct routes *routes, const struct check_options *o,
                               char *err, size_t err_size)
{
    struct check_run r = {.routes = routes, .o = o};
    r.prefix = o->base_path && o->base_path[0] ? o->base_path : NULL;
    struct check_report *rep = calloc(1, sizeof(*rep));
    bool ok = rep != NULL;
    snprintf(err, err_size, "out of memory");
    for (size_t i = 0; ok && i < routes->count; i++) {
        ok = check_walk(&r, &routes->items[i], "", err, err_size) && !r.failed;
    }
    ok = ok && check_passes(&r);
    if (ok) {
        rep->files = r.nfiles;
        rep->references = r.references;
        rep->root = strdup(routes->root);
        rep->base_path = strdup(r.prefix ? r.prefix : "");
        ok = rep->root && rep->base_path && check_finish(&r, rep);
    }
    check_run_free(&r);
    if (!ok) {
        check_report_free(rep);
        return NULL;
    }
    return rep;
}

void check_report_free(struct check_report *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->count; i++) {
        free(r->problems[i].file);
        free(r->problems[i].url);
        free(r->problems[i].message);
        free(r->problems[i].reference);
        free(r->problems[i].resolved);
    }
    free(r->problems);
    free(r->root);
    free(r->base_path);
    free(r);
}

void check_summary(const struct check_report *r, char *out, size_t size)
{
    snprintf(out, size,
             "folio check: %zu error%s, %zu warning%s in %zu files (%zu references, %zu external, "
             "not fetched); URLs built by scripts are not seen",
             r->errors, r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s", r->files,
             r->references, r->externals);
}

void check_print_text(const struct check_report *r, FILE *out)
{
    static const char *const label[] = {"error", "warning"};
    for (size_t i = 0; i < r->count; i++) {
        const struct check_problem *p = &r->problems[i];
        if (p->severity == CHECK_EXTERNAL) {
            continue;
        }
        fprintf(out, "%s:%u:%u: %s: %s", p->file, p->line, p->column, label[p->severity], p->message);
        fprintf(out, p->resolved[0] ? " (%s)\n" : "\n", p->resolved);
    }
    char summary[512];
    check_summary(r, summary, sizeof(summary));
    fprintf(out, "%s\n", summary);
}

void check_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fputc('"', out);
}

void check_print_problem_json(const struct check_problem *p, FILE *out)
{
    static const char *const label[] = {"error", "warning", "external"};
    fprintf(out, "{\"severity\":\"%s\",\"file\":", label[p->severity]);
    check_json_string(out, p->file);
    fprintf(out, ",\"line\":%u,\"column\":%u,\"message\":", p->line, p->column);
    check_json_string(out, p->message);
    fputs(",\"reference\":", out);
    check_json_string(out, p->reference);
    fputs(",\"resolved\":", out);
    check_json_string(out, p->resolved);
    fputc('}', out);
}

void check_print_json(const struct check_report *r, FILE *out)
{
    fputs("{\"root\":", out);
    check_json_string(out, r->root);
    fputs(",\"base_path\":", out);
    check_json_string(out, r->base_path);
    fprintf(out, ",\"files\":%zu,\"references\":%zu,\"errors\":%zu,\"warnings\":%zu,\"problems\":[",
            r->files, r->references, r->errors, r->warnings);
    bool first = true;
    for (size_t i = 0; i < r->count; i++) {
        if (r->problems[i].severity != CHECK_EXTERNAL) {
            fputs(first ? "" : ",", out);
            check_print_problem_json(&r->problems[i], out);
            first = false;
        }
    }
    fputs("],\"external\":[", out);
    first = true;
    for (size_t i = 0; i < r->count; i++) {
        const struct check_problem *p = &r->problems[i];
        if (p->severity == CHECK_EXTERNAL) {
            fprintf(out, "%s{\"file\":", first ? "" : ",");
            check_json_string(out, p->file);
            fprintf(out, ",\"line\":%u,\"column\":%u,\"url\":", p->line, p->column);
            check_json_string(out, p->reference);
            fputc('}', out);
            first = false;
        }
    }
    char summary[512];
    check_summary(r, summary, sizeof(summary));
    fputs("],\"not_seen\":[\"URLs built by scripts\",\"<base href>\"],\"summary\":", out);
    check_json_string(out, summary);
    fputs("}\n", out);
}

/* `folio check --help`. */
static void check_usage(FILE *out)
{
    fputs("usage: folio check [--root DIR] [--base-path /prefix] [--format text|json] [options]\n"
          "Finds every broken reference of the article: each src, href, srcset, poster, data,\n"
          "url() and @import of its HTML and CSS, each fragment element, each in-page anchor,\n"
          "resolved as a browser does and served as folio would serve it. External URLs are\n"
          "listed (--format json), never fetched. Reads the same config file and environment\n"
          "as the server. Exit status: 0 clean, 1 errors, 2 could not run.\n",
          out);
}

/* Takes --format out of @argv into *json; the rest goes to config_load. */
static int check_args(int argc, char **argv, char **rest, int *nrest, bool *json)
{
    *nrest = 0;
    rest[(*nrest)++] = "folio";
    for (int i = 1; i < argc; i++) {
        const char *format = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            check_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "folio check: --format needs a value (text or json)\n");
                return 2;
            }
            format = argv[++i];
        } else if (strncmp(argv[i], "--format=", 9) == 0) {
            format = argv[i] + 9;
        } else {
            rest[(*nrest)++] = argv[i];
            continue;
        }
        if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
            fprintf(stderr, "folio check: --format: '%s' is not text or json\n", format);
            return 2;
        }
        *json = strcmp(format, "json") == 0;
    }
    rest[*nrest] = NULL;
    return -1;
}

int check_main(int argc, char **argv, char **envp)
{
    char **rest = calloc((size_t)argc + 2, sizeof(*rest));
    int nrest = 0, status;
    bool json = false;
    if (rest == NULL || (status = check_args(argc, argv, rest, &nrest, &json)) >= 0) {
        free(rest);
        return rest == NULL ? 2 : status;
    }
    struct config config;
    struct config_error config_err;
    enum config_result loaded = config_load(&config, nrest, rest, envp, &config_err);
    free(rest);
    if (loaded == CONFIG_INVALID) {
        config_error_print(&config_err, stderr);
    }
    if (loaded != CONFIG_OK) {
        config_finish(&config);
        return loaded == CONFIG_EXIT ? 0 : 2;
    }
    char err[512];
    struct routes routes;
    if (!routes_open(&routes, &config, err, sizeof(err))) {
        fprintf(stderr, "folio check: %s\n", err);
        config_finish(&config);
        return 2;
    }
    resolve_init(routes.count ? routes.items[0].dir_fd : AT_FDCWD);
    struct check_options o = {.base_path = config.base_path, .unreferenced = true};
    struct check_report *rep = check_run(&routes, &o, err, sizeof(err));
    if (rep == NULL) {
        fprintf(stderr, "folio check: %s\n", err);
        status = 2;
    } else {
        (json ? check_print_json : check_print_text)(rep, stdout);
        status = rep->errors ? 1 : 0;
    }
    check_report_free(rep);
    routes_close(&routes);
    config_finish(&config);
    return fflush(stdout) == 0 || status != 0 ? status : 2;
}
