/* Tests for watch_window.c, the watcher's coalescing window, alone on a
 * fake clock: trailing edge, cap, writers still writing, swapped roots held,
 * a poll's settling, and what one batch holds. */
#include "cmocka_prelude.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/watch.h"
#include "live/watch_window.h"
#include "test_helpers.h"

/* A window on a fake clock, and what its flushes handed over. */
struct window_rig {
    uint64_t now;
    struct clock clock;
    struct watch_window win;
    size_t calls;
    struct watch_batch last;   /* of the latest call; changes copied below */
    size_t n;
    char paths[4][32];
};

static void window_record(void *ctx, const struct watch_batch *b)
{
    struct window_rig *r = ctx;
    r->calls++;
    r->last = *b;
    r->last.changes = NULL;
    r->n = b->n;
    for (size_t i = 0; i < b->n && i < 4; i++) {
        snprintf(r->paths[i], sizeof r->paths[i], "%s", b->changes[i].relpath);
    }
}

static void window_setup(struct window_rig *r, unsigned debounce_ms)
{
    *r = (struct window_rig){.now = 5000};
    r->clock = (struct clock){.now_ms = th_fake_now, .ctx = &r->now};
    watch_window_init(&r->win, debounce_ms, &r->clock);
}

static void note(struct window_rig *r, const char *rel, bool appear, bool gone, int writing)
{
    char *copy = strdup(rel);
    assert_non_null(copy);
    watch_window_note(&r->win, 0, copy, appear, gone, writing);
}

static void test_window_debounce_and_cap(void **state)
{
    (void)state;
    struct window_rig r;
    window_setup(&r, 100);
    assert_false(watch_window_is_open(&r.win));
    uint64_t t0 = r.now;
    note(&r, "a.css", false, false, -1);
    assert_true(watch_window_is_open(&r.win));
    assert_int_equal(watch_window_due(&r.win, false), t0 + 100);
    r.now += 50;
    note(&r, "a.css", false, false, -1);
    assert_int_equal(watch_window_due(&r.win, false), t0 + 150); /* trailing edge */
    /* A stream with no 100 ms gap is cut at 8 x 100 ms after its first. */
    for (int i = 0; i < 130; i++) {
        r.now += 10;
        note(&r, "a.css", false, false, -1);
    }
    assert_int_equal(watch_window_cap(&r.win), t0 + 800);
    assert_int_equal(watch_window_due(&r.win, false), t0 + 800);
    watch_window_flush(&r.win, window_record, &r);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.paths[0], "a.css");
    assert_false(watch_window_is_open(&r.win));
    /* A short debounce still waits 100 ms at the most. */
    watch_window_finish(&r.win);
    window_setup(&r, 10);
    t0 = r.now;
    note(&r, "b.css", false, false, -1);
    assert_int_equal(watch_window_cap(&r.win), t0 + 100);
    watch_window_finish(&r.win);
}

static void test_window_writer_holds(void **state)
{
    (void)state;
    struct window_rig r;
    window_setup(&r, 100);
    uint64_t t0 = r.now;
    note(&r, "big.css", true, false, 1); /* written, not yet closed */
    assert_int_equal(watch_window_due(&r.win, false), t0 + WATCH_WRITE_IDLE_MS);
    for (int i = 0; i < 6; i++) {
        r.now += 900;
        note(&r, "big.css", false, false, 1);
    }
    /* Still writing after 5.4 s: flushed at the writer's cap all the same. */
    assert_int_equal(watch_window_due(&r.win, false), t0 + WATCH_WRITE_CAP_MS);
    r.now += 10;
    note(&r, "big.css", false, false, 0); /* closed */
    assert_int_equal(watch_window_due(&r.win, false), t0 + 800);
    watch_window_flush(&r.win, window_record, &r);
    /* An overflow does not wait for writers: everything reloads anyway. */
    t0 = r.now;
    note(&r, "big.css", false, false, 1);
    watch_window_overflow(&r.win);
    assert_int_equal(watch_window_due(&r.win, false), t0 + 100);
    watch_window_finish(&r.win);
}

