/* failing_malloc: an LD_PRELOAD shim that makes malloc fail for one size, a
 * given number of times, as a process under memory pressure sees it: the
 * fault is aimed at one allocation (libmicrohttpd's pool for a connection
 * is malloc(--header-limit rounded up to 16) when the limit is 32 KiB or
 * less) instead of at whatever allocates first.
 *
 *   FOLIO_SHIM_FAIL_MALLOC_SIZE=N   malloc(N) returns NULL with ENOMEM ...
 *   FOLIO_SHIM_FAIL_MALLOC_TIMES=K  ... the first K times (1 if unset).
 *
 * Unset (or not a number): every call goes on unchanged. Every other call
 * goes to the allocator the process would have used (glibc's, or a
 * sanitizer's, so what it returns is freed by the same allocator). The count
 * is atomic. Test code only; never installed. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The allocator behind this one: a sanitizer's interceptor when the
 * process has one (a weak reference, resolved only then), else glibc's.
 * Named, not looked up with dlsym, which allocates: it would recurse. */
extern void *__interceptor_malloc(size_t n) __attribute__((weak));
extern void *__libc_malloc(size_t n);

static size_t failing_size;        /* 0: none; set once the environment can be read */
static atomic_long failures_left;

/* Reads the settings. A constructor, not the first malloc: that one comes
 * before the environment is set up (a sanitizer's runtime allocates at
 * once), so it would read nothing and keep it. */
__attribute__((constructor)) static void read_settings(void)
{
    const char *v = getenv("FOLIO_SHIM_FAIL_MALLOC_SIZE");
    const char *k = getenv("FOLIO_SHIM_FAIL_MALLOC_TIMES");
    atomic_store(&failures_left, k ? strtol(k, NULL, 10) : 1);
    failing_size = v ? strtoul(v, NULL, 10) : 0;
}

void *malloc(size_t n)
{
    if (n && n == failing_size && atomic_fetch_sub(&failures_left, 1) > 0) {
        errno = ENOMEM;
        return NULL;
    }
    return __interceptor_malloc ? __interceptor_malloc(n) : __libc_malloc(n);
}
