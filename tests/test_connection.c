/* connection: when a close can only be a request line libmicrohttpd dropped,
 * and the answer written then, over a real socket pair. */
#include "cmocka_prelude.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "serve/connection.h"
#include "serve/connection_answer.h"
#include "serve/connection_deadline.h"
#include "serve/library.h"

/* Every reason but the dropped line makes the predicate false. */
static void test_dropped_line_only_when_nothing_else_explains_it(void **state)
{
    struct connection waiting = {.fd = -1, .waiting_since_ms = 10000};
    struct connection busy = {.fd = -1, .waiting_since_ms = -1};
    const enum connection_peer open = CONNECTION_PEER_OPEN, gone = CONNECTION_PEER_GONE;
    assert_true(connection_dropped_line(&waiting, 10500, 2, open, false));
    assert_true(connection_dropped_line(&waiting, 99999, 0, open, false)); /* no idle timeout */
    assert_false(connection_dropped_line(&waiting, 12000, 2, open, false)); /* the idle timeout */
    assert_false(connection_dropped_line(&waiting, 11800, 2, open, false)); /* its clock started a moment before ours */
    assert_true(connection_dropped_line(&waiting, 11700, 2, open, false));
    assert_false(connection_dropped_line(&waiting, 10500, 2, gone, false)); /* FIN, reset, shutdown */
    assert_false(connection_dropped_line(&waiting, 10500, 2, open, true)); /* our deadline */
    assert_false(connection_dropped_line(&busy, 10500, 2, open, false)); /* a request was on */
    assert_false(connection_dropped_line(NULL, 10500, 2, open, false));
    library_note_refusal(414); /* MHD answered someone on this thread: maybe this one */
    assert_false(connection_dropped_line(&waiting, 10500, 2, open, false));
    library_take_request_refusal(414); /* it was a request's */
}

/* A thread's refusals go to the request or the connection they were for. */
static void test_refusals_are_taken_once(void **state)
{
    struct connection later = {.fd = -1, .waiting_since_ms = 1, .used = true};
    assert_int_equal(connection_take_line_refusal(&later), 0); /* none pending */
    library_note_refusal(505);
    library_note_refusal(431);
    library_note_refusal(414);
    library_take_request_refusal(431); /* a request's: the rest stay for the lines */
    assert_int_equal(connection_take_line_refusal(&later), 505); /* oldest first */
    assert_int_equal(connection_take_line_refusal(&later), 414);
    assert_int_equal(connection_take_line_refusal(&later), 0);
    struct connection busy = {.fd = -1, .waiting_since_ms = -1, .used = true};
    library_note_refusal(414);
    assert_int_equal(connection_take_line_refusal(&busy), 0); /* a request was on: not a line's */
    library_take_request_refusal(414);
    for (int i = 0; i < 100; i++) { /* a flood keeps the last few */
        library_note_refusal(400 + (unsigned)i % 2);
    }
    unsigned taken = 0;
    while (connection_take_line_refusal(&later)) {
        taken++;
    }
    assert_true(taken > 0 && taken < 100);
}

/* A request started and done moves the wait: kept alive it starts again. */
static void test_waiting_follows_requests(void **state)
{
    struct connection c = {.fd = -1, .waiting_since_ms = 5};
    connection_request_started(&c, NULL);
    assert_int_equal(c.waiting_since_ms, -1);
    connection_request_done(&c, false);
    assert_int_equal(c.waiting_since_ms, -1);
    library_note_refusal(505);
    connection_request_done(&c, true);
    assert_true(c.waiting_since_ms >= clock_now_ms() - 1000);
    assert_true(c.used);
    assert_int_equal(connection_take_line_refusal(&c), 0); /* that refusal came before this wait */
    library_take_request_refusal(505);
    connection_request_started(NULL, NULL);
    connection_request_done(NULL, true);
}

