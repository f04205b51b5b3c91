/* fuzz_resolve: resolve_normalize, folio's security boundary.
 *
 * Input: the raw request path, any bytes. Invariants on success: the path
 * starts with "/", holds no "//", "/./" or "/../", does not end in "/." or
 * "/..", holds no NUL, is no longer than the input; normalising it again
 * (with '%' escaped as "%25") gives it back; and a path with no '%', no dot
 * segment and no "//" comes back unchanged.
 */
#include "fuzz.h"

#include "site/resolve.h"

static bool has_dot_segment_raw(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '/' && i + 1 < len && p[i + 1] == '.') {
            size_t j = i + 1;
            while (j < len && p[j] == '.') {
                j++;
            }
            if (j - i - 1 <= 2 && (j == len || p[j] == '/')) {
                return true;
            }
        }
    }
    return false;
}

static bool ends_with(const char *s, size_t len, const char *tail)
{
    size_t n = strlen(tail);
    return len >= n && memcmp(s + len - n, tail, n) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *raw = (const char *)data;
    char *out = malloc(size + 1);
    if (out == NULL) {
        return 0;
    }
    if (!resolve_normalize(raw, size, out, size + 1)) {
        free(out);
        return 0;
    }
    size_t n = strnlen(out, size + 1);
    fuzz_check(n <= size, "output no longer than the input");
    fuzz_check(out[0] == '/', "output starts with /");
    fuzz_check(strstr(out, "//") == NULL, "no // in output");
    fuzz_check(strstr(out, "/./") == NULL, "no /./ in output");
    fuzz_check(strstr(out, "/../") == NULL, "no /../ in output");
    fuzz_check(!ends_with(out, n, "/.") && !ends_with(out, n, "/.."), "no trailing /. or /..");

    /* A too-small buffer is refused, never overrun. */
    char tiny[1];
    fuzz_check(size == 0 || !resolve_normalize(raw, size, tiny, size < 1 ? 1 : size),
               "a buffer shorter than len + 1 is refused");

    /* Idempotence: escape every '%' (the only byte that decodes) and normalise again. */
    size_t pct = 0;
    for (size_t i = 0; i < n; i++) {
        pct += out[i] == '%';
    }
    size_t elen = n + 2 * pct;
    char *escaped = malloc(elen + 1);
    char *again = malloc(elen + 1);
    if (escaped != NULL && again != NULL) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (out[i] == '%') {
                memcpy(escaped + k, "%25", 3);
                k += 3;
            } else {
                escaped[k++] = out[i];
            }
        }
        fuzz_check(resolve_normalize(escaped, elen, again, elen + 1),
                   "a normalised path normalises again");
        fuzz_check(strcmp(again, out) == 0, "normalising is idempotent");
    }
    free(escaped);
    free(again);

    /* A path that is already normal comes back as it was. */
    if (memchr(raw, '%', size) == NULL && !has_dot_segment_raw(raw, size) &&
        !(size >= 2 && memmem(raw, size, "//", 2) != NULL)) {
        fuzz_check(n == size && memcmp(out, raw, size) == 0, "a normal path is unchanged");
    }
    free(out);
    return 0;
}
