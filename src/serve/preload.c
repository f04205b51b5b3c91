/* preload — see preload.h. */
#include "preload.h"

#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/body.h"
#include "base/escape.h"
#include "base/html.h"
#include "entry.h"
#include "site/resolve.h"
#include "site/routes.h"

#define FRAGMENTS_DIR "fragments/"
/* A fragment hint's words after the URL: see preload.h for why each is there. */
#define AS_FRAGMENT "; rel=preload; as=fetch; crossorigin=anonymous; fetchpriority=low"
/* The longest hint, its line ending included. */
#define LINK_MAX (NAME_MAX + 128)
/* Names scanned for: more than are hinted, as some may have no file. */
#define SCAN_MAX (2 * PRELOAD_MAX)
/* The page's own stylesheets and scripts hinted before its fragments, at most. */
#define OWN_MAX 8
/* Pages above this are not scanned (entry.c transforms none either). */
#define PAGE_MAX_BYTES (16u << 20)

/* See preload.h. */
const struct route *preload_folder(const struct routes *routes, const struct route *route,
                                   const char *rel, struct file_id *id, char *variant, size_t size)
{
    char prefix[PATH_MAX];
    const char *slash = strrchr(rel, '/');
    int dir_len = slash ? (int)(slash - rel + 1) : 0;
    if (!routes || route->is_fragments ||
        (size_t)snprintf(prefix, sizeof(prefix), "%s%.*s" FRAGMENTS_DIR, route->prefix, dir_len, rel) >=
            sizeof(prefix)) {
        return NULL;
    }
    for (size_t i = 0; i < routes->count; i++) {
        const struct route *r = &routes->items[i];
        struct stat st;
        if (!r->is_fragments || strcmp(r->prefix, prefix) != 0) {
            continue;
        }
        /* Adding or removing a file moves the folder's mtime and ctime; a
         * kernel with multigrain timestamps (Linux 6.13) gives a change
         * after this look a time of its own even within one clock tick. */
        if (atomic_load(&r->watch->gone) || fstat(r->dir_fd, &st) != 0) {
            return NULL;
        }
        file_id_from_stat(id, &st);
        int n = snprintf(variant, size, "links:%" PRIu64 ":%" PRId64 ":%" PRId64, id->ino, id->mtime_ns,
                         id->ctime_ns);
        return n > 0 && (size_t)n < size ? r : NULL;
    }
    return NULL;
}

/* True when c is spelled the same in a URL by every loader (as written,
 * through encodeURIComponent, by the server's decoding). */
static bool plain_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
}

/* The fragment's file name "<name>.html" into file and the URL path its
 * loader asks for into url, from name (len bytes, as written in the page);
 * false when no loader's spelling is sure or either does not fit. Beside
 * plain_char's, well-formed UTF-8 beyond ASCII: the URL parser and
 * encodeURIComponent both send its bytes as %XX with capitals (WHATWG URL,
 * path percent-encode set; ECMA-262 Encode), so the hint says the same. No
 * dotfile (never served, resolve.h). */
static bool fragment_spelling(const char *name, size_t len, char file[static NAME_MAX + 1], char *url, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t used = 0;
    if (name[0] == '.' || (size_t)snprintf(file, NAME_MAX + 1, "%.*s.html", (int)len, name) > NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < len;) {
        const unsigned char *p = (const unsigned char *)file + i;
        size_t n = *p < 0x80 ? plain_char((char)*p) : escape_utf8_length(p);
        if (n == 0 || i + n > len || used + 3 * n >= size) {
            return false;
        }
        for (size_t k = 0; k < n; k++, i++) {
            if (file[i] & 0x80) {
                url[used++] = '%';
                url[used++] = hex[(unsigned char)file[i] >> 4];
                url[used++] = hex[file[i] & 0xF];
            } else {
                url[used++] = file[i];
            }
        }
    }
    url[used] = '\0';
    return true;
}

/* True when url (len bytes, as written in the page) is a path relative to
 * the page that a Link header may carry as it is and that resolves the same
 * there as in the page: no scheme, no leading "/" (a proxy prefix would be
 * missed: those the page's rewrite changes, the header's not), no "..", no
 * character reference, query or character a header would need quoted. */