static void test_window_swap_holds(void **state)
{
    (void)state;
    struct window_rig r;
    window_setup(&r, WATCH_DEBOUNCE_DEFAULT_MS);
    uint64_t t0 = r.now;
    watch_window_swap(&r.win);
    /* Missing: held up to the swap's cap (5 s), then flushed all the same. */
    assert_true(watch_window_held(&r.win, true));
    assert_int_equal(watch_window_due(&r.win, true), t0 + WATCH_SWAP_CAP_MS);
    r.now = t0 + WATCH_SWAP_CAP_MS;
    assert_false(watch_window_held(&r.win, true));
    assert_true(watch_window_due(&r.win, true) <= r.now);
    watch_window_flush(&r.win, window_record, &r);
    assert_int_equal(r.calls, 1);
    assert_true(r.last.overflow);
    /* Renamed into place (mv, ln -sfn): the usual debounce. */
    t0 = r.now;
    watch_window_swap(&r.win);
    assert_false(watch_window_held(&r.win, false));
    assert_int_equal(watch_window_due(&r.win, false), t0 + WATCH_DEBOUNCE_DEFAULT_MS);
    /* Made in place (mkdir, cp -r): quiet for 200 ms after its last event. */
    watch_window_filling(&r.win);
    r.now += 40;
    note(&r, "d0/f.css", true, false, -1);
    assert_int_equal(watch_window_due(&r.win, false), t0 + 40 + WATCH_SWAP_QUIET_MS);
    watch_window_flush(&r.win, window_record, &r);
    assert_int_equal(r.calls, 2);
    assert_true(r.last.overflow);
    watch_window_finish(&r.win);
    /* A debounce longer than the quiet is kept. */
    window_setup(&r, 300);
    t0 = r.now;
    watch_window_swap(&r.win);
    watch_window_filling(&r.win);
    assert_int_equal(watch_window_due(&r.win, false), t0 + 300);
    watch_window_finish(&r.win);
}

static void test_window_poll_settled(void **state)
{
    (void)state;
    struct window_rig r;
    window_setup(&r, 100);
    assert_false(watch_window_settled(&r.win, false, false)); /* no window */
    note(&r, "a.css", false, false, -1);
    assert_false(watch_window_settled(&r.win, true, false));  /* still news */
    r.now += 100;
    assert_true(watch_window_settled(&r.win, false, false));  /* a walk found none */
    watch_window_flush(&r.win, window_record, &r);
    /* News on every walk: flushed at the cap. */
    uint64_t t0 = r.now;
    note(&r, "a.css", false, false, -1);
    r.now = t0 + 800;
    assert_true(watch_window_settled(&r.win, true, false));
    watch_window_flush(&r.win, window_record, &r);
    /* After a swap a poll waits 200 ms without news; while missing, the cap. */
    t0 = r.now;
    watch_window_swap(&r.win);
    r.now = t0 + 100;
    assert_false(watch_window_settled(&r.win, false, false));
    r.now = t0 + WATCH_SWAP_QUIET_MS;
    assert_true(watch_window_settled(&r.win, false, false));
    assert_false(watch_window_settled(&r.win, false, true));
    r.now = t0 + WATCH_SWAP_CAP_MS;
    assert_true(watch_window_settled(&r.win, true, true));
    watch_window_finish(&r.win);
}

static void test_window_batch(void **state)
{
    (void)state;
    struct window_rig r;
    window_setup(&r, 100);
    /* A temp file that came and went inside one window never shows ... */
    note(&r, "sedAb12Cd", true, false, -1);
    note(&r, "sedAb12Cd", false, true, 0);
    watch_window_flush(&r.win, window_record, &r);
    assert_int_equal(r.calls, 0);
    /* ... nor beside a real change, which is deduplicated. */
    note(&r, "sedAb12Cd", true, false, -1);
    note(&r, "style.css", false, false, -1);
    note(&r, "sedAb12Cd", false, true, 0);
    note(&r, "style.css", false, false, -1);
    watch_window_flush(&r.win, window_record, &r);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.paths[0], "style.css");
    assert_false(r.last.overflow);
    /* Too many changes for one batch, or no memory to name one: overflow. */
    for (unsigned i = 0; i <= WATCH_MAX_BATCH; i++) {
        char rel[32];
        snprintf(rel, sizeof rel, "f%u", i);
        note(&r, rel, false, false, -1);
    }
    watch_window_flush(&r.win, window_record, &r);
    assert_true(r.last.overflow);
    assert_int_equal(r.n, WATCH_MAX_BATCH);
    watch_window_note(&r.win, 0, NULL, false, false, -1);
    watch_window_flush(&r.win, window_record, &r);
    assert_true(r.last.overflow);
    watch_window_finish(&r.win);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_debounce_and_cap),
        cmocka_unit_test(test_window_writer_holds),
        cmocka_unit_test(test_window_swap_holds),
        cmocka_unit_test(test_window_poll_settled),
        cmocka_unit_test(test_window_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
