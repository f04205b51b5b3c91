#include "entry.h"

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/body.h"
#include "base/hash.h"
#include "best.h"
#include "cache.h"
#include "compress.h"
#include "etag.h"
#include "flight.h"
#include "base/html.h"
#include "site/live_hook.h"
#include "mime.h"
#include "preload.h"
#include "request.h"
#include "site/resolve.h"
#include "site/rewrite.h"
#include "site/routes.h"

/* Files up to this size are kept in memory and sent with their headers in one
 * write: libmicrohttpd sends headers and a sendfile body apart (two
 * syscalls, two packets), which costs small files much of their speed
 * (bench/README.md, Measurements behind the code). */
#define SMALL_FILE_BYTES (16u << 10)
/* Files up to this size are kept in memory too when the cache keeps them in
 * the heap (cache_in_heap: above 128 KiB): libmicrohttpd sends a file in
 * 128 KiB sendfile chunks, a poll round each, and from memory as much as the
 * socket takes, which costs less CPU a request (bench/README.md). Between
 * the two sizes the file itself is sent by sendfile; a memfd copy of it
 * would buy nothing. */
#define MEMORY_FILE_BYTES (512u << 10)
/* Bodies below this are not worth a coding's header and a Vary-split cache. */
#define CODED_MIN_BYTES 512
/* Bodies up to this get their best level made in the background (best.h),
 * which at br 11 takes seconds of one core a megabyte; beyond, the fast
 * level stays. */
#define BEST_MAX_BYTES (4u << 20)
/* Files above this are sent as they are rather than read into memory. */
#define CODED_MAX_BYTES (32u << 20)
#define DOCUMENT_MAX_BYTES (16u << 20)
#define KEY_MAX (2 * PATH_MAX)
/* A tag of the client: a "../" per folder of a page's path, and the rest. */
#define SCRIPT_TAG_BYTES (3 * PATH_MAX / 2 + 80)

/* Variant names, the second half of a cache key. A transform's name holds
 * everything its bytes depend on: "t:<inject>:<depth>:<rewrite depth>:<prefix>",
 * and ":gzip<level>" (":br11", ":zstd19") after it for a compressed form. */
#define VARIANT_MIME "mime"
#define VARIANT_IDENTITY "identity"
/* A coding's variant is its name and level, "gzip6", "br11", "zstd19": the
 * bytes differ by the level. Its ETag tag is the short name and the level,
 * "-gz6", "-br11", "-zs19"; a sidecar's, the short name and "s": "-gzs". */
static const struct {
    const char *variant, *tag, *suffix;
} codings[ENCODING_COUNT] = {
    [ENCODING_GZIP] = {"gzip", "-gz", ".gz"},
    [ENCODING_ZSTD] = {"zstd", "-zs", ".zst"},
    [ENCODING_BR] = {"br", "-br", ".br"},
};
/* Whole responses (ready.c): "r:<ranks>" for a file no transform can touch,
 * "r:<ranks>:<document>:<depth>:<prefix>" where one may, the ranks being
 * what the client prefers (encoding_rank); "n" for 404.html;
 * "@<generation>" after it once a SIGHUP published new settings (their
 * headers, max-age say, are in the response). */
#define VARIANT_RESPONSE "r"
#define VARIANT_NOT_FOUND "n"

/* What a page or stylesheet needs before it is sent: the proxy prefix put
 * into its references (rewrite.c) and, for pages, the live-reload client. */
struct transform {
    const char *early, *snippet; /* the client's two tags (html_inject); NULL: nothing injected */
    bool css;
    struct rewrite_context rewrite; /* .prefix NULL: nothing rewritten */
};

/* One call's working state: the file, its key and identity, and the
 * representation being chosen. */
struct lookup {
    const struct entry_server *s;
    int level[ENCODING_COUNT];
    int best_level[ENCODING_COUNT]; /* made in the background (best.h) when above level; 0: none */
    int best_state[ENCODING_COUNT]; /* enum best_state of each best level */
    const char *base;               /* the variant the codings' names follow ("": the file) */
    char coding_name[ENCODING_COUNT][8]; /* the coding's variant: "gzip6" */
    char key[KEY_MAX];
    struct file_id id;
    struct etag_content content; /* what names this version in ETags (etag.h) */
    struct entry_rep *rep;
};

