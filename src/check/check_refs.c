/* check_refs — see check_refs.h. */
#include "check_refs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/array.h"
#include "base/css.h"
#include "base/html.h"

/* Appends one reference (taking ownership of @url, freed on failure). */
static bool check_add_ref(struct check_doc *d, char *url, size_t offset, const char *what,
                          bool link, bool fragment)
{
    if (url == NULL) {
        return false;
    }
    struct check_ref *grown = array_grow(d->refs, &d->refs_cap, d->nrefs + 1, sizeof(*grown), 16);
    if (grown == NULL) {
        free(url);
        return false;
    }
    d->refs = grown;
    struct check_ref *r = &d->refs[d->nrefs++];
    *r = (struct check_ref){.url = url, .offset = offset, .link = link, .fragment = fragment};
    snprintf(r->what, sizeof(r->what), "%s", what);
    return true;
}

/* Appends one id or anchor name (taking ownership of @id). */
static bool check_add_id(struct check_doc *d, char *id, size_t offset, bool is_name)
{
    if (id == NULL) {
        return false;
    }
    struct check_id *grown = array_grow(d->ids, &d->ids_cap, d->nids + 1, sizeof(*grown), 32);
    if (grown == NULL) {
        free(id);
        return false;
    }
    d->ids = grown;
    d->ids[d->nids++] = (struct check_id){.id = id, .offset = offset, .is_name = is_name};
    return true;
}

/* The url()s and @imports of CSS text, each named "@label url()" when a
 * label (an element and its style attribute) is given. */
static bool check_css_into(struct check_doc *d, const char *css, size_t len, size_t base,
                           const char *label)
{
    size_t pos = 0;
    struct css_ref r;
    while (css_next_ref(css, len, &pos, &r)) {
        char what[40];
        snprintf(what, sizeof(what), "%s%s%s", label ? label : "", label ? " " : "",
                 r.import ? "@import" : "url()");
        if (!check_add_ref(d, strndup(css + r.url, r.url_len), base + r.url, what, false, false)) {
            return false;
        }
    }
    return true;
}

bool check_refs_css(const char *css, size_t len, size_t base, struct check_doc *d)
{
    return check_css_into(d, css, len, base, NULL);
}

/* "fragments/<name>.html" with the name escaped as the loader's
 * encodeURIComponent() escapes it (ECMA-262 19.2.6.5). */
static char *check_fragment_url(const char *name, size_t len)
{
    char *url = malloc(len * 3 + sizeof("fragments/.html"));
    if (url == NULL) {
        return NULL;
    }
    size_t n = (size_t)sprintf(url, "fragments/");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-_.!~*'()", c) != NULL) {
            url[n++] = (char)c;
        } else {
            n += (size_t)sprintf(url + n, "%%%02X", c);
        }
    }
    strcpy(url + n, ".html");
    return url;
}

/* An id attribute: an anchor target, and for "fragment-<name>" a fragment. */
static bool check_id_attr(struct check_doc *d, const char *v, size_t len, size_t offset)
{
    size_t n;
    char *id = html_decode(v, len, &n);
    if (id == NULL) {
        return false;
    }
    if (n > 9 && strncmp(id, "fragment-", 9) == 0 &&
        !check_add_ref(d, check_fragment_url(id + 9, n - 9), offset, "fragment", false, true)) {
        free(id);
        return false;
    }
    return n == 0 ? (free(id), true) : check_add_id(d, id, offset, false);
}

/* One URL-valued attribute of element @tag: srcset is a list, style CSS. */
static bool check_url_attr(struct check_doc *d, const char *h, const char *tag,
                           const struct html_attr *a, const char *name)
{
    char what[40];
    snprintf(what, sizeof(what), "%s %s", tag, name);
    const char *v = h + a->value;
    if (strcmp(name, "style") == 0) {
        return check_css_into(d, v, a->value_len, a->value, what);
    }
    if (strcmp(name, "srcset") == 0) {
        size_t pos = 0, url, url_len;
        while (html_srcset_next(v, a->value_len, &pos, &url, &url_len)) {
            if (!check_add_ref(d, html_decode(v + url, url_len, NULL), a->value + url, what,
                               false, false)) {
                return false;
            }
        }
        return true;
    }
    bool link = strcmp(name, "href") == 0 && (!strcmp(tag, "a") || !strcmp(tag, "area"));
    return check_add_ref(d, html_decode(v, a->value_len, NULL), a->value, what, link, false);
}

