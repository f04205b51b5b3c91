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

/* The coding a token of len bytes names: ENCODING_COUNT for "*", -1 for one
 * folio does not know (deflate, compress, ...). */
static int coding_of(const char *name, size_t len)
{
    static const struct {
        const char *token;
        int coding;
    } names[] = {
        {"gzip", ENCODING_GZIP}, {"x-gzip", ENCODING_GZIP}, {"br", ENCODING_BR},
        {"zstd", ENCODING_ZSTD}, {"identity", ENCODING_IDENTITY}, {"*", ENCODING_COUNT},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i].token) == len && strncasecmp(name, names[i].token, len) == 0) {
            return names[i].coding;
        }
    }
    return -1;
}

/* See encoding.h. */
struct encoding_accept encoding_parse(const char *header)
{
    struct encoding_accept acc = {.q = {[ENCODING_IDENTITY] = 1}};
    if (!header) {
        return acc;
    }
    int given[ENCODING_COUNT + 1]; /* the highest q each coding got, -1 unnamed; [COUNT]: "*" */
    for (size_t i = 0; i <= ENCODING_COUNT; i++) {
        given[i] = -1;
    }
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
        int coding = coding_of(item, (size_t)(name_end - item));
        int q = parse_qvalue(name_end, p);
        if (coding >= 0 && q >= 0 && q > given[coding]) {
            given[coding] = q;
        }
    }
    for (size_t i = ENCODING_GZIP; i < ENCODING_COUNT; i++) {
        int q = given[i] >= 0 ? given[i] : given[ENCODING_COUNT];
        acc.q[i] = (uint16_t)(q > 0 ? q : 0);
    }
    /* identity stays acceptable unless refused by name or by "*;q=0" with
     * no entry of its own (RFC 9110 12.5.3); "*" weighs it like any other. */
    if (given[ENCODING_IDENTITY] >= 0) {
        acc.q[ENCODING_IDENTITY] = (uint16_t)given[ENCODING_IDENTITY];
    } else if (given[ENCODING_COUNT] >= 0) {
        acc.q[ENCODING_IDENTITY] = (uint16_t)given[ENCODING_COUNT];
    }
    return acc;
}

/* See encoding.h. */
const char *encoding_name(enum encoding e)
{
    switch (e) {
    case ENCODING_GZIP: return "gzip";
    case ENCODING_ZSTD: return "zstd";
    case ENCODING_BR: return "br";
    default: return NULL;
    }
}

/* See encoding.h. */
bool encoding_better(const struct encoding_accept *acc, enum encoding a, uint64_t size_a,
                     enum encoding b, uint64_t size_b)
{
    if (acc->q[a] == 0) {
        return false;
    }
    if (acc->q[b] == 0) {
        return true;
    }
    return size_a != size_b ? size_a < size_b : a > b;
}

/* See encoding.h. */
void encoding_rank(const struct encoding_accept *acc, char out[ENCODING_COUNT])
{
    for (size_t i = 0; i < ENCODING_COUNT; i++) {
        out[i] = acc->q[i] ? '1' : '0';
    }
}
