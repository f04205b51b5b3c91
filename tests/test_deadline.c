/* deadline: a socket past its deadline is shut down (its peer sees the end),
 * one without a deadline or moved later is not, and removal is safe. */
#include "cmocka_prelude.h"

#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "serve/deadline.h"

/* True when the peer of fd sees the end (EOF or a reset) within ms. */
static bool peer_ends_within(int peer, int ms)
{
    struct pollfd p = {.fd = peer, .events = POLLIN};
    if (poll(&p, 1, ms) != 1) {
        return false;
    }
    char c;
    return recv(peer, &c, 1, MSG_DONTWAIT) <= 0;
}

static void test_past_its_deadline_is_shut_down(void **state)
{
    struct deadline_watch *w = deadline_watch_start(10);
    assert_non_null(w);
    int late[2], none[2], moved[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, late), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, none), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, moved), 0);
    int64_t now = clock_now_ms();
    struct deadline_entry *a = deadline_add(w, late[0], now + 50);
    struct deadline_entry *b = deadline_add(w, none[0], 0);
    struct deadline_entry *c = deadline_add(w, moved[0], now + 50);
    deadline_set(c, now + 60000); /* the request went on: a later deadline */
    assert_true(peer_ends_within(late[1], 2000));
    assert_false(peer_ends_within(none[1], 200));
    assert_false(peer_ends_within(moved[1], 200));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_past_its_deadline_is_shut_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