/* Builds a variant's body from the lookup; NULL when it is not worth having. */
typedef struct body *builder(struct lookup *l, const void *arg);

/* A new reference to b's bytes in memory: b itself, or a copy of its memfd. */
static struct body *in_memory(struct body *b)
{
    return b->fd < 0 ? body_ref(b) : body_read(b->fd, b->len);
}

/* The current bytes of the representation in memory: its body, or the file. */
static struct body *current_bytes(struct lookup *l)
{
    return l->rep->body ? in_memory(l->rep->body) : body_read(l->rep->fd, l->rep->size);
}

/* The cached body of variant, or a new one from build, kept if the cache can.
 * *kept says whether a later request will find it. Single-flight (flight.h):
 * while one request builds a (version, variant) the others for it wait and
 * take its result from the cache, so a burst of first requests compresses a
 * file once; the wait is bounded by the levels (compress_level: ~1/4 s). A
 * waiter that finds nothing (the cache had no room) builds its own. */
static struct body *derive(struct lookup *l, const char *variant, builder *build, const void *arg,
                           bool *kept)
{
    struct cache *c = l->s->cache;
    uint64_t generation = cache_generation(c);
    struct body *b = cache_get(c, l->key, variant, &l->id);
    uint64_t name = 0;
    if (!b) {
        name = cache_version_name(l->key, variant, &l->id);
        enum flight role = flight_begin(name);
        if (role != FLIGHT_LEAD) {
            name = 0;
        }
        if (role == FLIGHT_WAITED) {
            b = cache_get(c, l->key, variant, &l->id);
        }
    }
    *kept = b != NULL;
    if (!b && (b = build(l, arg)) != NULL) {
        *kept = cache_put(c, l->key, variant, &l->id, b, generation);
        /* The cache may keep a memfd copy (big bodies): answer from that
         * copy, so a whole response made from this one does not hold the
         * heap bytes besides: a big file costs one copy, not two. */
        struct body *held = *kept && b->fd < 0 ? cache_get(c, l->key, variant, &l->id) : NULL;
        if (held && held != b) {
            body_unref(b);
            b = held;
        } else {
            body_unref(held);
        }
    }
    if (name) {
        flight_end(name);
    }
    return b;
}

/* The representation's bytes with the prefix and the client put in. */
static struct body *build_transformed(struct lookup *l, const void *arg)
{
    const struct transform *t = arg;
    if (l->rep->size > DOCUMENT_MAX_BYTES) {
        return NULL;
    }
    struct body *file = current_bytes(l);
    if (!file) {
        return NULL;
    }
    char *text = (char *)file->data, *rewritten = NULL, *injected = NULL;
    size_t len = file->len;
    if (t->rewrite.prefix) {
        rewritten = t->css ? rewrite_css(text, len, &t->rewrite, &len)
                           : rewrite_html(text, len, &t->rewrite, &len);
        text = rewritten;
    }
    if (text && t->snippet) {
        injected = html_inject(text, len, t->early, t->snippet, &len);
        text = injected;
    }
    struct body *b = text ? body_from(text, len) : NULL;
    free(rewritten);
    free(injected);
    body_unref(file);
    return b;
}

/* The file's bytes, for a small file sent with its headers. */
static struct body *build_identity(struct lookup *l, const void *unused)
{
    (void)unused; /* the builder's signature */
    return body_read(l->rep->fd, l->rep->size);
}

/* The representation compressed in the coding *arg points to; an empty body
 * is the answer "identity is as good", so a file that does not shrink (or an
 * encoder that failed) is not compressed again. */
static struct body *build_coded(struct lookup *l, const void *arg)
{
    const enum encoding *e = arg;
    if (l->rep->size > CODED_MAX_BYTES) {
        return NULL;
    }
    struct body *plain = current_bytes(l);
    if (!plain) {
        return NULL;
    }
    struct body *coded = compress_body(*e, plain->data, plain->len, l->level[*e]);
    body_unref(plain);
    return coded ? coded : body_create(0);
}

