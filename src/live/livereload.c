/* livereload — see livereload.h and livereload_internal.h. */
#include "livereload_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/escape.h"
#include "check_live.h"
#include "check_live_worker.h"
#include "site/rewrite.h"
#include "site/routes.h"
#include "sse.h"

struct livereload {
    const struct routes *table; /* borrowed: the server's routes */
    const struct route *routes; /* table's own list */
    size_t nroutes;
    struct sse_hub *hub;
    void (*invalidate)(void *ctx, const char *abs_path);
    void (*invalidate_all)(void *ctx);
    void *ctx;
    const char **paths;         /* each route's watched path, borrowed from it */
    struct watch *watch;
    struct check_live_worker *check; /* the live check's thread; NULL: on the watcher's */
};

/* How long a save's reload events wait for its own live check (only when no
 * earlier one is being checked): long enough for a page's check, far
 * shorter than one of thousands of anchors (bench/README.md, folio check). */
#define LIVERELOAD_CHECK_WAIT_MS 20

static bool livereload_ends_with(const char *s, size_t n, const char *suffix, bool ci)
{
    size_t k = strlen(suffix);
    if (n < k) {
        return false;
    }
    return ci ? strncasecmp(s + n - k, suffix, k) == 0 : memcmp(s + n - k, suffix, k) == 0;
}

enum livereload_kind livereload_classify(const char *url_path,
                                         const char *fragments_prefix,
                                         const char **name, size_t *name_len)
{
    size_t n = strlen(url_path);
    *name = url_path;
    *name_len = n;
    if (fragments_prefix != NULL) {
        size_t p = strlen(fragments_prefix);
        /* Exactly `.html`: the page's loader asks for `<name>.html`, so a
         * `.HTML` file is not a fragment it would ever fetch. */
        if (n > p + 5 && strncmp(url_path, fragments_prefix, p) == 0 &&
            livereload_ends_with(url_path, n, ".html", false)) {
            *name = url_path + p;
            *name_len = n - p - 5;
            return LIVERELOAD_FRAGMENT;
        }
    }
    const char *slash = strrchr(url_path, '/');
    const char *dot = strrchr(url_path, '.');
    if (dot == NULL || (slash != NULL && dot < slash + 2)) {
        return LIVERELOAD_RELOAD; /* no extension, a dotfile, a folder */
    }
    if (strcasecmp(dot, ".css") == 0) {
        return LIVERELOAD_CSS;
    }
    if (strcasecmp(dot, ".html") == 0 || strcasecmp(dot, ".htm") == 0) {
        return LIVERELOAD_PAGE;
    }
    /* What <img>, <picture>, SVG <image>, CSS url(), <video>/<audio> and
     * posters load: the client swaps these in place. */
    static const char *const media[] = {
        ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg", ".ico",
        ".bmp", ".apng", ".jxl", ".mp4", ".webm", ".ogv", ".mov", ".m4v",
        ".mp3", ".ogg", ".oga", ".opus", ".wav", ".flac", ".m4a",
    };
    for (size_t i = 0; i < sizeof media / sizeof media[0]; i++) {
        if (strcasecmp(dot, media[i]) == 0) {
            return LIVERELOAD_IMAGE;
        }
    }
    return LIVERELOAD_RELOAD;
}

const char *livereload_kind_name(enum livereload_kind kind)
{
    switch (kind) {
    case LIVERELOAD_CSS:
        return "css";
    case LIVERELOAD_FRAGMENT:
        return "fragment";
    case LIVERELOAD_PAGE:
        return "page";
    case LIVERELOAD_IMAGE:
        return "image";
    case LIVERELOAD_RELOAD:
        break;
    }
    return "reload";
}

void livereload_events_free(struct livereload_event *events, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(events[i].data);
    }
    free(events);
}

/* "/prefix/" + "rel" -> "/prefix/rel". */
static char *livereload_url(const char *prefix, const char *rel)
{
    size_t a = strlen(prefix), b = strlen(rel);
    char *s = malloc(a + b + 1);
    if (s != NULL) {
        memcpy(s, prefix, a);
        memcpy(s + a, rel, b + 1);
    }
    return s;
}

