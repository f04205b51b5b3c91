#include "mime.h"

#include <assert.h>
#include <magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define UTF8 "; charset=utf-8"

/* The web's types. Text types carry their charset: browsers otherwise guess,
 * and a guessed Latin-1 turns every "—" in the article into mojibake. */
static const struct {
    const char *ext;
    struct mime_type type;
} extension_table[] = {
    {"html", {"text/html" UTF8, true}},
    {"htm", {"text/html" UTF8, true}},
    {"css", {"text/css" UTF8, true}},
    {"js", {"text/javascript" UTF8, true}}, /* RFC 9239 */
    {"mjs", {"text/javascript" UTF8, true}},
    {"cjs", {"text/javascript" UTF8, true}},
    {"json", {"application/json", true}},
    {"map", {"application/json", true}},
    {"jsonld", {"application/ld+json", true}},
    {"webmanifest", {"application/manifest+json", true}},
    {"xml", {"application/xml", true}},
    {"rss", {"application/rss+xml", true}},
    {"atom", {"application/atom+xml", true}},
    {"xhtml", {"application/xhtml+xml", true}},
    {"svg", {"image/svg+xml", true}},
    {"wasm", {"application/wasm", true}},
    {"txt", {"text/plain" UTF8, true}},
    {"md", {"text/markdown" UTF8, true}},
    {"csv", {"text/csv" UTF8, true}},
    {"tsv", {"text/tab-separated-values" UTF8, true}},
    {"bib", {"text/x-bibtex" UTF8, true}},
    {"tex", {"text/x-tex" UTF8, true}},
    {"vtt", {"text/vtt" UTF8, true}},
    {"ics", {"text/calendar" UTF8, true}},
    {"py", {"text/x-python" UTF8, true}},
    {"c", {"text/x-c" UTF8, true}},
    {"h", {"text/x-c" UTF8, true}},
    {"woff2", {"font/woff2", false}},
    {"woff", {"font/woff", false}},
    {"ttf", {"font/ttf", true}},
    {"otf", {"font/otf", true}},
    {"png", {"image/png", false}},
    {"jpg", {"image/jpeg", false}},
    {"jpeg", {"image/jpeg", false}},
    {"gif", {"image/gif", false}},
    {"webp", {"image/webp", false}},
    {"avif", {"image/avif", false}},
    {"ico", {"image/x-icon", true}},
    {"bmp", {"image/bmp", true}},
    {"tif", {"image/tiff", false}},
    {"tiff", {"image/tiff", false}},
    {"wav", {"audio/wav", false}},
    {"mp3", {"audio/mpeg", false}},
    {"ogg", {"audio/ogg", false}},
    {"oga", {"audio/ogg", false}},
    {"opus", {"audio/ogg", false}},
    {"flac", {"audio/flac", false}},
    {"m4a", {"audio/mp4", false}},
    {"aac", {"audio/aac", false}},
    {"mp4", {"video/mp4", false}},
    {"m4v", {"video/mp4", false}},
    {"webm", {"video/webm", false}},
    {"ogv", {"video/ogg", false}},
    {"mov", {"video/quicktime", false}},
    {"pdf", {"application/pdf", false}},
    {"zip", {"application/zip", false}},
    {"gz", {"application/gzip", false}},
    {"tgz", {"application/gzip", false}},
    {"tar", {"application/x-tar", true}},
    {"glb", {"model/gltf-binary", false}},
    {"gltf", {"model/gltf+json", true}},
};

const struct mime_type *mime_from_extension(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(extension_table) / sizeof(extension_table[0]); i++) {
        if (strcasecmp(dot + 1, extension_table[i].ext) == 0) {
            return &extension_table[i].type;
        }
    }
    return NULL;
}

/* libmagic's cookies, one per sniff in progress: a cookie is not thread-safe,
 * and one lock around a single cookie let a file libmagic is slow on hold
 * every other sniff. Opened as sniffs overlap, up to SNIFFERS (a cookie's
 * tables are small; the database is a read-only mapping the page cache
 * shares), closed at mime_finish. */
#define SNIFFERS 8

/* The bytes of a file libmagic is shown: its binary tests look near the
 * start, its text tests and charset want a sample. */
#define SNIFF_BYTES (16 * 1024)

/* How far a regular expression of libmagic's database may scan (its default
 * is 8 KiB): glibc runs some of them in time quadratic in it on a run of
 * newlines, the worst case of a sniff (bench/README.md). */
#define SNIFF_REGEX_BYTES 4096

static struct {
    pthread_mutex_t lock;
    pthread_cond_t returned; /* a cookie is idle again */
    magic_t idle[SNIFFERS];  /* loaded, not in use */
    unsigned idle_count;
    unsigned open_count; /* idle and in use */
    unsigned limit;      /* SNIFFERS, or fewer once an open failed */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .returned = PTHREAD_COND_INITIALIZER};

