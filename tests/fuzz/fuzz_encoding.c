/* fuzz_encoding: encoding_parse, encoding_better and encoding_rank,
 * Accept-Encoding (RFC 9110 12.5.3).
 *
 * Input: the header, any bytes (cut at the first NUL). Invariants that
 * follow from "a coding's q-value is the highest one given to its names,
 * else the one of '*'" (list items are split at commas, so an item added at
 * either end cannot change how the others parse), for each of gzip, zstd
 * and br:
 *  - deterministic; every q within 0..1000;
 *  - h + ",<coding>" gives that coding q 1000 (an explicit q=1 wins);
 *  - h + ",<coding>;q=0" accepted implies h accepted (adding a refusal never
 *    makes a coding acceptable);
 *  - "<coding>;q=0," + h and h + ",<coding>;q=0" agree (where an item stands
 *    does not matter);
 *  - without its name and without "*" anywhere in h, a coding is refused;
 *  - identity is refused only where "identity" or "*" appears.
 * And for the choice: encoding_better is a strict order (never both ways,
 * never a refused coding, the smaller of two acceptable ones), and a rank
 * of '0' is exactly a refusal.
 */
#include "fuzz.h"

#include <strings.h>

#include "serve/encoding.h"

static const char *const names[ENCODING_COUNT] = {"identity", "gzip", "zstd", "br"};

static struct encoding_accept parse_with(const char *before, const char *h, const char *after)
{
    size_t n = strlen(before) + strlen(h) + strlen(after) + 1;
    char *s = malloc(n);
    if (s == NULL) {
        abort();
    }
    snprintf(s, n, "%s%s%s", before, h, after);
    struct encoding_accept acc = encoding_parse(s);
    free(s);
    return acc;
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

/* The invariants of one coding e against the header h, parsed as acc. */
static void check_coding(const char *h, const struct encoding_accept *acc, enum encoding e)
{
    char named[32], refused_item[32], refused_first[32];
    snprintf(named, sizeof(named), ",%s", names[e]);
    snprintf(refused_item, sizeof(refused_item), ",%s;q=0", names[e]);
    snprintf(refused_first, sizeof(refused_first), "%s;q=0,", names[e]);
    fuzz_check(acc->q[e] <= 1000, "q within 0..1000");
    fuzz_check(parse_with("", h, named).q[e] == 1000, "an explicit coding is accepted at q=1");
    struct encoding_accept after = parse_with("", h, refused_item);
    fuzz_check(!after.q[e] || acc->q[e], "adding a refusal never makes a coding acceptable");
    fuzz_check(parse_with(refused_first, h, "").q[e] == after.q[e],
               "the position of an item does not matter");
    if (e != ENCODING_IDENTITY && !contains_ci(h, names[e]) && strchr(h, '*') == NULL) {
        fuzz_check(acc->q[e] == 0, "unnamed and no * means refused");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *h = fuzz_cstring(data, size);
    struct encoding_accept acc = encoding_parse(h), again = encoding_parse(h);
    fuzz_check(memcmp(&acc, &again, sizeof(acc)) == 0, "deterministic");
    for (int e = 0; e < ENCODING_COUNT; e++) {
        check_coding(h, &acc, (enum encoding)e);
    }
    if (!contains_ci(h, "identity") && strchr(h, '*') == NULL) {
        fuzz_check(acc.q[ENCODING_IDENTITY] > 0, "identity acceptable unless named");
    }
    char ranks[ENCODING_COUNT];
    encoding_rank(&acc, ranks);
    for (int a = 0; a < ENCODING_COUNT; a++) {
        fuzz_check((ranks[a] == '0') == (acc.q[a] == 0), "rank 0 is a refusal");
        for (int b = 0; b < ENCODING_COUNT; b++) {
            /* Sizes from the input too: the order holds whatever they are. */
            uint64_t sa = size > (size_t)a ? data[a] : 7, sb = size > (size_t)b ? data[b] : 7;
            bool ab = encoding_better(&acc, a, sa, b, sb), ba = encoding_better(&acc, b, sb, a, sa);
            fuzz_check(!(ab && ba), "never better both ways");
            fuzz_check(!ab || acc.q[a] > 0, "a refused coding is never better");
            fuzz_check(!ab || acc.q[b] == 0 || sa <= sb, "the smaller acceptable body answers");
        }
    }
    free(h);
    return 0;
}
