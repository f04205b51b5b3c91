/* cache: hits, misses on a changed file, invalidation, the byte budget and
 * reference counting that outlives eviction. */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/body.h"
#include "serve/cache.h"

static const struct file_id v1 = {1, 42, 100, 1000, 1000}, v2 = {1, 42, 100, 2000, 2000};

static struct body *text(const char *s)
{
    return body_from(s, strlen(s));
}

static void test_hit_and_identity(void **state)
{
    struct cache *c = cache_create(1 << 20);
    struct body *b = text("compressed");
    cache_put(c, "/w/a.css", "gzip", &v1, b, cache_generation(c));
    body_unref(b);

    struct body *hit = cache_get(c, "/w/a.css", "gzip", &v1);
    assert_non_null(hit);
    assert_memory_equal(hit->data, "compressed", 10);
    body_unref(hit);
    assert_null(cache_get(c, "/w/a.css", "mime", &v1)); /* another variant */
    assert_null(cache_get(c, "/w/b.css", "gzip", &v1)); /* another file */
    assert_null(cache_get(c, "/w/a.css", "gzip", &v2)); /* the file changed: a miss... */
    assert_null(cache_get(c, "/w/a.css", "gzip", &v1)); /* ...which dropped the entry */
    assert_int_equal(cache_stats(c).bytes, 0);
    cache_destroy(c);
}

static void test_invalidate_path_and_folder(void **state)
{
    struct cache *c = cache_create(1 << 20);
    const char *paths[] = {"/w/a.html", "/w/sub/b.html", "/w/sub/c.html", "/w/subway.html"};
    for (size_t i = 0; i < 4; i++) {
        struct body *b = text("x");
        cache_put(c, paths[i], "gzip", &v1, b, cache_generation(c));
        cache_put(c, paths[i], "doc:0", &v1, b, cache_generation(c));
        body_unref(b);
    }
    cache_invalidate(c, "/w/a.html");
    assert_null(cache_get(c, "/w/a.html", "gzip", &v1));
    assert_null(cache_get(c, "/w/a.html", "doc:0", &v1));
    cache_invalidate(c, "/w/sub/"); /* a folder: everything below, not its look-alikes */
    assert_null(cache_get(c, "/w/sub/b.html", "gzip", &v1));
    assert_null(cache_get(c, "/w/sub/c.html", "doc:0", &v1));
    struct body *kept = cache_get(c, "/w/subway.html", "gzip", &v1);
    assert_non_null(kept);
    body_unref(kept);
    cache_clear(c);
    assert_int_equal(cache_stats(c).bytes, 0);
    cache_destroy(c);
}

static void test_budget_evicts_least_recent(void **state)
{
    struct cache *c = cache_create(8000); /* bodies up to 1000 bytes are kept */
    char name[32];
    for (int i = 0; i < 10; i++) {
        struct body *b = body_create(1000);
        memset(b->data, 'a' + i, 1000);
        snprintf(name, sizeof(name), "/f%d", i);
        cache_put(c, name, "gzip", &v1, b, cache_generation(c));
        body_unref(b);
        if (i == 5) { /* touch f0 so f1 is the oldest */
            body_unref(cache_get(c, "/f0", "gzip", &v1));
        }
    }
    assert_true(cache_stats(c).bytes <= 8000);
    struct body *f0 = cache_get(c, "/f0", "gzip", &v1);
    assert_non_null(f0);
    body_unref(f0);
    assert_null(cache_get(c, "/f1", "gzip", &v1));
    struct body *f9 = cache_get(c, "/f9", "gzip", &v1);
    assert_non_null(f9);
    body_unref(f9);

    struct body *big = body_create(4001); /* over half the budget */
    assert_false(cache_can_keep(c, big->len));
    assert_false(cache_put(c, "/big", "gzip", &v1, big, cache_generation(c)));
    assert_null(cache_get(c, "/big", "gzip", &v1));
    body_unref(big);
    cache_destroy(c);
}

static void test_big_body_is_kept_in_a_memfd(void **state)
{
    /* Over an eighth of the budget, up to half: kept, out of the heap. */
    struct cache *c = cache_create(8000);
    struct body *big = body_create(3000);
    memset(big->data, 'z', 3000);
    assert_true(cache_put(c, "/big", "gzip", &v1, big, cache_generation(c)));
    body_unref(big);
    struct body *got = cache_get(c, "/big", "gzip", &v1);
    assert_non_null(got);
    assert_true(got->fd >= 0);
    assert_int_equal(got->len, 3000);
    char bytes[3001];
    assert_int_equal(pread(got->fd, bytes, sizeof(bytes), 0), 3000);
    assert_int_equal(bytes[0], 'z');
    assert_int_equal(bytes[2999], 'z');
    assert_true(write(got->fd, "x", 1) < 0); /* sealed: what is in flight stays as it was */
    body_unref(got);
    struct body *small = body_create(10);
    memset(small->data, 's', 10);
    cache_put(c, "/small", "gzip", &v1, small, cache_generation(c));
    body_unref(small);
    small = cache_get(c, "/small", "gzip", &v1);
    assert_int_equal(small->fd, -1);
    body_unref(small);
    cache_destroy(c);
}

