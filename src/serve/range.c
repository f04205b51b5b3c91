#include "range.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "request.h"

/* A client asking for more ranges than this is not seeking audio. */
#define RANGE_MAX_SPECS 16

/* Reads 1*DIGIT; false on none. A number past 2^64 - 1 reads as that:
 * every position so far is past any file's end, so a first-pos there is
 * unsatisfiable and a last-pos there clamps to the end (RFC 9110 14.1.2),
 * as it would if it fit. */
static bool parse_number(const char **p, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9') {
        return false;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned digit = (unsigned)(*s - '0');
        v = v > (UINT64_MAX - digit) / 10 ? UINT64_MAX : v * 10 + digit;
    }
    *p = s;
    *out = v;
    return true;
}

enum range_result range_parse(const char *header, uint64_t size, uint64_t *first, uint64_t *last)
{
    if (!header) {
        return RANGE_NONE;
    }
    const char *p = request_skip_ows(header);
    if (strncasecmp(p, "bytes", 5) != 0) {
        return RANGE_NONE;
    }
    p = request_skip_ows(p + 5);
    if (*p++ != '=') {
        return RANGE_NONE;
    }
    unsigned specs = 0, satisfiable = 0;
    uint64_t from = 0, to = 0;
    for (;; p++) { /* one range-spec, or an empty list element (RFC 9110 5.6.1), a turn */
        p = request_skip_ows(p);
        if (*p == '\0') {
            break;
        }
        if (*p == ',') {
            continue;
        }
        uint64_t a = 0, b = 0;
        bool has_first = parse_number(&p, &a);
        if (*p++ != '-') {
            return RANGE_NONE;
        }
        bool has_last = parse_number(&p, &b);
        if (!has_first && !has_last) {
            return RANGE_NONE;
        }
        if (has_first && has_last && b < a) {
            return RANGE_NONE; /* invalid spec: the whole header is ignored */
        }
        if (++specs > RANGE_MAX_SPECS) {
            return RANGE_NONE;
        }
        if (!has_first) { /* suffix: the last b bytes */
            if (b > 0 && size > 0) {
                satisfiable++;
                from = b >= size ? 0 : size - b;
                to = size - 1;
            }
        } else if (a < size) {
            satisfiable++;
            from = a;
            to = has_last && b < size ? b : size - 1;
        }
        p = request_skip_ows(p);
        if (*p == '\0') {
            break;
        }
        if (*p != ',') {
            return RANGE_NONE;
        }
    }
    if (specs == 0) {
        return RANGE_NONE; /* "bytes=" or "bytes=,": no range-spec at all */
    }
    if (satisfiable == 0) {
        return RANGE_UNSATISFIABLE;
    }
    if (satisfiable > 1) {
        return RANGE_NONE;
    }
    assert(from <= to && to < size); /* a satisfiable range lies in the representation */
    *first = from;
    *last = to;
    return RANGE_SATISFIABLE;
}
