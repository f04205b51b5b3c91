/* rewrite: keeps an article's references inside a proxy's path prefix.
 *
 * Behind a proxy that serves folio under /article/, a page's relative
 * references already work; two kinds do not: absolute paths ("/assets/x"
 * goes to the site root, not /article/assets/x) and relative paths that climb
 * above the article ("../assets/x" from /article/index.html is /assets/x).
 * rewrite_html and rewrite_css put the prefix in front of both, and leave
 * every other reference (relative ones that stay inside, "//host/x", URLs
 * with a scheme, "#fragment", "?query") as it is.
 *
 * HTML: the URL attributes of any element (src, href, srcset, poster, data,
 * action, formaction, xlink:href, cite, background), and url() in style
 * attributes and <style> elements; comments and <script> text are left
 * alone. CSS: url() and @import strings; comments are skipped.
 *
 * It reads documents with html.c's scanner and css.c's url() finder (the
 * ones the live-reload injection and `folio check` use too) and copies
 * anything it does not understand unchanged. Pure and thread-safe; results
 * are malloc'd and owned by the caller.
 */
#ifndef FOLIO_REWRITE_H
#define FOLIO_REWRITE_H

#include <stdbool.h>
#include <stddef.h>

struct rewrite_context {
    const char *prefix; /* "/article": starts with "/", no trailing "/" */
    size_t depth;       /* folders between the article's root and the document
                           its references resolve against (a stylesheet's own
                           folder, a page's folder, a fragment's page) */
    /* Whether an absolute path is the article's (one of folio's routes);
     * NULL: every one is. */
    bool (*is_ours)(void *arg, const char *path, size_t len);
    void *arg;
};

/* A prefix is cleaned and checked by base/url_prefix.h, the one rule for it. */

/* The rewritten document, NUL-terminated, its length in *out_len; NULL only
 * when memory runs out. */
char *rewrite_html(const char *html, size_t len, const struct rewrite_context *ctx, size_t *out_len);
char *rewrite_css(const char *css, size_t len, const struct rewrite_context *ctx, size_t *out_len);

/* One reference as rewrite_html and rewrite_css would write it (leading
 * blanks kept), NUL-terminated: `folio check` asks what a reference becomes
 * under a prefix. NULL only when memory runs out. */
char *rewrite_url(const char *url, size_t len, const struct rewrite_context *ctx, size_t *out_len);

/* The folders of a target's path (query and fragment aside): one per "/"
 * after the first, so "/a/b.html" is 1 deep, and a page there refers back
 * to the root with that many "../" (rewrite_context's depth, the live-reload
 * client's src). */
size_t rewrite_depth(const char *target);

/* True for the attribute names whose values rewrite_html reads as one URL
 * (besides srcset, a list, and style, CSS), in any case. */
bool rewrite_is_url_attribute(const char *name, size_t len);

#endif