/* Where a body lives by its size (cache.h): a memfd for one sendfile round
 * of libmicrohttpd (16 KiB to 128 KiB), the heap below and above. */
static void test_body_place_by_size(void **state)
{
    struct cache *c = cache_create(64 << 20);
    static const struct {
        size_t len;
        bool heap;
    } cases[] = {
        {16 << 10, true}, {(16 << 10) + 1, false}, {100 << 10, false},
        {128 << 10, false}, {(128 << 10) + 1, true}, {190 << 10, true}, {1 << 20, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(cache_in_heap(c, cases[i].len), cases[i].heap);
        struct body *b = body_create(cases[i].len);
        memset(b->data, 'p', b->len);
        char name[32];
        snprintf(name, sizeof(name), "/p/%zu", i);
        assert_true(cache_put(c, name, "br", &v1, b, cache_generation(c)));
        body_unref(b);
        struct body *got = cache_get(c, name, "br", &v1);
        assert_int_equal(got->fd < 0, cases[i].heap);
        body_unref(got);
    }
    assert_false(cache_in_heap(c, (8 << 20) + 1)); /* past an eighth of the budget: a memfd */
    cache_destroy(c);
}

static void test_memfds_are_capped(void **state)
{
    /* Bodies sent by sendfile from a memfd each hold a descriptor: only so many. */
    struct cache *c = cache_create(256 << 20);
    struct body *b = body_create(CACHE_HEAP_MAX_BYTES + 1);
    memset(b->data, 'm', b->len);
    char name[32];
    for (int i = 0; i < CACHE_MEMFDS_MAX + 50; i++) {
        snprintf(name, sizeof(name), "/m/%d", i);
        assert_true(cache_put(c, name, "gzip", &v1, b, cache_generation(c)));
    }
    size_t memfds = 0, kept = 0;
    for (int i = 0; i < CACHE_MEMFDS_MAX + 50; i++) {
        snprintf(name, sizeof(name), "/m/%d", i);
        struct body *got = cache_get(c, name, "gzip", &v1);
        assert_non_null(got);
        kept++;
        memfds += got->fd >= 0;
        body_unref(got);
    }
    assert_int_equal(kept, CACHE_MEMFDS_MAX + 50);
    assert_int_equal(memfds, CACHE_MEMFDS_MAX);
    cache_clear(c); /* and they come back when entries go */
    assert_true(cache_put(c, "/m/again", "gzip", &v1, b, cache_generation(c)));
    struct body *got = cache_get(c, "/m/again", "gzip", &v1);
    assert_true(got->fd >= 0);
    body_unref(got);
    body_unref(b);
    cache_destroy(c);
}

static void test_cost_counts_keys_and_overhead(void **state)
{
    /* A flood of long keys with one-byte bodies: the budget holds. */
    const size_t budget = 64 << 10;
    struct cache *c = cache_create(budget);
    char path[64], variant[300];
    memset(variant, 'p', sizeof(variant) - 1);
    variant[sizeof(variant) - 1] = '\0';
    size_t kept = 0;
    for (int i = 0; i < 5000; i++) {
        snprintf(path, sizeof(path), "/w/%d.html", i);
        struct body *b = text("x");
        cache_put(c, path, variant, &v1, b, cache_generation(c));
        body_unref(b);
        assert_true(cache_stats(c).bytes <= budget);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(path, sizeof(path), "/w/%d.html", i);
        struct body *b = cache_get(c, path, variant, &v1);
        kept += b != NULL;
        body_unref(b);
    }
    /* Each entry costs its key and bookkeeping too, far more than its byte. */
    assert_true(kept > 0);
    assert_true(kept * (sizeof(variant) + 1) <= budget);
    cache_destroy(c);
}

static void test_variants_per_path_are_capped(void **state)
{
    struct cache *c = cache_create(64 << 20);
    struct body *b = text("page");
    cache_put(c, "/w/a.html", "gzip", &v1, b, cache_generation(c));
    char variant[64];
    for (int i = 0; i < 1000; i++) {
        snprintf(variant, sizeof(variant), "t:0:0:0:/p%d", i);
        cache_put(c, "/w/a.html", variant, &v1, b, cache_generation(c));
        if (i % 10 == 0) { /* in use all along: never the one to go */
            body_unref(cache_get(c, "/w/a.html", "gzip", &v1));
        }
    }
    cache_put(c, "/w/other.html", "gzip", &v1, b, cache_generation(c));
    body_unref(b);
    size_t found = 0;
    for (int i = 0; i < 1000; i++) {
        snprintf(variant, sizeof(variant), "t:0:0:0:/p%d", i);
        struct body *got = cache_get(c, "/w/a.html", variant, &v1);
        found += got != NULL;
        body_unref(got);
    }
    assert_int_equal(found, CACHE_VARIANTS_PER_PATH - 1);
    struct body *got = cache_get(c, "/w/a.html", "t:0:0:0:/p999", &v1); /* the newest stays */
    assert_non_null(got);
    body_unref(got);
    got = cache_get(c, "/w/a.html", "gzip", &v1);
    assert_non_null(got);
    body_unref(got);
    got = cache_get(c, "/w/other.html", "gzip", &v1); /* another path is not affected */
    assert_non_null(got);
    body_unref(got);
    cache_destroy(c);
}

static void test_reference_outlives_eviction(void **state)
{
    struct cache *c = cache_create(1 << 20);
    struct body *b = text("still being sent");
    cache_put(c, "/a", "gzip", &v1, b, cache_generation(c));
    body_unref(b);
    struct body *sending = cache_get(c, "/a", "gzip", &v1);
    cache_invalidate(c, "/a");
    cache_destroy(c);
    assert_memory_equal(sending->data, "still being sent", 16); /* ASan would catch a free */
    body_unref(sending);
}

static void test_replace_same_key(void **state)
{
    struct cache *c = cache_create(1 << 20);
    struct body *a = text("old"), *b = text("newer");
    cache_put(c, "/a", "gzip", &v1, a, cache_generation(c));
    cache_put(c, "/a", "gzip", &v2, b, cache_generation(c));
    body_unref(a);
    body_unref(b);
    size_t one = cache_stats(c).bytes; /* one entry: its 5 bytes, key and bookkeeping */
    assert_true(one > 5 && one < 5 + 256);
    struct body *got = cache_get(c, "/a", "gzip", &v2);
    assert_non_null(got);
    assert_memory_equal(got->data, "newer", 5);
    body_unref(got);
    cache_destroy(c);
}

static void test_put_after_invalidation_is_dropped(void **state)
{
    /* A request read the file, an edit (same size, same mtime tick) was
     * invalidated meanwhile: what the request derived must not be kept. */
    struct cache *c = cache_create(1 << 20);
    uint64_t before = cache_generation(c);
    cache_invalidate(c, "/w/a.css");
    struct body *b = text("old bytes");
    cache_put(c, "/w/a.css", "gzip", &v1, b, before);
    body_unref(b);
    assert_null(cache_get(c, "/w/a.css", "gzip", &v1));
    b = text("new bytes");
    cache_put(c, "/w/a.css", "gzip", &v1, b, cache_generation(c));
    body_unref(b);
    struct body *kept = cache_get(c, "/w/a.css", "gzip", &v1);
    assert_non_null(kept);
    body_unref(kept);
    cache_destroy(c);
}

static void test_many_entries_grow_table(void **state)
{
    struct cache *c = cache_create(64 << 20);
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "/f/%d.css", i);
        struct body *b = text(name);
        cache_put(c, name, "gzip", &v1, b, cache_generation(c));
        body_unref(b);
    }
    for (int i = 0; i < 5000; i += 97) {
        snprintf(name, sizeof(name), "/f/%d.css", i);
        struct body *b = cache_get(c, name, "gzip", &v1);
        assert_non_null(b);
        assert_memory_equal(b->data, name, strlen(name));
        body_unref(b);
    }
    cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_and_identity),
        cmocka_unit_test(test_invalidate_path_and_folder),
        cmocka_unit_test(test_budget_evicts_least_recent),
        cmocka_unit_test(test_reference_outlives_eviction),
        cmocka_unit_test(test_replace_same_key),
        cmocka_unit_test(test_put_after_invalidation_is_dropped),
        cmocka_unit_test(test_many_entries_grow_table),
        cmocka_unit_test(test_big_body_is_kept_in_a_memfd),
        cmocka_unit_test(test_cost_counts_keys_and_overhead),
        cmocka_unit_test(test_memfds_are_capped),
        cmocka_unit_test(test_body_place_by_size),
        cmocka_unit_test(test_variants_per_path_are_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