/* A cookie with the database loaded and folio's limits set, or NULL (said
 * on stderr when say is true). */
static magic_t sniffer_open(bool say)
{
    magic_t cookie = magic_open(MAGIC_MIME | MAGIC_NO_CHECK_COMPRESS | MAGIC_ERROR);
    size_t regex_bytes = SNIFF_REGEX_BYTES;
    if (cookie && magic_load(cookie, NULL) == 0) {
        (void)magic_setparam(cookie, MAGIC_PARAM_REGEX_MAX, &regex_bytes); /* else its default bound */
        return cookie;
    }
    if (say) {
        fprintf(stderr, "folio: libmagic: %s; unknown file types will be application/octet-stream\n",
                cookie ? magic_error(cookie) : "cannot open");
    }
    if (cookie) {
        magic_close(cookie);
    }
    return NULL;
}

/* A cookie for this thread alone until sniffer_return: an idle one, a new
 * one while fewer than the limit are open, else the next one returned;
 * NULL when libmagic is not loaded. */
static magic_t sniffer_take(void)
{
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        if (pool.idle_count > 0 || pool.limit == 0) {
            magic_t cookie = pool.idle_count > 0 ? pool.idle[--pool.idle_count] : NULL;
            pthread_mutex_unlock(&pool.lock);
            return cookie;
        }
        if (pool.open_count < pool.limit) {
            pool.open_count++;
            pthread_mutex_unlock(&pool.lock); /* loading maps a file: others take and return meanwhile */
            magic_t cookie = sniffer_open(false);
            if (cookie) {
                return cookie;
            }
            pthread_mutex_lock(&pool.lock);
            pool.limit = --pool.open_count; /* short of memory: make do with those open */
            continue;
        }
        pthread_cond_wait(&pool.returned, &pool.lock);
    }
}

/* Gives back a cookie from sniffer_take. */
static void sniffer_return(magic_t cookie)
{
    pthread_mutex_lock(&pool.lock);
    pool.idle[pool.idle_count++] = cookie;
    pthread_cond_signal(&pool.returned);
    pthread_mutex_unlock(&pool.lock);
}

bool mime_init(void)
{
    magic_t first = sniffer_open(true); /* now, so a missing database is said once, at start */
    pthread_mutex_lock(&pool.lock);
    if (first) {
        pool.idle[pool.idle_count++] = first;
        pool.open_count = 1;
        pool.limit = SNIFFERS;
    }
    pthread_mutex_unlock(&pool.lock);
    return first != NULL;
}

void mime_finish(void)
{
    pthread_mutex_lock(&pool.lock);
    assert(pool.idle_count == pool.open_count); /* no sniff in progress */
    while (pool.idle_count > 0) {
        magic_close(pool.idle[--pool.idle_count]);
    }
    pool.open_count = 0;
    pool.limit = 0; /* mime_sniff answers without libmagic from now on */
    pthread_mutex_unlock(&pool.lock);
}

/* libmagic answers "text/plain; charset=us-ascii" or "...; charset=binary";
 * ASCII is a subset of UTF-8 and says more to a browser, binary says nothing. */
static char *tidy_magic_answer(const char *answer)
{
    if (!answer || strncmp(answer, "inode/", 6) == 0) {
        return strdup("application/octet-stream");
    }
    const char *semi = strchr(answer, ';');
    size_t type_len = semi ? (size_t)(semi - answer) : strlen(answer);
    const char *charset = semi ? strstr(semi, "charset=") : NULL;
    charset = charset ? charset + 8 : NULL;
    bool text = strncmp(answer, "text/", 5) == 0;
    if (!text || !charset || strcmp(charset, "binary") == 0 || strcmp(charset, "us-ascii") == 0 ||
        strcmp(charset, "unknown-8bit") == 0) {
        charset = text ? "utf-8" : NULL;
    }
    char *out = NULL;
    if (charset) {
        if (asprintf(&out, "%.*s; charset=%s", (int)type_len, answer, charset) < 0) {
            out = NULL;
        }
    } else {
        out = strndup(answer, type_len);
    }
    return out;
}

char *mime_sniff(int fd)
{
    unsigned char head[SNIFF_BYTES];
    ssize_t n = pread(fd, head, sizeof(head), 0);
    magic_t cookie = n > 0 ? sniffer_take() : NULL;
    if (!cookie) {
        return strdup("application/octet-stream");
    }
    char *type = tidy_magic_answer(magic_buffer(cookie, head, (size_t)n));
    sniffer_return(cookie);
    return type;
}

bool mime_is_compressible(const char *type)
{
    return strncmp(type, "text/", 5) == 0 || strstr(type, "json") || strstr(type, "xml") ||
           strstr(type, "javascript");
}
