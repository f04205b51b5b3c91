#include "ready.h"

#include <limits.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/body.h"
#include "base/url_prefix.h"
#include "cache.h"
#include "entry.h"
#include "precondition.h"
#include "response.h"
#include "rewrite.h"
#include "routes.h"

#define READY_VARIANT_MAX (URL_PREFIX_MAX + 64)
/* What two MHD responses and their headers take: measured as RSS over 3,000
 * small files, 2.8 KB a file with a ready entry against 0.3 KB without. */
#define READY_COST 2560

/* One ready entry: a cache body's attachment (body.h). */
struct ready {
    struct MHD_Response *full, *not_modified; /* 200 and 304, shared, never changed */
    uint64_t size;
    time_t mtime;
    char etag[80];
    atomic_uint *fds; /* the pool's count of descriptors held, when this holds one */
};

/* The last reference to a ready entry went: its responses and descriptor go
 * once the connections still sending them are done. */
static void ready_free(void *attached)
{
    struct ready *r = attached;
    MHD_destroy_response(r->full);
    if (r->not_modified) {
        MHD_destroy_response(r->not_modified);
    }
    if (r->fds) {
        atomic_fetch_sub(r->fds, 1);
    }
    free(r);
}

/* A new reference to the ready entry (route, rel, variant) when the file is
 * still the version it was made from; NULL otherwise. */
static struct body *ready_find(struct ready_pool *p, const struct route *route, const char *rel,
                               const char *variant)
{
    struct stat st;
    char key[2 * PATH_MAX];
    if (fstatat(route->dir_fd, rel, &st, 0) != 0 || !S_ISREG(st.st_mode) ||
        !entry_key(route->dir, rel, key, sizeof(key))) {
        return NULL;
    }
    struct file_id id;
    file_id_from_stat(&id, &st);
    return cache_get(p->cache, key, variant, &id);
}

/* Fills out from ready entry b (whose reference it takes) for status. */
static void answer(struct body *b, unsigned status, struct ready_answer *out)
{
    const struct ready *r = b->attached;
    *out = (struct ready_answer){
        .holder = b,
        .resp = status == 304 ? r->not_modified : r->full,
        .status = status,
        .size = r->size,
    };
}

/* See ready.h. */
bool ready_lookup(struct ready_pool *p, const struct entry_server *entries,
                  const struct route *route, const char *rel, const struct entry_facts *f,
                  const struct precondition_headers *pre, struct ready_answer *out)
{
    char variant[READY_VARIANT_MAX];
    struct body *b = !f->has_range && entry_response_variant(entries, f, false, variant, sizeof(variant))
        ? ready_find(p, route, rel, variant) : NULL;
    if (!b) {
        return false;
    }
    const struct ready *r = b->attached;
    enum precondition_result pc = precondition_evaluate(pre, r->etag, r->mtime);
    if (pc == PRECONDITION_FAILED) {
        body_unref(b);
        return false;
    }
    answer(b, pc == PRECONDITION_NOT_MODIFIED ? 304 : 200, out);
    return true;
}

/* A ready entry made from rep, whose bytes it takes; NULL when the
 * descriptors ready entries may hold are all taken (rep untouched) or memory
 * ran out (rep's bytes may be gone: *out_of_memory). */
static struct body *ready_create(struct ready_pool *p, struct entry_rep *rep, bool *out_of_memory)
{
    bool holds_fd = !rep->body && rep->size > 0;
    *out_of_memory = false;
    if (holds_fd && atomic_fetch_add(&p->fds, 1) >= READY_FDS_MAX) {
        atomic_fetch_sub(&p->fds, 1);
        return NULL;
    }
    struct body *b = body_create(0);
    struct ready *r = b ? calloc(1, sizeof(*r)) : NULL;
    if (r) {
        *r = (struct ready){.size = rep->size, .mtime = rep->mtime, .fds = holds_fd ? &p->fds : NULL};
        memcpy(r->etag, rep->etag, sizeof(r->etag));
        b->weight = READY_COST + (rep->body ? rep->size : 0);
        r->not_modified = response_not_modified(rep->size);
        r->full = r->not_modified ? response_from_rep(rep, 0, rep->size) : NULL;
    }
    if (!r || !r->full) {
        if (r && r->not_modified) {
            MHD_destroy_response(r->not_modified);
        }
        free(r);
        body_unref(b);
        if (holds_fd) {
            atomic_fetch_sub(&p->fds, 1);
        }
        *out_of_memory = true;
        return NULL;
    }
    response_add_common(r->full);
    response_add_common(r->not_modified);
    b->attached = r;
    b->on_free = ready_free;
    return b;
}

/* Keeps ready entry b for (route, rel, variant), made from source. */
static void ready_keep(struct ready_pool *p, const struct route *route, const char *rel,
                       const char *variant, const struct file_id *source, struct body *b,
                       uint64_t generation)
{
    char key[2 * PATH_MAX];
    if (entry_key(route->dir, rel, key, sizeof(key))) {
        cache_put(p->cache, key, variant, source, b, generation);
    }
}

/* See ready.h. */
bool ready_make(struct ready_pool *p, const struct config *config,
                const struct entry_server *entries, const struct route *route, const char *rel,
                const struct entry_facts *f, struct entry_rep *rep, unsigned status,
                struct ready_answer *out, bool *out_of_memory)
{
    char variant[READY_VARIANT_MAX];
    *out_of_memory = false;
    if (!entry_response_variant(entries, f, false, variant, sizeof(variant))) {
        return false;
    }
    uint64_t generation = cache_generation(p->cache);
    struct body *b = ready_create(p, rep, out_of_memory);
    if (!b) {
        return false;
    }
    struct ready *r = b->attached;
    response_add_rep_headers(r->full, config, rep, 200, 0, 0);
    response_add_rep_headers(r->not_modified, config, rep, 304, 0, 0);
    ready_keep(p, route, rel, variant, &rep->source, b, generation);
    answer(b, status, out);
    return true;
}

/* See ready.h. */
bool ready_not_found(struct ready_pool *p, const struct entry_server *entries,
                     const struct route *root, const struct entry_facts *f,
                     struct ready_answer *out, bool *out_of_memory)
{
    char variant[READY_VARIANT_MAX];
    *out_of_memory = false;
    if (!root || !entry_response_variant(entries, f, true, variant, sizeof(variant))) {
        return false;
    }
    struct body *b = ready_find(p, root, "404.html", variant);
    struct entry_rep page = {.fd = -1}; /* released even when entry_not_found finds none */
    if (!b) {
        uint64_t generation = cache_generation(p->cache);
        if (!entry_not_found(entries, root, f, &page) || !(b = ready_create(p, &page, out_of_memory))) {
            entry_rep_release(&page);
            return false;
        }
        struct ready *r = b->attached;
        response_add_error_headers(r->full, 404);
        ready_keep(p, root, "404.html", variant, &page.source, b, generation);
        entry_rep_release(&page);
    }
    answer(b, 404, out);
    return true;
}

/* See ready.h. */
void ready_answer_release(struct ready_answer *a)
{
    body_unref(a->holder);
    a->holder = NULL;
    a->resp = NULL;
}
