/* html — see html.h. A tokenizer's outline, not a parser: it finds where
 * tags, comments and raw text begin and end, and nothing more. */
#include "html.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* HTML's ASCII whitespace (13.2.5: tab, LF, FF, CR, space). */
static bool html_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* ASCII letters start a tag name; nothing else does (13.2.5.6). */
static bool html_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool html_name_is(const char *html, size_t at, size_t len, const char *lower)
{
    /* The first letter rejects most names at once ('A' | 0x20 is 'a'): the
     * checker asks this of every attribute of every tag. */
    if (len == 0 || ((unsigned char)html[at] | 0x20) != (unsigned char)lower[0]) {
        return len == 0 && lower[0] == '\0';
    }
    return strlen(lower) == len && strncasecmp(html + at, lower, len) == 0;
}

void html_scanner_init(struct html_scanner *s, const char *html, size_t len)
{
    *s = (struct html_scanner){.html = html, .len = len};
}

/* One step of the attribute states (13.2.5.32-39) from *pos: 1 with an
 * attribute in *a, 0 at the tag's '>' (*pos on it), -1 at the end of input. */
static int html_attr_step(const char *h, size_t len, size_t *pos, struct html_attr *a)
{
    size_t i = *pos;
    while (i < len && (html_space(h[i]) || h[i] == '/')) {
        i++; /* a '/' not before '>' is read as whitespace */
    }
    if (i >= len) {
        *pos = len;
        return -1;
    }
    if (h[i] == '>') {
        *pos = i;
        return 0;
    }
    *a = (struct html_attr){.name = i++}; /* a first '=' belongs to the name */
    while (i < len && !html_space(h[i]) && h[i] != '/' && h[i] != '>' && h[i] != '=') {
        i++;
    }
    a->name_len = i - a->name;
    size_t j = i;
    while (j < len && html_space(h[j])) {
        j++;
    }
    if (j < len && h[j] == '=') {
        j++;
        while (j < len && html_space(h[j])) {
            j++;
        }
        a->has_value = true;
        if (j < len && (h[j] == '"' || h[j] == '\'')) {
            const char *close = memchr(h + j + 1, h[j], len - j - 1);
            a->value = j + 1;
            a->value_len = close ? (size_t)(close - h) - a->value : len - a->value;
            i = close ? (size_t)(close - h) + 1 : len;
        } else {
            a->value = j;
            while (j < len && !html_space(h[j]) && h[j] != '>') {
                j++;
            }
            a->value_len = j - a->value;
            i = j;
        }
    }
    *pos = i;
    return 1;
}

bool html_attr_next(const char *html, const struct html_token *t, size_t *pos,
                    struct html_attr *a)
{
    if (t->type != HTML_START_TAG || *pos >= t->end) {
        return false;
    }
    return html_attr_step(html, t->end, pos, a) == 1;
}

/* A tag from its '<' at t->start, name at @name: fills the name and runs
 * through the attributes to the '>' (quoted values may hold one). */
static void html_tag(const struct html_scanner *s, size_t name, struct html_token *t)
{
    const char *h = s->html;
    size_t i = name;
    while (i < s->len && !html_space(h[i]) && h[i] != '/' && h[i] != '>') {
        i++;
    }
    t->name = name;
    t->name_len = i - name;
    t->attrs = i;
    struct html_attr a;
    int r;
    while ((r = html_attr_step(h, s->len, &i, &a)) == 1) {
    }
    t->closed = r == 0;
    t->end = r == 0 ? i + 1 : s->len;
}

/* The end of a comment opened at @i: past the first "-->" (which may overlap
 * "<!--", as in "<!-->") or "--!>", or the end of input (13.2.5.43-52). */
static size_t html_comment_end(const char *h, size_t len, size_t i)
{
    for (size_t j = i + 2; j + 3 <= len; j++) {
        if (memcmp(h + j, "-->", 3) == 0) {
            return j + 3;
        }
        if (j > i + 2 && j + 4 <= len && memcmp(h + j, "--!>", 4) == 0) {
            return j + 4;
        }
    }
    return len;
}

/* Past the next '>' from @i, or the end of input: a bogus comment's end. */
static size_t html_bogus_end(const char *h, size_t len, size_t i)
{
    const char *gt = memchr(h + i, '>', len - i);
    return gt ? (size_t)(gt - h) + 1 : len;
}

/* True when a '<' at @i opens markup rather than being text (13.2.5.6). */
static bool html_markup_at(const char *h, size_t len, size_t i)
{
    if (i + 1 >= len) {
        return false;
    }
    char c = h[i + 1];
    return c == '!' || c == '?' || html_alpha(c) || (c == '/' && i + 2 < len);
}

