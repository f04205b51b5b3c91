#include "routes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

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
        free(joined);
        route->dir_fd = open(route->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (route->dir_fd < 0) {
            snprintf(err, err_size, "route %s: folder %s: %s", cr->prefix, route->dir, strerror(errno));
            free(route->dir);
            routes_close(r);
            return false;
        }
        route->prefix = strdup(cr->prefix);
        route->prefix_len = strlen(cr->prefix);
        route->is_fragments = cr->fragments;
        r->count++;
        if (!route->prefix) {
            snprintf(err, err_size, "out of memory");
            routes_close(r);
            return false;
        }
    }
    qsort(r->items, r->count, sizeof(*r->items), longest_prefix_first);
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

void routes_close(struct routes *r)
{
    for (size_t i = 0; i < r->count; i++) {
        free(r->items[i].prefix);
        free(r->items[i].dir);
        if (r->items[i].dir_fd >= 0) {
            close(r->items[i].dir_fd);
        }
    }
    free(r->items);
    free(r->root);
    *r = (struct routes){0};
}
