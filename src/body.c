#include "body.h"

#include <stdlib.h>
#include <string.h>

struct body *body_create(size_t len)
{
    struct body *b = malloc(sizeof(*b) + len);
    if (b) {
        atomic_init(&b->refs, 1);
        b->len = len;
    }
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

struct body *body_ref(struct body *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void body_unref(struct body *b)
{
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        free(b);
    }
}

void body_unref_cb(void *b)
{
    body_unref(b);
}