/* The element names whose content is raw text or RCDATA: no tags inside. */
static const char *html_raw_element(const char *h, const struct html_token *t)
{
    static const char *const names[] = {"script", "style", "title", "textarea"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (html_name_is(h, t->name, t->name_len, names[i])) {
            return names[i];
        }
    }
    return NULL;
}


/* True when "</name" followed by whitespace, '/', '>' or the end of input
 * stands at @j: an "appropriate end tag" for raw text (13.2.5.11). */
static bool html_end_tag_at(const char *h, size_t len, size_t j, const char *name, size_t n)
{
    return len - j >= n + 2 && h[j] == '<' && h[j + 1] == '/' && strncasecmp(h + j + 2, name, n) == 0 &&
           (j + n + 2 == len || html_space(h[j + n + 2]) || h[j + n + 2] == '/' || h[j + n + 2] == '>');
}

/* True when "<script" or "</script" (per @slash) ends at a word boundary at
 * @j: what moves script text in and out of its double-escaped state. */
static bool html_script_word_at(const char *h, size_t len, size_t j, bool slash)
{
    size_t k = j + 1 + (slash ? 1 : 0);
    return len - j >= k - j + 7 && h[j] == '<' && (!slash || h[j + 1] == '/') &&
           strncasecmp(h + k, "script", 6) == 0 &&
           (k + 6 < len && (html_space(h[k + 6]) || h[k + 6] == '/' || h[k + 6] == '>'));
}

/* Where script text that starts at @i ends (13.2.5.4, 15-31): at "</script"
 * unless inside "<!--" a "<script" opened a double-escaped part, in which
 * "</script" only closes that part; "-->" leaves the escape. */
static size_t html_script_end(const char *h, size_t len, size_t i)
{
    enum { DATA, ESCAPED, DOUBLE } state = DATA;
    for (size_t j = i; j < len; j++) {
        if (state != DOUBLE && html_end_tag_at(h, len, j, "script", 6)) {
            return j;
        }
        if (state == DATA && len - j >= 4 && memcmp(h + j, "<!--", 4) == 0) {
            state = ESCAPED;
            j += 1; /* its "--" may be the start of "-->": "<!-->" closes at once */
        } else if (state != DATA && len - j >= 3 && memcmp(h + j, "-->", 3) == 0) {
            state = DATA;
            j += 2;
        } else if (state == ESCAPED && html_script_word_at(h, len, j, false)) {
            state = DOUBLE;
            j += 6;
        } else if (state == DOUBLE && html_script_word_at(h, len, j, true)) {
            state = ESCAPED;
            j += 7;
        }
    }
    return len;
}

/* Where raw text that starts at @i ends: a script's as above; any other's
 * at its first appropriate end tag. */
static size_t html_raw_end(const char *h, size_t len, size_t i, const char *name)
{
    if (strcmp(name, "script") == 0) {
        return html_script_end(h, len, i);
    }
    size_t n = strlen(name);
    for (const char *p = memchr(h + i, '<', len - i); p; p = memchr(p + 1, '<', len - (size_t)(p + 1 - h))) {
        if (html_end_tag_at(h, len, (size_t)(p - h), name, n)) {
            return (size_t)(p - h);
        }
    }
    return len;
}

/* Markup at s->pos (html_markup_at is true there) into *t. */
static void html_markup(struct html_scanner *s, struct html_token *t)
{
    const char *h = s->html;
    size_t i = s->pos, len = s->len;
    *t = (struct html_token){.type = HTML_COMMENT, .start = i};
    if (h[i + 1] == '!' && len - i >= 4 && memcmp(h + i, "<!--", 4) == 0) {
        t->end = html_comment_end(h, len, i);
    } else if (h[i + 1] == '!' || h[i + 1] == '?') {
        t->end = html_bogus_end(h, len, i); /* doctypes and CDATA too */
    } else if (h[i + 1] == '/' && html_alpha(h[i + 2])) {
        t->type = HTML_END_TAG;
        html_tag(s, i + 2, t);
    } else if (h[i + 1] == '/') {
        t->end = h[i + 2] == '>' ? i + 3 : html_bogus_end(h, len, i); /* "</>" is dropped */
    } else {
        t->type = HTML_START_TAG;
        html_tag(s, i + 1, t);
        s->raw = t->closed ? html_raw_element(h, t) : NULL;
    }
}

