#include "resolve.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool use_openat2, openat2_probed;

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Drops the last segment of out (which is "/" or "/a/b"), never going above "/". */
static size_t pop_segment(const char *out, size_t out_len)
{
    while (out_len > 1 && out[out_len - 1] != '/') {
        out_len--;
    }
    return out_len > 1 ? out_len - 1 : 1;
}

bool resolve_normalize(const char *raw, size_t len, char *out, size_t out_size)
{
    if (len == 0 || raw[0] != '/' || out_size < len + 1) {
        return false;
    }
    size_t out_len = 1;
    out[0] = '/';
    bool trailing_slash = false;
    size_t i = 0;
    while (i < len) {
        /* raw[i] is a '/': decode the segment that follows it after out. */
        i++;
        size_t seg_start = out_len + (out_len > 1);
        size_t seg_len = 0;
        while (i < len && raw[i] != '/') {
            char c = raw[i];
            if (c == '\0') {
                return false;
            }
            if (c == '%') {
                int hi = i + 2 < len ? hex_value(raw[i + 1]) : -1;
                int lo = hi >= 0 ? hex_value(raw[i + 2]) : -1;
                if (lo < 0) {
                    return false;
                }
                c = (char)(hi << 4 | lo);
                if (c == '\0' || c == '/') {
                    return false;
                }
                i += 2;
            }
            out[seg_start + seg_len++] = c;
            i++;
        }
        const char *seg = out + seg_start;
        /* Decoding before the dot test makes "%2e%2e" a ".." too, as browsers do. */
        if (seg_len == 0 || (seg_len == 1 && seg[0] == '.')) {
            trailing_slash = true;
        } else if (seg_len == 2 && seg[0] == '.' && seg[1] == '.') {
            out_len = pop_segment(out, out_len);
            trailing_slash = true;
        } else {
            if (out_len > 1) {
                out[out_len] = '/';
            }
            out_len = seg_start + seg_len;
            trailing_slash = false;
        }
    }
    if (trailing_slash && out_len > 1) {
        out[out_len++] = '/';
    }
    out[out_len] = '\0';
    /* resolve.h's promise, the fuzzer's invariant: never longer, rooted, no ".." left */
    assert(out_len <= len && out[0] == '/' && strstr(out, "/../") == NULL);
    return true;
}

bool resolve_has_dot_segment(const char *path)
{
    for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
        if (p[1] == '.') {
            return true;
        }
    }
    return false;
}

static int open_beneath_openat2(int dir_fd, const char *rel)
{
    struct open_how how = {
        .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, dir_fd, rel, &how, sizeof(how));
}

/* Without openat2: walk one component at a time and follow no symlink at all.
 * A normalised path has no ".." left, so this cannot climb out either. */
static int open_beneath_walk(int dir_fd, const char *rel)
{
    int cur = dir_fd;
    const char *p = rel;
    for (;;) {
        const char *slash = strchr(p, '/');
        char name[256];
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n >= sizeof(name)) {
            if (cur != dir_fd) {
                close(cur);
            }
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        bool last = !slash || slash[1] == '\0';
        int flags = O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
                    (last ? O_RDONLY | O_NONBLOCK : O_PATH | O_DIRECTORY);
        int next = openat(cur, n ? name : ".", flags | (slash ? O_DIRECTORY : 0));
        int saved = errno;
        if (cur != dir_fd) {
            close(cur);
        }
        if (next < 0 || last) {
            errno = saved;
            return next;
        }
        cur = next;
        p = slash + 1;
    }
}

bool resolve_init(int probe_dir_fd)
{
    int fd = open_beneath_openat2(probe_dir_fd, ".");
    use_openat2 = openat2_probed = fd >= 0 || (errno != ENOSYS && errno != EPERM);
    if (fd >= 0) {
        close(fd);
    }
    return use_openat2;
}

bool resolve_force_walk_for_tests(bool walk)
{
    use_openat2 = !walk && openat2_probed;
    return use_openat2;
}

enum resolve_status resolve_open(int dir_fd, const char *rel, int *fd, struct stat *st, int *err)
{
    const char *path = rel[0] ? rel : ".";
    *fd = use_openat2 ? open_beneath_openat2(dir_fd, path) : open_beneath_walk(dir_fd, path);
    if (*fd < 0) {
        *err = errno;
        switch (*err) {
        case EACCES:
        case EPERM:
            return RESOLVED_FORBIDDEN;
        case ENOENT:
        case ENOTDIR:
        case ELOOP:
        case EXDEV:
        case ENAMETOOLONG:
        case EISDIR:
        case ENXIO:
            return RESOLVED_NOT_FOUND;
        default:
            return RESOLVED_ERROR;
        }
    }
    if (fstat(*fd, st) != 0) {
        *err = errno;
        close(*fd);
        *fd = -1;
        return RESOLVED_ERROR;
    }
    if (S_ISREG(st->st_mode)) {
        return RESOLVED_FILE;
    }
    if (S_ISDIR(st->st_mode)) {
        return RESOLVED_DIRECTORY;
    }
    close(*fd); /* fifos, sockets and devices are never served */
    *fd = -1;
    *err = 0;
    return RESOLVED_NOT_FOUND;
}
