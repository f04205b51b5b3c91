#include "io.h"

#include <errno.h>
#include <stdlib.h>
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

/* See io.h. */
FILE *io_text_open(struct io_text *t)
{
    *t = (struct io_text){NULL, 0};
    return open_memstream(&t->buf, &t->len);
}

/* See io.h. */
char *io_text_close(struct io_text *t, FILE *out)
{
    if (fclose(out) != 0) {
        free(t->buf);
        t->buf = NULL;
    }
    return t->buf;
}
