/* entry: every combination of gzip × prefix × injection × sidecar × small
 * file × Range gives the representation the rules say, the same one twice
 * (the second from the cache); the ETag names it; nothing leaks a
 * descriptor; big bodies are made once; the key is the one livereload uses.
 * Real files in a temporary folder, no libmicrohttpd. */
#include "cmocka_prelude.h"

#include "build_config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#if FOLIO_HAVE_BROTLI
#include <brotli/decode.h>
#endif
#if FOLIO_HAVE_ZSTD
#include <zstd.h>
#endif

#include "base/body.h"
#include "serve/cache.h"
#include "serve/flight.h"
#include "serve/compress.h"
#include "live/livereload.h"
#include "serve/entry.h"
#include "site/live_hook.h"
#include "site/resolve.h"
#include "site/routes.h"

struct fixture {
    char dir[64];
    struct route route;
    struct cache *cache;
};

static void put_file(const struct fixture *fx, const char *rel, const char *text, size_t len,
                     long mtime)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", fx->dir, rel);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    struct timeval times[2] = {{mtime, 0}, {mtime, 0}};
    assert_int_equal(utimes(path, times), 0);
}

/* An HTML page of about size bytes with one absolute and one relative reference. */
static char *page_text(size_t size, const char *marker)
{
    char *text = malloc(size + 256);
    int n = sprintf(text, "<!doctype html><head><title>%s</title></head><body>"
                          "<img src=\"/assets/a.png\" alt=a><img src=\"b.png\" alt=b>\n", marker);
    while ((size_t)n < size) {
        n += sprintf(text + n, "<p>The pipeline bubble is (p - 1) / (m + p - 1).</p>\n");
    }
    strcpy(text + n, "</body>\n");
    return text;
}

/* What a client that names gzip alone (on) or nothing (off) accepts. */
#define GZIP_ONLY(on) encoding_parse((on) ? "gzip" : NULL)

/* Gzip data of the text, a sidecar compressed ahead of time. */
static void put_gzip(const struct fixture *fx, const char *rel, const char *text, long mtime)
{
    uLong bound = compressBound(strlen(text)) + 32;
    unsigned char *out = malloc(bound);
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)text;
    zs.avail_in = (uInt)strlen(text);
    zs.next_out = out;
    zs.avail_out = (uInt)bound;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    put_file(fx, rel, (const char *)out, zs.total_out, mtime);
    deflateEnd(&zs);
    free(out);
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    strcpy(fx->dir, "/tmp/folio-entry-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    fx->route = (struct route){.prefix = "/", .prefix_len = 1, .dir = fx->dir};
    fx->route.dir_fd = open(fx->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fx->route.dir_fd >= 0);
    resolve_init(fx->route.dir_fd);
    const char *names[] = {"small", "big", "side-small", "side-big"};
    for (size_t i = 0; i < 4; i++) {
        char rel[64];
        char *text = page_text(strstr(names[i], "big") ? 40000 : 4000, names[i]);
        snprintf(rel, sizeof(rel), "%s.html", names[i]);
        put_file(fx, rel, text, strlen(text), 1000000);
        if (strncmp(names[i], "side", 4) == 0) {
            snprintf(rel, sizeof(rel), "%s.html.gz", names[i]);
            put_gzip(fx, rel, "SIDECAR", 1000010); /* newer than its file: used */
        }
        free(text);
    }
    fx->cache = cache_create(64 << 20);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    cache_destroy(fx->cache);
    close(fx->route.dir_fd);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
    assert_int_equal(system(cmd), 0);
    free(fx);
    return 0;
}

static size_t open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    size_t n = 0;
    while (readdir(d)) {
        n++;
    }
    closedir(d);
    return n;
}

