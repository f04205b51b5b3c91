#include "health.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/config.h"

bool health_default_url(const struct config *c, char *url, size_t url_size, char *err,
                        size_t err_size)
{
    if (c->port == 0) {
        snprintf(err, err_size, "port 0 names no server to ask: give its URL");
        return false;
    }
    /* A server bound to every address answers on loopback. */
    const char *host = !strcmp(c->host, "0.0.0.0") ? "127.0.0.1" : !strcmp(c->host, "::") ? "::1" : c->host;
    bool v6 = strchr(host, ':') != NULL;
    snprintf(url, url_size, "http://%s%s%s:%u/__folio/health", v6 ? "[" : "", host, v6 ? "]" : "",
             c->port);
    return true;
}

struct target {
    char host[256], port[8], path[1024];
};

/* Splits http://host[:port][/path] (host may be [v6]); no userinfo, no query. */
static bool parse_url(const char *url, struct target *t)
{
    if (strncmp(url, "http://", 7) != 0) {
        return false;
    }
    const char *p = url + 7, *host_end;
    const char *host = p;
    if (*p == '[') {
        host = p + 1;
        host_end = strchr(host, ']');
        if (!host_end) {
            return false;
        }
        p = host_end + 1;
    } else {
        p += strcspn(p, ":/");
        host_end = p;
    }
    size_t host_len = (size_t)(host_end - host);
    if (host_len == 0 || host_len >= sizeof(t->host) || memchr(host, '@', host_len)) {
        return false;
    }
    memcpy(t->host, host, host_len);
    t->host[host_len] = '\0';
    snprintf(t->port, sizeof(t->port), "80");
    if (*p == ':') {
        size_t n = strspn(p + 1, "0123456789");
        if (n == 0 || n > 5 || (p[1 + n] && p[1 + n] != '/')) {
            return false;
        }
        snprintf(t->port, sizeof(t->port), "%.*s", (int)n, p + 1);
        p += 1 + n;
    }
    const char *path = *p ? p : "/";
    if (strpbrk(path, "?# \r\n")) {
        return false;
    }
    size_t len = strlen(path);
    const char *tail = "__folio/health";
    bool has_tail = len >= strlen(tail) && strcmp(path + len - strlen(tail), tail) == 0;
    int n = snprintf(t->path, sizeof(t->path), "%s%s%s", path,
                     has_tail || path[len - 1] == '/' ? "" : "/", has_tail ? "" : tail);
    return n > 0 && (size_t)n < sizeof(t->path);
}

static long ms_left(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return ms > 0 ? ms : 0;
}

/* Waits until fd is ready for events or the deadline passes. */
static bool wait_for(int fd, short events, const struct timespec *deadline)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    int r;
    while ((r = poll(&pfd, 1, (int)ms_left(deadline))) < 0 && errno == EINTR) {
    }
    return r > 0;
}

/* A non-blocking connect, so an address that never answers (a dropped SYN)
 * costs the timeout and no more. */
static int connect_within(const struct target *t, const struct timespec *deadline, char *err,
                          size_t err_size)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(t->host, t->port, &hints, &res);
    if (gai != 0) {
        snprintf(err, err_size, "%s: %s", t->host, gai_strerror(gai));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int r = fd < 0 ? -1 : connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (r < 0 && fd >= 0 && errno == EINPROGRESS) {
        int so_error = ETIMEDOUT;
        socklen_t len = sizeof(so_error);
        if (wait_for(fd, POLLOUT, deadline)) {
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
        }
        errno = so_error;
        r = so_error ? -1 : 0;
    }
    if (r < 0) {
        snprintf(err, err_size, "cannot connect: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    return fd;
}

/* Reads until the status line is in (or the peer closes or time runs out). */
static bool read_status_line(int fd, char *buf, size_t size, const struct timespec *deadline)
{
    size_t len = 0;
    while (len + 1 < size && !memchr(buf, '\n', len) && wait_for(fd, POLLIN, deadline)) {
        ssize_t n = read(fd, buf + len, size - 1 - len);
        if (n <= 0) {
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                continue;
            }
            break;
        }
        len += (size_t)n;
        buf[len] = '\0';
    }
    buf[len] = '\0';
    return memchr(buf, '\n', len) != NULL;
}

int health_check(const char *url, unsigned timeout_ms, char *err, size_t err_size)
{
    struct target t;
    if (!parse_url(url, &t)) {
        snprintf(err, err_size, "'%s' is not a URL like http://127.0.0.1:8000/%s", url,
                 strncasecmp(url, "https://", 8) == 0 ? " (folio speaks plain HTTP; TLS is a proxy's)" : "");
        return 2;
    }
    struct timespec deadline = clock_deadline(CLOCK_MONOTONIC, timeout_ms);
    int fd = connect_within(&t, &deadline, err, err_size);
    if (fd < 0) {
        return 1;
    }
    char request[1400];
    bool v6 = strchr(t.host, ':') != NULL;
    int n = snprintf(request, sizeof(request),
                     "GET %s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: " HEALTH_USER_AGENT "\r\n"
                     "Connection: close\r\n\r\n",
                     t.path, v6 ? "[" : "", t.host, v6 ? "]" : "", t.port);
    char status[512] = "";
    /* The request fits any socket buffer: one send, no partial writes. */
    bool answered = send(fd, request, (size_t)n, MSG_NOSIGNAL) == n &&
                    read_status_line(fd, status, sizeof(status), &deadline);
    close(fd);
    if (!answered) {
        snprintf(err, err_size, "no answer within %u ms", timeout_ms);
        return 1;
    }
    /* RFC 9112 4: the status code is three digits, then a space (or, leniently, the line end): "2000" is not 200. */
    int code = 0, end = 0;
    if (sscanf(status, "HTTP/1.%*1[01] %3d%n", &code, &end) != 1 || code != 200 || !strchr(" \r\n", status[end])) {
        status[strcspn(status, "\r\n")] = '\0';
        snprintf(err, err_size, "answered '%.200s'", status);
        return 1;
    }
    return 0;
}
