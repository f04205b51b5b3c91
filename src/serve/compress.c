#include "compress.h"

#include "build_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#if FOLIO_HAVE_BROTLI
#include <brotli/encode.h>
#endif
#if FOLIO_HAVE_ZSTD
#include <zstd.h>
#endif

#include "base/body.h"

/* See compress.h. */
bool compress_available(enum encoding e)
{
    switch (e) {
    case ENCODING_IDENTITY:
    case ENCODING_GZIP: return true;
    case ENCODING_BR: return FOLIO_HAVE_BROTLI;
    case ENCODING_ZSTD: return FOLIO_HAVE_ZSTD;
    default: return false;
    }
}

/* See compress.h. */
int compress_level(enum encoding e, bool production, size_t len)
{
    if (e == ENCODING_BR) {
        return production && len <= (128u << 10) ? COMPRESS_BR_PRODUCTION : COMPRESS_BR_PREVIEW;
    }
    return !production || len > (256u << 10) ? COMPRESS_ZSTD_PREVIEW : COMPRESS_ZSTD_PRODUCTION;
}

/* gzip framing (RFC 1952), not zlib's: deflateInit2 with windowBits 15 + 16.
 * Writes into out (bound bytes); returns the bytes produced, 0 on failure. */
static size_t gzip_into(const void *data, size_t len, int level, struct body *out)
{
    z_stream zs = {0};
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return 0;
    }
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out->data;
    zs.avail_out = (uInt)out->len;
    int rc = deflate(&zs, Z_FINISH);
    size_t produced = zs.total_out;
    deflateEnd(&zs);
    return rc == Z_STREAM_END ? produced : 0;
}

/* An output buffer no one-shot encoder can overflow for len bytes; 0 when
 * coding e is not built in. deflateBound is exact for a one-shot deflate
 * with default memLevel and windowBits, plus the gzip header and trailer. */
static size_t bound_of(enum encoding e, size_t len)
{
    switch (e) {
    case ENCODING_GZIP: return (size_t)compressBound((uLong)len) + 18;
#if FOLIO_HAVE_BROTLI
    case ENCODING_BR: return BrotliEncoderMaxCompressedSize(len);
#endif
#if FOLIO_HAVE_ZSTD
    case ENCODING_ZSTD: return ZSTD_compressBound(len);
#endif
    default: return 0;
    }
}

/* Compresses into out->data (out->len bytes of room); returns the bytes
 * produced, 0 on failure. */
static size_t encode(enum encoding e, const void *data, size_t len, int level, struct body *out)
{
    switch (e) {
    case ENCODING_GZIP: return gzip_into(data, len, level, out);
#if FOLIO_HAVE_BROTLI
    case ENCODING_BR: {
        /* A 16 MiB window (the largest RFC 7932 decoders must take) lets
         * brotli see repeats that gzip's 32 KiB cannot. */
        size_t produced = out->len;
        return BrotliEncoderCompress(level, BROTLI_MAX_WINDOW_BITS, BROTLI_MODE_GENERIC, len, data,
                                     &produced, out->data)
            ? produced : 0;
    }
#endif
#if FOLIO_HAVE_ZSTD
    case ENCODING_ZSTD: {
        /* Levels up to 19 keep the window within 8 MiB, the most an HTTP
         * client must accept (RFC 9659 3). */
        size_t produced = ZSTD_compress(out->data, out->len, data, len, level);
        return ZSTD_isError(produced) ? 0 : produced;
    }
#endif
    default: return 0;
    }
}

/* Input per step of a stoppable encoder, between two looks at its stop
 * flag: one of brotli's smallest input blocks (below). */
#define STEP_BYTES (64u << 10)

#if FOLIO_HAVE_BROTLI
/* The smallest brotli window that holds all of len (2^bits - 16 bytes): a
 * bigger one finds nothing more, and the streaming encoder sizes its
 * quality 10-11 match finder by the window, not the input (8 bytes a
 * position: 128 MiB at 24 bits, whatever the file). */
static int window_bits(size_t len)
{
    int bits = BROTLI_MIN_WINDOW_BITS;
    while (bits < BROTLI_MAX_WINDOW_BITS && ((size_t)1 << bits) - 16 < len) {
        bits++;
    }
    return bits;
}

