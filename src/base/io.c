#include "io.h"

#include <errno.h>
#include <unistd.h>

/* See io.h. */
bool io_write_all(int fd, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, p + off, len - off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        off += (size_t)n;
    }
    return true;
}