/* html[at, at + len) in lower case into @out (NUL-terminated); an empty
 * string when it does not fit, which names nothing here. */
static void check_lower(const char *html, size_t at, size_t len, char *out, size_t size)
{
    if (len >= size) {
        len = 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = html[at + i];
        out[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    out[len] = '\0';
}

/* The name under which attribute @name of @tag loads or links something, or
 * NULL. Every one is among those rewrite.c rewrites (rewrite_is_url_attribute,
 * srcset, style), so the --base-path check asks it about exactly these. */
static const char *check_attr_role(const char *tag, const char *name)
{
    static const char *const any[] = {"src", "srcset", "poster", "style", "xlink:href"};
    for (size_t i = 0; i < sizeof(any) / sizeof(any[0]); i++) {
        if (strcmp(name, any[i]) == 0) {
            return any[i];
        }
    }
    if (strcmp(name, "href") == 0) {
        return strcmp(tag, "base") == 0 ? NULL : "href"; /* <base> is not followed (docs/check.md) */
    }
    return strcmp(name, "data") == 0 && strcmp(tag, "object") == 0 ? "data" : NULL;
}

/* True when the <script> tag @t is run by a browser (HTML 4.12.1.1): no
 * type, a JavaScript MIME type or "module"; a data block (JSON, a template)
 * is not. The type is compared as written, the usual spellings being few. */
static bool check_script_runs(const char *h, const struct html_token *t)
{
    static const char *const runs[] = {"", "module", "text/javascript", "application/javascript",
                                       "application/ecmascript", "text/ecmascript"};
    size_t pos = t->attrs;
    struct html_attr a;
    while (html_attr_next(h, t, &pos, &a)) {
        if (html_name_is(h, a.name, a.name_len, "type") && a.has_value) {
            for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
                if (html_name_is(h, a.value, a.value_len, runs[i])) {
                    return true;
                }
            }
            return false;
        }
    }
    return true;
}

/* The references and ids in one start tag. */
static bool check_tag(struct check_doc *d, const char *h, const struct html_token *t)
{
    char tag[24], name[24];
    check_lower(h, t->name, t->name_len, tag, sizeof(tag));
    d->scripts |= strcmp(tag, "script") == 0 && check_script_runs(h, t);
    size_t pos = t->attrs;
    struct html_attr a;
    while (html_attr_next(h, t, &pos, &a)) {
        if (!a.has_value) {
            continue;
        }
        check_lower(h, a.name, a.name_len, name, sizeof(name));
        if (name[0] == '\0' || strchr("spxhdin", name[0]) == NULL) {
            continue; /* the first letter of none of the names below: most attributes */
        }
        bool ok = true;
        const char *role = check_attr_role(tag, name);
        if (role != NULL) {
            ok = check_url_attr(d, h, tag, &a, role);
        } else if (strcmp(name, "id") == 0) {
            ok = check_id_attr(d, h + a.value, a.value_len, a.value);
        } else if (strcmp(name, "name") == 0 && strcmp(tag, "a") == 0 && a.value_len > 0) {
            ok = check_add_id(d, html_decode(h + a.value, a.value_len, NULL), a.value, true);
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

bool check_refs_html(const char *html, size_t len, struct check_doc *d)
{
    struct html_scanner s;
    struct html_token t;
    bool style = false;
    html_scanner_init(&s, html, len);
    while (html_scanner_next(&s, &t)) {
        if (t.type == HTML_START_TAG && t.closed) { /* an unclosed tag is dropped */
            style = html_name_is(html, t.name, t.name_len, "style");
            if (!check_tag(d, html, &t)) {
                return false;
            }
        } else if (t.type == HTML_RAW_TEXT && style &&
                   !check_refs_css(html + t.start, t.end - t.start, t.start, d)) {
            return false;
        }
    }
    return true;
}

void check_doc_free(struct check_doc *d)
{
    for (size_t i = 0; i < d->nrefs; i++) {
        free(d->refs[i].url);
    }
    for (size_t i = 0; i < d->nids; i++) {
        free(d->ids[i].id);
    }
    free(d->refs);
    free(d->ids);
    *d = (struct check_doc){0};
}

/* A copy of @ref as the URL parser reads it (WHATWG URL 4.4): C0 controls
 * and spaces trimmed at both ends, tabs and newlines dropped, '\' as '/'. */
static char *check_url_clean(const char *ref)
{
    size_t start = 0, end = strlen(ref);
    while (start < end && (unsigned char)ref[start] <= 0x20) {
        start++;
    }
    while (end > start && (unsigned char)ref[end - 1] <= 0x20) {
        end--;
    }
    char *buf = malloc(end - start + 1);
    if (buf == NULL) {
        return NULL;
    }
    size_t n = 0;
    for (size_t i = start; i < end; i++) {
        if (ref[i] != '\t' && ref[i] != '\n' && ref[i] != '\r') {
            buf[n++] = ref[i] == '\\' ? '/' : ref[i];
        }
    }
    buf[n] = '\0';
    return buf;
}

/* The kind a URL with a scheme has, or CHECK_URL_PATH when it has none. */
static enum check_url_kind check_url_scheme(const char *u)
{
    size_t i = 0;
    if (!((u[0] >= 'a' && u[0] <= 'z') || (u[0] >= 'A' && u[0] <= 'Z'))) {
        return u[0] == '/' && u[1] == '/' ? CHECK_URL_EXTERNAL : CHECK_URL_PATH;
    }
    while (u[i] && (strchr("+-.", u[i]) || (u[i] >= '0' && u[i] <= '9') ||
                    (u[i] >= 'a' && u[i] <= 'z') || (u[i] >= 'A' && u[i] <= 'Z'))) {
        i++;
    }
    if (u[i] != ':') {
        return CHECK_URL_PATH;
    }
    static const char *const web[] = {"http", "https", "ws", "wss", "ftp"};
    for (size_t k = 0; k < sizeof(web) / sizeof(web[0]); k++) {
        if (strlen(web[k]) == i && strncasecmp(u, web[k], i) == 0) {
            return CHECK_URL_EXTERNAL;
        }
    }
    return CHECK_URL_OTHER;
}

/* @s percent-decoded (malformed escapes kept as written), malloc'd. */
static char *check_percent_decode(const char *s)
{
    char *out = malloc(strlen(s) + 1);
    size_t n = 0;
    for (size_t i = 0; out != NULL && s[i]; i++) {
        unsigned hi, lo;
        if (s[i] == '%' && sscanf(s + i + 1, "%1x%1x", &hi, &lo) == 2) {
            out[n++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[n++] = s[i];
        }
    }
    if (out != NULL) {
        out[n] = '\0';
    }
    return out;
}

bool check_url_resolve(const char *ref, const char *base, struct check_url *u)
{
    *u = (struct check_url){0};
    char *buf = check_url_clean(ref);
    if (buf == NULL) {
        return false;
    }
    u->kind = check_url_scheme(buf);
    if (u->kind != CHECK_URL_PATH) {
        free(buf);
        return true;
    }
    char *hash = strchr(buf, '#');
    if (hash != NULL) {
        *hash = '\0';
        if ((u->fragment = check_percent_decode(hash + 1)) == NULL) {
            free(buf);
            return false;
        }
    }
    buf[strcspn(buf, "?")] = '\0';
    if (buf[0] == '\0') {
        u->kind = CHECK_URL_DOCUMENT;
        free(buf);
        return true;
    }
    if (buf[0] == '/') {
        u->path = buf;
        return true;
    }
    const char *slash = strrchr(base, '/');
    size_t dir = slash ? (size_t)(slash - base) + 1 : 0;
    if (asprintf(&u->path, "%.*s%s", (int)dir, base, buf) < 0) {
        u->path = NULL;
    }
    free(buf);
    return u->path != NULL;
}

void check_url_free(struct check_url *u)
{
    free(u->path);
    free(u->fragment);
    *u = (struct check_url){0};
}