/* The peer's state, the answer, the drain and the FIN, on a socket pair. */
static void test_answer_and_close_on_a_socket(void **state)
{
    int pair[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    assert_int_equal(connection_peer_state(pair[0]), CONNECTION_PEER_OPEN);
    assert_int_equal(send(pair[1], "more", 4, 0), 4); /* what the client sent on */
    assert_int_equal(connection_peer_state(pair[0]), CONNECTION_PEER_OPEN);

    struct deadline_watch *w = deadline_watch_start(0, NULL);
    assert_non_null(w);
    struct connection *c = connection_open(w, pair[0], 0);
    assert_non_null(c);
    assert_true(connection_answer(pair[0], "HTTP/1.1 400 x\r\n\r\n", 18));
    char none;
    assert_int_equal(recv(pair[0], &none, 1, MSG_DONTWAIT), -1); /* "more" was drained */
    connection_close(w, c);
    char got[64] = {0};
    assert_int_equal(recv(pair[1], got, sizeof(got), 0), 18);
    assert_string_equal(got, "HTTP/1.1 400 x\r\n\r\n");
    assert_int_equal(recv(pair[1], got, sizeof(got), 0), 0); /* the write side was shut */
    connection_close(w, NULL);
    deadline_watch_stop(w);

    close(pair[1]); /* the peer left: gone */
    assert_int_equal(connection_peer_state(pair[0]), CONNECTION_PEER_GONE);
    close(pair[0]);
}

/* A head is libmicrohttpd's from its line to our handler's first call; a
 * record without libmicrohttpd's connection is never taken for the one
 * whose head it refuses. */
static void test_heads_pending_and_answers(void **state)
{
    struct deadline_watch *w = deadline_watch_start(0, NULL);
    struct connection *a = connection_open(w, -1, 0), *b = connection_open(w, -1, 0);
    assert_non_null(a);
    assert_non_null(b);
    int request;
    connection_request_started(a, &request);
    assert_true(a->head_pending);
    assert_ptr_equal(a->request, &request);
    assert_false(connection_answer_refused_head(NULL, 400)); /* no MHD connection to ask */
    uint64_t bytes = 7;
    assert_int_equal(connection_answered(a, &bytes), 0);
    assert_int_equal(bytes, 0);
    a->answered = 400;
    a->answered_bytes = 161;
    assert_int_equal(connection_answered(a, &bytes), 400);
    assert_int_equal(bytes, 161);
    connection_head_checked(a);
    assert_false(a->head_pending);
    connection_request_done(a, false); /* the next request starts afresh */
    assert_null(a->request);
    assert_int_equal(connection_answered(a, &bytes), 0);
    assert_int_equal(connection_answered(NULL, &bytes), 0);
    connection_head_checked(NULL);
    connection_close(w, a); /* either order: the list stays whole */
    connection_close(w, b);
    deadline_watch_stop(w);
}

/* At the limit the request that has been arriving longest is closed, of
 * any thread, never the newcomer, one being answered, nor one accepted a
 * moment ago (its request may be on its way). */
static void test_room_goes_to_the_oldest_arriving(void **state)
{
    struct deadline_watch *w = deadline_watch_start(0, NULL);
    struct connection *busy = connection_open(w, -1, 0), *old = connection_open(w, -1, 0),
                      *young = connection_open(w, -1, 0), *fresh = connection_open(w, -1, 0),
                      *c = connection_open(w, -1, 0);
    int64_t now = clock_now_ms();
    connection_request_whole(busy); /* its handler runs: being answered */
    deadline_set_arriving(old->deadline, now - 5000);
    deadline_set_arriving(young->deadline, now - 1000);
    deadline_set_arriving(fresh->deadline, now); /* its request may be on its way */
    assert_false(connection_make_room(c, false)); /* under the limit */
    assert_true(connection_make_room(c, true));
    assert_true(deadline_was_evicted(old->deadline));
    assert_false(deadline_was_evicted(young->deadline) || deadline_was_evicted(busy->deadline) ||
                 deadline_was_evicted(fresh->deadline) || deadline_was_evicted(c->deadline));
    assert_true(connection_make_room(c, true)); /* the next oldest */
    assert_true(deadline_was_evicted(young->deadline));
    assert_false(connection_make_room(c, true)); /* the fresh one's request may be on its way */
    assert_false(deadline_was_evicted(fresh->deadline));
    deadline_set_arriving(fresh->deadline, now - 1000); /* ... it was not: a slowloris too */
    assert_true(connection_make_room(c, true));
    assert_true(deadline_was_evicted(fresh->deadline));
    assert_false(connection_make_room(c, true)); /* nothing left to close */
    assert_false(deadline_was_evicted(busy->deadline) || deadline_was_evicted(c->deadline));
    connection_close(w, busy);
    connection_close(w, old);
    connection_close(w, young);
    connection_close(w, fresh);
    connection_close(w, c);
    deadline_watch_stop(w);
}

/* What a new connection sent first: a line starting with NUL is refused. */
static void test_a_line_starting_with_nul(void **state)
{
    assert_true(connection_line_starts_nul("\0\0\r\n", 4));
    assert_true(connection_line_starts_nul("\r\n\0GET", 5)); /* after an empty line */
    assert_true(connection_line_starts_nul("\n\0", 2));
    assert_false(connection_line_starts_nul("GET / HTTP/1.1\r\n", 16));
    assert_false(connection_line_starts_nul("G\0", 2)); /* the target check's (admission) */
    assert_false(connection_line_starts_nul("\r\n\r\n", 4)); /* empty lines only: skipped */
    assert_false(connection_line_starts_nul("", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dropped_line_only_when_nothing_else_explains_it),
        cmocka_unit_test(test_refusals_are_taken_once),
        cmocka_unit_test(test_waiting_follows_requests),
        cmocka_unit_test(test_answer_and_close_on_a_socket),
        cmocka_unit_test(test_heads_pending_and_answers),
        cmocka_unit_test(test_room_goes_to_the_oldest_arriving),
        cmocka_unit_test(test_a_line_starting_with_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
