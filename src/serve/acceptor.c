#include "acceptor.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/say_limit.h"

/* Set on the accept thread: its MHD_add_connection calls log refusals that
 * the call's result already counts (acceptor_lost). */
static _Thread_local bool on_accept_thread;

/* Out of descriptors, the accept loop waits this long before it tries again
 * (the connection waits in the backlog meanwhile), as nginx does; it says so
 * at most once in this many seconds, however often it runs out. */
#define ACCEPT_PAUSE_MS 100
#define ACCEPT_SAY_EVERY_S 60

struct acceptor {
    struct MHD_Daemon *daemon;
    int listen_fd, wake_fd; /* wake_fd: an eventfd, written when a slot frees or on stop */
    unsigned limit;
    atomic_uint held;       /* sockets handed to the daemon and not yet closed */
    atomic_bool stopping;
    struct say_limit out_of_descriptors, lost; /* their stderr lines, one a minute */
    bool started;
    pthread_t thread;
};

/* See acceptor.h. SO_REUSEADDR and SOMAXCONN, as libmicrohttpd's own. */
int acceptor_listen(const struct sockaddr_storage *addr)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (addr->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)(const void *)addr;
        int v6only = !IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
    }
    socklen_t len = addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (bind(fd, (const struct sockaddr *)addr, len) != 0 || listen(fd, SOMAXCONN) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* Wakes the accept loop (a slot freed, or stop). */
static void wake(struct acceptor *a)
{
    uint64_t one = 1;
    while (write(a->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
}

/* Why accept_waiting stopped. */
enum accept_stop { ACCEPT_NONE_LEFT, ACCEPT_AT_CAP, ACCEPT_OUT_OF_DESCRIPTORS };

/* Accepts every connection waiting, up to the limit. */
static enum accept_stop accept_waiting(struct acceptor *a)
{
    while (atomic_load(&a->held) < a->limit) {
        struct sockaddr_storage peer;
        socklen_t len = sizeof(peer);
        int fd = accept4(a->listen_fd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            atomic_fetch_add(&a->held, 1); /* before: its close may come first */
            if (MHD_add_connection(a->daemon, fd, (struct sockaddr *)&peer, len) != MHD_YES) {
                atomic_fetch_sub(&a->held, 1); /* refused (a drain, no memory): closed by it */
            }
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) {
            continue; /* that one is gone; others may wait */
        }
        if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM) {
            return ACCEPT_NONE_LEFT; /* EAGAIN */
        }
        if (say_limit_pass(&a->out_of_descriptors, ACCEPT_SAY_EVERY_S, NULL, 0)) { /* its count: pauses, not clients */
            fprintf(stderr, "folio: accept: %s: new connections wait (raise the open-file limit)\n",
                    strerror(errno));
        }
        return ACCEPT_OUT_OF_DESCRIPTORS;
    }
    return ACCEPT_AT_CAP;
}

/* The thread: waits for connections (at the cap or out of descriptors,
 * only for the wake: a slot freed, a pause over, the stop), until stopped. */
static void *accept_main(void *arg)
{
    struct acceptor *a = arg;
    on_accept_thread = true;
    enum accept_stop why = ACCEPT_NONE_LEFT;
    while (!atomic_load(&a->stopping)) {
        struct pollfd p[2] = {{.fd = a->wake_fd, .events = POLLIN},
                              {.fd = a->listen_fd, .events = why == ACCEPT_NONE_LEFT ? POLLIN : 0}};
        if (poll(p, 2, why == ACCEPT_OUT_OF_DESCRIPTORS ? ACCEPT_PAUSE_MS : -1) < 0) {
            if (errno != EINTR) { /* ENOMEM: a pause, never a loop that stops accepting */
                nanosleep(&(struct timespec){0, ACCEPT_PAUSE_MS * 1000000L}, NULL);
            }
            continue;
        }
        uint64_t count;
        if (p[0].revents && read(a->wake_fd, &count, sizeof(count)) < 0) {
            continue; /* EAGAIN: nothing was there after all */
        }
        why = accept_waiting(a);
    }
    return NULL;
}

/* See acceptor.h. */
struct acceptor *acceptor_create(int listen_fd, unsigned limit)
{
    struct acceptor *a = calloc(1, sizeof(*a));
    int wake_fd = a ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
    if (wake_fd < 0) {
        free(a);
        close(listen_fd);
        return NULL;
    }
    *a = (struct acceptor){.listen_fd = listen_fd, .wake_fd = wake_fd, .limit = limit};
    return a;
}

/* See acceptor.h. */
bool acceptor_start(struct acceptor *a, struct MHD_Daemon *d)
{
    a->daemon = d;
    a->started = pthread_create(&a->thread, NULL, accept_main, a) == 0;
    return a->started;
}

/* See acceptor.h: the loop is woken only when this close ends a wait at the cap. */
void acceptor_closed(struct acceptor *a)
{
    unsigned before = a ? atomic_fetch_sub(&a->held, 1) : 0;
    assert(!a || before > 0); /* closed once for each socket handed over */
    if (a && before == a->limit) {
        wake(a);
    }
}

/* See acceptor.h. */
void acceptor_lost(struct acceptor *a, const char *reason)
{
    if (!a || on_accept_thread || atomic_load(&a->held) == 0) {
        return; /* (none held: the message was not about a socket handed over) */
    }
    acceptor_closed(a);
    char more[64];
    if (say_limit_pass(&a->lost, ACCEPT_SAY_EVERY_S, more, sizeof(more))) {
        fprintf(stderr, "folio: a connection was closed before its first request: %s%s\n", reason, more);
    }
}

/* See acceptor.h. */
bool acceptor_at_cap(const struct acceptor *a)
{
    return a && atomic_load(&a->held) >= a->limit;
}

/* See acceptor.h: a listening socket's tcp_info counts its accept queue
 * (tcpi_unacked, Linux's sk_ack_backlog). */
unsigned acceptor_waiting(void *arg)
{
    const struct acceptor *a = arg;
    struct tcp_info info;
    socklen_t len = sizeof(info);
    if (!acceptor_at_cap(a) || getsockopt(a->listen_fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_unacked) + sizeof(info.tcpi_unacked)) {
        return 0;
    }
    return info.tcpi_unacked;
}

/* See acceptor.h. */
unsigned acceptor_port(const struct acceptor *a)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    if (getsockname(a->listen_fd, (struct sockaddr *)&addr, &len) != 0) {
        return 0;
    }
    return ntohs(addr.ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)(const void *)&addr)->sin6_port
                                            : ((const struct sockaddr_in *)(const void *)&addr)->sin_port);
}

/* See acceptor.h. */
void acceptor_stop(struct acceptor *a)
{
    if (!a || !a->started) {
        return;
    }
    atomic_store(&a->stopping, true);
    wake(a);
    pthread_join(a->thread, NULL);
    a->started = false;
}

/* See acceptor.h. */
void acceptor_destroy(struct acceptor *a)
{
    if (a) {
        acceptor_stop(a);
        close(a->wake_fd);
        close(a->listen_fd);
        free(a);
    }
}