/* The bytes rep stands for, decoded when gzipped; malloc'd, NUL-terminated. */
static char *rep_text(const struct entry_rep *rep)
{
    unsigned char *raw = malloc(rep->size + 1);
    if (rep->body) {
        assert_int_equal(rep->body->fd, -1);
        memcpy(raw, rep->body->data, rep->size);
    } else {
        assert_true(rep->fd >= 0);
        assert_int_equal(pread(rep->fd, raw, rep->size, 0), (ssize_t)rep->size);
    }
    if (rep->coding == ENCODING_IDENTITY) {
        raw[rep->size] = '\0';
        return (char *)raw;
    }
    size_t cap = 1 << 20;
    char *out = malloc(cap + 1);
#if FOLIO_HAVE_BROTLI
    if (rep->coding == ENCODING_BR) {
        size_t n = cap;
        assert_int_equal(BrotliDecoderDecompress(rep->size, raw, &n, (uint8_t *)out),
                         BROTLI_DECODER_RESULT_SUCCESS);
        out[n] = '\0';
        free(raw);
        return out;
    }
#endif
#if FOLIO_HAVE_ZSTD
    if (rep->coding == ENCODING_ZSTD) {
        size_t n = ZSTD_decompress(out, cap, raw, rep->size);
        assert_false(ZSTD_isError(n));
        out[n] = '\0';
        free(raw);
        return out;
    }
#endif
    assert_int_equal(rep->coding, ENCODING_GZIP);
    z_stream zs = {0};
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = raw;
    zs.avail_in = (uInt)rep->size;
    zs.next_out = (Bytef *)out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    out[zs.total_out] = '\0';
    inflateEnd(&zs);
    free(raw);
    return out;
}

/* compress_body as entry.c calls it (linked with --wrap): the real one,
 * unless failing names a coding whose encoder is to fail; calls counts them. */
struct body *__real_compress_body(enum encoding e, const void *data, size_t len, int level);
struct body *__wrap_compress_body(enum encoding e, const void *data, size_t len, int level);
static int failing = -1;
static _Atomic unsigned calls[ENCODING_COUNT];
/* Set to n, an encoder call waits until n other requests wait for its
 * build (flight.h): a burst's requests all reach the cache miss while the
 * first one compresses (an event awaited, 10 s at most; not a timing). */
static atomic_uint burst_waiters;

