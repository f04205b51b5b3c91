/* settings: snapshots published whole, read whole, freed by their last
 * reader, under readers on other threads (TSan runs this too). */
#include "cmocka_prelude.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "base/config.h"
#include "base/settings.h"

/* Defaults with timeout and grace both n: a snapshot's two fields tell
 * which generation they were written in. */
static void make(struct config *c, unsigned n)
{
    char value[16], err[128];
    assert_true(config_init(c));
    snprintf(value, sizeof(value), "%u", n + 1);
    assert_true(config_set(c, "timeout", value, err, sizeof(err)));
    assert_true(config_set(c, "grace", value, err, sizeof(err)));
}

/* A snapshot held across a publish stays whole and of its generation. */
static void test_a_held_snapshot_outlives_its_successor(void **state)
{
    struct config first, second;
    make(&first, 0);
    struct settings *s = settings_create(&first);
    assert_non_null(s);
    const struct config *old = settings_acquire(s);
    assert_int_equal(settings_generation(old), 0);
    make(&second, 1);
    assert_true(settings_publish(s, &second));
    const struct config *now = settings_acquire(s);
    assert_int_equal(settings_generation(now), 1);
    assert_int_equal(now->timeout, 2);
    assert_int_equal(old->timeout, 1); /* still readable: its reader holds it */
    assert_string_equal(old->host, "127.0.0.1");
    settings_release(s, old); /* its last reference: freed here (the leak checkers see it) */
    settings_release(s, now);
    settings_release(s, NULL);
    settings_destroy(s);
    settings_destroy(NULL);
}

struct race {
    struct settings *s;
    atomic_bool done;
    atomic_ulong reads;
};

/* Reads snapshots until told to stop, each one whole: its two fields and
 * its generation agree. */
static void *reader(void *arg)
{
    struct race *r = arg;
    while (!atomic_load(&r->done)) {
        const struct config *c = settings_acquire(r->s);
        unsigned gen = settings_generation(c);
        if (c->timeout != gen + 1 || c->grace != gen + 1) {
            settings_release(r->s, c);
            return (void *)1;
        }
        settings_release(r->s, c);
        atomic_fetch_add(&r->reads, 1);
    }
    return NULL;
}

/* Publishes while readers read: none sees a mix, none a freed one. */
static void test_readers_never_see_a_mix(void **state)
{
    struct config first;
    make(&first, 0);
    struct race r = {.s = settings_create(&first)};
    pthread_t threads[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_create(&threads[i], NULL, reader, &r), 0);
    }
    for (unsigned gen = 1; gen <= 300; gen++) {
        struct config next;
        make(&next, gen);
        assert_true(settings_publish(r.s, &next));
    }
    while (atomic_load(&r.reads) < 100) {
        const struct config *c = settings_acquire(r.s); /* the readers' turn: no sleep, some work */
        settings_release(r.s, c);
    }
    atomic_store(&r.done, true);
    for (int i = 0; i < 3; i++) {
        void *failed;
        assert_int_equal(pthread_join(threads[i], &failed), 0);
        assert_null(failed);
    }
    const struct config *last = settings_acquire(r.s);
    assert_int_equal(settings_generation(last), 300);
    settings_release(r.s, last);
    settings_destroy(r.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_held_snapshot_outlives_its_successor),
        cmocka_unit_test(test_readers_never_see_a_mix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
