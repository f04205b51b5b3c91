/* edits — see edits.h. */
#include "edits.h"

/* See edits.h. */
size_t edits_count(const char *a, size_t n, const char *b, size_t m, size_t limit)
{
    if (n > EDITS_MAX_LEN || m > EDITS_MAX_LEN || (n > m ? n - m : m - n) > limit) {
        return limit + 1;
    }
    /* Only cells within limit of the diagonal can stay within limit, so only
     * they are filled, the one on each side of the band marked past it.
     * Three rows: a swap looks two back. */
    unsigned rows[3][EDITS_MAX_LEN + 2], over = (unsigned)limit + 1;
    for (size_t j = 0; j <= m && j <= limit + 1; j++) {
        rows[0][j] = j <= limit ? (unsigned)j : over;
    }
    for (size_t i = 1; i <= n; i++) {
        unsigned *d = rows[i % 3], *up = rows[(i - 1) % 3], *up2 = rows[(i + 1) % 3];
        size_t lo = i > limit ? i - limit : 1, hi = i + limit < m ? i + limit : m;
        d[0] = i <= limit ? (unsigned)i : over;
        d[lo - 1] = lo > 1 ? over : d[0];
        if (hi < m) {
            d[hi + 1] = over;
        }
        /* What is left of the two differs in length by this much: at least
         * as many edits are still to come. */
        unsigned least = d[0] + (unsigned)(m > n - i ? m - (n - i) : (n - i) - m);
        for (size_t j = lo; j <= hi; j++) {
            unsigned best = up[j - 1] + (a[i - 1] != b[j - 1]);
            best = up[j] + 1 < best ? up[j] + 1 : best;
            best = d[j - 1] + 1 < best ? d[j - 1] + 1 : best;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && up2[j - 2] + 1 < best) {
                best = up2[j - 2] + 1;
            }
            d[j] = best < over ? best : over;
            size_t rest = n - i > m - j ? (n - i) - (m - j) : (m - j) - (n - i);
            least = d[j] + rest < least ? d[j] + (unsigned)rest : least;
        }
        if (least > limit) {
            return limit + 1; /* every way on is past it already */
        }
    }
    return rows[n % 3][m];
}