struct body *__wrap_compress_body(enum encoding e, const void *data, size_t len, int level)
{
    calls[e]++;
    struct timespec now, until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 10;
    while (flight_waiting() < atomic_load(&burst_waiters) && clock_gettime(CLOCK_MONOTONIC, &now) == 0 &&
           now.tv_sec < until.tv_sec) {
        sched_yield();
    }
    return (int)e == failing ? NULL : __real_compress_body(e, data, len, level);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Looks rel up for facts f; the fd is opened the way http.c opens it. */
/* The live-reload client as preview hands it to serving (live/preview.c). */
static void client_tag(void *ctx, size_t depth, char *out, size_t size)
{
    livereload_client_tag(depth, out, size);
}

static void early_tag(void *ctx, size_t depth, char *out, size_t size)
{
    (void)ctx;
    livereload_early_tag(depth, out, size);
}

static const struct serve_live_hook live = {.script_tag = client_tag, .early_tag = early_tag};

static bool lookup(const struct fixture *fx, const struct entry_server *s, const char *rel,
                   const struct entry_facts *f, struct entry_rep *rep)
{
    int fd, err;
    struct stat st;
    assert_int_equal(resolve_open(fx->route.dir_fd, rel, &fd, &st, &err), RESOLVED_FILE);
    return entry_represent(s, &fx->route, rel, fd, &st, f, rep);
}

/* One row of the table: what the rules of entry.h say of it. */
static void check_combination(struct fixture *fx, int gzip, int prefix, int inject, int sidecar,
                              int small, int range)
{
    struct entry_server s = {.cache = fx->cache, .live = inject ? &live : NULL};
    char rel[64];
    snprintf(rel, sizeof(rel), "%s%s.html", sidecar ? "side-" : "", small ? "small" : "big");
    struct entry_facts f = {
        .accept = GZIP_ONLY(gzip), .has_range = range, .document = true,
        .prefix = prefix ? "/article" : NULL, .target = "/dir/page.html",
    };
    bool transformed = prefix || inject;
    bool want_gzip = gzip && !range;
    bool want_sidecar = want_gzip && sidecar && !transformed;
    /* Derived bytes (compressed, rewritten, a small file's copy) are in
     * memory or in a memfd of the cache's; the rest is the file itself. */
    bool want_derived = transformed || (want_gzip && !want_sidecar) || (small && !want_sidecar);
    char etags[2][80];
    for (int round = 0; round < 2; round++) { /* the second is served from the cache */
        struct entry_rep rep;
        assert_true(lookup(fx, &s, rel, &f, &rep));
        print_message("gzip=%d prefix=%d inject=%d sidecar=%d small=%d range=%d -> %s\n", gzip,
                      prefix, inject, sidecar, small, range, rep.etag);
        assert_string_equal(rep.type, "text/html; charset=utf-8");
        assert_true(rep.compressible);
        assert_int_equal((rep.coding == ENCODING_GZIP), want_gzip);
        assert_int_equal(rep.body != NULL, rep.fd < 0); /* one of the two */
        struct stat st;
        bool derived = rep.body || (fstat(rep.fd, &st) == 0 && st.st_nlink == 0); /* a memfd */
        assert_int_equal(derived, want_derived);
        char *text = rep_text(&rep);
        if (want_sidecar) {
            assert_string_equal(text, "SIDECAR");
        } else {
            assert_non_null(strstr(text, small ? "<title>" : "<p>The pipeline"));
            assert_int_equal(strstr(text, "src=\"/article/assets/a.png\"") != NULL, prefix);
            assert_int_equal(strstr(text, "src=\"/assets/a.png\"") != NULL, !prefix);
            assert_non_null(strstr(text, "src=\"b.png\"")); /* stays inside: left alone */
            /* One folder down ("/dir/"): the client is one "../" up. */
            assert_int_equal(strstr(text, "<script src=\"../__folio/reload.js\" defer></script></head>") != NULL,
                             inject);
            /* ... and its first part before anything of the page that may run. */
            assert_int_equal(strstr(text, "<head><script src=\"../__folio/early.js?v=") != NULL, inject);
        }
        free(text);
        assert_int_equal(rep.etag[0], '"');
        assert_int_equal(ends_with(rep.etag, "-gzs\""), want_sidecar);
        assert_int_equal(ends_with(rep.etag, "-gz6\""), want_gzip && !want_sidecar); /* zlib level 6 made these bytes */
        assert_int_equal(strstr(rep.etag, "-t") != NULL, transformed);
        strcpy(etags[round], rep.etag);
        entry_rep_release(&rep);
        assert_int_equal(rep.fd, -1);
        assert_null(rep.body);
    }
    assert_string_equal(etags[0], etags[1]);
}

static void test_every_combination(void **state)
{
    struct fixture *fx = *state;
    size_t fds = open_fds();
    for (int i = 0; i < 64; i++) {
        check_combination(fx, i & 1, i >> 1 & 1, i >> 2 & 1, i >> 3 & 1, i >> 4 & 1, i >> 5 & 1);
    }
    cache_clear(fx->cache); /* the memfds it keeps are descriptors too */
    assert_int_equal(open_fds(), fds);
}

static void test_etags_tell_representations_apart(void **state)
{
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache, .live = &live};
    const struct entry_facts facts[] = {
        {.target = "/a.html"},
        {.accept = GZIP_ONLY(true), .target = "/a.html"},
        {.prefix = "/article", .target = "/a.html"},
        {.prefix = "/other", .target = "/a.html"},
        {.prefix = "/other", .accept = GZIP_ONLY(true), .target = "/a.html"},
        {.document = true, .target = "/a.html"},
        {.document = true, .target = "/d/a.html"},
    };
    char seen[7][80];
    for (size_t i = 0; i < 7; i++) {
        struct entry_rep rep;
        assert_true(lookup(fx, &s, "small.html", &facts[i], &rep));
        strcpy(seen[i], rep.etag);
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(seen[i], seen[j]);
        }
        entry_rep_release(&rep);
    }
}

static void test_not_document_gets_no_client(void **state)
{
    /* A fragment fetched by script: never the live-reload client. */
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache, .live = &live};
    struct entry_facts f = {.document = false, .target = "/small.html"};
    struct entry_rep rep;
    assert_true(lookup(fx, &s, "small.html", &f, &rep));
    char *text = rep_text(&rep);
    assert_null(strstr(text, "reload.js"));
    assert_null(strstr(rep.etag, "-t"));
    free(text);
    entry_rep_release(&rep);
}

