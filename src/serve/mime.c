#include "mime.h"

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

static pthread_mutex_t magic_lock = PTHREAD_MUTEX_INITIALIZER;
static magic_t magic_cookie;

bool mime_init(void)
{
    magic_cookie = magic_open(MAGIC_MIME | MAGIC_NO_CHECK_COMPRESS | MAGIC_ERROR);
    if (!magic_cookie || magic_load(magic_cookie, NULL) != 0) {
        fprintf(stderr, "folio: libmagic: %s; unknown file types will be application/octet-stream\n",
                magic_cookie ? magic_error(magic_cookie) : "cannot open");
        mime_finish();
        return false;
    }
    return true;
}

void mime_finish(void)
{
    if (magic_cookie) {
        magic_close(magic_cookie);
        magic_cookie = NULL;
    }
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
    unsigned char head[16 * 1024];
    ssize_t n = pread(fd, head, sizeof(head), 0);
    if (n <= 0 || !magic_cookie) {
        return strdup("application/octet-stream");
    }
    pthread_mutex_lock(&magic_lock);
    char *type = tidy_magic_answer(magic_buffer(magic_cookie, head, (size_t)n));
    pthread_mutex_unlock(&magic_lock);
    return type;
}

bool mime_is_compressible(const char *type)
{
    return strncmp(type, "text/", 5) == 0 || strstr(type, "json") || strstr(type, "xml") ||
           strstr(type, "javascript");
}