/* libmagic's type for the file, as a NUL-terminated body. */
static struct body *build_mime(struct lookup *l, const void *unused)
{
    (void)unused; /* the builder's signature */
    char *type = mime_sniff(l->rep->fd);
    struct body *b = type ? body_from(type, strlen(type) + 1) : NULL;
    free(type);
    return b;
}

/* Content-Type: the extension table first, libmagic (once per version) else. */
static void choose_type(struct lookup *l, const char *rel)
{
    struct entry_rep *rep = l->rep;
    const struct mime_type *known = mime_from_extension(rel);
    if (known) {
        rep->type = known->name;
        rep->compressible = known->compressible;
        return;
    }
    bool kept;
    rep->type_holder = derive(l, VARIANT_MIME, build_mime, NULL, &kept);
    if (rep->type_holder && rep->type_holder->fd >= 0) { /* a type is never that big */
        body_unref(rep->type_holder);
        rep->type_holder = NULL;
    }
    rep->type = rep->type_holder ? (const char *)rep->type_holder->data : "application/octet-stream";
    rep->compressible = mime_is_compressible(rep->type);
}

/* Makes body the representation's bytes (taking the reference). */
static void take_body(struct entry_rep *rep, struct body *b)
{
    body_unref(rep->body);
    rep->body = b;
    rep->size = b->len;
}

/* The representation's ETag: content's (etag.h) and the variant's tag. */
static void rep_etag(struct entry_rep *rep, const struct etag_content *content, const char *tag)
{
    etag_format(rep->etag, sizeof(rep->etag), content, tag);
}

/* The form of the representation in coding e under variant, or NULL when
 * identity is the answer: it does not shrink, or it is too big to keep and
 * would be compressed again on every request (an empty body remembers that). */
static struct body *coded_variant(struct lookup *l, enum encoding e, const char *variant)
{
    uint64_t generation = cache_generation(l->s->cache);
    bool kept;
    struct body *coded = derive(l, variant, build_coded, &e, &kept);
    if (coded && !kept) {
        body_unref(coded);
        coded = body_create(0);
        if (coded) {
            cache_put(l->s->cache, l->key, variant, &l->id, coded, generation);
        }
    }
    if (coded && coded->len == 0) {
        body_unref(coded);
        coded = NULL;
    }
    return coded;
}

/* The variant coding e's best level is kept under; false when it does not fit. */
static bool best_variant(const struct lookup *l, enum encoding e, char *out, size_t size)
{
    return (size_t)snprintf(out, size, "%s%s%s%d", l->base, *l->base ? ":" : "", codings[e].variant,
                            l->best_level[e]) < size;
}

/* What coding e's best level is (best.h); one whose name does not fit, tried. */
static enum best_state best_found(struct lookup *l, enum encoding e)
{
    char variant[PATH_MAX + 16];
    return best_variant(l, e, variant, sizeof(variant)) ? best_state(l->s->cache, l->key, variant, &l->id)
                                                        : BEST_TRIED;
}

/* The representation's bytes as they stand, for best_offer. */
static struct body *lookup_bytes(void *l)
{
    return current_bytes(l);
}

/* Offers coding e's best level to the background worker, from the bytes
 * before a coded body takes their place; one the full queue cannot take
 * marks the representation best_pending (best_offer). */
static void offer_best(struct lookup *l, enum encoding e)
{
    char variant[PATH_MAX + 16];
    if (best_variant(l, e, variant, sizeof(variant)) &&
        !best_offer(l->s->best, l->s->cache, l->key, variant, e, l->best_level[e], &l->id,
                    (size_t)l->rep->size, lookup_bytes, l)) {
        l->rep->best_pending = true;
    }
}

/* One coded form a representation could take: a body, or a sidecar file. */
struct candidate {
    enum encoding coding;
    struct body *body; /* one reference; NULL: fd, or nothing at all */
    int fd;            /* a sidecar, owned; -1: none */
    uint64_t size;
    struct file_id sidecar;
    struct etag_content sidecar_tag; /* what its content is named by */
};

