/* fuzz: what every fuzz target shares.
 *
 * Each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput. It is linked
 * twice: with libFuzzer (-Dfuzz=true, clang) to search for inputs, and with
 * replay.c in every build so `meson test --suite fuzz` replays the corpus.
 * Invariants are checked with fuzz_check(), never assert(): NDEBUG must not
 * turn them off.
 */
#ifndef FOLIO_FUZZ_H
#define FOLIO_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with a message when an invariant does not hold. A macro so the
 * message names the line; the arguments are evaluated once. */
#define fuzz_check(cond, what) fuzz_check_at((cond), (what), __FILE__, __LINE__)

static inline void fuzz_check_at(bool ok, const char *what, const char *file, int line)
{
    if (!ok) {
        fprintf(stderr, "%s:%d: invariant violated: %s\n", file, line, what);
        abort();
    }
}

/* A NUL-terminated copy of data (up to its first NUL, as a C caller would
 * see it). The caller frees it. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL) {
        abort();
    }
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
