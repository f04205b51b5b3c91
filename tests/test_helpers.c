/* test_helpers — see test_helpers.h. */
#include "cmocka_prelude.h"

#include "test_helpers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "base/clock.h"
#include "live/watch.h"

int64_t th_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void th_write_file(const char *dir, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

void th_remove_tree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    assert_int_equal(system(cmd), 0);
}

int th_dial(uint16_t port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (rcvbuf > 0) {
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf), 0);
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

int th_open_get(uint16_t port, const char *path, int rcvbuf)
{
    int fd = th_dial(port, rcvbuf);
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n", path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    return fd;
}

bool th_read_until(struct th_stream *s, const char *needle, int ms)
{
    int64_t end = th_now_ms() + ms;
    for (;;) {
        s->buf[s->len] = '\0';
        if (needle != NULL && strstr(s->buf, needle) != NULL) {
            return true;
        }
        int left = (int)(end - th_now_ms());
        if (s->eof || left <= 0) {
            return false;
        }
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        if (poll(&p, 1, left) <= 0) {
            continue;
        }
        ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - 1 - s->len);
        if (n <= 0) {
            s->eof = true;
        } else {
            s->len += (size_t)n;
        }
    }
}

size_t th_count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) {
        n++;
    }
    return n;
}

int64_t th_fake_now(void *ctx)
{
    return (int64_t)*(const uint64_t *)ctx;
}

/* Starts the fake clock somewhere past 0 (0 means "no window"). */
void th_rig_init(struct th_rig *t)
{
    *t = (struct th_rig){.now = 1000000};
    t->clock = (struct clock){.now_ms = th_fake_now, .ctx = &t->now};
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
}

void th_rig_finish(struct th_rig *t)
{
    watch_destroy(t->w);
    t->w = NULL;
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
}

int64_t th_rig_now(const struct th_rig *t)
{
    return t->threaded ? th_now_ms() : (int64_t)t->now;
}

void th_record(void *ctx, const struct watch_batch *b)
{
    struct th_rig *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (r->nbatches < TH_MAX_BATCHES) {
        struct th_seen_batch *s = &r->batches[r->nbatches++];
        s->at_ms = th_rig_now(r);
        s->overflow = b->overflow;
        s->n = 0;
        for (size_t i = 0; i < b->n && i < TH_MAX_CHANGES; i++) {
            s->ids[i] = b->changes[i].id;
            snprintf(s->paths[i], sizeof s->paths[i], "%s", b->changes[i].relpath);
            s->n++;
        }
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void th_record_swap(void *ctx, int id, bool there)
{
    (void)id;
    (void)there;
    struct th_rig *r = ctx;
    pthread_mutex_lock(&r->mu);
    r->swaps++;
    pthread_mutex_unlock(&r->mu);
}

/* Watches @n @paths with a 100 ms window (polling every 50 ms), stepped on
 * the rig's fake clock. */
struct watch *th_rig_watch(struct th_rig *t, const char *const *paths, size_t n,
                               enum watch_mode mode)
{
    const struct watch_options opt = {.mode = mode, .debounce_ms = 100,
                                      .poll_interval_ms = 50, .clock = &t->clock,
                                      .stepped = true};
    t->w = watch_create(paths, n, &opt, th_record, th_record_swap, t);
    return t->w;
}

/* The next batch not yet taken, if any. */
static const struct th_seen_batch *th_take(struct th_rig *t)
{
    const struct th_seen_batch *b = NULL;
    pthread_mutex_lock(&t->mu);
    if (t->taken < t->nbatches) {
        b = &t->batches[t->taken++];
    }
    pthread_mutex_unlock(&t->mu);
    return b;
}

/* Lets @ms pass on the fake clock, the watcher taking its turns when they
 * are due (what its thread would do while the test slept); with @until_batch,
 * stops at the first batch and returns it. */
static const struct th_seen_batch *th_run_for(struct th_rig *t, unsigned ms, bool until_batch)
{
    uint64_t end = t->now + ms;
    for (;;) {
        int due = watch_step(t->w);
        const struct th_seen_batch *b = until_batch ? th_take(t) : NULL;
        if (b != NULL || t->now >= end) {
            return b;
        }
        uint64_t step = due > 0 ? (uint64_t)due : 1;
        t->now += step < end - t->now ? step : end - t->now;
    }
}

/* Lets @ms pass (a test spacing out its writes). */
void th_pass(struct th_rig *t, unsigned ms)
{
    th_run_for(t, ms, false);
}

/* Waits for a real thread's batch, up to @ms of real time. */
static const struct th_seen_batch *th_await_batch(struct th_rig *r, unsigned ms)
{
    struct timespec until = clock_deadline(CLOCK_REALTIME, ms);
    pthread_mutex_lock(&r->mu);
    while (r->taken == r->nbatches) {
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT) {
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return th_take(r);
}

/* The next batch, or NULL if none comes within @ms (on the rig's clock). */
const struct th_seen_batch *th_next_batch(struct th_rig *t, unsigned ms)
{
    if (t->threaded) {
        return th_await_batch(t, ms);
    }
    const struct th_seen_batch *b = th_take(t);
    return b != NULL ? b : th_run_for(t, ms, true);
}

/* Steps until the watch counts @want folders, or @ms pass. */
bool th_wait_count(struct th_rig *t, size_t want, unsigned ms)
{
    uint64_t end = t->now + ms;
    while (watch_count(t->w) != want) {
        if (t->now >= end) {
            return false;
        }
        th_pass(t, 5);
    }
    return true;
}


/* Entries in a folder (/proc/self/fd), or lines starting with @prefix in a
 * file (an inotify fd's fdinfo lists one "inotify wd:" line per watch). */
size_t th_count_fds(void)
{
    size_t n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    while (readdir(d) != NULL) {
        n++;
    }
    closedir(d);
    return n;
}

size_t th_count_lines(const char *path, const char *prefix)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, fp) != NULL) {
        n += strncmp(line, prefix, strlen(prefix)) == 0;
    }
    fclose(fp);
    return n;
}

/* The process's one inotify descriptor (the fixture's watch). */
int th_inotify_fd(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char link[300], target[64];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            if (strcmp(target, "anon_inode:inotify") == 0) {
                found = atoi(e->d_name);
            }
        }
    }
    closedir(d);
    assert_true(found >= 0);
    return found;
}

