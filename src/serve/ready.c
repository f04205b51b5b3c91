#include "ready.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/body.h"
#include "base/clock.h"
#include "base/ticker.h"
#include "base/config.h"
#include "base/url_prefix.h"
#include "cache.h"
#include "entry.h"
#include "precondition.h"
#include "response.h"
#include "site/rewrite.h"
#include "site/routes.h"
#include "savings.h"

#define READY_VARIANT_MAX (URL_PREFIX_MAX + 64)
/* What two MHD responses and their headers take, as RSS over many small
 * files (bench/README.md, Measurements behind the code). */
#define READY_COST 2560

/* A response sent by sendfile holds its mutex for the whole send in
 * libmicrohttpd (library.h), so one shared 200 would make the threads send one
 * file one at a time. An entry that sends from a descriptor therefore keeps
 * one 200 per worker thread, up to READY_SENDERS_MAX, each on its own dup
 * of the descriptor (a response closes its own), and a thread queues the
 * one its number picks (thread_slot() % senders): with no more workers
 * than that no two threads share one; past it (--threads up to 256) a few
 * share each, and wait on its mutex only while another sends. Bytes in
 * memory need no lock: one. */
#define READY_SENDERS_MAX 8

/* One ready entry: a cache body's attachment (body.h). */
struct ready {
    struct MHD_Response *full[READY_SENDERS_MAX]; /* 200s, shared, never changed */
    struct MHD_Response *not_modified;            /* 304 */
    struct progress_head full_head, not_modified_head; /* their header blocks */
    unsigned senders;                             /* full[] made */
    uint64_t size;
    struct precondition_times times;
    char etag[80];
    atomic_uint *fds; /* the pool's count of descriptors held, when this holds some */
    int fd;           /* one of them (full[0]'s, which owns it), for the sweep's fstat; else -1 */
    bool sealed;      /* fd is a sealed memfd (entry_rep.sealed): never truncated, never
                       * linked (its st_nlink is 0), so neither watched nor swept as gone */
    enum encoding coding; /* and bytes saved against identity, counted per 200 (savings.h) */
    uint64_t saved;
    const char *sidecar;       /* made from the sidecar rel + this suffix, else NULL */
    struct file_id sidecar_id; /* which version of it: replaced or gone, the entry is stale */
    const struct route *links_folder; /* a page's: its preload hints were decided with */
    struct file_id links_folder_id;   /* this version of that fragment folder (preload.h) */
};

/* The last reference to a ready entry went: its responses and descriptors
 * go once the connections still sending them are done. */
static void ready_free(void *attached)
{
    struct ready *r = attached;
    for (unsigned i = 0; i < r->senders; i++) {
        MHD_destroy_response(r->full[i]);
    }
    if (r->not_modified) {
        MHD_destroy_response(r->not_modified);
    }
    if (r->fds) {
        atomic_fetch_sub(r->fds, r->senders);
    }
    free(r);
}

/* This thread's number, from 0 in the order threads first ask (the
 * workers are the only ones that do): which of an entry's 200s it queues. */
static unsigned thread_slot(void)
{
    static atomic_uint next;
    static _Thread_local unsigned slot = UINT_MAX;
    if (slot == UINT_MAX) {
        slot = atomic_fetch_add(&next, 1);
    }
    return slot;
}

/* A new reference to the ready entry (route, rel, variant) when the file is
 * still the version it was made from; NULL otherwise, with *missing set
 * when nothing is at rel (ENOENT, ENOTDIR: then no open beneath the folder,
 * which follows less than fstatat does, can find a file there either). */
