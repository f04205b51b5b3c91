/*
 * livereload_internal — the pure half of livereload: which event a changed
 * path asks for, and the events of one batch. Used by livereload.c and its
 * unit tests; not part of livereload.h's interface.
 */
#ifndef FOLIO_LIVERELOAD_INTERNAL_H
#define FOLIO_LIVERELOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "livereload.h"

struct route;

enum livereload_kind {
    LIVERELOAD_CSS,
    LIVERELOAD_FRAGMENT,
    LIVERELOAD_RELOAD,
    LIVERELOAD_PAGE,
    LIVERELOAD_IMAGE,
};

/* One planned event; `data` is malloc'd. */
struct livereload_event {
    enum livereload_kind kind;
    char *data;
};

/*
 * Pure: the kind of event a change to @url_path asks for. @fragments_prefix
 * is the fragments route's URL prefix when @url_path is in that route, else
 * NULL. A `.css` path (any case) is css, named by the whole path; a
 * `<prefix><name>.html` path is a fragment named <name> (which may hold
 * '/'); any other `.html`/`.htm` is a page, an image or audio/video file
 * (by extension, any case) an image, both named by the whole path; anything
 * else (scripts, data, folders) reloads. *name / *name_len point into
 * @url_path.
 */
enum livereload_kind livereload_classify(const char *url_path,
                                         const char *fragments_prefix,
                                         const char **name, size_t *name_len);

/*
 * Pure: the events for one batch, in batch order, duplicates removed; a
 * change's id indexes @routes.
 * Returns false when memory runs out. Free with livereload_events_free().
 */
bool livereload_plan(const struct route *routes, size_t nroutes,
                     const struct watch_batch *batch,
                     struct livereload_event **events, size_t *n);
void livereload_events_free(struct livereload_event *events, size_t n);

/* The event name sent for @kind: "css", "fragment", "page", "image" or
 * "reload". */
const char *livereload_kind_name(enum livereload_kind kind);

#endif
