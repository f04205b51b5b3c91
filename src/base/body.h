/* body: an immutable, reference-counted byte buffer.
 *
 * Compressed and rewritten representations live in bodies. The cache holds
 * one reference, every response that sends the bytes holds another, so a file
 * change can drop the cached body while a slow client is still being sent it:
 * the bytes go when the last reference does. Reference counting is atomic;
 * the bytes are written once, before the body is shared, and never again.
 *
 * A body is held either in memory (fd is -1, the bytes in data) or, for the
 * big ones the cache keeps (cache.h), in a sealed memfd of len bytes (data
 * is empty): sent by sendfile like a file, and not part of the heap.
 */
#ifndef FOLIO_BODY_H
#define FOLIO_BODY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct body {
    atomic_size_t refs;
    size_t len;
    int fd; /* -1: the bytes are in data; else a sealed memfd, closed with the last reference */
    /* What else the body keeps alive (a ready response, serve/ready.c),
     * owned: on_free(attached) runs when the last reference goes, before
     * the bytes do. Both NULL: nothing. Set before the body is shared. */
    void *attached;
    void (*on_free)(void *attached);
    size_t weight; /* bytes it keeps alive elsewhere, for the cache's count (0) */
    unsigned char data[];
};

/* A body of len bytes (uninitialised) with one reference, or NULL. */
struct body *body_create(size_t len);

/* Builds a body from a copy of bytes; NULL when out of memory. */
struct body *body_from(const void *bytes, size_t len);

/* The size bytes of fd from offset 0 in a new body; NULL on error. A file
 * cut short while read gives the bytes it had (the watcher sends the rest). */
struct body *body_read(int fd, uint64_t size);

/* A memfd-held copy of an in-memory body (one reference), or NULL when the
 * kernel refuses a memfd or the copy fails. b is left as it was. */
struct body *body_to_memfd(const struct body *b);

struct body *body_ref(struct body *b);

/* Drops a reference; the last one frees. Accepts NULL. The void * form is the
 * shape libmicrohttpd's free callbacks take. */
void body_unref(struct body *b);
void body_unref_cb(void *b);

#endif