/* encode's brotli in steps, checking stop between them; 0 when stopped. */
static size_t brotli_steps(const uint8_t *in, size_t len, int level, struct body *out,
                           const atomic_bool *stop)
{
    BrotliEncoderState *s = BrotliEncoderCreateInstance(NULL, NULL, NULL);
    if (!s) {
        return 0;
    }
    BrotliEncoderSetParameter(s, BROTLI_PARAM_QUALITY, (uint32_t)level);
    BrotliEncoderSetParameter(s, BROTLI_PARAM_LGWIN, (uint32_t)window_bits(len));
    /* Brotli encodes a whole input block in the call that completes it, however
     * little that call feeds: its block, not STEP_BYTES, is the work between two
     * looks at stop. Quality 10 and 11 default to 256 KiB blocks; the smallest
     * (64 KiB) makes a stop wait a quarter as long for a few bytes more. */
    BrotliEncoderSetParameter(s, BROTLI_PARAM_LGBLOCK, BROTLI_MIN_INPUT_BLOCK_BITS);
    BrotliEncoderSetParameter(s, BROTLI_PARAM_SIZE_HINT, len < (1u << 30) ? (uint32_t)len : 1u << 30);
    size_t left = len, room = out->len;
    uint8_t *next_out = out->data;
    bool ok = true;
    while (ok && !BrotliEncoderIsFinished(s)) {
        size_t chunk = left < STEP_BYTES ? left : STEP_BYTES, avail = chunk;
        ok = !atomic_load_explicit(stop, memory_order_relaxed) &&
             BrotliEncoderCompressStream(s, chunk == left ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_PROCESS,
                                         &avail, &in, &room, &next_out, NULL) &&
             (room > 0 || BrotliEncoderIsFinished(s));
        left -= chunk - avail;
    }
    BrotliEncoderDestroyInstance(s);
    return ok ? out->len - room : 0;
}
#endif

#if FOLIO_HAVE_ZSTD
/* encode's zstd in steps, checking stop between them; 0 when stopped. */
static size_t zstd_steps(const uint8_t *in, size_t len, int level, struct body *out,
                         const atomic_bool *stop)
{
    ZSTD_CCtx *cx = ZSTD_createCCtx();
    if (!cx) {
        return 0;
    }
    ZSTD_CCtx_setParameter(cx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setPledgedSrcSize(cx, len);
    ZSTD_inBuffer src = {in, 0, 0};
    ZSTD_outBuffer dst = {out->data, out->len, 0};
    size_t pending = 1;
    while (pending != 0 && !atomic_load_explicit(stop, memory_order_relaxed)) {
        src.size = len - src.pos < STEP_BYTES ? len : src.pos + STEP_BYTES;
        pending = ZSTD_compressStream2(cx, &dst, &src, src.size == len ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(pending) || (dst.pos == dst.size && pending != 0)) {
            break;
        }
        if (src.size < len) {
            pending = 1; /* more input to come */
        }
    }
    ZSTD_freeCCtx(cx);
    return pending == 0 ? dst.pos : 0;
}
#endif

/* Trims out to the produced bytes, or drops it when they do not save a
 * twentieth: identity is then the better answer. */
static struct body *finish(struct body *out, size_t produced, size_t len)
{
    if (produced == 0 || produced > len - len / 20) {
        body_unref(out);
        return NULL;
    }
    out->len = produced;
    /* The bound is near the input size; a cached body should cost what it holds. */
    struct body *shrunk = realloc(out, sizeof(*out) + produced);
    return shrunk ? shrunk : out;
}

/* See compress.h. */
struct body *compress_body_until(enum encoding e, const void *data, size_t len, int level,
                                 const atomic_bool *stop)
{
    size_t bound = bound_of(e, len);
    struct body *out = bound ? body_create(bound) : NULL;
    if (!out) {
        return NULL;
    }
    size_t produced = 0;
#if FOLIO_HAVE_BROTLI
    if (e == ENCODING_BR) {
        produced = brotli_steps(data, len, level, out, stop);
    }
#endif
#if FOLIO_HAVE_ZSTD
    if (e == ENCODING_ZSTD) {
        produced = zstd_steps(data, len, level, out, stop);
    }
#endif
    (void)level;
    (void)stop;
    (void)data;
    return finish(out, produced, len);
}

/* See compress.h. */
struct body *compress_body(enum encoding e, const void *data, size_t len, int level)
{
    size_t bound = bound_of(e, len);
    struct body *out = bound ? body_create(bound) : NULL;
    if (!out) {
        return NULL;
    }
    return finish(out, encode(e, data, len, level, out), len);
}
