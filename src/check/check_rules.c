/* check_rules — see check_rules.h. */
#include "check_rules.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/array.h"
#include "base/html.h"
#include "check_near.h"
#include "check_walk.h"
#include "site/resolve.h"
#include "site/rewrite.h"
#include "site/routes.h"

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
static void check_note(struct check_run *r, enum check_severity sev, const struct check_file *file,
                         size_t offset, const char *ref, const char *resolved, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void check_note(struct check_run *r, enum check_severity sev, const struct check_file *file,
                         size_t offset, const char *ref, const char *resolved, const char *fmt, ...)
{
    struct check_pending *grown = array_grow(r->pending, &r->pending_cap, r->npending + 1, sizeof(*grown), 32);
    if (grown == NULL) {
        r->failed = true;
        return;
    }
    r->pending = grown;
    va_list ap;
    va_start(ap, fmt);
    struct check_pending p = {sev, CHECK_CODE_NONE, file, offset, check_vformat(fmt, ap), strdup(ref ? ref : ""),
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

/* True when the HTML file @f runs a script: itself or a fragment it loads
 * (a fragment's scripts run once injected). */
static bool check_runs_scripts(const struct check_file *f)
{
    bool scripts = f->doc.scripts;
    for (size_t i = 0; i < f->nfrags && !scripts; i++) {
        scripts = f->frags[i]->doc.scripts;
    }
    return scripts;
}

/* The id of @f nearest to @id, a typo away (check_near.h), for a "did you
 * mean"; NULL when none is (or memory ran out). The index is built at the
 * first anchor that misses in @f. */
static const char *check_near_anchor(struct check_run *r, struct check_file *f, const char *id)
{
    if (f->near == NULL && f->nanchors > 0) {
        const char **ids = malloc(f->nanchors * sizeof(*ids));
        for (size_t i = 0; ids != NULL && i < f->nanchors; i++) {
            ids[i] = f->anchors[i].id;
        }
        f->near = ids != NULL ? check_near_index(ids, f->nanchors) : NULL;
        free(ids);
        r->failed |= f->near == NULL;
    }
    return check_near_find(f->near, id);
}

/* An in-page anchor: "#" and "#top" always scroll (HTML 7.4.6.4). An id no
 * source holds is an error in a page without scripts; in one that runs
 * scripts it is unverified (check.h), an error only under --strict. */
static void check_anchor(struct check_run *r, const struct check_file *doc, const struct check_ref *ref,
                         struct check_file *target, const char *id)
{
    if (target != NULL) {
        check_ensure_anchors(r, target); /* a live check reads another page only now */
    }
    if (target == NULL || id[0] == '\0' || strcasecmp(id, "top") == 0 || check_has_anchor(target, id)) {
        return;
    }
    char resolved[PATH_MAX], hint[96] = "";
    snprintf(resolved, sizeof(resolved), "%s#%s", target->name, id);
    const char *near = check_near_anchor(r, target, id);
    if (near) {
        snprintf(hint, sizeof(hint), "; did you mean \"%s\"?", near);
    }
    if (!check_runs_scripts(target)) {
        check_note(r, CHECK_ERROR, doc, ref->offset, ref->url, resolved,
                   "%s \"%s\" points at no element with id \"%s\"%s", ref->what, ref->url, id, hint);
        return;
    }
    size_t before = r->npending;
    check_note(r, r->o->strict ? CHECK_ERROR : CHECK_WARNING, doc, ref->offset, ref->url, resolved,
               "%s \"%s\" points at no element with id \"%s\" in the source; may be made by a script%s",
               ref->what, ref->url, id, hint);
    if (r->npending > before) {
        r->pending[before].code = CHECK_CODE_UNVERIFIED_ANCHOR;
    }
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
                check_note(r, CHECK_ERROR, doc, ref->offset, ref->url, norm,
                             "%s \"%s\" leaves --base-path %s, and folio does not rewrite it", ref->what,
                             ref->url, r->prefix);
            } else if (strcmp(norm[plen] ? norm + plen : "/", at_root) != 0) {
                check_note(r, CHECK_ERROR, doc, ref->offset, ref->url, norm,
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
        check_note(r, CHECK_ERROR, doc, ref->offset, ref->url, u->path,
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
        check_note(r, CHECK_ERROR, doc, ref->offset, ref->url, t.resolved,
                     "%s \"%s\" not found; %s differs only in case", ref->what, ref->url, near->name);
    } else if (t.problem != NULL) {
        check_note(r, CHECK_ERROR, doc, ref->offset, ref->url, t.resolved, "%s \"%s\" %s",
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
        check_note(r, CHECK_EXTERNAL, doc, ref->offset, ref->url, "", "%s", ref->url);
    } else if (u.kind == CHECK_URL_DOCUMENT && !href && strspn(ref->url, " \t\r\n\f") == strlen(ref->url)) {
        check_note(r, CHECK_ERROR, doc, ref->offset, ref->url, "", "%s is empty", ref->what);
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
void check_build_anchors(struct check_run *r, struct check_file *f)
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
        check_read_frags(r, f);
    }
    check_build_anchors(r, f);
}

/* Duplicate ids among @f's anchors (a page and the fragments it loads). */
void check_duplicates(struct check_run *r, const struct check_file *f)
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
            check_note(r, CHECK_ERROR, d->file, d->offset, d->id, first, "duplicate id \"%s\"", d->id);
        }
        while (i + 1 < f->nanchors && strcmp(f->anchors[i + 1].id, a->id) == 0) {
            i++;
        }
    }
}

/* Files of the routes other than "/" that nothing references. */
void check_unreferenced(struct check_run *r)
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
        check_note(r, CHECK_WARNING, f, 0, "", f->name, "nothing references this file");
    }
}

/* Pages and stylesheets folio cannot read: it answers 403 for them, and
 * nothing they reference is checked (a reference to one says so too). */
void check_unreadable(struct check_run *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        const struct check_file *f = &r->files[i];
        if (f->type != CHECK_OTHER && f->status == RESOLVED_FORBIDDEN) {
            check_note(r, CHECK_ERROR, f, 0, "", f->name,
                       "cannot be read (folio answers 403), so its references are not checked");
        }
    }
}

/* Every document's references, each against the URL it resolves from. */
void check_all_refs(struct check_run *r)
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
