#include "address_limit.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

/* One address's connections. */
struct address_count {
    unsigned char bytes[16]; /* IPv4 in the first four; the family tells them apart */
    sa_family_t family;
    unsigned connections;          /* counted, over the limit or not */
    unsigned held;                 /* slots held: at most the limit */
    struct address_hold *holders;  /* those holding them */
};

struct address_limit {
    unsigned limit;
    pthread_mutex_t lock; /* guards the tree and every count and holder in it */
    void *tree;           /* tsearch's: struct address_count by address */
};

/* tsearch's order on addresses. */
static int compare(const void *a, const void *b)
{
    const struct address_count *x = a, *y = b;
    if (x->family != y->family) {
        return x->family < y->family ? -1 : 1;
    }
    return memcmp(x->bytes, y->bytes, sizeof(x->bytes));
}

/* addr as a key: an IPv4-mapped IPv6 address is its IPv4 one (a dual-stack
 * listener sees IPv4 clients so). False for a family that is not IP. */
static bool key_of(const struct sockaddr *addr, struct address_count *key)
{
    *key = (struct address_count){.family = AF_INET};
    if (addr && addr->sa_family == AF_INET) {
        memcpy(key->bytes, &((const struct sockaddr_in *)(const void *)addr)->sin_addr, 4);
        return true;
    }
    if (!addr || addr->sa_family != AF_INET6) {
        return false;
    }
    const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(a6)) {
        memcpy(key->bytes, a6->s6_addr + 12, 4);
    } else {
        key->family = AF_INET6;
        memcpy(key->bytes, a6->s6_addr, 16);
    }
    return true;
}

/* See address_limit.h. */
struct address_limit *address_limit_create(unsigned limit)
{
    struct address_limit *l = malloc(sizeof(*l));
    if (l) {
        *l = (struct address_limit){.limit = limit};
        pthread_mutex_init(&l->lock, NULL);
    }
    return l;
}

/* See address_limit.h. */
void address_limit_destroy(struct address_limit *l)
{
    if (l) {
        tdestroy(l->tree, free); /* empty unless a connection never left */
        pthread_mutex_destroy(&l->lock);
        free(l);
    }
}

/* h takes a slot of its address. Holds the lock. */
static void take(struct address_hold *h)
{
    struct address_count *n = h->count;
    n->held++;
    h->holds = true;
    h->prev = NULL;
    h->next = n->holders;
    if (n->holders) {
        n->holders->prev = h;
    }
    n->holders = h;
}

/* h gives its slot back. Holds the lock. */
static void give_back(struct address_hold *h)
{
    struct address_count *n = h->count;
    if (h->prev) {
        h->prev->next = h->next;
    } else {
        n->holders = h->next;
    }
    if (h->next) {
        h->next->prev = h->prev;
    }
    h->prev = h->next = NULL;
    h->holds = false;
    n->held--;
}

/* True when the client of fd has sent its FIN or reset and nothing waits
 * unread before it (a peek: nothing is taken from libmicrohttpd). */
static bool client_gone(int fd)
{
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* A holder of n that can only close: idle, its client gone (its worker
 * has not read the end yet); NULL when none is. Holds the lock, so no
 * holder's socket is closed meanwhile (address_limit_leave comes first). */
static struct address_hold *closing_holder(const struct address_count *n)
{
    for (struct address_hold *h = n->holders; h; h = h->next) {
        if (atomic_load(&h->idle) && client_gone(h->fd)) {
            return h;
        }
    }
    return NULL;
}

/* h takes a slot if one is free or can be taken back; whether it holds
 * one. Holds the lock. */
static bool try_take(const struct address_limit *l, struct address_hold *h)
{
    if (h->count->held >= l->limit) {
        struct address_hold *gone = closing_holder(h->count);
        if (!gone) {
            return false;
        }
        give_back(gone); /* its close will find it holds nothing */
    }
    take(h);
    return true;
}

/* See address_limit.h. */
bool address_limit_enter(struct address_limit *l, struct address_hold *h, int fd, const struct sockaddr *addr)
{
    *h = (struct address_hold){.fd = fd};
    atomic_init(&h->idle, true);
    struct address_count key;
    if (!l || l->limit == 0 || !key_of(addr, &key)) {
        return true;
    }
    pthread_mutex_lock(&l->lock);
    struct address_count **found = tfind(&key, &l->tree, compare);
    struct address_count *n = found ? *found : malloc(sizeof(*n));
    if (n && !found) {
        *n = key;
        if (!tsearch(n, &l->tree, compare)) {
            free(n);
            n = NULL;
        }
    }
    bool within = true;
    if (n) {
        n->connections++;
        h->count = n;
        within = try_take(l, h);
    }
    pthread_mutex_unlock(&l->lock);
    return within;
}

/* See address_limit.h. */
bool address_limit_admit(struct address_limit *l, struct address_hold *h)
{
    if (!l || !h->count) {
        return true;
    }
    pthread_mutex_lock(&l->lock);
    bool within = h->holds || try_take(l, h);
    pthread_mutex_unlock(&l->lock);
    return within;
}

/* See address_limit.h. */
void address_hold_idle(struct address_hold *h, bool idle)
{
    atomic_store(&h->idle, idle);
}

/* See address_limit.h. */
void address_limit_leave(struct address_limit *l, struct address_hold *h)
{
    struct address_count *n = h->count;
    if (!l || !n) {
        return;
    }
    pthread_mutex_lock(&l->lock);
    if (h->holds) {
        give_back(h);
    }
    h->count = NULL;
    if (--n->connections == 0) {
        tdelete(n, &l->tree, compare);
        free(n);
    }
    pthread_mutex_unlock(&l->lock);
}
