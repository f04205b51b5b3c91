/* check_refs — the pure half of `folio check`: what a document references,
 * and how a browser turns one reference into a URL path.
 *
 * Extraction reads HTML with html.c's scanner and CSS with css.c's finder
 * (the ones rewrite.c uses, so the checker sees what the prefix rewriter
 * sees): the URL attributes that load or link something (src, href, srcset,
 * poster, <object data>, xlink:href), url() and @import in style attributes,
 * <style> elements and stylesheets, the fragment elements
 * (id="fragment-<name>", which the article's loader fills from
 * fragments/<name>.html), and every id (and <a name>) for in-page anchors.
 * Nothing inside comments or script text counts; attribute values have their
 * character references decoded, as a browser does. Whether the document runs
 * a script is noted too: its ids may then not all be in its source.
 *
 * No I/O, no globals; a check_doc owns everything in it.
 */
#ifndef FOLIO_CHECK_REFS_H
#define FOLIO_CHECK_REFS_H

#include <stdbool.h>
#include <stddef.h>

struct check_ref {
    char *url;         /* decoded, as written otherwise; malloc'd */
    size_t offset;     /* where the value starts in the document */
    char what[40];     /* "img src", "img srcset", "url()", "fragment", ... */
    bool link;         /* a navigation (<a>/<area> href): its #id names an anchor */
    bool fragment;     /* a fragment element: url is fragments/<name>.html */
};

struct check_id {
    char *id;          /* malloc'd */
    size_t offset;
    bool is_name;      /* <a name>: an anchor target, but not an id for duplicates */
};

struct check_doc {
    struct check_ref *refs;
    size_t nrefs, refs_cap;
    struct check_id *ids;
    size_t nids, ids_cap;
    bool scripts;      /* holds a <script> a browser runs (any JavaScript type) */
};

/* Adds the references and ids of an HTML document to @d. False when memory
 * runs out (@d then holds what was found so far; free it either way). */
bool check_refs_html(const char *html, size_t len, struct check_doc *d);

/* Adds the url() and @import references of CSS text @css[0, len) to @d, with
 * offsets counted from @base (the text's place in its file). */
bool check_refs_css(const char *css, size_t len, size_t base, struct check_doc *d);

void check_doc_free(struct check_doc *d); /* accepts a zeroed struct */

enum check_url_kind {
    CHECK_URL_PATH,     /* a path on this server: *path is set */
    CHECK_URL_EXTERNAL, /* another origin (http:, https:, "//host") */
    CHECK_URL_OTHER,    /* data:, mailto:, javascript:, ...: no file behind it */
    CHECK_URL_DOCUMENT, /* "", "?q" or "#id": the document itself */
};

struct check_url {
    enum check_url_kind kind;
    char *path;     /* CHECK_URL_PATH: the merged path, still percent-encoded,
                       dot segments not yet removed; malloc'd */
    char *fragment; /* after '#', percent-decoded, or NULL when none; malloc'd */
};

/* Resolves @ref as a browser does against a document whose URL path is
 * @base (e.g. "/chapter/index.html"): blanks around it and tabs and newlines
 * in it dropped, '\' read as '/', scheme and "//" recognised, query dropped,
 * fragment split off, a relative path merged with @base's folder (RFC 3986
 * 5.2.3). False only when memory runs out. */
bool check_url_resolve(const char *ref, const char *base, struct check_url *u);

void check_url_free(struct check_url *u); /* accepts a zeroed struct */

#endif