bool livereload_plan(const struct route *routes, size_t nroutes,
                     const struct watch_batch *batch,
                     struct livereload_event **events, size_t *n)
{
    *events = NULL;
    *n = 0;
    struct livereload_event *ev = calloc(batch->n + 1, sizeof *ev);
    if (ev == NULL) {
        return false;
    }
    size_t count = 0;
    char *reload = NULL;
    if (batch->overflow) {
        reload = strdup("*");
        if (reload == NULL) {
            goto oom;
        }
    }
    for (size_t i = 0; i < batch->n && reload == NULL; i++) {
        const struct watch_change *c = &batch->changes[i];
        if (c->id < 0 || (size_t)c->id >= nroutes) {
            continue;
        }
        const struct route *r = &routes[c->id];
        char *url = livereload_url(r->prefix, c->relpath);
        if (url == NULL) {
            goto oom;
        }
        const char *name;
        size_t len;
        enum livereload_kind k =
            livereload_classify(url, r->is_fragments ? r->prefix : NULL, &name, &len);
        if (k == LIVERELOAD_RELOAD) {
            reload = url; /* one reload says it all */
            break;
        }
        char *data = strndup(name, len);
        free(url);
        if (data == NULL) {
            goto oom;
        }
        bool dup = false;
        for (size_t j = 0; j < count; j++) {
            if (ev[j].kind == k && strcmp(ev[j].data, data) == 0) {
                dup = true;
                break;
            }
        }
        if (dup) {
            free(data);
            continue;
        }
        ev[count++] = (struct livereload_event){.kind = k, .data = data};
    }
    if (reload != NULL) {
        for (size_t j = 0; j < count; j++) {
            free(ev[j].data);
        }
        ev[0] = (struct livereload_event){.kind = LIVERELOAD_RELOAD, .data = reload};
        count = 1;
    }
    *events = ev;
    *n = count;
    return true;

oom:
    free(reload);
    livereload_events_free(ev, count);
    return false;
}

size_t livereload_script_tag(const char *target, char *out, size_t size)
{
    size_t depth = rewrite_depth(target);
    livereload_client_tag(depth, out, size);
    return depth;
}

/* Writes into @out the tag that loads __folio/<file> from a page depth
 * folders deep, its attributes after the src. */
static void livereload_tag(size_t depth, const char *file, const char *attrs, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "<script src=\"");
    for (size_t i = 0; i < depth && n < size; i++) {
        n += (size_t)snprintf(out + n, size - n, "../");
    }
    if (n < size) {
        snprintf(out + n, size - n, "__folio/%s\"%s></script>", file, attrs);
    }
}

void livereload_client_tag(size_t depth, char *out, size_t size)
{
    livereload_tag(depth, "reload.js", " defer", out, size);
}

void livereload_early_tag(size_t depth, char *out, size_t size)
{
    char file[64]; /* the version is 8 hex digits (embed.py) */
    snprintf(file, sizeof(file), "early.js?v=%s", early_js_version);
    livereload_tag(depth, file, " data-folio", out, size);
}

/* Watcher thread: invalidate first, then tell the browsers. */
static void livereload_on_batch(void *ctx, const struct watch_batch *b)
{
    struct livereload *lr = ctx;
    if (b->overflow) {
        if (lr->invalidate_all != NULL) {
            lr->invalidate_all(lr->ctx);
        }
    } else if (lr->invalidate != NULL) {
        for (size_t i = 0; i < b->n; i++) {
            const struct watch_change *c = &b->changes[i];
            if (c->id < 0 || (size_t)c->id >= lr->nroutes) {
                continue;
            }
            /* The key the entry module caches under (entry.h), built by it. */
            char abs[2 * PATH_MAX];
            if (!routes_path(&lr->routes[c->id], c->relpath, abs, sizeof(abs))) {
                /* Cannot name it: forget everything rather than serve stale. */
                if (lr->invalidate_all != NULL) {
                    lr->invalidate_all(lr->ctx);
                }
                break;
            }
            lr->invalidate(lr->ctx, abs);
        }
    }
    struct livereload_event *ev;
    size_t n;
    if (!livereload_plan(lr->routes, lr->nroutes, b, &ev, &n)) {
        sse_hub_broadcast(lr->hub, "reload", "*");
        return;
    }
    /* `folio check` live (check_live.h): on its own thread, first when it is
     * quick (a page that reloads then has it), never holding the reloads. */
    if (lr->check != NULL) {
        check_live_worker_submit(lr->check, b, LIVERELOAD_CHECK_WAIT_MS);
    } else {
        check_live_batch(lr->table, b, lr->hub, stderr);
    }
    for (size_t i = 0; i < n; i++) {
        sse_hub_broadcast(lr->hub, livereload_kind_name(ev[i].kind), ev[i].data);
    }
    livereload_events_free(ev, n);
}