static void test_directories_where_files_are_expected(void **state)
{
    /* 404.html/ and x.html.gz/ are folders: false or identity, and every
     * descriptor opened on the way is closed. */
    struct fixture *fx = *state;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/404.html", fx->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/small.html.gz", fx->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    struct entry_server s = {.cache = fx->cache};
    struct entry_facts f = {.accept = GZIP_ONLY(true), .target = "/nowhere"};
    size_t fds = open_fds();
    for (int i = 0; i < 50; i++) {
        struct entry_rep rep;
        assert_false(entry_not_found(&s, &fx->route, &f, &rep));
        assert_true(lookup(fx, &s, "small.html", &f, &rep));
        entry_rep_release(&rep);
    }
    assert_int_equal(open_fds(), fds);
    assert_false(entry_not_found(&s, NULL, &f, NULL));
}

static void test_custom_404_is_a_page_like_any(void **state)
{
    struct fixture *fx = *state;
    put_file(fx, "404.html", "<!doctype html><head><title>Lost</title></head><a href=/assets/a.png>a</a>",
             strlen("<!doctype html><head><title>Lost</title></head><a href=/assets/a.png>a</a>"), 1000000);
    struct entry_server s = {.cache = fx->cache, .live = &live};
    struct entry_facts f = {.accept = GZIP_ONLY(true), .has_range = true, .document = true,
                            .prefix = "/article", .target = "/deep/er/missing.html"};
    for (int round = 0; round < 2; round++) {
        struct entry_rep rep;
        assert_true(entry_not_found(&s, &fx->route, &f, &rep));
        assert_false((rep.coding == ENCODING_GZIP)); /* an error page is sent whole, as it is */
        char *text = rep_text(&rep);
        assert_non_null(strstr(text, "href=/article/assets/a.png"));
        assert_non_null(strstr(text, "<script src=\"../../__folio/reload.js\" defer></script></head>"));
        free(text);
        entry_rep_release(&rep);
    }
}

static void test_big_gzip_is_made_once_then_identity(void **state)
{
    /* Its gzip form is over half the cache: compressing it per request would
     * be the only way to send it, so identity is sent, from the first. */
    struct fixture *fx = *state;
    struct cache *small = cache_create(512);
    struct entry_server s = {.cache = small};
    struct entry_facts f = {.accept = GZIP_ONLY(true), .target = "/big.html"};
    for (int round = 0; round < 3; round++) {
        struct entry_rep rep;
        assert_true(lookup(fx, &s, "big.html", &f, &rep));
        assert_false((rep.coding == ENCODING_GZIP));
        assert_null(strstr(rep.etag, "-gz"));
        entry_rep_release(&rep);
    }
    assert_true(cache_stats(small).bytes > 0); /* what it remembers: "identity" */
    assert_true(cache_stats(small).bytes <= 512);
    cache_destroy(small);
}

static void test_big_transform_is_kept_in_a_memfd(void **state)
{
    /* 40 KB rewritten, in a cache of 96 KB: over the heap's eighth, under
     * half: made once, kept out of the heap and sent from there. */
    struct fixture *fx = *state;
    struct cache *c = cache_create(96 << 10);
    struct entry_server s = {.cache = c};
    struct entry_facts f = {.prefix = "/article", .target = "/big.html"};
    ino_t first = 0;
    for (int round = 0; round < 3; round++) {
        struct entry_rep rep;
        assert_true(lookup(fx, &s, "big.html", &f, &rep));
        { /* the first too: from the cache's memfd, not the heap copy it was made in */
            assert_null(rep.body);
            assert_true(rep.fd >= 0);
            struct stat st;
            assert_int_equal(fstat(rep.fd, &st), 0);
            first = first ? first : st.st_ino;
            assert_int_equal(st.st_ino, first); /* one memfd: not rebuilt */
        }
        char *text = rep_text(&rep);
        assert_non_null(strstr(text, "src=\"/article/assets/a.png\""));
        free(text);
        entry_rep_release(&rep);
    }
    cache_destroy(c);
}

/* Two big compressible files alternately, in a budget that holds both: each
 * is compressed once, and every answer, the first too, is sent from the
 * cache's one memfd copy: no heap copy besides it (issue 19, item 2). */
