/* escape — see escape.h. */
#include "escape.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t escape_utf8_length(const unsigned char *p)
{
    unsigned char c = p[0];
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0) {
        return 0;
    }
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range narrows for a few leads */
    if (c == 0xe0) {
        lo = 0xa0;
    } else if (c == 0xed) {
        hi = 0x9f;
    } else if (c == 0xf0) {
        lo = 0x90;
    } else if (c == 0xf4) {
        hi = 0x8f;
    }
    if (p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (size_t i = 2; i < n; i++) {
        if (p[i] < 0x80 || p[i] > 0xbf) {
            return 0;
        }
    }
    return n;
}

/* The code point of the well-formed n-byte sequence at p. */
static uint32_t escape_code_point(const unsigned char *p, size_t n)
{
    uint32_t cp = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
    for (size_t i = 1; i < n; i++) {
        cp = cp << 6 | (p[i] & 0x3f);
    }
    return cp;
}

/* A character a terminal acts on, or one that reorders or breaks the line
 * (Unicode's bidirectional controls, UAX #9, and line separators). */
static bool escape_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t escape_keep(const unsigned char *p)
{
    if (p[0] < 0x80) {
        return escape_is_control(p[0]) ? 0 : 1;
    }
    size_t n = escape_utf8_length(p);
    return n > 0 && !escape_is_control(escape_code_point(p, n)) ? n : 0;
}

/* The length of the escaped form of the character at p: 1 to 4 (kept), or
 * 4 (\xHH); *keep says which. */
static size_t escape_width(const unsigned char *p, size_t *keep)
{
    *keep = escape_keep(p);
    return *keep ? *keep : 4;
}

size_t escape_text(const char *s, char *out, size_t size)
{
    size_t whole = 0, keep;
    for (const unsigned char *p = (const unsigned char *)s; *p; p += keep ? keep : 1) {
        whole += escape_width(p, &keep);
    }
    size_t room = whole < size ? size - 1 : size - 4; /* "..." ends what is cut */
    size_t len = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p += keep ? keep : 1) {
        size_t need = escape_width(p, &keep);
        if (len + need > room) {
            memcpy(out + len, "...", 3);
            len += 3;
            break;
        }
        if (keep) {
            memcpy(out + len, p, keep);
        } else {
            static const char hex[] = "0123456789ABCDEF";
            out[len] = '\\';
            out[len + 1] = 'x';
            out[len + 2] = hex[*p >> 4];
            out[len + 3] = hex[*p & 15];
        }
        len += need;
    }
    assert(len < size); /* what is cut ends in "...", inside size */
    out[len] = '\0';
    return len;
}

void escape_fputs(const char *s, FILE *out)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t keep = escape_keep(p);
        if (keep) {
            fwrite(p, 1, keep, out);
            p += keep;
        } else {
            fprintf(out, "\\x%02X", *p++);
        }
    }
}

size_t escape_json_step(const char *s, char out[ESCAPE_JSON_STEP_MAX + 1], size_t *taken)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = *p >= 0x80 ? escape_utf8_length(p) : 1;
    *taken = n ? n : 1;
    if (*p == '"' || *p == '\\') {
        return (size_t)snprintf(out, ESCAPE_JSON_STEP_MAX + 1, "\\%c", *p);
    }
    if (*p < 0x20 || *p == 0x7f) {
        return (size_t)snprintf(out, ESCAPE_JSON_STEP_MAX + 1, "\\u%04x", *p);
    }
    if (n == 0) {
        return (size_t)snprintf(out, ESCAPE_JSON_STEP_MAX + 1, "\\ufffd"); /* no UTF-8 */
    }
    memcpy(out, p, n);
    out[n] = '\0';
    return n;
}

void escape_json_fputs(const char *s, FILE *out)
{
    char step[ESCAPE_JSON_STEP_MAX + 1];
    fputc('"', out);
    for (size_t taken; *s; s += taken) {
        fwrite(step, 1, escape_json_step(s, step, &taken), out);
    }
    fputc('"', out);
}
