/* entry: which bytes answer this file, for this kind of client.
 *
 * facts.c reads a few plain facts from a request once (which codings it
 * accepts, did it send a Range, the proxy prefix, whether the browser loads
 * it as a page, the target as sent) and target.c opens the file;
 * entry_represent turns those and the open file into one representation: its type, whether it varies by
 * Accept-Encoding, its strong ETag, its size, its content coding, and its bytes,
 * either in memory or as a descriptor to sendfile from.
 *
 * This module owns every decision between the two: the variant names (of
 * the derived bodies here and of the whole responses ready.c keeps) and the
 * ETag format (one place each), the choice of coding (the client's most
 * preferred, then the smallest, encoding_better), compressed sidecars
 * ("name.gz", "name.br", "name.zst", each used when at least as new), the
 * transforms (the proxy prefix put into references, rewrite.c;
 * the live-reload client put into pages, html.c), a page's preload hints
 * (preload.h, which keeps them beside the bodies) and the small-file copy.
 * Its cache key is the file's path (routes_path), which livereload's
 * invalidation builds too, so a change always drops what a request would
 * find.
 *
 * What is derived (a type libmagic sniffed, a compressed or rewritten body, a
 * small file's bytes) is made once per file version and kept in cache.c. A
 * body too big for the cache to keep is never rebuilt per request: a coded
 * variant falls back to identity (remembered as an empty body), a transform
 * is kept in a memfd up to half of the cache. Thread-safe: the cache is, the
 * rest is per call. Nothing here knows libmicrohttpd.
 */
#ifndef FOLIO_ENTRY_H
#define FOLIO_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "cache.h"
#include "encoding.h"
#include "precondition.h"

struct body;
struct route;
struct routes;
struct serve_live_hook;

/* What is fixed for the server's life. */
struct best;

struct entry_server {
    struct cache *cache;
    const struct serve_live_hook *live; /* pages get the live-reload client; NULL: none */
    /* Whether an absolute path is the article's (rewrite.h); NULL: all are. */
    bool (*is_ours)(void *arg, const char *path, size_t len);
    void *is_ours_arg;
    struct best *best; /* makes big bodies' best levels in the background; NULL: never made */
    const struct routes *routes; /* where a page's fragments are (preload.h); NULL: hints none */
    size_t preload_budget;       /* bytes of Link header values a page may get; 0: hints none */
};

/* What facts.c reads from the request (facts_for_route), and all entry
 * needs of it. */
struct entry_facts {
    struct encoding_accept accept; /* Accept-Encoding, read (encoding.h) */
    bool has_range;     /* a Range came: the file's own bytes, so offsets mean what they say */
    bool production;    /* brotli and zstd at their best levels, else fast ones (compress.h) */
    bool document;      /* the browser loads it as a page (Sec-Fetch-Dest, the route) */
    const char *prefix; /* the proxy's path prefix ("/article"), or NULL */
    const char *target; /* the target as sent: its folders set the client's src and the rewrite depth */
    unsigned gzip_level; /* of the request's settings snapshot, 1-9; 0: zlib's default, 6 */
    unsigned brotli_quality, zstd_level; /* ceilings on compress_level's choice; 0: none */
    unsigned settings_generation; /* of that snapshot: whole responses carry its headers */
};

/* One representation. Exactly one of body and fd carries the bytes (fd may
 * be the only one for an empty file). Release with entry_rep_release. */
struct entry_rep {
    const char *type;  /* Content-Type value; lives as long as rep */
    bool compressible; /* its bytes vary by Accept-Encoding (Vary) */
    bool by_fetch_dest; /* and by Sec-Fetch-Dest: a page gets the live-reload client, a fetch not */
    enum encoding coding; /* Content-Encoding (ENCODING_IDENTITY: none) */
    uint64_t saved;       /* coded: identity bytes minus these (health's bytes saved) */
    struct body *body; /* in memory, one reference owned; NULL: send fd */
    int fd;            /* owned, -1 when body holds the bytes */
    bool sealed;       /* fd is a sealed memfd of ours (a coded body): it can
                        * neither shrink nor be deleted, so nothing watches it */
    uint64_t size;
    struct precondition_times times; /* the file's mtime and ctime: Last-Modified, conditionals */
    char etag[80];
    struct body *type_holder; /* keeps a sniffed type alive */
    struct file_id source;    /* the version of the file it was made from */
    const char *sidecar;      /* the sidecar's suffix (".gz") when its bytes are one's, else NULL */
    struct file_id sidecar_id; /* that sidecar's version: a whole response kept from it checks it */
    bool best_pending; /* its best level waits for room in the worker's queue: keep no whole
                        * response, so the next request offers it again (entry.c) */
    struct body *links; /* a page's preload hints (preload.h), one reference; NULL: none */
    const struct route *links_folder; /* the fragment folder they were decided with, else NULL */
    struct file_id links_folder_id;   /* and its version: a whole response kept with them checks it */
};

/* Chooses the representation of the open regular file fd (st its fstat),
 * found at rel beneath route, for a client with facts f. Takes fd: it ends
 * in rep->fd or is closed. Returns false (rep released) only when a
 * descriptor cannot be had: a 503. */
bool entry_represent(const struct entry_server *s, const struct route *route, const char *rel,
                     int fd, const struct stat *st, const struct entry_facts *f,
                     struct entry_rep *rep);

/* The article's own 404 page (404.html in root, the "/" route; may be NULL)
 * prepared like any page for the address that was not found, identity only.
 * False when there is none (or it is not a regular file). */
bool entry_not_found(const struct entry_server *s, const struct route *root,
                     const struct entry_facts *f, struct entry_rep *rep);

/* The variant a whole response made for a client with facts f is kept
 * under (ready.h), beside the file's derived bodies: every fact its bytes
 * and headers depend on, and nothing else. The target counts by its depth
 * alone (pages and stylesheets refer by "../"), and only where a transform
 * may apply (live reload, a prefix), so a plain file has one entry however
 * its address is spelled. not_found: the article's 404 page, which has one
 * only when it is the same for every address (no client, no prefix). False
 * when there is none or it does not fit in size. */
bool entry_response_variant(const struct entry_server *s, const struct entry_facts *f, bool not_found,
                            char *out, size_t size);

/* Closes and drops what rep still holds; accepts a released rep. */
void entry_rep_release(struct entry_rep *rep);

#endif
