#include "encoding.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Parses ";q=0.5" style parameters after a coding; returns the q-value in
 * thousandths (1000 when absent), or -1 when malformed. */
static int parse_qvalue(const char *params, const char *end)
{
    int q = 1000;
    const char *p = params;
    while (p < end) {
        while (p < end && (*p == ';' || *p == ' ' || *p == '\t')) {
            p++;
        }
        if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            p += 2;
            if (p >= end || (*p != '0' && *p != '1')) {
                return -1;
            }
            q = (*p - '0') * 1000;
            p++;
            if (p < end && *p == '.') {
                p++;
                for (int scale = 100; p < end && *p >= '0' && *p <= '9'; scale /= 10, p++) {
                    q += (*p - '0') * scale;
                }
            }
            if (q > 1000) {
                return -1;
            }
        }
        while (p < end && *p != ';') {
            p++;
        }
    }
    return q;
}

bool encoding_accepts_gzip(const char *header)
{
    if (!header) {
        return false;
    }
    int gzip_q = -1, star_q = -1;
    const char *p = header;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
        }
        const char *item = p;
        while (*p && *p != ',') {
            p++;
        }
        const char *name_end = item;
        while (name_end < p && *name_end != ';' && *name_end != ' ' && *name_end != '\t') {
            name_end++;
        }
        size_t name_len = (size_t)(name_end - item);
        int q = parse_qvalue(name_end, p);
        if (name_len == 0 || q < 0) {
            continue;
        }
        if ((name_len == 4 && strncasecmp(item, "gzip", 4) == 0) ||
            (name_len == 6 && strncasecmp(item, "x-gzip", 6) == 0)) {
            gzip_q = q > gzip_q ? q : gzip_q;
        } else if (name_len == 1 && item[0] == '*') {
            star_q = q;
        }
    }
    return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}
