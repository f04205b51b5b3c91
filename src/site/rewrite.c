#include "rewrite.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/array.h"
#include "base/css.h"
#include "base/html.h"

/* A growing output buffer; once an allocation fails it stays failed. */
struct out {
    char *buf;
    size_t len, cap;
    bool failed;
};

/* Appends n bytes of s, growing the buffer (room for the final NUL kept). */
static void put(struct out *o, const char *s, size_t n)
{
    if (o->failed || n == 0) {
        return;
    }
    char *grown = array_grow(o->buf, &o->cap, o->len + n + 1, 1, 1024);
    if (!grown) {
        o->failed = true;
        return;
    }
    o->buf = grown;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

/* The NUL-terminated result and its length, or NULL if an allocation failed. */
static char *finish(struct out *o, size_t *out_len)
{
    put(o, "", 0);
    if (!o->failed && !o->buf) { /* empty input */
        o->buf = malloc(1);
        o->failed = !o->buf;
    }
    if (o->failed) {
        free(o->buf);
        return NULL;
    }
    o->buf[o->len] = '\0';
    *out_len = o->len;
    return o->buf;
}

/* Whether an absolute path is the article's, by the context's callback. */
static bool ours(const struct rewrite_context *ctx, const char *path, size_t len)
{
    return !ctx->is_ours || ctx->is_ours(ctx->arg, path, len);
}

/* Writes one reference, with the prefix in front when it would otherwise
 * leave the article: an absolute path, or a relative one that climbs past
 * the root (browsers clamp "../" there, so "../../x" from a page one folder
 * deep is "/x"). */
static void put_url(struct out *o, const char *url, size_t len, const struct rewrite_context *ctx)
{
    size_t lead = 0;
    while (lead < len && isspace((unsigned char)url[lead])) {
        lead++;
    }
    put(o, url, lead);
    url += lead;
    len -= lead;
    if (len >= 1 && url[0] == '/') {
        if (len == 1 || (url[1] != '/' && url[1] != '\\')) { /* "//host" is another site */
            if (ours(ctx, url, len)) {
                put(o, ctx->prefix, strlen(ctx->prefix));
            }
        }
        put(o, url, len);
        return;
    }
    size_t ups = 0, i = 0;
    for (;;) {
        if (len - i >= 3 && memcmp(url + i, "../", 3) == 0) {
            ups++;
            i += 3;
        } else if (len - i >= 2 && memcmp(url + i, "./", 2) == 0) {
            i += 2;
        } else if (len - i == 2 && memcmp(url + i, "..", 2) == 0) {
            ups++;
            i += 2;
        } else {
            break;
        }
    }
    if (ups > ctx->depth) {
        /* It lands at "/" + the rest: say so under the prefix. */
        size_t rest = len - i;
        char *resolved = malloc(rest + 2);
        if (!resolved) {
            o->failed = true;
            return;
        }
        resolved[0] = '/';
        memcpy(resolved + 1, url + i, rest);
        if (ours(ctx, resolved, rest + 1)) {
            put(o, ctx->prefix, strlen(ctx->prefix));
            put(o, resolved, rest + 1);
            free(resolved);
            return;
        }
        free(resolved);
    }
    put(o, url, len);
}

/* srcset: "a.png 1x, /b.png 2x": each candidate's URL (html.c splits them). */
static void put_srcset(struct out *o, const char *v, size_t len, const struct rewrite_context *ctx)
{
    size_t pos = 0, copied = 0, url, url_len;
    while (html_srcset_next(v, len, &pos, &url, &url_len)) {
        put(o, v + copied, url - copied);
        put_url(o, v + url, url_len, ctx);
        copied = url + url_len;
    }
    put(o, v + copied, len - copied);
}

/* url() and @import in CSS text (css.c finds them), the rest copied. */
static void css_into(struct out *o, const char *css, size_t len, const struct rewrite_context *ctx)
{
    size_t pos = 0, copied = 0;
    struct css_ref r;
    while (css_next_ref(css, len, &pos, &r)) {
        put(o, css + copied, r.url - copied);
        put_url(o, css + r.url, r.url_len, ctx);
        copied = r.url + r.url_len;
    }
    put(o, css + copied, len - copied);
}

char *rewrite_css(const char *css, size_t len, const struct rewrite_context *ctx, size_t *out_len)
{
    struct out o = {0};
    css_into(&o, css, len, ctx);
    return finish(&o, out_len);
}

bool rewrite_is_url_attribute(const char *name, size_t len)
{
    static const char *const names[] = {"src",  "href",       "poster",     "data",
                                        "action", "formaction", "xlink:href", "cite",
                                        "background"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (html_name_is(name, 0, len, names[i])) {
            return true;
        }
    }
    return false;
}

/* A start tag with its URL attribute values rewritten, the rest copied. */
static void tag_into(struct out *o, const char *h, const struct html_token *t,
                     const struct rewrite_context *ctx)
{
    size_t copied = t->start, pos = t->attrs;
    struct html_attr a;
    while (html_attr_next(h, t, &pos, &a)) {
        bool url = a.has_value && rewrite_is_url_attribute(h + a.name, a.name_len);
        bool srcset = a.has_value && html_name_is(h, a.name, a.name_len, "srcset");
        bool style = a.has_value && html_name_is(h, a.name, a.name_len, "style");
        if (!url && !srcset && !style) {
            continue;
        }
        put(o, h + copied, a.value - copied);
        if (url) {
            put_url(o, h + a.value, a.value_len, ctx);
        } else if (srcset) {
            put_srcset(o, h + a.value, a.value_len, ctx);
        } else {
            css_into(o, h + a.value, a.value_len, ctx);
        }
        copied = a.value + a.value_len;
    }
    put(o, h + copied, t->end - copied);
}

char *rewrite_html(const char *html, size_t len, const struct rewrite_context *ctx, size_t *out_len)
{
    struct out o = {0};
    struct html_scanner s;
    struct html_token t;
    bool style = false; /* the last start tag was <style>: its raw text is CSS */
    html_scanner_init(&s, html, len);
    while (html_scanner_next(&s, &t)) {
        if (t.type == HTML_START_TAG) {
            style = html_name_is(html, t.name, t.name_len, "style");
            tag_into(&o, html, &t, ctx);
        } else if (t.type == HTML_RAW_TEXT && style) {
            css_into(&o, html + t.start, t.end - t.start, ctx);
        } else { /* text, comments, end tags, script text: as they are */
            put(&o, html + t.start, t.end - t.start);
        }
    }
    return finish(&o, out_len);
}

/* See rewrite.h: the prefix without its trailing slashes, checked. */
/* See rewrite.h: one URL as rewrite_html would write it. */
char *rewrite_url(const char *url, size_t len, const struct rewrite_context *ctx, size_t *out_len)
{
    struct out o = {0};
    put_url(&o, url, len, ctx);
    return finish(&o, out_len);
}

/* See rewrite.h. */
size_t rewrite_depth(const char *target)
{
    size_t depth = 0;
    for (const char *p = target + (*target == '/'); *p && *p != '?' && *p != '#'; p++) {
        depth += *p == '/';
    }
    return depth;
}
