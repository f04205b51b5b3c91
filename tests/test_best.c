/* best: best levels made off the request path, once a version, from a
 * bounded queue; what lands replaces the whole responses of the fast level. */
#include "cmocka_prelude.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve/best.h"
#include "serve/compress.h"

/* The encoder, held at a gate: each call waits until the test lets that
 * many through, so what is queued meanwhile is known (an event, not a
 * timing). It makes half of its input, or nothing while failing is set. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t moved;
    int entered, allowed;
    bool failing;
    const atomic_bool *stop; /* the worker's, as the last call saw it */
} gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false, NULL};

struct body *__wrap_compress_body_until(enum encoding e, const void *data, size_t len, int level,
                                        const atomic_bool *stop);
struct body *__wrap_compress_body_until(enum encoding e, const void *data, size_t len, int level,
                                        const atomic_bool *stop)
{
    (void)e;
    (void)level;
    pthread_mutex_lock(&gate.lock);
    int me = ++gate.entered;
    gate.stop = stop;
    pthread_cond_broadcast(&gate.moved);
    while (me > gate.allowed) {
        pthread_cond_wait(&gate.moved, &gate.lock);
    }
    bool failing = gate.failing;
    pthread_mutex_unlock(&gate.lock);
    return failing || atomic_load(stop) ? NULL : body_from(data, len / 2);
}

/* Lets calls through the gate until @allowed have been let. */
static void gate_allow(int allowed)
{
    pthread_mutex_lock(&gate.lock);
    gate.allowed = allowed;
    pthread_cond_broadcast(&gate.moved);
    pthread_mutex_unlock(&gate.lock);
}

/* Waits (10 s at most) until @entered calls have reached the gate. When the
 * worker reaches call n, every job before it has finished: it runs one at a
 * time, in order. */
static void gate_wait_entered(int entered)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&gate.lock);
    int rc = 0;
    while (gate.entered < entered && rc == 0) {
        rc = pthread_cond_timedwait(&gate.moved, &gate.lock, &until);
    }
    pthread_mutex_unlock(&gate.lock);
    assert_int_equal(rc, 0);
}

static void gate_reset(bool failing)
{
    pthread_mutex_lock(&gate.lock);
    gate.entered = gate.allowed = 0;
    gate.failing = failing;
    gate.stop = NULL;
    pthread_mutex_unlock(&gate.lock);
}

struct fixture {
    struct best *best;
    struct cache *cache;
    struct body *plain;
    struct file_id id;
    int plain_calls; /* how often best_offer asked for the bytes */
};

static int setup(void **state)
{
    static struct fixture fx;
    gate_reset(false);
    fx = (struct fixture){.best = best_start(), .cache = cache_create(16 << 20), .id = {.ino = 1, .size = 4096}};
    fx.plain = body_create(4096);
    memset(fx.plain->data, 'a', 4096);
    *state = &fx;
    return fx.best && fx.cache && fx.plain ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    gate_allow(1000); /* a job still at the gate finishes; queued ones are dropped */
    best_stop(fx->best);
    cache_destroy(fx->cache);
    assert_int_equal(atomic_load(&fx->plain->refs), 1); /* the queue let go of every job's bytes */
    body_unref(fx->plain);
    return 0;
}

static struct body *plain_of(void *arg)
{
    struct fixture *fx = arg;
    fx->plain_calls++;
    return body_ref(fx->plain);
}

static bool queue(struct fixture *fx, const char *key)
{
    return best_queue(fx->best, fx->cache, key, "br:11", ENCODING_BR, 11, &fx->id, fx->plain);
}

/* Finishes every job queued so far: a last one's arrival at the gate says
 * the ones before it are done. */
static void finish_jobs(struct fixture *fx, int calls_so_far)
{
    assert_true(queue(fx, "/sentinel"));
    gate_allow(calls_so_far);
    gate_wait_entered(calls_so_far + 1);
}

/* A landed best level is kept under its variant, and the whole responses
 * made from the fast level go, so the next request is built from it. */
static void test_lands(void **state)
{
    struct fixture *fx = *state;
    struct body *whole = body_from("HTTP/1.1 200", 12);
    assert_true(cache_put(fx->cache, "/a.js", "r:br", &fx->id, whole, cache_generation(fx->cache)));
    assert_int_equal(best_state(fx->cache, "/a.js", "br:11", &fx->id), BEST_ABSENT);
    assert_true(queue(fx, "/a.js"));
    finish_jobs(fx, 1);
    assert_int_equal(best_state(fx->cache, "/a.js", "br:11", &fx->id), BEST_LANDED);
    struct body *kept = cache_get(fx->cache, "/a.js", "r:br", &fx->id);
    assert_null(kept); /* dropped: it was made from the fast level */
    assert_int_equal(best_made(fx->best), 1);
    assert_int_equal(best_done(fx->best), 1);
    struct file_id next = fx->id;
    next.mtime_ns++;
    assert_int_equal(best_state(fx->cache, "/a.js", "br:11", &next), BEST_ABSENT); /* per version */
    body_unref(whole);
}

