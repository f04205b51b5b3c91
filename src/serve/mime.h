/* mime: the Content-Type of a file.
 *
 * The extension table decides first: libmagic calls CSS, minified JS and HTML
 * fragments text/plain (PEERS.md 4e), and browsers refuse such stylesheets
 * under nosniff. libmagic is asked only for extensions the table does not
 * know. Its handle is not thread-safe: each sniff takes one of its own from a
 * small pool, so a file libmagic is slow on holds no other sniff, and the
 * handles bound how far libmagic's regular expressions scan, which bounds the
 * slowest sniff. Callers cache the answer per file version (cache.c) so the
 * hot path never gets here.
 */
#ifndef FOLIO_MIME_H
#define FOLIO_MIME_H

#include <stdbool.h>
#include <stddef.h>

struct mime_type {
    const char *name;  /* full header value, e.g. "text/css; charset=utf-8" */
    bool compressible; /* worth gzip: text, JSON, SVG, JS, wasm, ... */
};

/* The type for a file name's extension (case-insensitive), or NULL when the
 * table does not know it. Pure and thread-safe; the result is static. */
const struct mime_type *mime_from_extension(const char *path);

/* Opens libmagic. Returns false (and says why on stderr) if it cannot load its
 * database; folio then falls back to application/octet-stream. */
bool mime_init(void);
/* Closes every libmagic handle; no sniff may be in progress. */
void mime_finish(void);

/* Sniffs the first bytes of an open file with libmagic. Returns a malloc'd
 * header value (text types get their charset, us-ascii widened to utf-8) that
 * the caller frees; "application/octet-stream" when nothing better is known.
 * Thread-safe. */
char *mime_sniff(int fd);

/* True when a header value from mime_sniff is worth compressing. */
bool mime_is_compressible(const char *type);

#endif
