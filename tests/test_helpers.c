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
#include <unistd.h>

int64_t th_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void th_sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
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