static void test_big_coded_body_is_one_copy(void **state)
{
    struct fixture *fx = *state;
    struct cache *c = cache_create(160 << 10); /* a memfd past 20 KB; two ~61 KB bodies fit */
    struct entry_server s = {.cache = c};
    struct entry_facts f = {.accept = encoding_parse("gzip"), .target = "/b.txt"};
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *text = malloc(80001);
    unsigned seed = 7;
    for (int file = 0; file < 2; file++) {
        for (size_t i = 0; i < 80000; i++) { /* base64 of random bytes: gzip saves a quarter */
            seed = seed * 1103515245u + 12345u;
            text[i] = (i + 1) % 77 == 0 ? '\n' : digits[(seed >> 16) % 64];
        }
        put_file(fx, file ? "b1.txt" : "b0.txt", text, 80000, 5000000);
    }
    free(text);
    memset(calls, 0, sizeof(calls));
    ino_t ino[2] = {0, 0};
    for (int round = 0; round < 6; round++) {
        struct entry_rep rep;
        assert_true(lookup(fx, &s, round % 2 ? "b1.txt" : "b0.txt", &f, &rep));
        assert_int_equal(rep.coding, ENCODING_GZIP);
        assert_null(rep.body);
        struct stat st;
        assert_int_equal(fstat(rep.fd, &st), 0);
        assert_int_equal(st.st_nlink, 0); /* a memfd */
        ino[round % 2] = ino[round % 2] ? ino[round % 2] : st.st_ino;
        assert_int_equal(st.st_ino, ino[round % 2]); /* the one copy, each time */
        entry_rep_release(&rep);
    }
    assert_int_equal(calls[ENCODING_GZIP], 2);
    cache_destroy(c);
}

static void test_edit_is_seen_without_a_watcher(void **state)
{
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache};
    struct entry_facts f = {.accept = GZIP_ONLY(true), .target = "/e.html"};
    char *v1 = page_text(2000, "first"), *v2 = page_text(2000, "second");
    put_file(fx, "e.html", v1, strlen(v1), 2000000);
    struct entry_rep rep;
    assert_true(lookup(fx, &s, "e.html", &f, &rep));
    char etag[80];
    strcpy(etag, rep.etag);
    entry_rep_release(&rep);
    put_file(fx, "e.html", v2, strlen(v2), 2000001);
    assert_true(lookup(fx, &s, "e.html", &f, &rep));
    assert_string_not_equal(rep.etag, etag);
    char *text = rep_text(&rep);
    assert_non_null(strstr(text, "second"));
    free(text);
    entry_rep_release(&rep);
    free(v1);
    free(v2);
}

/* A browser's Accept-Encoding: each coding this build has is made once, and
 * the smallest is sent (br on this text), with its own ETag, level named;
 * a client naming one coding gets that one. */