/* Drops what c holds, leaving identity of no size. */
static void candidate_release(struct candidate *c)
{
    body_unref(c->body);
    if (c->fd >= 0) {
        close(c->fd);
    }
    *c = (struct candidate){.fd = -1};
}

/* A fresh "name.gz" ("name.br", "name.zst") beside the file, compressed
 * ahead of time, is used as is: only when at least as new as the original
 * (PEERS.md theme F), and whether or not this binary could make that coding.
 * Its own identity names the ETag. False (nothing open) when there is none. */
static bool open_sidecar(struct lookup *l, const struct route *route, const char *rel,
                         enum encoding e, struct candidate *c)
{
    char name[PATH_MAX];
    if ((size_t)snprintf(name, sizeof(name), "%s%s", rel, codings[e].suffix) >= sizeof(name)) {
        return false;
    }
    int fd, err;
    struct stat st;
    enum resolve_status status = resolve_open(route->dir_fd, name, &fd, &st, &err);
    if (status != RESOLVED_FILE) {
        if (fd >= 0) { /* a folder called name.gz */
            close(fd);
        }
        return false;
    }
    file_id_from_stat(&c->sidecar, &st);
    char key[KEY_MAX];
    if (c->sidecar.mtime_ns < l->id.mtime_ns || !routes_path(route, name, key, sizeof(key))) {
        close(fd);
        return false;
    }
    c->sidecar_tag = etag_of_file(l->s->cache, key, &c->sidecar, fd);
    c->fd = fd;
    c->size = (uint64_t)st.st_size;
    return true;
}

/* Fills c with coding e of the representation, variant naming its cached
 * body: the cached one, else a sidecar (route non-NULL: the file as it is),
 * else, when make says so, one made now. False when e gives nothing better
 * than identity. */
static bool coded_candidate(struct lookup *l, const struct route *route, const char *rel,
                            enum encoding e, const char *variant, bool make, struct candidate *c)
{
    *c = (struct candidate){.coding = e, .fd = -1};
    c->body = cache_get(l->s->cache, l->key, variant, &l->id);
    if (!c->body && route && open_sidecar(l, route, rel, e, c)) {
        return true;
    }
    if (c->body && c->body->len == 0) {
        body_unref(c->body);
        c->body = NULL;
    } else if (!c->body && make && compress_available(e)) {
        c->body = coded_variant(l, e, variant);
    }
    c->size = c->body ? c->body->len : 0;
    return c->body != NULL;
}

/* Makes c the representation's bytes (taking what it holds) and its ETag,
 * tag being the transform's part of it. */
static void take_candidate(struct lookup *l, struct candidate *c, const char *tag)
{
    struct entry_rep *rep = l->rep;
    char full[48];
    if (c->coding == ENCODING_IDENTITY) {
        rep_etag(rep, &l->content, tag);
        return;
    }
    rep->coding = c->coding;
    rep->saved = rep->size > c->size ? rep->size - c->size : 0; /* rep->size: identity's */
    if (c->fd >= 0) {
        close(rep->fd);
        rep->fd = c->fd;
        rep->size = c->size;
        rep->sidecar = codings[c->coding].suffix;
        rep->sidecar_id = c->sidecar;
        snprintf(full, sizeof(full), "%s%ss", tag, codings[c->coding].tag);
        rep_etag(rep, &c->sidecar_tag, full);
    } else {
        take_body(rep, c->body);
        snprintf(full, sizeof(full), "%s%s%d", tag, codings[c->coding].tag, l->level[c->coding]);
        rep_etag(rep, &l->content, full);
    }
    *c = (struct candidate){.fd = -1};
}

