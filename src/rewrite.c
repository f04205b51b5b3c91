#include "rewrite.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A growing output buffer; once an allocation fails it stays failed. */
struct out {
    char *buf;
    size_t len, cap;
    bool failed;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->failed || n == 0) {
        return;
    }
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 1024;
        while (cap < o->len + n + 1) {
            cap *= 2;
        }
        char *grown = realloc(o->buf, cap);
        if (!grown) {
            o->failed = true;
            return;
        }
        o->buf = grown;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

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

bool rewrite_prefix_valid(const char *text)
{
    size_t len = strlen(text);
    if (len < 2 || text[0] != '/' || text[len - 1] == '/' || strstr(text, "//") ||
        strstr(text, "/.")) {
        return false;
    }
    for (const char *p = text; *p; p++) {
        /* No '%': an escaped dot segment ("%2e%2e") would climb out again. */
        if (!isalnum((unsigned char)*p) && !strchr("/-._~!$&+,;=:@", *p)) {
            return false;
        }
    }
    return true;
}

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

/* srcset: "a.png 1x, /b.png 2x": each candidate's URL, then its descriptors. */
static void put_srcset(struct out *o, const char *v, size_t len, const struct rewrite_context *ctx)
{
    size_t i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && (isspace((unsigned char)v[i]) || v[i] == ',')) {
            i++;
        }
        put(o, v + start, i - start);
        start = i;
        while (i < len && !isspace((unsigned char)v[i])) {
            i++;
        }
        size_t url_end = i;
        while (url_end > start && v[url_end - 1] == ',') { /* "a.png," ends a candidate */
            url_end--;
        }
        put_url(o, v + start, url_end - start, ctx);
        put(o, v + url_end, i - url_end);
        if (url_end < i) {
            continue; /* the commas ended this candidate: no descriptors */
        }
        start = i;
        while (i < len && v[i] != ',') {
            i++;
        }
        put(o, v + start, i - start);
    }
}

static bool starts_ci(const char *s, size_t len, size_t i, const char *word)
{
    size_t n = strlen(word);
    return len - i >= n && strncasecmp(s + i, word, n) == 0;
}

static size_t find(const char *s, size_t len, size_t from, const char *needle, bool ci)
{
    size_t n = strlen(needle);
    for (size_t i = from; i + n <= len; i++) {
        if (ci ? strncasecmp(s + i, needle, n) == 0 : memcmp(s + i, needle, n) == 0) {
            return i;
        }
    }
    return len;
}

static void css_into(struct out *o, const char *css, size_t len, const struct rewrite_context *ctx)
{
    size_t i = 0, copied = 0;
    while (i < len) {
        char c = css[i];
        if (c == '/' && i + 1 < len && css[i + 1] == '*') {
            size_t end = find(css, len, i + 2, "*/", false);
            i = end < len ? end + 2 : len;
            continue;
        }
        bool is_url = starts_ci(css, len, i, "url(") &&
                      (i == 0 || !(isalnum((unsigned char)css[i - 1]) || css[i - 1] == '-' ||
                                   css[i - 1] == '_'));
        bool is_import = starts_ci(css, len, i, "@import");
        if (!is_url && !is_import && c != '"' && c != '\'') {
            i++;
            continue;
        }
        size_t j = i + (is_url ? 4 : is_import ? 7 : 0);
        while (j < len && isspace((unsigned char)css[j])) {
            j++;
        }
        size_t value, value_end, after;
        if (j < len && (css[j] == '"' || css[j] == '\'')) {
            char quote = css[j];
            value = j + 1;
            value_end = value;
            while (value_end < len && css[value_end] != quote) {
                value_end += css[value_end] == '\\' && value_end + 1 < len ? 2 : 1;
            }
            after = value_end < len ? value_end + 1 : len;
        } else if (is_url) {
            value = j;
            value_end = value;
            while (value_end < len && css[value_end] != ')') {
                value_end++;
            }
            while (value_end > value && isspace((unsigned char)css[value_end - 1])) {
                value_end--;
            }
            after = value_end;
        } else {
            i = j > i ? j : i + 1; /* "@import" before something else */
            continue;
        }
        if (c == '"' || c == '\'') { /* a plain string: not a reference */
            i = after;
            continue;
        }
        put(o, css + copied, value - copied);
        put_url(o, css + value, value_end - value, ctx);
        copied = value_end;
        i = after;
    }
    put(o, css + copied, len - copied);
}

char *rewrite_css(const char *css, size_t len, const struct rewrite_context *ctx, size_t *out_len)
{
    struct out o = {0};
    css_into(&o, css, len, ctx);
    return finish(&o, out_len);
}

