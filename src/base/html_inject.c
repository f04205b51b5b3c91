/* html_inject — see html.h: where the live-reload client's two tags go into
 * a page, found with html.c's scanner, and the copy that holds them. */
#include "html.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The encoding prescan reads this far into a page (HTML 13.2.3.2). */
#define HTML_PRESCAN_BYTES 1024

/* What a token at the start of a page is to the early snippet. */
enum html_lead {
    HTML_LEAD_PASS,    /* it may go after: nothing here runs or sets the base */
    HTML_LEAD_SPACE,   /* whitespace: passed, yet the snippet stays before it */
    HTML_LEAD_CHARSET, /* a <meta charset>: after it, if the prescan finds it */
    HTML_LEAD_INERT,   /* a title, style or link: passed over to a charset only */
    HTML_LEAD_STOP,    /* anything else: before it */
};

/* HTML's ASCII whitespace (13.2.5: tab, LF, FF, CR, space). */
static bool inject_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* True when comment token t has its end: a "<!--" one "-->" or "--!>"
 * (13.2.5.43-52), any other a '>'. One cut off by the end of input would
 * swallow what is put after it. */
static bool inject_comment_closed(const char *h, const struct html_token *t)
{
    size_t n = t->end - t->start;
    const char *e = h + t->end;
    if (n >= 4 && memcmp(h + t->start, "<!--", 4) == 0) {
        return (n >= 5 && memcmp(e - 3, "-->", 3) == 0) || (n >= 8 && memcmp(e - 4, "--!>", 4) == 0);
    }
    return e[-1] == '>';
}

/* True when start tag t has an attribute @name; with @value, one whose value
 * is @value in any case. */
static bool inject_attr(const char *h, const struct html_token *t, const char *name, const char *value)
{
    struct html_attr a;
    for (size_t pos = t->attrs; html_attr_next(h, t, &pos, &a);) {
        if (html_name_is(h, a.name, a.name_len, name) &&
            (value == NULL || html_name_is(h, a.value, a.value_len, value))) {
            return true;
        }
    }
    return false;
}

/* True when start tag t has an event handler attribute (on...): it may run
 * a script as soon as the element loads. */
static bool inject_handler(const char *h, const struct html_token *t)
{
    struct html_attr a;
    for (size_t pos = t->attrs; html_attr_next(h, t, &pos, &a);) {
        if (a.name_len > 2 && (h[a.name] | 0x20) == 'o' && (h[a.name + 1] | 0x20) == 'n') {
            return true;
        }
    }
    return false;
}

/* What start tag t is to the early snippet (html_early_offset). */
static enum html_lead inject_lead_tag(const char *h, const struct html_token *t)
{
    if (!t->closed) {
        return HTML_LEAD_STOP;
    }
    if (html_name_is(h, t->name, t->name_len, "html") || html_name_is(h, t->name, t->name_len, "head")) {
        return HTML_LEAD_PASS;
    }
    if (html_name_is(h, t->name, t->name_len, "meta")) {
        return inject_attr(h, t, "charset", NULL) || inject_attr(h, t, "http-equiv", "content-type")
                   ? HTML_LEAD_CHARSET
                   : HTML_LEAD_PASS;
    }
    bool inert = html_name_is(h, t->name, t->name_len, "title") || html_name_is(h, t->name, t->name_len, "style") ||
                 html_name_is(h, t->name, t->name_len, "link");
    return inert && !inject_handler(h, t) ? HTML_LEAD_INERT : HTML_LEAD_STOP;
}

/* What token t is to the early snippet (html_early_offset). */
static enum html_lead inject_lead(const char *h, const struct html_token *t)
{
    switch (t->type) {
    case HTML_TEXT:
        for (size_t i = t->start; i < t->end; i++) {
            if (!inject_space(h[i])) {
                return HTML_LEAD_STOP;
            }
        }
        return HTML_LEAD_SPACE;
    case HTML_COMMENT:
        return inject_comment_closed(h, t) ? HTML_LEAD_PASS : HTML_LEAD_STOP;
    case HTML_RAW_TEXT: /* a title's or a style's: a script's start tag stopped first */
        return HTML_LEAD_INERT;
    case HTML_END_TAG:
        return html_name_is(h, t->name, t->name_len, "title") || html_name_is(h, t->name, t->name_len, "style")
                   ? HTML_LEAD_INERT
                   : HTML_LEAD_STOP;
    case HTML_START_TAG:
        break;
    }
    return inject_lead_tag(h, t);
}

size_t html_early_offset(const char *html, size_t len)
{
    static const char bom[] = "\xEF\xBB\xBF"; /* stays first, or it is no BOM (13.2.3.1) */
    size_t at = len >= 3 && memcmp(html, bom, 3) == 0 ? 3 : 0;
    bool inert = false; /* a title, style or link stands between at and t */
    struct html_scanner s;
    struct html_token t;
    html_scanner_init(&s, html, len);
    s.pos = at;
    /* Right after a tag rather than after the line's end: an inline script
     * on the next line keeps its columns, as the author's editor shows them. */
    while (html_scanner_next(&s, &t)) {
        enum html_lead lead = inject_lead(html, &t);
        if (lead == HTML_LEAD_STOP || (inert && t.start >= HTML_PRESCAN_BYTES)) {
            break;
        }
        if (lead == HTML_LEAD_INERT) {
            inert = true;
        } else if (lead == HTML_LEAD_CHARSET || (lead == HTML_LEAD_PASS && !inert)) {
            at = t.end;
            inert = false;
        }
    }
    return at;
}

size_t html_inject_offset(const char *html, size_t len)
{
    size_t body = len;
    struct html_scanner s;
    struct html_token t;
    html_scanner_init(&s, html, len);
    while (html_scanner_next(&s, &t)) {
        if (t.type != HTML_END_TAG) {
            continue;
        }
        if (html_name_is(html, t.name, t.name_len, "head")) {
            return t.start;
        }
        /* Remember the first </body> but keep looking: a </head> after it
         * is impossible in sane HTML, yet cheap to honour. */
        if (body == len && html_name_is(html, t.name, t.name_len, "body")) {
            body = t.start;
        }
    }
    return body;
}

char *html_inject(const char *html, size_t len, const char *early, const char *snippet,
                  size_t *out_len)
{
    size_t at = len == 0 ? 0 : html_inject_offset(html, len);
    size_t first = len == 0 || early == NULL ? 0 : html_early_offset(html, len);
    first = first < at ? first : at; /* html.h promises it; the copy below relies on it */
    size_t en = early ? strlen(early) : 0, sn = strlen(snippet);
    if (len > SIZE_MAX - sn - en - 1) {
        return NULL;
    }
    char *out = malloc(len + en + sn + 1);
    if (out == NULL) {
        return NULL;
    }
    /* html[0, first) early html[first, at) snippet html[at, len) */
    char *o = out;
    if (first > 0) {
        memcpy(o, html, first);
    }
    o += first;
    memcpy(o, early ? early : "", en);
    o += en;
    if (at > first) {
        memcpy(o, html + first, at - first);
    }
    o += at - first;
    memcpy(o, snippet, sn);
    o += sn;
    if (len > at) {
        memcpy(o, html + at, len - at);
    }
    out[len + en + sn] = '\0';
    if (out_len != NULL) {
        *out_len = len + en + sn;
    }
    return out;
}