bool html_scanner_next(struct html_scanner *s, struct html_token *t)
{
    if (s->raw != NULL) {
        size_t end = html_raw_end(s->html, s->len, s->pos, s->raw);
        s->raw = NULL;
        if (end > s->pos) {
            *t = (struct html_token){.type = HTML_RAW_TEXT, .start = s->pos, .end = end};
            s->pos = end;
            return true;
        }
    }
    if (s->pos >= s->len) {
        return false;
    }
    if (s->html[s->pos] == '<' && html_markup_at(s->html, s->len, s->pos)) {
        html_markup(s, t);
        s->pos = t->end;
        return true;
    }
    size_t i = s->pos + 1;
    while (i < s->len) {
        const char *lt = memchr(s->html + i, '<', s->len - i);
        i = lt ? (size_t)(lt - s->html) : s->len;
        if (i >= s->len || html_markup_at(s->html, s->len, i)) {
            break;
        }
        i++;
    }
    *t = (struct html_token){.type = HTML_TEXT, .start = s->pos, .end = i};
    s->pos = i;
    return true;
}

bool html_srcset_next(const char *v, size_t len, size_t *pos, size_t *url, size_t *url_len)
{
    size_t i = *pos;
    while (i < len && (html_space(v[i]) || v[i] == ',')) {
        i++;
    }
    if (i >= len) {
        *pos = len;
        return false;
    }
    *url = i;
    while (i < len && !html_space(v[i])) {
        i++;
    }
    size_t end = i;
    while (end > *url && v[end - 1] == ',') {
        end--;
    }
    *url_len = end - *url;
    if (end == i) { /* descriptors up to a ',' outside parentheses */
        bool parens = false;
        while (i < len && (parens || v[i] != ',')) {
            parens = v[i] == '(' ? true : v[i] == ')' ? false : parens;
            i++;
        }
    }
    *pos = i;
    return true;
}

/* Appends code point @cp as UTF-8 (U+FFFD for what is not one) at @out. */
static size_t html_utf8(unsigned long cp, char *out)
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        cp = 0xFFFD;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The character reference at v[0] ('&') into @out: bytes written, or 0 when
 * it is not one this decoder knows; *used gets its length. */
static size_t html_reference(const char *v, size_t len, char *out, size_t *used)
{
    static const struct { const char *name, *text; } named[] = {
        {"amp;", "&"}, {"lt;", "<"}, {"gt;", ">"}, {"quot;", "\""}, {"apos;", "'"},
        {"nbsp;", "\xC2\xA0"},
    };
    for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++) {
        size_t n = strlen(named[k].name);
        if (len > n && memcmp(v + 1, named[k].name, n) == 0) {
            *used = n + 1;
            memcpy(out, named[k].text, strlen(named[k].text));
            return strlen(named[k].text);
        }
    }
    if (len < 4 || v[1] != '#') {
        return 0;
    }
    bool hex = v[2] == 'x' || v[2] == 'X';
    size_t i = hex ? 3 : 2;
    unsigned long cp = 0;
    size_t digits = 0;
    for (; i < len && digits < 8; i++, digits++) {
        char c = v[i];
        int d = c >= '0' && c <= '9' ? c - '0'
                : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) {
            break;
        }
        cp = cp * (hex ? 16 : 10) + (unsigned long)d;
    }
    if (digits == 0 || i >= len || v[i] != ';') {
        return 0;
    }
    *used = i + 1;
    return html_utf8(cp, out);
}

char *html_decode(const char *v, size_t len, size_t *out_len)
{
    /* A reference is never shorter than its text; a NUL becomes U+FFFD, three
     * bytes (13.2.5.36-38), so the result stays a C string. */
    char *out = len < SIZE_MAX / 3 ? malloc(len * 3 + 1) : NULL;
    if (out == NULL) {
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t used = 0, w = v[i] == '&' ? html_reference(v + i, len - i, out + n, &used) : 0;
        if (w > 0) {
            n += w;
            i += used;
        } else if (v[i] == '\0') {
            n += html_utf8(0, out + n);
            i++;
        } else {
            out[n++] = v[i++];
        }
    }
    out[n] = '\0';
    if (out_len != NULL) {
        *out_len = n;
    }
    return out;
}

/* Start tag t's attribute name into *a; false when it has none. */
static bool html_attr_find(const char *html, const struct html_token *t, const char *name, struct html_attr *a)
{
    for (size_t pos = t->attrs; html_attr_next(html, t, &pos, a);) {
        if (html_name_is(html, a->name, a->name_len, name)) {
            return true;
        }
    }
    return false;
}

/* The name of start tag t's first id attribute ("fragment-<name>") into *name;
 * false when it has none, or another id (a second id attribute is ignored,
 * as by the browser: 13.2.5.33). */
static bool html_fragment_id(const char *html, const struct html_token *t, struct html_span *name)
{
    static const char prefix[] = "fragment-";
    const size_t plen = sizeof(prefix) - 1;
    struct html_attr a;
    if (!html_attr_find(html, t, "id", &a) || a.value_len <= plen || memcmp(html + a.value, prefix, plen) != 0) {
        return false;
    }
    *name = (struct html_span){a.value + plen, a.value_len - plen};
    return true;
}