static bool plain_path(const char *url, size_t len)
{
    if (url[0] == '/') {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char c = url[i];
        if (!(plain_char(c) || c == '/' || c == '~') || (c == '.' && i + 1 < len && url[i + 1] == '.')) {
            return false;
        }
    }
    return true;
}

/* True when file is a file folio would serve beneath folder: the same
 * open a request for it makes. */
static bool served(const struct route *folder, const char *file)
{
    int fd, err;
    struct stat st;
    enum resolve_status status = resolve_open(folder->dir_fd, file, &fd, &st, &err);
    if (fd >= 0) {
        close(fd);
    }
    return status == RESOLVED_FILE;
}

/* The Link values being written: at most PRELOAD_MAX, budget bytes. */
struct links {
    char text[PRELOAD_MAX * LINK_MAX];
    size_t used, count, budget;
};

/* Adds "<prefix url suffix>words" when it fits; false when it does not. */
static bool links_add(struct links *w, const char *prefix, const char *url, size_t len, const char *suffix,
                      const char *words)
{
    size_t n = 1 + strlen(prefix) + len + strlen(suffix) + 1 + strlen(words) + 1;
    if (w->count == PRELOAD_MAX || n > LINK_MAX || w->used + n > w->budget) {
        return false;
    }
    w->used += (size_t)snprintf(w->text + w->used, sizeof(w->text) - w->used, "<%s%.*s%s>%s\n", prefix, (int)len,
                                url, suffix, words);
    w->count++;
    return true;
}

/* See preload.h. */
struct body *preload_links(const char *html, size_t len, const struct route *folder, size_t budget)
{
    struct html_span names[SCAN_MAX];
    struct html_resource own[OWN_MAX];
    struct links w = {.budget = budget};
    size_t found = html_has_base_href(html, len) ? 0 : html_fragment_names(html, len, names, SCAN_MAX);
    size_t owned = found ? html_blocking_resources(html, len, own, OWN_MAX) : 0;
    /* What DOMContentLoaded waits for first: the fragments' preloads, sent
     * before the parser finds the page's stylesheets and scripts, would take
     * the browser's six connections ahead of them (bench/README.md). */
    for (size_t i = 0; i < owned; i++) {
        const char *url = html + own[i].url.at;
        if (plain_path(url, own[i].url.len)) {
            links_add(&w, "", url, own[i].url.len, "",
                      own[i].kind == HTML_STYLESHEET ? "; rel=preload; as=style" : "; rel=preload; as=script");
        }
    }
    size_t before = w.count;
    for (size_t i = 0; i < found; i++) {
        char file[NAME_MAX + 1], url[LINK_MAX];
        if (fragment_spelling(html + names[i].at, names[i].len, file, url, sizeof(url)) && served(folder, file)) {
            links_add(&w, FRAGMENTS_DIR, url, strlen(url), ".html", AS_FRAGMENT);
        }
    }
    return body_from(w.text, w.count > before ? w.used : 0); /* no fragment hinted: nothing */
}

/* See preload.h. */
void preload_decide(const struct entry_server *s, const struct route *route, const char *rel, const char *key,
                    struct entry_rep *rep)
{
    char variant[96];
    if (!s->preload_budget || strncmp(rep->type, "text/html", 9) != 0 || rep->size > PAGE_MAX_BYTES ||
        !(rep->links_folder = preload_folder(s->routes, route, rel, &rep->links_folder_id, variant,
                                             sizeof(variant)))) {
        return;
    }
    rep->links = cache_get(s->cache, key, variant, &rep->source);
    if (!rep->links) {
        uint64_t generation = cache_generation(s->cache);
        struct body *page = body_read(rep->fd, rep->size);
        rep->links = page ? preload_links((const char *)page->data, page->len, rep->links_folder,
                                          s->preload_budget) : NULL;
        if (rep->links) {
            cache_put(s->cache, key, variant, &rep->source, rep->links, generation);
        }
        body_unref(page);
    }
}

/* See preload.h. */
void preload_each(const struct body *links, void (*add)(void *arg, const char *value), void *arg)
{
    char value[LINK_MAX];
    const char *p = links ? (const char *)links->data : NULL, *end = p ? p + links->len : NULL;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n < sizeof(value)) {
            memcpy(value, p, n);
            value[n] = '\0';
            add(arg, value);
        }
        p += n + 1;
    }
}