/* The best form for the client of the representation as it stands (its
 * bytes in rep), each coding under base + its variant name (base "": the
 * file itself, whose sidecars count too when route is non-NULL), and its
 * ETag; identity when nothing beats it (encoding_better). Of what folio has
 * (made before, sidecars) the smallest acceptable answers; one coding at
 * most is made per request, the first acceptable in the order br, zstd,
 * gzip (the next when an encoder fails), so a first request pays for one
 * encoder, not three. In production a body past compress_level's br 11 /
 * zstd 19 tier gets the tier's fast level at once (the first request waits
 * no longer than for gzip and gets fewer bytes than gzip's) and its best
 * level is queued for the background worker (best.h); once it landed it
 * answers instead, under its own ETag. */
static void choose_coding(struct lookup *l, const struct route *route, const char *rel,
                          const struct entry_facts *f, const char *base, const char *tag)
{
    struct candidate best = {.coding = ENCODING_IDENTITY, .fd = -1, .size = l->rep->size};
    char variant[PATH_MAX + 16];
    l->level[ENCODING_GZIP] = f->gzip_level >= 1 && f->gzip_level <= 9 ? (int)f->gzip_level : 6;
    /* The settings cap what mode and size pick: lower saves CPU, never a
     * slower first request than the size tiers allow. */
    unsigned ceiling[ENCODING_COUNT] = {[ENCODING_ZSTD] = f->zstd_level, [ENCODING_BR] = f->brotli_quality};
    l->base = base;
    l->best_level[ENCODING_IDENTITY] = l->best_level[ENCODING_GZIP] = 0; /* gzip's level is the setting's */
    l->best_state[ENCODING_IDENTITY] = l->best_state[ENCODING_GZIP] = BEST_TRIED; /* none to make */
    for (int e = ENCODING_ZSTD; e < ENCODING_COUNT; e++) {
        l->level[e] = compress_level((enum encoding)e, f->production, (size_t)l->rep->size);
        int top = e == ENCODING_BR ? COMPRESS_BR_PRODUCTION : COMPRESS_ZSTD_PRODUCTION;
        if (ceiling[e] && (unsigned)top > ceiling[e]) {
            top = (int)ceiling[e];
        }
        l->level[e] = l->level[e] < top ? l->level[e] : top;
        l->best_level[e] = f->production && l->s->best && l->level[e] < top &&
                                   l->rep->size <= BEST_MAX_BYTES ? top : 0;
        l->best_state[e] = l->best_level[e] ? best_found(l, (enum encoding)e) : BEST_TRIED;
        if (l->best_state[e] == BEST_LANDED) {
            l->level[e] = top;
        }
    }
    for (int e = ENCODING_GZIP; e < ENCODING_COUNT; e++) {
        snprintf(l->coding_name[e], sizeof(l->coding_name[e]), "%s%d", codings[e].variant, l->level[e]);
    }
    /* br first: the smallest as a rule, so the one made when nothing is. */
    for (int e = ENCODING_COUNT - 1; l->rep->size >= CODED_MIN_BYTES && e >= ENCODING_GZIP; e--) {
        struct candidate c;
        if (f->accept.q[e] == 0 ||
            (size_t)snprintf(variant, sizeof(variant), "%s%s%s", base, *base ? ":" : "",
                             l->coding_name[e]) >= sizeof(variant) ||
            !coded_candidate(l, route, rel, (enum encoding)e, variant,
                             best.coding == ENCODING_IDENTITY, &c)) {
            continue;
        }
        if (encoding_better(&f->accept, c.coding, c.size, best.coding, best.size)) {
            candidate_release(&best);
            best = c;
        } else {
            candidate_release(&c);
        }
    }
    if (best.body && l->best_state[best.coding] == BEST_ABSENT) {
        offer_best(l, best.coding);
    }
    take_candidate(l, &best, tag);
}

/* Fills t and its variant name when this client needs the bytes changed:
 * the client goes into pages, never into fragments; the prefix into the
 * references of pages, fragments and stylesheets. */