/* Whether tag t opens or closes content that is no part of the document a
 * script sees: a template's (its own fragment, 13.2.6.4.4) or, with
 * scripting on as it is for a page that loads fragments, a noscript's. */
static bool html_inert_tag(const char *html, const struct html_token *t)
{
    return html_name_is(html, t->name, t->name_len, "template") ||
           html_name_is(html, t->name, t->name_len, "noscript");
}

/* The next start tag a script finds in the document into *t (not in
 * template or noscript content: *inert counts how deep; not one cut off by
 * the end of input, which makes no element: 13.2.5.32); false at the end. */
static bool html_next_live_tag(struct html_scanner *s, struct html_token *t, size_t *inert)
{
    while (html_scanner_next(s, t)) {
        if ((t->type == HTML_START_TAG || t->type == HTML_END_TAG) && html_inert_tag(s->html, t)) {
            *inert = t->type == HTML_START_TAG ? *inert + 1 : *inert > 0 ? *inert - 1 : 0;
        } else if (*inert == 0 && t->type == HTML_START_TAG && t->closed) {
            return true;
        }
    }
    return false;
}

size_t html_fragment_names(const char *html, size_t len, struct html_span *out, size_t max)
{
    struct html_scanner s;
    struct html_token t;
    struct html_span name;
    size_t n = 0, inert = 0;
    html_scanner_init(&s, html, len);
    while (n < max && html_next_live_tag(&s, &t, &inert)) {
        if (!html_fragment_id(html, &t, &name)) {
            continue;
        }
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++) {
            seen = out[i].len == name.len && memcmp(html + out[i].at, html + name.at, name.len) == 0;
        }
        if (!seen) {
            out[n++] = name;
        }
    }
    return n;
}

/* True when the whitespace-separated list v (len bytes) holds word, in any case. */
static bool html_token_in(const char *v, size_t len, const char *word)
{
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && !html_space(v[j])) {
            j++;
        }
        if (html_name_is(v, i, j - i, word)) {
            return true;
        }
        i = j + 1;
    }
    return false;
}

/* Whether start tag t is a resource html_blocking_resources names, into *r. */
static bool html_blocking(const char *html, const struct html_token *t, struct html_resource *r)
{
    static const char *const never[] = {"crossorigin", "integrity", "media", "disabled", "async", "nomodule"};
    struct html_attr a;
    bool link = html_name_is(html, t->name, t->name_len, "link");
    if (!link && !html_name_is(html, t->name, t->name_len, "script")) {
        return false;
    }
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
        if (html_attr_find(html, t, never[i], &a)) {
            return false;
        }
    }
    if (html_attr_find(html, t, "type", &a) &&
        !html_name_is(html, a.value, a.value_len, link ? "text/css" : "text/javascript")) {
        return false;
    }
    if (link && (!html_attr_find(html, t, "rel", &a) || !html_token_in(html + a.value, a.value_len, "stylesheet") ||
                 html_token_in(html + a.value, a.value_len, "alternate"))) {
        return false;
    }
    if (!html_attr_find(html, t, link ? "href" : "src", &a) || a.value_len == 0) {
        return false;
    }
    *r = (struct html_resource){link ? HTML_STYLESHEET : HTML_SCRIPT, {a.value, a.value_len}};
    return true;
}

size_t html_blocking_resources(const char *html, size_t len, struct html_resource *out, size_t max)
{
    struct html_scanner s;
    struct html_token t;
    size_t n = 0, inert = 0;
    html_scanner_init(&s, html, len);
    while (n < max && html_next_live_tag(&s, &t, &inert)) {
        n += html_blocking(html, &t, &out[n]);
    }
    return n;
}

bool html_has_base_href(const char *html, size_t len)
{
    struct html_scanner s;
    struct html_token t;
    struct html_attr a;
    size_t inert = 0;
    html_scanner_init(&s, html, len);
    while (html_next_live_tag(&s, &t, &inert)) {
        if (html_name_is(html, t.name, t.name_len, "base") && html_attr_find(html, &t, "href", &a)) {
            return true;
        }
    }
    return false;
}

void html_cursor_seek(struct html_cursor *c, const char *text, size_t offset)
{
    if (c->line == 0 || offset < c->offset) {
        *c = (struct html_cursor){.line = 1, .column = 1};
    }
    for (size_t i = c->offset; i < offset; i++) {
        unsigned char b = (unsigned char)text[i];
        if (b == '\n') {
            c->line++;
            c->column = 1;
        } else if (b != '\r' && (b & 0xC0) != 0x80) { /* not a UTF-8 continuation */
            c->column++;
        }
    }
    c->offset = offset;
}