/* The path a route's folder is watched by: the one it is configured as,
 * like routes_check re-opens it, so a symlinked root is followed to its new
 * target. */
static const char *livereload_watched_path(const struct route *r)
{
    return r->configured ? r->configured : r->dir;
}

/* Watcher thread: a route's folder was swapped. Serving re-opens it now
 * (routes_check), so serving and watching agree; one line says which
 * folder is watched, like routes_check's, and the browsers get one reload
 * (the swap's batch is an overflow). */
static void livereload_on_swap(void *ctx, int id, bool there)
{
    struct livereload *lr = ctx;
    if (id < 0 || (size_t)id >= lr->nroutes) {
        return;
    }
    const struct route *route = &lr->routes[id];
    if (route->configured != NULL) {
        routes_check(route, true); /* logs the re-open (or that it is gone) */
    }
    if (there) {
        /* A symlink's target is named: which build is live now. */
        const char *path = livereload_watched_path(route);
        char *real = realpath(path, NULL);
        bool link = real != NULL && strcmp(real, path) != 0;
        char prefix[256], shown[ESCAPE_PATH_SIZE], target[ESCAPE_PATH_SIZE];
        escape_text(route->prefix != NULL ? route->prefix : "", prefix, sizeof(prefix));
        escape_text(path, shown, sizeof(shown));
        escape_text(link ? real : "", target, sizeof(target));
        fprintf(stderr, "folio: live reload: route %s: watching the folder now at %s%s%s\n", prefix, shown,
                link ? " -> " : "", target);
        free(real);
    }
}

struct livereload *livereload_create(const struct routes *routes,
                                     const struct watch_options *opt, struct sse_hub *hub,
                                     void (*invalidate)(void *ctx, const char *abs_path),
                                     void (*invalidate_all)(void *ctx),
                                     void *ctx)
{
    struct livereload *lr = calloc(1, sizeof *lr);
    if (lr == NULL) {
        return NULL;
    }
    *lr = (struct livereload){
        .table = routes,
        .routes = routes->items,
        .nroutes = routes->count,
        .hub = hub,
        .invalidate = invalidate,
        .invalidate_all = invalidate_all,
        .ctx = ctx,
    };
    lr->check = check_live_worker_start(routes, hub, stderr);
    lr->paths = calloc(routes->count ? routes->count : 1, sizeof *lr->paths);
    for (size_t i = 0; lr->paths != NULL && i < routes->count; i++) {
        lr->paths[i] = livereload_watched_path(&routes->items[i]);
    }
    lr->watch = lr->paths == NULL ? NULL
                                  : watch_create(lr->paths, routes->count, opt,
                                                 livereload_on_batch, livereload_on_swap, lr);
    if (lr->watch == NULL) {
        int saved = lr->paths == NULL ? ENOMEM : errno;
        check_live_worker_stop(lr->check);
        free(lr->paths);
        free(lr);
        errno = saved;
        return NULL;
    }
    return lr;
}

size_t livereload_watch_count(const struct livereload *lr)
{
    return lr ? watch_count(lr->watch) : 0;
}

void livereload_destroy(struct livereload *lr)
{
    if (lr == NULL) {
        return;
    }
    watch_destroy(lr->watch); /* no batch comes after this */
    check_live_worker_stop(lr->check);
    free(lr->paths);
    free(lr);
}
