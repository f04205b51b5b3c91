/* fuzz_encoding: encoding_accepts_gzip, Accept-Encoding.
 *
 * Input: the header, any bytes (cut at the first NUL). Invariants that
 * follow from "gzip's q-value is the highest one given to gzip or x-gzip,
 * else the one of '*'" (list items are split at commas, so an item added at
 * either end cannot change how the others parse):
 *  - deterministic;
 *  - h + ",gzip" is always accepted (an explicit q=1 wins);
 *  - h + ",gzip;q=0" accepted implies h accepted (adding a refusal never
 *    makes gzip acceptable);
 *  - "gzip;q=0," + h and h + ",gzip;q=0" agree (where an item stands does
 *    not matter);
 *  - without "gzip" and without "*" anywhere in h, gzip is not accepted.
 */
#include "fuzz.h"

#include <strings.h>

#include "serve/encoding.h"

static bool accepts_with(const char *before, const char *h, const char *after)
{
    size_t n = strlen(before) + strlen(h) + strlen(after) + 1;
    char *s = malloc(n);
    if (s == NULL) {
        abort();
    }
    snprintf(s, n, "%s%s%s", before, h, after);
    bool ok = encoding_accepts_gzip(s);
    free(s);
    return ok;
}

static bool contains_ci(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++) {
        if (strncasecmp(s, word, n) == 0) {
            return true;
        }
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *h = fuzz_cstring(data, size);
    bool ok = encoding_accepts_gzip(h);
    fuzz_check(encoding_accepts_gzip(h) == ok, "deterministic");
    fuzz_check(accepts_with("", h, ",gzip"), "an explicit gzip is accepted");
    bool refused_after = accepts_with("", h, ",gzip;q=0");
    fuzz_check(!refused_after || ok, "adding gzip;q=0 never makes gzip acceptable");
    fuzz_check(accepts_with("gzip;q=0,", h, "") == refused_after,
               "the position of a gzip item does not matter");
    if (!contains_ci(h, "gzip") && strchr(h, '*') == NULL) {
        fuzz_check(!ok, "gzip unnamed and no * means no gzip");
    }
    free(h);
    return 0;
}
