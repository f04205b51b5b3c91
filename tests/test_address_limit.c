/* address_limit: slots per client address, given back at a close, and
 * taken back from a connection whose client has gone while it was idle,
 * over real socket pairs. */
#include "cmocka_prelude.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "serve/address_limit.h"

/* A connection: its socket (ours) and its client's end. */
struct pair {
    int server, client;
    struct address_hold hold;
};

static void open_pair(struct pair *p)
{
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    p->server = fds[0];
    p->client = fds[1];
}

static void close_pair(struct address_limit *l, struct pair *p)
{
    address_limit_leave(l, &p->hold);
    if (p->client >= 0) {
        close(p->client);
    }
    close(p->server);
}

static struct sockaddr_in v4(const char *text)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, text, &a.sin_addr), 1);
    return a;
}

static struct sockaddr_in6 v6(const char *text)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6};
    assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
    return a;
}

/* A connection of p from addr; whether it holds a slot. */
static bool enter(struct address_limit *l, struct pair *p, const void *addr)
{
    open_pair(p);
    return address_limit_enter(l, &p->hold, p->server, addr);
}

/* The limit binds per address, and a close frees its slot at once. */
static void test_slots_per_address(void **state)
{
    struct address_limit *l = address_limit_create(2);
    struct sockaddr_in a = v4("192.0.2.1"), b = v4("192.0.2.2");
    struct sockaddr_in6 mapped = v6("::ffff:192.0.2.1"), six = v6("2001:db8::1");
    struct pair p[6];
    assert_true(enter(l, &p[0], &a));
    assert_true(enter(l, &p[1], &mapped)); /* the same address */
    assert_false(enter(l, &p[2], &a));
    assert_true(enter(l, &p[3], &b));
    assert_true(enter(l, &p[4], &six));
    assert_false(address_limit_admit(l, &p[2].hold)); /* both holders are live */
    assert_true(address_limit_admit(l, &p[0].hold));
    close_pair(l, &p[1]);
    assert_true(address_limit_admit(l, &p[2].hold)); /* freed by the close */
    assert_false(enter(l, &p[5], &mapped));
    close_pair(l, &p[5]); /* over the limit, and gone: frees nothing */
    assert_false(enter(l, &p[1], &a));
    for (int i = 0; i < 5; i++) {
        close_pair(l, &p[i]);
    }
    assert_true(enter(l, &p[0], &a)); /* the address forgotten, counted anew */
    close_pair(l, &p[0]);
    address_limit_destroy(l);
}

/* A holder whose client has gone is given up only while it is idle (it
 * can only close); one busy with a request keeps its slot. */
static void test_a_gone_idle_holder_gives_its_slot(void **state)
{
    struct address_limit *l = address_limit_create(1);
    struct sockaddr_in a = v4("192.0.2.1");
    struct pair held, over, later;
    assert_true(enter(l, &held, &a));
    assert_false(enter(l, &over, &a));
    assert_int_equal(write(held.client, "G", 1), 1); /* unread bytes: not gone yet */
    close(held.client);
    held.client = -1;
    assert_false(address_limit_admit(l, &over.hold));
    char byte;
    assert_int_equal(read(held.server, &byte, 1), 1); /* read: now only the end waits */
    address_hold_idle(&held.hold, false);               /* a request on */
    assert_false(address_limit_admit(l, &over.hold));
    address_hold_idle(&held.hold, true);
    assert_true(address_limit_admit(l, &over.hold));
    assert_false(enter(l, &later, &a)); /* the slot is over's now */
    close_pair(l, &held);               /* held nothing any more */
    assert_false(address_limit_admit(l, &later.hold));
    close_pair(l, &over);
    assert_true(address_limit_admit(l, &later.hold));
    close_pair(l, &later);
    address_limit_destroy(l);
}

/* 0 is no limit; an address that is not IP is not counted. */
static void test_no_limit(void **state)
{
    struct address_limit *l = address_limit_create(0);
    struct sockaddr_in a = v4("192.0.2.1");
    struct pair p[3];
    for (int i = 0; i < 3; i++) {
        assert_true(enter(l, &p[i], &a));
    }
    for (int i = 0; i < 3; i++) {
        close_pair(l, &p[i]);
    }
    address_limit_destroy(l);
    l = address_limit_create(1);
    struct sockaddr_un local = {.sun_family = AF_UNIX};
    for (int i = 0; i < 2; i++) {
        assert_true(enter(l, &p[i], &local));
        assert_true(address_limit_admit(l, &p[i].hold));
    }
    for (int i = 0; i < 2; i++) {
        close_pair(l, &p[i]);
    }
    address_limit_destroy(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots_per_address),
        cmocka_unit_test(test_a_gone_idle_holder_gives_its_slot),
        cmocka_unit_test(test_no_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