static bool is_url_attribute(const char *name, size_t len)
{
    static const char *const names[] = {"src",  "href",       "poster",     "data",
                                        "action", "formaction", "xlink:href", "cite",
                                        "background"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i]) == len && strncasecmp(name, names[i], len) == 0) {
            return true;
        }
    }
    return false;
}

/* Reads the attributes of a start tag from i (just past its name) to its
 * '>', rewriting URL values into o; returns the offset past the '>'. */
static size_t tag_into(struct out *o, const char *h, size_t len, size_t i,
                       const struct rewrite_context *ctx)
{
    size_t copied = i;
    while (i < len && h[i] != '>') {
        if (isspace((unsigned char)h[i]) || h[i] == '/') {
            i++;
            continue;
        }
        size_t name = i;
        while (i < len && !isspace((unsigned char)h[i]) && h[i] != '=' && h[i] != '>' && h[i] != '/') {
            i++;
        }
        size_t name_len = i - name;
        size_t j = i;
        while (j < len && isspace((unsigned char)h[j])) {
            j++;
        }
        if (j >= len || h[j] != '=') {
            continue; /* an attribute without a value */
        }
        j++;
        while (j < len && isspace((unsigned char)h[j])) {
            j++;
        }
        size_t value, value_end;
        if (j < len && (h[j] == '"' || h[j] == '\'')) {
            value = j + 1;
            value_end = value;
            while (value_end < len && h[value_end] != h[j]) {
                value_end++;
            }
            i = value_end < len ? value_end + 1 : len;
        } else {
            value = j;
            value_end = j;
            while (value_end < len && !isspace((unsigned char)h[value_end]) && h[value_end] != '>') {
                value_end++;
            }
            i = value_end;
        }
        bool url = is_url_attribute(h + name, name_len);
        bool srcset = name_len == 6 && strncasecmp(h + name, "srcset", 6) == 0;
        bool style = name_len == 5 && strncasecmp(h + name, "style", 5) == 0;
        if (url || srcset || style) {
            put(o, h + copied, value - copied);
            if (url) {
                put_url(o, h + value, value_end - value, ctx);
            } else if (srcset) {
                put_srcset(o, h + value, value_end - value, ctx);
            } else {
                css_into(o, h + value, value_end - value, ctx);
            }
            copied = value_end;
        }
    }
    i = i < len ? i + 1 : len;
    put(o, h + copied, i - copied);
    return i;
}

char *rewrite_html(const char *html, size_t len, const struct rewrite_context *ctx, size_t *out_len)
{
    struct out o = {0};
    size_t i = 0;
    while (i < len) {
        size_t lt = i;
        while (lt < len && html[lt] != '<') {
            lt++;
        }
        put(&o, html + i, lt - i);
        i = lt;
        if (i >= len) {
            break;
        }
        if (starts_ci(html, len, i, "<!--")) {
            size_t end = find(html, len, i + 4, "-->", false);
            end = end < len ? end + 3 : len;
            put(&o, html + i, end - i);
            i = end;
            continue;
        }
        if (i + 1 >= len || !isalpha((unsigned char)html[i + 1])) {
            /* an end tag, a doctype, a stray "<": copy to its '>' */
            size_t end = i + 1;
            while (end < len && html[end] != '>' && html[end] != '<') {
                end++;
            }
            end = end < len && html[end] == '>' ? end + 1 : end;
            put(&o, html + i, end - i);
            i = end;
            continue;
        }
        size_t name = i + 1, name_end = name;
        while (name_end < len && !isspace((unsigned char)html[name_end]) && html[name_end] != '>' &&
               html[name_end] != '/') {
            name_end++;
        }
        put(&o, html + i, name_end - i);
        size_t name_len = name_end - name;
        bool script = name_len == 6 && strncasecmp(html + name, "script", 6) == 0;
        bool style = name_len == 5 && strncasecmp(html + name, "style", 5) == 0;
        i = tag_into(&o, html, len, name_end, ctx);
        if (script || style) { /* raw text up to its end tag */
            size_t end = find(html, len, i, script ? "</script" : "</style", true);
            if (script) {
                put(&o, html + i, end - i);
            } else {
                css_into(&o, html + i, end - i, ctx);
            }
            i = end;
        }
    }
    return finish(&o, out_len);
}

/* See rewrite.h: the prefix without its trailing slashes, checked. */
bool rewrite_prefix_clean(const char *text, char *out, size_t size)
{
    size_t len = strlen(text);
    while (len > 0 && text[len - 1] == '/') {
        len--;
    }
    if (len >= size) {
        return false;
    }
    memcpy(out, text, len);
    out[len] = '\0';
    return len == 0 || rewrite_prefix_valid(out);
}
