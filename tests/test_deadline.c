/* deadline: a socket past its deadline is shut down (its peer sees the end),
 * one without a deadline or moved later is not, one whose file is cut short
 * is, and removal is safe. On a clock the test moves: no waiting on the
 * real one. */
#include "cmocka_prelude.h"

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "serve/deadline.h"

static int64_t fake_now(void *ctx)
{
    return *(const int64_t *)ctx;
}

/* True when the peer of a socket already sees the end (EOF or a reset). */
static bool peer_ended(int peer)
{
    struct pollfd p = {.fd = peer, .events = POLLIN};
    if (poll(&p, 1, 0) != 1) {
        return false;
    }
    char c;
    return recv(peer, &c, 1, MSG_DONTWAIT) <= 0;
}

static void test_past_its_deadline_is_shut_down(void **state)
{
    int64_t now = 100000;
    struct clock clock = {fake_now, &now};
    struct deadline_watch *w = deadline_watch_start(0, &clock);
    assert_non_null(w);
    int late[2], none[2], moved[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, late), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, none), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, moved), 0);
    struct deadline_entry *a = deadline_add(w, late[0], now + 50);
    struct deadline_entry *b = deadline_add(w, none[0], 0);
    struct deadline_entry *c = deadline_add(w, moved[0], now + 50);
    deadline_set(c, now + 60000); /* the request went on: a later deadline */
    deadline_watch_look(w);
    assert_false(peer_ended(late[1])); /* not yet due */
    now += 49;
    deadline_watch_look(w);
    assert_false(peer_ended(late[1]));
    now += 1;
    deadline_watch_look(w);
    assert_true(peer_ended(late[1]));
    assert_true(deadline_was_expired(a));
    assert_false(peer_ended(none[1]));
    assert_false(peer_ended(moved[1]));
    assert_int_equal(deadline_expired(w), 1);
    deadline_watch_look(w); /* once each */
    assert_int_equal(deadline_expired(w), 1);
    deadline_remove(w, a);
    deadline_remove(w, b);
    deadline_remove(w, NULL);
    deadline_set(NULL, 1);
    for (int i = 0; i < 2; i++) {
        close(late[i]);
        close(none[i]);
    }
    deadline_watch_stop(w); /* frees c, still listed */
    close(moved[0]);
    close(moved[1]);
    deadline_watch_stop(NULL);
}

/* A response sent from a file ends once the file is shorter than it needs,
 * at the next look, deadline or none; a response done stops the watch. */
static void test_a_file_cut_short_ends_its_response(void **state)
{
    int64_t now = 5000;
    struct clock clock = {fake_now, &now};
    struct deadline_watch *w = deadline_watch_start(0, &clock);
    char path[] = "/tmp/folio-deadline-XXXXXX";
    int file = mkstemp(path);
    assert_true(file >= 0);
    unlink(path);
    assert_int_equal(ftruncate(file, 4096), 0);
    int sending[2], done[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sending), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, done), 0);
    struct deadline_entry *a = deadline_add(w, sending[0], 0);
    struct deadline_entry *b = deadline_add(w, done[0], 0);
    assert_true(deadline_watch_file(w, a, file, 4096));
    assert_true(deadline_watch_file(w, b, file, 4096));
    assert_true(deadline_watch_file(w, b, -1, 0)); /* b's response completed */
    deadline_watch_look(w);
    assert_false(peer_ended(sending[1])); /* whole: nothing to do */
    assert_int_equal(ftruncate(file, 1000), 0);
    deadline_watch_look(w);
    assert_true(peer_ended(sending[1]));
    assert_false(peer_ended(done[1]));
    assert_int_equal(deadline_expired(w), 1);
    deadline_remove(w, a);
    deadline_remove(w, b);
    deadline_watch_stop(w);
    close(file);
    for (int i = 0; i < 2; i++) {
        close(sending[i]);
        close(done[i]);
    }
}

/* With a thread of its own on the real clock the watcher ends a socket due
 * already at its first tick: the production path, without a wait on a
 * deadline still to come. */
static void test_the_threaded_watcher_looks_by_itself(void **state)
{
    struct deadline_watch *w = deadline_watch_start(1, NULL);
    int pair[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    struct deadline_entry *e = deadline_add(w, pair[0], clock_now_ms() - 1);
    struct pollfd p = {.fd = pair[1], .events = POLLIN};
    assert_int_equal(poll(&p, 1, 10000), 1); /* an event awaited, not a sleep: bounded */
    assert_true(deadline_was_expired(e));
    deadline_remove(w, e);
    deadline_watch_stop(w);
    close(pair[0]);
    close(pair[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_past_its_deadline_is_shut_down),
        cmocka_unit_test(test_a_file_cut_short_ends_its_response),
        cmocka_unit_test(test_the_threaded_watcher_looks_by_itself),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