static void test_each_coding_its_own_etag(void **state)
{
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache};
    const struct {
        const char *accept;
        enum encoding want;
        const char *tag;
        bool production;
    } rows[] = {
        {"gzip, deflate, br, zstd", FOLIO_HAVE_BROTLI ? ENCODING_BR : FOLIO_HAVE_ZSTD ? ENCODING_ZSTD : ENCODING_GZIP,
         FOLIO_HAVE_BROTLI ? "-br5\"" : FOLIO_HAVE_ZSTD ? "-zs3\"" : "-gz6\"", false},
        {"gzip, deflate, br, zstd", FOLIO_HAVE_BROTLI ? ENCODING_BR : FOLIO_HAVE_ZSTD ? ENCODING_ZSTD : ENCODING_GZIP,
         FOLIO_HAVE_BROTLI ? "-br11\"" : FOLIO_HAVE_ZSTD ? "-zs19\"" : "-gz6\"", true},
        {"zstd", FOLIO_HAVE_ZSTD ? ENCODING_ZSTD : ENCODING_IDENTITY, FOLIO_HAVE_ZSTD ? "-zs3\"" : NULL, false},
        {"br", FOLIO_HAVE_BROTLI ? ENCODING_BR : ENCODING_IDENTITY, FOLIO_HAVE_BROTLI ? "-br5\"" : NULL, false},
        {"gzip", ENCODING_GZIP, "-gz6\"", false},
        {"br;q=0.5, gzip", FOLIO_HAVE_BROTLI ? ENCODING_BR : ENCODING_GZIP,
         FOLIO_HAVE_BROTLI ? "-br5\"" : "-gz6\"", false}, /* any q > 0: the smallest */
        {"br;q=0, gzip", ENCODING_GZIP, "-gz6\"", false},
        {"*;q=0", ENCODING_IDENTITY, NULL, false}, /* nothing acceptable: identity all the same */
    };
    char seen[8][80];
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct entry_facts f = {.accept = encoding_parse(rows[i].accept), .target = "/big.html",
                                .production = rows[i].production};
        struct entry_rep rep;
        assert_true(lookup(fx, &s, "big.html", &f, &rep));
        print_message("%s -> %s\n", rows[i].accept, rep.etag);
        assert_int_equal(rep.coding, rows[i].want);
        char identity[32]; /* NULL: identity's, the content and its size alone (etag.h) */
        snprintf(identity, sizeof(identity), "-%llx\"", (unsigned long long)rep.size);
        assert_true(ends_with(rep.etag, rows[i].tag ? rows[i].tag : identity));
        char *text = rep_text(&rep);
        assert_non_null(strstr(text, "<title>big</title>"));
        assert_true(ends_with(text, "</body>\n"));
        free(text);
        strcpy(seen[i], rep.etag);
        for (size_t j = 0; j < i; j++) {
            bool same_bytes = rows[j].want == rows[i].want &&
                              strcmp(rows[j].tag ? rows[j].tag : "", rows[i].tag ? rows[i].tag : "") == 0;
            assert_int_equal(strcmp(seen[i], seen[j]) == 0, same_bytes);
        }
        entry_rep_release(&rep);
    }
}

/* Made once per file version: a second request compresses nothing; an
 * edit makes each coding again, and the new bytes are what is sent. */
static void test_made_once_per_version(void **state)
{
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache};
    struct entry_facts f = {.accept = encoding_parse("gzip, br, zstd"), .target = "/m.html"};
    char *v1 = page_text(8000, "first"), *v2 = page_text(8000, "second");
    put_file(fx, "m.html", v1, strlen(v1), 3000000);
    memset(calls, 0, sizeof(calls));
    size_t before = cache_stats(fx->cache).bytes;
    char etag[80] = "";
    for (int round = 0; round < 3; round++) {
        struct entry_rep rep;
        assert_true(lookup(fx, &s, "m.html", &f, &rep));
        strcpy(etag, rep.etag);
        entry_rep_release(&rep);
    }
    /* One encoder per request at most, the first acceptable one built in. */
    enum encoding first = FOLIO_HAVE_BROTLI ? ENCODING_BR : FOLIO_HAVE_ZSTD ? ENCODING_ZSTD : ENCODING_GZIP;
    for (int e = ENCODING_GZIP; e < ENCODING_COUNT; e++) {
        assert_int_equal(calls[e], e == (int)first);
    }
    /* Each client naming one coding gets it made, once, counted in the cache. */
    const char *alone[] = {"gzip", "zstd", "br"};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < 3; i++) {
            struct entry_facts g = {.accept = encoding_parse(alone[i]), .target = "/m.html"};
            struct entry_rep rep;
            assert_true(lookup(fx, &s, "m.html", &g, &rep));
            entry_rep_release(&rep);
        }
    }
    for (int e = ENCODING_GZIP; e < ENCODING_COUNT; e++) {
        assert_int_equal(calls[e], compress_available((enum encoding)e));
    }
    assert_true(cache_stats(fx->cache).bytes > before + 3 * 100);
    put_file(fx, "m.html", v2, strlen(v2), 3000001);
    struct entry_rep rep;
    assert_true(lookup(fx, &s, "m.html", &f, &rep));
    assert_string_not_equal(rep.etag, etag);
    char *text = rep_text(&rep);
    assert_non_null(strstr(text, "<title>second</title>"));
    free(text);
    entry_rep_release(&rep);
    assert_int_equal(calls[first], 2);
    free(v1);
    free(v2);
}

/* A burst of first requests for one file version. */
#define BURST 8
struct burst {
    struct fixture *fx;
    pthread_barrier_t start;
    char etag[BURST][80];
    bool whole[BURST];
};
struct burst_arg {
    struct burst *b;
    int i;
};

