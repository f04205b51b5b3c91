/* check_near — see check_near.h. */
#include "check_near.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/edits.h"

/* Ids longer than this are never suggested (nor measured). */
#define NEAR_MAX_LEN EDITS_MAX_LEN
/* The most edits a typo is (check_near.h). */
#define NEAR_MAX_EDITS 2
/* The work one index may do, in ids looked at (a measure counts
 * NEAR_MEASURE_COST): bench/README.md has what it costs. */
#define NEAR_BUDGET (64u << 20)
#define NEAR_MEASURE_COST 16u

/* What the filters know of one id. */
struct near_id {
    uint64_t set;       /* which byte classes it holds (near_class): also in sets[] */
    uint64_t counts[2]; /* how many of each of 32 classes, 4 bits each (at most 15) */
    size_t order;       /* its place in the order given */
    const char *id;
};

struct check_near {
    struct near_id *ids; /* by length, then in the order given */
    uint64_t *sets;      /* their sets alone, the first filter's, read in a row */
    size_t first[NEAR_MAX_LEN + 2]; /* ids of length L are [first[L], first[L + 1]) */
    uint64_t spent;      /* of NEAR_BUDGET */
};

/* A byte's class: letters (either case), digits and a few more apart, the
 * rest shared. Merging bytes into a class only hides differences, so what
 * the filters reject is never a typo away. */
static unsigned near_class(unsigned char c)
{
    if (c >= 'a' && c <= 'z') {
        return c - 'a';
    }
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= '0' && c <= '9') {
        return 26 + (c - '0');
    }
    return 36 + c % 28;
}

/* Fills what the filters know of s (n bytes). */
static void near_describe(const char *s, size_t n, struct near_id *d)
{
    unsigned count[32] = {0};
    d->set = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = near_class((unsigned char)s[i]);
        d->set |= UINT64_C(1) << c;
        count[c % 32] += count[c % 32] < 15;
    }
    d->counts[0] = d->counts[1] = 0;
    for (unsigned c = 0; c < 32; c++) {
        d->counts[c / 16] |= (uint64_t)count[c] << (4 * (c % 16));
    }
}

/* True when more than k bits of set are set (a few steps, no table). */
static bool near_more_bits(uint64_t set, size_t k)
{
    for (size_t i = 0; i < k && set; i++) {
        set &= set - 1;
    }
    return set != 0;
}

/* The sum over the 16 four-bit counts of a and b of their differences. */
static unsigned near_count_gap(uint64_t a, uint64_t b)
{
    const uint64_t low = UINT64_C(0x0F0F0F0F0F0F0F0F), high = UINT64_C(0x1010101010101010),
                   ones = UINT64_C(0x0101010101010101);
    unsigned sum = 0;
    for (int shift = 0; shift < 8; shift += 4) { /* even counts, then odd: one per byte */
        uint64_t u = (a >> shift) & low, v = (b >> shift) & low;
        uint64_t uv = (u | high) - v, vu = (v | high) - u; /* 16 + u - v per byte: no borrow */
        uint64_t u_ge = ((uv >> 4) & ones) * 0x0F;         /* 0x0F where u >= v */
        uint64_t gap = (uv & u_ge & low) | (vu & ~u_ge & low);
        sum += (unsigned)((gap * ones) >> 56);
    }
    return sum;
}

struct check_near *check_near_index(const char *const *ids, size_t n)
{
    struct check_near *x = calloc(1, sizeof(*x));
    if (!x || !(x->ids = malloc((n ? n : 1) * sizeof(*x->ids))) ||
        !(x->sets = malloc((n ? n : 1) * sizeof(*x->sets)))) {
        check_near_free(x);
        return NULL;
    }
    size_t count[NEAR_MAX_LEN + 2] = {0}, next[NEAR_MAX_LEN + 2];
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(ids[i]);
        count[len <= NEAR_MAX_LEN ? len : NEAR_MAX_LEN + 1]++;
    }
    for (size_t len = 0, at = 0; len <= NEAR_MAX_LEN + 1; len++) { /* a counting sort: stable */
        x->first[len] = next[len] = at;
        at += count[len];
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(ids[i]);
        if (len <= NEAR_MAX_LEN) { /* a longer one is never suggested: left out */
            struct near_id *d = &x->ids[next[len]];
            near_describe(ids[i], len, d);
            x->sets[next[len]++] = d->set;
            d->order = i;
            d->id = ids[i];
        }
    }
    for (size_t len = 0; len <= NEAR_MAX_LEN; len++) {
        assert(next[len] == x->first[len + 1]); /* each length's ids fill its run: ids by length */
    }
    return x;
}

/* Looks for id (n bytes, described by me) among the ids of length len,
 * keeping in *best the nearest so far (*edits away). */
static void near_look(struct check_near *x, const char *id, size_t n, const struct near_id *me, size_t len,
                      const struct near_id **best, size_t *edits)
{
    for (size_t i = x->first[len]; i < x->first[len + 1]; i++) {
        size_t within = *edits; /* the limit, or the nearest so far: a tie may still come first */
        /* An edit puts in at most one byte and takes out at most one. */
        if (near_more_bits(me->set ^ x->sets[i], 2 * within)) {
            continue;
        }
        const struct near_id *d = &x->ids[i];
        if (near_count_gap(me->counts[0], d->counts[0]) + near_count_gap(me->counts[1], d->counts[1]) >
                2 * within) {
            continue;
        }
        x->spent += NEAR_MEASURE_COST;
        size_t e = edits_count(id, n, d->id, len, within);
        if (e <= within && (*best == NULL || e < *edits || d->order < (*best)->order)) {
            *edits = e;
            *best = d;
        }
    }
    x->spent += x->first[len + 1] - x->first[len];
}

const char *check_near_find(struct check_near *x, const char *id)
{
    size_t n = strlen(id), limit = n / 3 < NEAR_MAX_EDITS ? n / 3 : NEAR_MAX_EDITS;
    if (!x || limit == 0 || n > NEAR_MAX_LEN || x->spent >= NEAR_BUDGET) {
        return NULL;
    }
    struct near_id me;
    near_describe(id, n, &me);
    const struct near_id *best = NULL;
    size_t edits = limit;
    /* The same length first (a change, a swap), then one off, then two: the
     * nearest found early narrows what the others must beat. */
    for (size_t off = 0; off <= limit; off++) {
        near_look(x, id, n, &me, n - off, &best, &edits);
        if (off > 0 && n + off <= NEAR_MAX_LEN) {
            near_look(x, id, n, &me, n + off, &best, &edits);
        }
    }
    return best ? best->id : NULL;
}

void check_near_free(struct check_near *x)
{
    if (x) {
        free(x->ids);
        free(x->sets);
        free(x);
    }
}
