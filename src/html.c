/* html — see html.h. A tiny scanner, not a parser: it only has to skip the
 * places where an end tag is not an end tag (comments, script/style text). */
#include "html.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* True if html[i..] starts with the ASCII word @w, case-insensitively. */
static bool html_starts_ci(const char *html, size_t len, size_t i, const char *w)
{
    size_t n = strlen(w);
    return len - i >= n && strncasecmp(html + i, w, n) == 0;
}

/* A tag name ends at '>', '/', whitespace or the end of input: "</header>"
 * must not match "</head". */
static bool html_name_ends(const char *html, size_t len, size_t i)
{
    if (i >= len) {
        return true;
    }
    char c = html[i];
    return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r' || c == '\f';
}

/* Offset just past the raw text element whose start tag begins at @i
 * ("<script" or "<style"): past its end tag, or @len if it never closes. */
static size_t html_skip_raw(const char *html, size_t len, size_t i,
                            const char *end_tag)
{
    size_t n = strlen(end_tag);
    for (size_t j = i; j < len; j++) {
        if (html[j] == '<' && html_starts_ci(html, len, j, end_tag) &&
            html_name_ends(html, len, j + n)) {
            return j + n;
        }
    }
    return len;
}

size_t html_inject_offset(const char *html, size_t len)
{
    size_t body = len;
    size_t i = 0;
    while (i < len) {
        if (html[i] != '<') {
            i++;
            continue;
        }
        if (html_starts_ci(html, len, i, "<!--")) {
            /* A comment runs to the next "-->" (HTML spec, comment state);
             * an unterminated one swallows the rest of the document. The
             * search starts inside "<!--" because "<!-->" and "<!--->" are
             * whole (empty) comments to a browser. */
            const char *end = NULL;
            for (size_t j = i + 2; j + 3 <= len; j++) {
                if (memcmp(html + j, "-->", 3) == 0) {
                    end = html + j;
                    break;
                }
            }
            if (end == NULL) {
                break;
            }
            i = (size_t)(end - html) + 3;
        } else if (html_starts_ci(html, len, i, "<script") &&
                   html_name_ends(html, len, i + 7)) {
            i = html_skip_raw(html, len, i + 7, "</script");
        } else if (html_starts_ci(html, len, i, "<style") &&
                   html_name_ends(html, len, i + 6)) {
            i = html_skip_raw(html, len, i + 6, "</style");
        } else if (html_starts_ci(html, len, i, "</head") &&
                   html_name_ends(html, len, i + 6)) {
            return i;
        } else if (body == len && html_starts_ci(html, len, i, "</body") &&
                   html_name_ends(html, len, i + 6)) {
            /* Remember the first </body> but keep looking: a </head> after
             * it is impossible in sane HTML, yet cheap to honour. */
            body = i;
            i += 6;
        } else {
            i++;
        }
    }
    return body;
}

char *html_inject(const char *html, size_t len, const char *snippet,
                  size_t *out_len)
{
    size_t at = len == 0 ? 0 : html_inject_offset(html, len);
    size_t sn = strlen(snippet);
    if (len > SIZE_MAX - sn - 1) {
        return NULL;
    }
    char *out = malloc(len + sn + 1);
    if (out == NULL) {
        return NULL;
    }
    if (at > 0) {
        memcpy(out, html, at);
    }
    memcpy(out + at, snippet, sn);
    if (len > at) {
        memcpy(out + at + sn, html + at, len - at);
    }
    out[len + sn] = '\0';
    if (out_len != NULL) {
        *out_len = len + sn;
    }
    return out;
}
