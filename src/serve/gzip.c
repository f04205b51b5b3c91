#include "gzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "base/body.h"

struct body *gzip_compress(const void *data, size_t len, int level)
{
    z_stream zs = {0};
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return NULL;
    }
    /* deflateBound is exact for a one-shot deflate, so the output never grows. */
    uLong bound = deflateBound(&zs, (uLong)len);
    struct body *out = body_create(bound);
    if (!out) {
        deflateEnd(&zs);
        return NULL;
    }
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out->data;
    zs.avail_out = (uInt)bound;
    int rc = deflate(&zs, Z_FINISH);
    size_t produced = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END || produced > len - len / 20) {
        body_unref(out);
        return NULL;
    }
    out->len = produced;
    /* The bound is near the input size; a cached body should cost what it holds. */
    struct body *shrunk = realloc(out, sizeof(*out) + produced);
    return shrunk ? shrunk : out;
}