/* One request of the burst: its ETag, and whether its bytes are version one. */
static void *burst_request(void *arg)
{
    struct burst_arg *a = arg;
    struct entry_server s = {.cache = a->b->fx->cache};
    struct entry_facts f = {.accept = encoding_parse("gzip"), .target = "/burst.html"};
    pthread_barrier_wait(&a->b->start);
    struct entry_rep rep;
    if (lookup(a->b->fx, &s, "burst.html", &f, &rep)) {
        char *text = rep_text(&rep);
        a->b->whole[a->i] = strstr(text, "<title>first</title>") != NULL;
        free(text);
        strcpy(a->b->etag[a->i], rep.etag);
        entry_rep_release(&rep);
    }
    return NULL;
}

/* A burst of concurrent first requests compresses the version once: the
 * others wait for that build and share it; a version written meanwhile is
 * built apart and never answered with the old version's bytes. */
static void test_burst_compresses_once(void **state)
{
    struct fixture *fx = *state;
    char *v1 = page_text(40000, "first"), *v2 = page_text(40000, "second");
    put_file(fx, "burst.html", v1, strlen(v1), 4000000);
    struct burst b = {.fx = fx};
    pthread_barrier_init(&b.start, NULL, BURST);
    pthread_t threads[BURST];
    struct burst_arg args[BURST];
    memset(calls, 0, sizeof(calls));
    atomic_store(&burst_waiters, BURST - 1);
    for (int i = 0; i < BURST; i++) {
        args[i] = (struct burst_arg){&b, i};
        assert_int_equal(pthread_create(&threads[i], NULL, burst_request, &args[i]), 0);
    }
    for (int i = 0; i < BURST; i++) {
        pthread_join(threads[i], NULL);
    }
    atomic_store(&burst_waiters, 0);
    assert_int_equal(calls[ENCODING_GZIP], 1);
    for (int i = 0; i < BURST; i++) {
        assert_true(b.whole[i]);
        assert_true(ends_with(b.etag[i], "-gz6\""));
        assert_string_equal(b.etag[i], b.etag[0]);
    }
    /* Version two while nothing waits: its own build, its own bytes. */
    put_file(fx, "burst.html", v2, strlen(v2), 4000001);
    struct entry_server s = {.cache = fx->cache};
    struct entry_facts f = {.accept = encoding_parse("gzip"), .target = "/burst.html"};
    struct entry_rep rep;
    assert_true(lookup(fx, &s, "burst.html", &f, &rep));
    char *text = rep_text(&rep);
    assert_non_null(strstr(text, "<title>second</title>"));
    assert_string_not_equal(rep.etag, b.etag[0]);
    free(text);
    entry_rep_release(&rep);
    assert_int_equal(calls[ENCODING_GZIP], 2);
    pthread_barrier_destroy(&b.start);
    free(v1);
    free(v2);
}

/* An encoder that fails: the next best coding answers, and the failure is
 * remembered for that version (not retried per request). */
static void test_failing_encoder_falls_back(void **state)
{
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache};
    struct entry_facts f = {.accept = encoding_parse("gzip, br, zstd"), .target = "/big.html"};
    failing = ENCODING_BR;
    memset(calls, 0, sizeof(calls));
    for (int round = 0; round < 2; round++) {
        struct entry_rep rep;
        assert_true(lookup(fx, &s, "big.html", &f, &rep));
        assert_int_not_equal(rep.coding, ENCODING_BR);
        assert_int_equal(rep.coding, FOLIO_HAVE_ZSTD ? ENCODING_ZSTD : ENCODING_GZIP);
        char *text = rep_text(&rep);
        assert_true(ends_with(text, "</body>\n"));
        free(text);
        entry_rep_release(&rep);
    }
    assert_int_equal(calls[ENCODING_BR], FOLIO_HAVE_BROTLI);
    /* Every encoder failing: identity, whole. */
    failing = ENCODING_GZIP;
    struct entry_facts g = {.accept = encoding_parse("gzip"), .target = "/small.html"};
    struct entry_rep rep;
    assert_true(lookup(fx, &s, "small.html", &g, &rep));
    assert_int_equal(rep.coding, ENCODING_IDENTITY);
    assert_null(strstr(rep.etag, "-gz"));
    entry_rep_release(&rep);
    failing = -1;
}

