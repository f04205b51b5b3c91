#include "body.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io.h"

/* A new body of len bytes; see body.h. */
struct body *body_create(size_t len)
{
    struct body *b = malloc(sizeof(*b) + len);
    if (b) {
        atomic_init(&b->refs, 1);
        b->len = len;
        b->fd = -1;
        b->attached = NULL;
        b->on_free = NULL;
        b->weight = 0;
    }
    return b;
}

/* A new in-memory body holding a copy of bytes; see body.h. */
struct body *body_read(int fd, uint64_t size)
{
    struct body *b = body_create((size_t)size);
    for (size_t off = 0; b && off < size;) {
        ssize_t n = pread(fd, b->data + off, (size_t)size - off, (off_t)off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            b->len = off;
            break;
        }
        off += (size_t)n;
    }
    assert(!b || b->len <= size);
    return b;
}

struct body *body_from(const void *bytes, size_t len)
{
    struct body *b = body_create(len);
    if (b && len) {
        memcpy(b->data, bytes, len);
    }
    return b;
}

/* The bytes of b in a sealed memfd: sealed, so no one (us included) can
 * change what responses in flight are sending. */
struct body *body_to_memfd(const struct body *b)
{
    int fd = memfd_create("folio-body", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        return NULL;
    }
    struct body *out = body_create(0);
    if (!out || !io_write_all(fd, b->data, b->len) ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        free(out);
        close(fd);
        return NULL;
    }
    out->len = b->len;
    out->fd = fd;
    return out;
}

/* Takes one more reference. */
struct body *body_ref(struct body *b)
{
    size_t before = atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    assert(before > 0); /* a reference is taken from one held, never from a freed body */
    (void)before;
    return b;
}

/* Drops a reference; the last frees the bytes (or closes the memfd). */
void body_unref(struct body *b)
{
    size_t before = b ? atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) : 0;
    assert(!b || before > 0); /* dropped once more than taken */
    if (before == 1) {
        if (b->on_free) {
            b->on_free(b->attached);
        }
        if (b->fd >= 0) {
            close(b->fd);
        }
        free(b);
    }
}

/* body_unref in the shape of libmicrohttpd's free callback. */
void body_unref_cb(void *b)
{
    body_unref(b);
}
