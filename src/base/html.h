/*
 * html — folio's one HTML scanner, and the live-reload injection built on it.
 *
 * The scanner splits a document into tokens the way a browser's tokenizer
 * does (HTML Living Standard, 13.2.5), as far as folio needs it: text, start
 * tags with their attributes (names and values with their offsets), end tags,
 * comments (abrupt "<!-->" and "<!--->" included, "--!>" closing one), bogus
 * comments and doctypes, and the raw text of script, style, title and
 * textarea, which runs to the matching end tag ("</scripts" is not one; in a
 * script, not one inside "<!-- <script> ... -->" either).
 * Every byte belongs to exactly one token, in order, so a rewriter can copy
 * what it does not change. It does not build a tree, decode character
 * references (html_decode does, on request) or fix nesting.
 *
 * Used by rewrite.c (the proxy prefix), html_inject (the live-reload client's
 * two tags), check.c (broken references) and preload.c (the fragments a page
 * names), so they never disagree about what is a tag, a comment or script text.
 *
 * Pure functions: no I/O, no globals, safe to call from any thread. Tokens
 * hold offsets into the caller's buffer; nothing here allocates but
 * html_inject() and html_decode(), whose results the caller frees.
 */
#ifndef FOLIO_HTML_H
#define FOLIO_HTML_H

#include <stdbool.h>
#include <stddef.h>

enum html_token_type {
    HTML_TEXT,      /* character data, stray '<' included */
    HTML_START_TAG, /* "<name attrs>" */
    HTML_END_TAG,   /* "</name ...>" */
    HTML_COMMENT,   /* "<!-- -->", "<!doctype ...>", "<?...>", "</ x>", "</>" */
    HTML_RAW_TEXT,  /* the text of a script, style, title or textarea */
};

struct html_token {
    enum html_token_type type;
    size_t start, end;     /* the token is html[start, end) */
    size_t name, name_len; /* tags: the tag name's offset and length */
    size_t attrs;          /* start tags: where the attributes begin */
    bool closed;           /* tags: ended by '>' (false: by the end of input) */
};

struct html_scanner {
    const char *html;
    size_t len, pos;
    const char *raw; /* the element whose raw text comes next, or NULL */
};

struct html_attr {
    size_t name, name_len;
    size_t value, value_len; /* inside the quotes, if any */
    bool has_value;          /* false: a bare name ("disabled") */
};

/* Starts scanning @html (@len bytes, need not be NUL-terminated). */
void html_scanner_init(struct html_scanner *s, const char *html, size_t len);

/* The next token into *t; false at the end of input. */
bool html_scanner_next(struct html_scanner *s, struct html_token *t);

/* The next attribute of start tag @t into *a; *pos starts at t->attrs and is
 * advanced past it. False when the tag has no more. */
bool html_attr_next(const char *html, const struct html_token *t, size_t *pos,
                    struct html_attr *a);

/* True when html[at, at + len) is the lower-case ASCII word @lower, in any
 * case ("SRC" is "src"). */
bool html_name_is(const char *html, size_t at, size_t len, const char *lower);

/* srcset (HTML 4.8.4.3.11): the next image candidate's URL of @v[0, len) into
 * [*url, *url + *url_len), *pos advanced past its descriptors. A URL runs to
 * whitespace; commas that end it are not part of it. False when no more. */
bool html_srcset_next(const char *v, size_t len, size_t *pos, size_t *url,
                      size_t *url_len);

/* Character references in an attribute value (&amp; &lt; &gt; &quot; &apos;
 * &nbsp; and numeric ones) decoded into a malloc'd, NUL-terminated string;
 * others are kept as written, a NUL byte becomes U+FFFD. NULL only when
 * memory runs out. */
char *html_decode(const char *v, size_t len, size_t *out_len);

/* A stretch html[at, at + len) of the caller's buffer. */
struct html_span {
    size_t at, len;
};

/*
 * The fragments a page names: for each start tag (outside comments, raw
 * text, and template and noscript content, none of which a script finds in
 * the document) whose id attribute is "fragment-<name>" with a non-empty name, that
 * name as written (character references not decoded), in document order,
 * each name once, at most max of them into out. Returns how many.
 */
size_t html_fragment_names(const char *html, size_t len, struct html_span *out, size_t max);

enum html_resource_kind {
    HTML_STYLESHEET, /* <link rel=stylesheet href> */
    HTML_SCRIPT,     /* <script src> */
};

struct html_resource {
    enum html_resource_kind kind;
    struct html_span url; /* the href or src as written */
};

/*
 * What DOMContentLoaded waits for that a page names itself: its
 * stylesheets (rel holds "stylesheet" but not "alternate") and its classic
 * scripts that are not async, outside comments, raw text, template and
 * noscript content, in document order, at most max into out. Only those a
 * plain preload of the same URL matches: none with crossorigin, integrity,
 * a media (which may make it wait) or disabled, a type other than CSS's or
 * classic JavaScript's, nomodule. Returns how many.
 */
size_t html_blocking_resources(const char *html, size_t len, struct html_resource *out, size_t max);

/* True when a base element with an href (outside comments, raw text and
 * template content) sets the document's base URL (HTML 4.2.3): then the
 * page's relative URLs do not resolve against its own address. */
bool html_has_base_href(const char *html, size_t len);

/* A position in a text, 1-based; columns count characters (UTF-8 code
 * points), as editors show them. Zero-initialise, then seek forward. */
struct html_cursor {
    size_t offset;
    unsigned line, column;
};

/* Moves @c to @offset of @text; a seek backwards starts again from 0. */
void html_cursor_seek(struct html_cursor *c, const char *text, size_t offset);

/*
 * Where html_inject() will put the snippet: the offset of the first "</head"
 * end tag (case-insensitive) outside comments and raw text; else of the first
 * "</body"; else @len (the end).
 */
size_t html_inject_offset(const char *html, size_t len);

/*
 * Where html_inject() will put the early snippet, which must run before any
 * of the page's scripts: right after the last of the page's leading doctype,
 * comments, <html>, <head> and <meta> tags (after a UTF-8 byte order mark),
 * or at the first other token. Past a <meta charset> that the encoding
 * prescan finds in the first 1024 bytes (HTML 13.2.3.2) when only title,
 * style and link elements without event handlers stand between: the prescan
 * still finds it. Never past a script, a <base> or any end tag but a title's
 * or style's, so never past html_inject_offset(); never inside a tag or a
 * comment cut off by the end of input.
 */
size_t html_early_offset(const char *html, size_t len);

/*
 * Returns a malloc'd copy of @html (@len bytes, need not be NUL-terminated)
 * with the NUL-terminated @early inserted at html_early_offset() (none when
 * NULL) and @snippet at html_inject_offset(), @early first where both fall
 * on one offset. The result is NUL-terminated; its length without the NUL
 * goes to *out_len. Returns NULL only when memory runs out. @html may be
 * NULL when @len is 0.
 */
char *html_inject(const char *html, size_t len, const char *early, const char *snippet,
                  size_t *out_len);

#endif