/* Sidecars name.br and name.zst beside name.gz: used when at least as new,
 * the smallest of all that are acceptable sent; a stale one never. */
static void test_sidecars_per_coding(void **state)
{
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache};
    char *text = page_text(40000, "sides");
    put_file(fx, "p.html", text, strlen(text), 4000000);
    put_file(fx, "p.html.br", "BR", 2, 4000000);    /* as new: used */
    put_file(fx, "p.html.zst", "ZSTD", 4, 3999999); /* older: ignored */
    const struct {
        const char *accept;
        enum encoding want;
        const char *tag;
    } rows[] = {
        {"br", ENCODING_BR, "-brs\""},
        {"gzip, br, zstd", ENCODING_BR, "-brs\""}, /* two bytes: the smallest */
        {"zstd", FOLIO_HAVE_ZSTD ? ENCODING_ZSTD : ENCODING_IDENTITY, FOLIO_HAVE_ZSTD ? "-zs3\"" : "0\""},
        {"br;q=0, gzip", ENCODING_GZIP, "-gz6\""},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct entry_facts f = {.accept = encoding_parse(rows[i].accept), .target = "/p.html"};
        struct entry_rep rep;
        assert_true(lookup(fx, &s, "p.html", &f, &rep));
        assert_int_equal(rep.coding, rows[i].want);
        assert_true(ends_with(rep.etag, rows[i].tag));
        if (ends_with(rows[i].tag, "s\"")) {
            assert_int_equal(rep.size, 2);
        }
        entry_rep_release(&rep);
    }
    free(text);
}

/* A Range indexes the bytes as stored: identity whatever is accepted, and
 * a transformed page gets every coding like a file does. */
static void test_range_and_transform(void **state)
{
    struct fixture *fx = *state;
    struct entry_server s = {.cache = fx->cache};
    struct entry_facts f = {.accept = encoding_parse("br, zstd, gzip"), .has_range = true,
                            .target = "/big.html"};
    struct entry_rep rep;
    assert_true(lookup(fx, &s, "big.html", &f, &rep));
    assert_int_equal(rep.coding, ENCODING_IDENTITY);
    entry_rep_release(&rep);
    f.has_range = false;
    f.prefix = "/article";
    assert_true(lookup(fx, &s, "big.html", &f, &rep));
    assert_int_equal(rep.coding, FOLIO_HAVE_BROTLI ? ENCODING_BR : FOLIO_HAVE_ZSTD ? ENCODING_ZSTD : ENCODING_GZIP);
    assert_non_null(strstr(rep.etag, "-t"));
    char *text = rep_text(&rep);
    assert_non_null(strstr(text, "src=\"/article/assets/a.png\"")); /* rewritten before compressed */
    free(text);
    entry_rep_release(&rep);
}

/* Whole responses are shared by clients that choose alike, only. */
static void test_response_variants_by_preference(void **state)
{
    struct entry_server s = {0};
    char a[64], b[64];
    struct entry_facts f = {.accept = encoding_parse("gzip, deflate, br, zstd")};
    struct entry_facts g = {.accept = encoding_parse("br, gzip, zstd")};
    assert_true(entry_response_variant(&s, &f, false, a, sizeof(a)));
    assert_true(entry_response_variant(&s, &g, false, b, sizeof(b)));
    assert_string_equal(a, b);
    g.accept = encoding_parse("gzip");
    assert_true(entry_response_variant(&s, &g, false, b, sizeof(b)));
    assert_string_not_equal(a, b);
    g.accept = encoding_parse("br;q=0, gzip, zstd");
    assert_true(entry_response_variant(&s, &g, false, b, sizeof(b)));
    assert_string_not_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_combination, setup, teardown),
        cmocka_unit_test_setup_teardown(test_etags_tell_representations_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_document_gets_no_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directories_where_files_are_expected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_custom_404_is_a_page_like_any, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_gzip_is_made_once_then_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_transform_is_kept_in_a_memfd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_coded_body_is_one_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edit_is_seen_without_a_watcher, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_coding_its_own_etag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_made_once_per_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_compresses_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_encoder_falls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sidecars_per_coding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_range_and_transform, setup, teardown),
        cmocka_unit_test(test_response_variants_by_preference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