/* A job that cannot be made leaves an empty body: tried, not offered again
 * for that version, and not counted as made. */
static void test_a_failed_job_is_tried(void **state)
{
    struct fixture *fx = *state;
    gate_reset(true);
    assert_true(queue(fx, "/b.js"));
    finish_jobs(fx, 1);
    assert_int_equal(best_state(fx->cache, "/b.js", "br:11", &fx->id), BEST_TRIED);
    assert_int_equal(best_made(fx->best), 0);
    assert_int_equal(best_done(fx->best), 1);
}

/* A job waiting or in progress is not queued twice; best_offer says it is
 * on its way without reading the file again. Another version is another job. */
static void test_a_job_is_queued_once(void **state)
{
    struct fixture *fx = *state;
    assert_true(queue(fx, "/c.js"));
    gate_wait_entered(1); /* in progress */
    assert_false(queue(fx, "/c.js"));
    assert_true(queue(fx, "/d.js"));
    assert_false(queue(fx, "/d.js")); /* waiting */
    assert_true(best_offer(fx->best, fx->cache, "/c.js", "br:11", ENCODING_BR, 11, &fx->id, 4096, plain_of, fx));
    assert_true(best_offer(fx->best, fx->cache, "/d.js", "br:11", ENCODING_BR, 11, &fx->id, 4096, plain_of, fx));
    assert_int_equal(fx->plain_calls, 0);
    struct file_id next = fx->id;
    next.mtime_ns++;
    assert_true(best_offer(fx->best, fx->cache, "/c.js", "br:11", ENCODING_BR, 11, &next, 4096, plain_of, fx));
    assert_int_equal(fx->plain_calls, 1);
}

/* The queue is bounded: past it a job is not taken, and best_offer does not
 * read the file for it but says it waits (offered again later). Once jobs
 * finish, there is room again. */
static void test_the_queue_is_bounded(void **state)
{
    struct fixture *fx = *state;
    char key[32];
    int taken = 0;
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof(key), "/%d.js", i);
        taken += queue(fx, key);
    }
    assert_int_equal(taken, 8);
    assert_false(best_offer(fx->best, fx->cache, "/late.js", "br:11", ENCODING_BR, 11, &fx->id, 4096, plain_of, fx));
    assert_int_equal(fx->plain_calls, 0);
    gate_allow(8);
    gate_wait_entered(8); /* the eighth in progress: seven done, room for seven */
    assert_true(best_offer(fx->best, fx->cache, "/late.js", "br:11", ENCODING_BR, 11, &fx->id, 4096, plain_of, fx));
    assert_int_equal(fx->plain_calls, 1);
    assert_int_equal(best_state(fx->cache, "/0.js", "br:11", &fx->id), BEST_LANDED);
}

static void *stop_best(void *best)
{
    best_stop(best);
    return NULL;
}

/* Stopping drops the queued jobs, and the one in progress gives up (the
 * encoder sees the stop) leaving nothing: not even "tried", so the next
 * run of folio makes it. Every job's bytes are let go. */
static void test_stop_drops_the_queue(void **state)
{
    struct fixture *fx = *state;
    assert_true(queue(fx, "/held.js"));
    assert_true(queue(fx, "/next.js"));
    assert_true(queue(fx, "/last.js"));
    gate_wait_entered(1);
    pthread_mutex_lock(&gate.lock);
    const atomic_bool *stop = gate.stop;
    pthread_mutex_unlock(&gate.lock);
    pthread_t stopper;
    assert_int_equal(pthread_create(&stopper, NULL, stop_best, fx->best), 0);
    struct timespec now, until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 10;
    while (!atomic_load(stop) && clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec < until.tv_sec) {
        sched_yield(); /* until best_stop has said stop: an event awaited, 10 s at most */
    }
    assert_true(atomic_load(stop));
    gate_allow(1000);
    pthread_join(stopper, NULL);
    fx->best = NULL; /* stopped and freed */
    assert_int_equal(gate.entered, 1); /* the queued jobs never ran */
    assert_int_equal(best_state(fx->cache, "/held.js", "br:11", &fx->id), BEST_ABSENT);
    assert_int_equal(best_state(fx->cache, "/next.js", "br:11", &fx->id), BEST_ABSENT);
    assert_int_equal(atomic_load(&fx->plain->refs), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_job_is_tried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_job_is_queued_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_queue_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_drops_the_queue, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
