/* fuzz_range: range_parse, the Range header.
 *
 * Input: the header, any bytes (cut at the first NUL, as the server sees
 * it). Checked against several representation sizes: on RANGE_SATISFIABLE,
 * first <= last < size; otherwise first and last are left untouched; the
 * answer is deterministic; and the range it found, written back as
 * "bytes=first-last", parses to itself.
 */
#include "fuzz.h"

#include <inttypes.h>

#include "serve/range.h"

static const uint64_t sizes[] = {
    0, 1, 2, 10, 499, 500, 1000, 10000, 1u << 20, UINT64_MAX / 10, UINT64_MAX - 1, UINT64_MAX,
};

#define UNTOUCHED 0xdeadbeefcafef00dULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *header = fuzz_cstring(data, size);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t first = UNTOUCHED, last = UNTOUCHED;
        enum range_result r = range_parse(header, sizes[i], &first, &last);
        fuzz_check(r == RANGE_NONE || r == RANGE_SATISFIABLE || r == RANGE_UNSATISFIABLE,
                   "a known result");
        uint64_t first2 = UNTOUCHED, last2 = UNTOUCHED;
        fuzz_check(range_parse(header, sizes[i], &first2, &last2) == r, "deterministic");
        if (r != RANGE_SATISFIABLE) {
            fuzz_check(first == UNTOUCHED && last == UNTOUCHED, "untouched unless satisfiable");
            continue;
        }
        fuzz_check(first <= last, "first <= last");
        fuzz_check(last < sizes[i], "last < size");
        fuzz_check(first2 == first && last2 == last, "deterministic range");
        if (sizes[i] > INT64_MAX) {
            /* parse_number refuses the top 6 values of uint64_t (a
             * conservative overflow test); no file is that large (off_t). */
            continue;
        }
        char again[64];
        snprintf(again, sizeof(again), "bytes=%" PRIu64 "-%" PRIu64, first, last);
        fuzz_check(range_parse(again, sizes[i], &first2, &last2) == RANGE_SATISFIABLE &&
                       first2 == first && last2 == last,
                   "the range found parses back to itself");
    }
    free(header);
    return 0;
}