static struct body *ready_find(struct ready_pool *p, const struct route *route, const char *rel,
                               const char *variant, bool *missing)
{
    struct stat st;
    char key[2 * PATH_MAX];
    if (fstatat(route->dir_fd, rel, &st, 0) != 0) {
        *missing = errno == ENOENT || errno == ENOTDIR;
        return NULL;
    }
    if (!S_ISREG(st.st_mode) ||
        !routes_path(route, rel, key, sizeof(key))) {
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
    assert(r->senders >= 1 && r->senders <= READY_SENDERS_MAX && r->not_modified); /* ready_create's */
    if (status == 200) {
        savings_count(r->coding, r->saved);
    }
    *out = (struct ready_answer){
        .holder = b,
        .resp = status == 304 ? r->not_modified : r->full[thread_slot() % r->senders],
        .status = status,
        .size = r->size,
        .head = status == 304 ? r->not_modified_head : r->full_head,
        .fd = status == 304 || r->sealed ? -1 : r->fd, /* a dup's file is full[0]'s */
    };
}

/* Whether ready entry r, when made from a sidecar, still matches that
 * sidecar: a sidecar replaced or deleted on its own (the file itself
 * unchanged) must not keep serving its old bytes. One fstatat more, only for
 * entries made from one. */
static bool sidecar_current(const struct ready *r, const struct route *route, const char *rel)
{
    char name[PATH_MAX];
    struct stat st;
    struct file_id id;
    if (!r->sidecar) {
        return true;
    }
    if ((size_t)snprintf(name, sizeof(name), "%s%s", rel, r->sidecar) >= sizeof(name) ||
        fstatat(route->dir_fd, name, &st, 0) != 0) {
        return false;
    }
    file_id_from_stat(&id, &st);
    return file_id_same(&id, &r->sidecar_id);
}

/* Whether a page's ready entry r still has the hints its fragment folder
 * calls for: a fragment added or removed changes the folder's version, and
 * the entry is made again with the hints of what is there now. One fstat
 * more, only for pages that name a fragment folder. */
static bool links_current(const struct ready *r)
{
    struct stat st;
    struct file_id id;
    if (!r->links_folder) {
        return true;
    }
    if (fstat(r->links_folder->dir_fd, &st) != 0) {
        return false;
    }
    file_id_from_stat(&id, &st);
    return file_id_same(&id, &r->links_folder_id);
}

/* See ready.h. */
bool ready_lookup(struct ready_pool *p, const struct entry_server *entries,
                  const struct route *route, const char *rel, const struct entry_facts *f,
                  const struct precondition_headers *pre, struct ready_answer *out, bool *missing)
{
    char variant[READY_VARIANT_MAX];
    *missing = false;
    struct body *b = !f->has_range && entry_response_variant(entries, f, false, variant, sizeof(variant))
        ? ready_find(p, route, rel, variant, missing) : NULL;
    if (!b) {
        return false;
    }
    const struct ready *r = b->attached;
    if (!sidecar_current(r, route, rel) || !links_current(r)) {
        body_unref(b); /* made again, from what is there now, on this request */
        return false;
    }
    enum precondition_result pc = precondition_evaluate(pre, r->etag, &r->times, time(NULL));
    if (pc == PRECONDITION_FAILED) {
        body_unref(b);
        return false;
    }
    answer(b, pc == PRECONDITION_NOT_MODIFIED ? 304 : 200, out);
    return true;
}


/* How many of the senders 200s wanted a descriptor-backed entry may have:
 * all when the pool's descriptors allow, else one, else none (0). */
static unsigned take_fds(struct ready_pool *p, unsigned wanted)
{
    for (unsigned n = wanted; n > 0; n = n > 1 ? 1 : 0) {
        if (atomic_fetch_add(&p->fds, n) + n <= READY_FDS_MAX) {
            return n;
        }
        atomic_fetch_sub(&p->fds, n);
    }
    return 0;
}

/* Makes up to n 200s in r from rep: n - 1 on a dup of its descriptor each
 * (fewer when no descriptor is left), then the first, which takes rep's
 * descriptor or body. r->senders says how many were made; false when
 * memory ran out (those made are in r->full from 1). */
static bool make_senders(struct ready *r, struct entry_rep *rep, unsigned n)
{
    r->senders = 1;
    for (unsigned i = 1; i < n; i++) {
        struct entry_rep copy = {.fd = fcntl(rep->fd, F_DUPFD_CLOEXEC, 0), .size = rep->size};
        if (copy.fd < 0) {
            break; /* fewer senders, not an error */
        }
        r->full[i] = response_from_rep(&copy, 0, rep->size);
        if (!r->full[i]) {
            close(copy.fd);
            return false;
        }
        r->senders = i + 1;
    }
    r->full[0] = response_from_rep(rep, 0, rep->size);
    return r->full[0] != NULL;
}

/* Destroys what ready_create made of r before it failed, and r. */
static void ready_unmake(struct ready *r)
{
    if (r) {
        for (unsigned i = 1; i < r->senders; i++) {
            MHD_destroy_response(r->full[i]); /* closes its dup */
        }
        if (r->not_modified) {
            MHD_destroy_response(r->not_modified);
        }
    }
    free(r);
}

/* A ready entry made from rep, whose bytes it takes, with up to senders
 * 200s; NULL when the descriptors ready entries may hold are all taken
 * (rep untouched) or memory ran out (rep's bytes may be gone:
 * *out_of_memory). */
static struct body *ready_create(struct ready_pool *p, struct entry_rep *rep, unsigned senders,
                                 bool *out_of_memory)
{
    bool holds_fd = !rep->body && rep->size > 0;
    unsigned wanted = senders < 1 ? 1 : senders > READY_SENDERS_MAX ? READY_SENDERS_MAX : senders;
    unsigned n = holds_fd ? take_fds(p, wanted) : 1;
    *out_of_memory = false;
    if (n == 0) {
        return NULL;
    }
    struct body *b = body_create(0);
    struct ready *r = b ? calloc(1, sizeof(*r)) : NULL;
    bool made = false;
    if (r) {
        *r = (struct ready){.size = rep->size, .times = rep->times, .fds = holds_fd ? &p->fds : NULL,
                            .fd = holds_fd ? rep->fd : -1, .sealed = rep->sealed};
        memcpy(r->etag, rep->etag, sizeof(r->etag));
        r->not_modified = response_not_modified(rep->size);
        made = r->not_modified && make_senders(r, rep, n);
    }
    if (holds_fd) { /* the descriptors reserved and not used */
        atomic_fetch_sub(&p->fds, made ? n - r->senders : n);
    }
    if (!made) {
        ready_unmake(r);
        body_unref(b);
        *out_of_memory = true;
        return NULL;
    }
    b->weight = READY_COST * r->senders + (rep->body ? rep->size : 0);
    for (unsigned i = 0; i < r->senders; i++) {
        response_add_common(r->full[i]);
    }
    response_add_common(r->not_modified);
    b->attached = r;
    b->on_free = ready_free;
    return b;
}

/* Keeps ready entry b for (route, rel, variant), made from source, its
 * full responses answering with full_status; its header blocks are
 * measured now, as they are final. */
static void ready_keep(struct ready_pool *p, const struct route *route, const char *rel,
                       const char *variant, const struct file_id *source, struct body *b,
                       uint64_t generation, unsigned full_status)
{
    struct ready *r = b->attached;
    r->full_head = progress_head_length(r->full[0], full_status, r->size);
    r->not_modified_head = progress_head_length(r->not_modified, 304, r->size);
    char key[2 * PATH_MAX];
    if (routes_path(route, rel, key, sizeof(key))) {
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
    if (rep->best_pending || !entry_response_variant(entries, f, false, variant, sizeof(variant))) {
        return false;
    }
    uint64_t generation = cache_generation(p->cache);
    struct body *b = ready_create(p, rep, config->threads, out_of_memory);
    if (!b) {
        return false;
    }
    struct ready *r = b->attached;
    r->sidecar = rep->sidecar;
    r->sidecar_id = rep->sidecar_id;
    r->links_folder = rep->links_folder;
    r->links_folder_id = rep->links_folder_id;
    r->coding = rep->coding;
    r->saved = rep->saved;
    for (unsigned i = 0; i < r->senders; i++) {
        response_add_rep_headers(r->full[i], config, rep, 200, 0, 0);
    }
    response_add_rep_headers(r->not_modified, config, rep, 304, 0, 0);
    ready_keep(p, route, rel, variant, &rep->source, b, generation, 200);
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
    bool missing;
    struct body *b = ready_find(p, root, "404.html", variant, &missing);
    struct entry_rep page = {.fd = -1}; /* released even when entry_not_found finds none */
    if (!b) {
        uint64_t generation = cache_generation(p->cache);
        if (!entry_not_found(entries, root, f, &page) || !(b = ready_create(p, &page, 1, out_of_memory))) {
            entry_rep_release(&page);
            return false;
        }
        struct ready *r = b->attached;
        response_add_error_headers(r->full[0], 404);
        ready_keep(p, root, "404.html", variant, &page.source, b, generation, 404);
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

/* A ready entry holding descriptors goes when unused since the last idle
 * mark, or at once when its file is gone (no link left to it): a held
 * descriptor of a deleted file keeps its blocks on disk. A sealed memfd has
 * no link from birth; judged by it, every coded body's entry was dropped and
 * rebuilt each second. */
static bool ready_stale(const struct body *b, bool idle, void *unused)
{
    (void)unused;
    const struct ready *r = b->on_free == ready_free ? b->attached : NULL;
    struct stat st;
    return r && r->fd >= 0 && (idle || (!r->sealed && (fstat(r->fd, &st) != 0 || st.st_nlink == 0)));
}

struct ready_sweeper {
    struct ticker *ticker;
    struct cache *cache;
    int64_t inactive_ms, marked_ms; /* marked_ms: the last idle mark */
};

/* Each second, drops entries whose files are gone; once an inactive period
 * has passed since the last mark, those unused through it too (so one goes
 * after one to two periods). */
static void sweep_tick(void *arg, int64_t now)
{
    struct ready_sweeper *s = arg;
    bool mark = now - s->marked_ms >= s->inactive_ms;
    s->marked_ms = mark ? now : s->marked_ms;
    cache_sweep(s->cache, mark, ready_stale, NULL);
}

/* See ready.h. */
struct ready_sweeper *ready_sweeper_start(struct ready_pool *p, unsigned inactive_s)
{
    struct ready_sweeper *s = calloc(1, sizeof(*s));
    if (!s) {
        return NULL;
    }
    *s = (struct ready_sweeper){
        .cache = p->cache, .inactive_ms = (int64_t)inactive_s * 1000, .marked_ms = clock_now_ms()};
    s->ticker = ticker_start(1000, NULL, sweep_tick, s);
    if (!s->ticker) {
        free(s);
        return NULL;
    }
    return s;
}

/* See ready.h. */
void ready_sweeper_stop(struct ready_sweeper *s)
{
    if (s) {
        ticker_stop(s->ticker);
        free(s);
    }
}