static bool plan_transform(const struct lookup *l, const struct route *route,
                           const struct entry_facts *f, struct transform *t, char (*tags)[SCRIPT_TAG_BYTES],
                           char *variant, size_t variant_size)
{
    bool html = strncmp(l->rep->type, "text/html", 9) == 0;
    bool css = strncmp(l->rep->type, "text/css", 8) == 0;
    bool page = html && f->document;
    bool inject = l->s->live && page;
    bool rewrite = f->prefix && (html || css);
    if (!inject && !rewrite) {
        return false;
    }
    size_t depth = rewrite_depth(f->target); /* the client's src and references: a "../" per folder */
    if (inject) {
        l->s->live->early_tag(l->s->live->ctx, depth, tags[0], SCRIPT_TAG_BYTES);
        l->s->live->script_tag(l->s->live->ctx, depth, tags[1], SCRIPT_TAG_BYTES);
    }
    *t = (struct transform){
        .early = inject ? tags[0] : NULL,
        .snippet = inject ? tags[1] : NULL,
        .css = css,
        .rewrite = {
            .prefix = rewrite ? f->prefix : NULL,
            /* A fragment's references resolve against the page that fetched
             * it as fragments/<name>.html, one folder up. */
            .depth = depth - (route->is_fragments && !page && depth > 0),
            .is_ours = l->s->is_ours,
            .arg = l->s->is_ours_arg,
        },
    };
    int n = snprintf(variant, variant_size, "t:%d:%zu:%zu:%s", inject, depth, t->rewrite.depth,
                     t->rewrite.prefix ? t->rewrite.prefix : "");
    return n > 0 && (size_t)n < variant_size - sizeof(l->coding_name[0]) - 1;
}

/* The transformed page or stylesheet, compressed as the client takes it;
 * the file as it is when the transform cannot be made (too big, no memory). */
static void choose_transformed(struct lookup *l, const struct entry_facts *f,
                               const struct transform *t, const char *variant)
{
    bool kept;
    struct body *doc = derive(l, variant, build_transformed, t, &kept);
    if (!doc) {
        rep_etag(l->rep, &l->content, "");
        return;
    }
    take_body(l->rep, doc);
    char tag[32];
    snprintf(tag, sizeof(tag), "-t%08" PRIx32, (uint32_t)hash_string(HASH_START, variant)); /* short, stable */
    choose_coding(l, NULL, NULL, f, variant, tag); /* no sidecar holds the transform */
}

/* The file itself: its best coded form (a sidecar, or compressed once) when
 * the client takes one, its bytes in memory when it is small. */
static void choose_plain(struct lookup *l, const struct route *route, const char *rel,
                         const struct entry_facts *f)
{
    struct entry_rep *rep = l->rep;
    choose_coding(l, route, rel, f, "", "");
    if (!rep->body && rep->coding == ENCODING_IDENTITY && rep->size > 0 &&
        (rep->size <= SMALL_FILE_BYTES ||
         (rep->size <= MEMORY_FILE_BYTES && cache_in_heap(l->s->cache, (size_t)rep->size)))) {
        bool kept;
        struct body *b = derive(l, VARIANT_IDENTITY, build_identity, NULL, &kept);
        if (b) {
            take_body(rep, b); /* its length, should the file have been cut short */
        }
    }
}

/* Moves the bytes into their final place: a memfd body becomes an fd of
 * its own to sendfile from; a body in memory needs the file no longer. */
static bool settle(struct entry_rep *rep)
{
    if (!rep->body) {
        return true;
    }
    if (rep->fd >= 0) {
        close(rep->fd);
        rep->fd = -1;
    }
    if (rep->body->fd >= 0) {
        rep->fd = fcntl(rep->body->fd, F_DUPFD_CLOEXEC, 0);
        rep->sealed = true; /* body_create sealed it against shrinking */
        body_unref(rep->body);
        rep->body = NULL;
        return rep->fd >= 0;
    }
    return true;
}

