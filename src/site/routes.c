#include "routes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/escape.h"

static int longest_prefix_first(const void *a, const void *b)
{
    const struct route *ra = a, *rb = b;
    return ra->prefix_len < rb->prefix_len ? 1 : ra->prefix_len > rb->prefix_len ? -1 : 0;
}

bool routes_open(struct routes *r, const struct config *c, char *err, size_t err_size)
{
    *r = (struct routes){0};
    r->root = realpath(c->root, NULL);
    if (!r->root) {
        snprintf(err, err_size, "root %s: %s", c->root, strerror(errno));
        return false;
    }
    r->items = calloc(c->route_count ? c->route_count : 1, sizeof(*r->items));
    if (!r->items) {
        snprintf(err, err_size, "out of memory");
        routes_close(r);
        return false;
    }
    for (size_t i = 0; i < c->route_count; i++) {
        const struct config_route *cr = &c->routes[i];
        struct route *route = &r->items[r->count];
        char *joined = NULL;
        if (cr->dir[0] == '/') {
            joined = strdup(cr->dir);
        } else if (asprintf(&joined, "%s/%s", r->root, cr->dir) < 0) {
            joined = NULL;
        }
        route->dir = joined ? realpath(joined, NULL) : NULL;
        int saved = errno;
        if (!route->dir) {
            snprintf(err, err_size, "route %s: folder %s: %s", cr->prefix, joined ? joined : cr->dir,
                     strerror(saved));
            free(joined);
            routes_close(r);
            return false;
        }
        route->configured = joined;
        route->dir_fd = open(route->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (route->dir_fd < 0) {
            snprintf(err, err_size, "route %s: folder %s: %s", cr->prefix, route->dir, strerror(errno));
            free(route->dir);
            free(route->configured);
            routes_close(r);
            return false;
        }
        route->prefix = strdup(cr->prefix);
        route->prefix_len = strlen(cr->prefix);
        route->is_fragments = cr->fragments;
        route->watch = calloc(1, sizeof(*route->watch));
        if (route->watch) {
            pthread_mutex_init(&route->watch->lock, NULL);
        }
        r->count++;
        if (!route->prefix || !route->watch) {
            snprintf(err, err_size, "out of memory");
            routes_close(r);
            return false;
        }
    }
    qsort(r->items, r->count, sizeof(*r->items), longest_prefix_first); /* the watches stay put */
    return true;
}

const struct route *routes_match(const struct routes *r, const char *path, bool *is_bare_prefix)
{
    size_t path_len = strlen(path);
    *is_bare_prefix = false;
    for (size_t i = 0; i < r->count; i++) {
        const struct route *route = &r->items[i];
        if (strncmp(path, route->prefix, route->prefix_len) == 0) {
            return route;
        }
        if (path_len + 1 == route->prefix_len && strncmp(path, route->prefix, path_len) == 0) {
            *is_bare_prefix = true;
            return route;
        }
    }
    return NULL;
}

/* See routes.h. A folder "/" adds no second slash. */
bool routes_path(const struct route *route, const char *rel, char *out, size_t size)
{
    size_t dir_len = strlen(route->dir), rel_len = strlen(rel);
    while (dir_len > 0 && route->dir[dir_len - 1] == '/') {
        dir_len--;
    }
    if (dir_len + 1 + rel_len >= size) { /* on every request: no snprintf */
        return false;
    }
    memcpy(out, route->dir, dir_len);
    out[dir_len] = '/';
    memcpy(out + dir_len + 1, rel, rel_len + 1);
    return true;
}

void routes_close(struct routes *r)
{
    for (size_t i = 0; i < r->count; i++) {
        free(r->items[i].prefix);
        free(r->items[i].dir);
        free(r->items[i].configured);
        if (r->items[i].dir_fd >= 0) {
            close(r->items[i].dir_fd);
        }
        if (r->items[i].watch) {
            pthread_mutex_destroy(&r->items[i].watch->lock);
            free(r->items[i].watch);
        }
    }
    free(r->items);
    free(r->root);
    *r = (struct routes){0};
}

#define CHECK_INTERVAL_MS 1000

/* The state route is in, without looking. */
static enum route_state held_state(const struct route *r)
{
    return atomic_load(&r->watch->gone) ? ROUTE_GONE : ROUTE_SAME;
}

/* Says on stderr what became of route r's folder, its names escaped
 * (base/escape.h: they come from the article's config). */
static void say_folder(const struct route *r, const char *what)
{
    char prefix[ESCAPE_PATH_SIZE], folder[ESCAPE_PATH_SIZE];
    escape_text(r->prefix, prefix, sizeof(prefix));
    escape_text(r->configured, folder, sizeof(folder));
    fprintf(stderr, "folio: route %s: folder %s %s\n", prefix, folder, what);
}

/* Compares the folder at r->configured with the one r->dir_fd holds and
 * re-opens it in place when they differ; a re-open (or a return) raises the
 * generation once dir_fd names the folder. Under r->watch->lock: one look
 * at a time. */
static enum route_state look_locked(const struct route *r)
{
    struct route_watch *w = r->watch;
    atomic_fetch_add_explicit(&w->looks, 1, memory_order_relaxed);
    enum route_state state = ROUTE_SAME;
    struct stat there, held;
    if (stat(r->configured, &there) != 0 || !S_ISDIR(there.st_mode)) {
        if (!atomic_exchange(&w->gone, true)) {
            say_folder(r, "is gone; 404 until it is back");
        }
        state = ROUTE_GONE;
    } else if (fstat(r->dir_fd, &held) != 0 || held.st_dev != there.st_dev ||
               held.st_ino != there.st_ino) {
        int fd = open(r->configured, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0 && dup3(fd, r->dir_fd, O_CLOEXEC) >= 0) {
            atomic_store(&w->gone, false);
            say_folder(r, "was replaced; re-opened");
            state = ROUTE_REOPENED;
        } else {
            state = held_state(r);
        }
        if (fd >= 0) {
            close(fd);
        }
    } else if (atomic_exchange(&w->gone, false)) {
        say_folder(r, "is back");
        state = ROUTE_REOPENED;
    }
    if (state == ROUTE_REOPENED) {
        atomic_fetch_add_explicit(&w->generation, 1, memory_order_release);
    }
    return state;
}

/* One look at r, after any under way (wait), or only if none is (!wait:
 * then the state as it stands). */
static enum route_state look_again(const struct route *r, bool wait)
{
    if (wait) {
        pthread_mutex_lock(&r->watch->lock);
    } else if (pthread_mutex_trylock(&r->watch->lock) != 0) {
        return held_state(r); /* another thread is looking: its answer will do */
    }
    enum route_state state = look_locked(r);
    pthread_mutex_unlock(&r->watch->lock);
    return state;
}

/* Whether this thread takes the look that stamp, last set at least
 * interval_ms ago, allows now: the one whose compare-and-swap moves it. */
static bool my_turn(_Atomic int64_t *stamp, int64_t interval_ms)
{
    int64_t now = clock_now_ms();
    int64_t last = atomic_load_explicit(stamp, memory_order_relaxed);
    return now - last >= interval_ms && atomic_compare_exchange_strong(stamp, &last, now);
}

enum route_state routes_check(const struct route *route, bool missed)
{
    if (missed) {
        atomic_store(&route->watch->checked_ms, clock_now_ms());
        return look_again(route, true);
    }
    return my_turn(&route->watch->checked_ms, CHECK_INTERVAL_MS) ? look_again(route, false) : held_state(route);
}

/* See routes.h: the generation first (a swap already seen costs no look),
 * then a look when it is this miss's turn. */
bool routes_missed(const struct route *route, uint64_t seen)
{
    if (routes_generation(route) == seen && my_turn(&route->watch->missed_ms, ROUTES_MISS_INTERVAL_MS)) {
        look_again(route, false);
    }
    return routes_generation(route) != seen && !atomic_load(&route->watch->gone);
}

/* See routes.h: a route's, or folio's own. */
bool routes_owns(void *r, const char *path, size_t len)
{
    char copy[PATH_MAX];
    if (len >= sizeof(copy)) {
        return false;
    }
    memcpy(copy, path, len);
    copy[len] = '\0';
    copy[strcspn(copy, "?#")] = '\0';
    bool bare;
    return routes_match(r, copy, &bare) != NULL ||
           strncmp(copy, ROUTES_RESERVED_PREFIX, strlen(ROUTES_RESERVED_PREFIX)) == 0;
}