/* See entry.h. */
bool entry_represent(const struct entry_server *s, const struct route *route, const char *rel,
                     int fd, const struct stat *st, const struct entry_facts *f,
                     struct entry_rep *rep)
{
    *rep = (struct entry_rep){.fd = fd, .size = (uint64_t)st->st_size,
                              .times = {st->st_mtim.tv_sec, st->st_ctim.tv_sec}};
    struct lookup l; /* not "= {...}": that would clear the 8 KB key on every request */
    l.s = s;
    l.rep = rep;
    file_id_from_stat(&l.id, st);
    rep->source = l.id;
    if (!routes_path(route, rel, l.key, sizeof(l.key))) {
        rep->type = "application/octet-stream";
        l.content = (struct etag_content){(uint64_t)l.id.mtime_ns, l.id.size}; /* no key to keep a checksum under */
        rep_etag(rep, &l.content, "");
        return true;
    }
    l.content = etag_of_file(s->cache, l.key, &l.id, fd);
    choose_type(&l, rel);
    rep->by_fetch_dest = s->live && strncmp(rep->type, "text/html", 9) == 0; /* plan_transform's inject */
    preload_decide(s, route, rel, l.key, rep); /* a page's Link hints, before any transform */
    /* Ranges index the representation as stored, so a Range gets identity. */
    struct entry_facts facts = *f;
    if (!rep->compressible || f->has_range) {
        facts.accept = encoding_parse(NULL);
    }
    char tags[2][SCRIPT_TAG_BYTES], variant[PATH_MAX];
    struct transform t;
    if (plan_transform(&l, route, &facts, &t, tags, variant, sizeof(variant))) {
        choose_transformed(&l, &facts, &t, variant);
    } else {
        choose_plain(&l, route, rel, &facts);
    }
    if (!settle(rep)) {
        entry_rep_release(rep);
        return false;
    }
    /* entry.h: exactly one of body and fd carries the bytes (fd alone for an empty file) */
    assert((rep->body != NULL) != (rep->fd >= 0) || (rep->size == 0 && rep->fd >= 0));
    assert(!rep->body || rep->body->fd >= 0 || rep->body->len == rep->size);
    return true;
}

/* See entry.h: one more lookup, of 404.html beneath the root route. */
bool entry_not_found(const struct entry_server *s, const struct route *root,
                     const struct entry_facts *f, struct entry_rep *rep)
{
    int fd, err;
    struct stat st;
    if (!root) {
        return false;
    }
    if (resolve_open(root->dir_fd, "404.html", &fd, &st, &err) != RESOLVED_FILE) {
        if (fd >= 0) { /* a folder called 404.html */
            close(fd);
        }
        return false;
    }
    struct entry_facts facts = *f;
    facts.accept = encoding_parse(NULL);
    facts.has_range = false;
    return entry_represent(s, root, "404.html", fd, &st, &facts, rep);
}

/* See entry.h. */
bool entry_response_variant(const struct entry_server *s, const struct entry_facts *f, bool not_found,
                            char *out, size_t size)
{
    int n;
    if (not_found) {
        if (s->live || f->prefix) {
            return false;
        }
        n = snprintf(out, size, VARIANT_NOT_FOUND);
    } else if (!s->live && !f->prefix) { /* the hot path of production: no snprintf */
        if (size < 3 + ENCODING_COUNT) {
            return false;
        }
        memcpy(out, VARIANT_RESPONSE ":", 2);
        encoding_rank(&f->accept, out + 2);
        out[2 + ENCODING_COUNT] = '\0';
        n = 2 + ENCODING_COUNT;
    } else {
        char ranks[ENCODING_COUNT];
        encoding_rank(&f->accept, ranks);
        n = snprintf(out, size, VARIANT_RESPONSE ":%.*s:%d:%zu:%s", ENCODING_COUNT, ranks,
                     f->document, rewrite_depth(f->target), f->prefix ? f->prefix : "");
    }
    if (n > 0 && f->settings_generation && (size_t)n < size) {
        n += snprintf(out + n, size - (size_t)n, "@%u", f->settings_generation);
    }
    return n > 0 && (size_t)n < size;
}

/* See entry.h. */
void entry_rep_release(struct entry_rep *rep)
{
    body_unref(rep->body);
    body_unref(rep->type_holder);
    body_unref(rep->links);
    if (rep->fd >= 0) {
        close(rep->fd);
    }
    rep->body = rep->type_holder = rep->links = NULL;
    rep->fd = -1;
    rep->type = "application/octet-stream";
}
