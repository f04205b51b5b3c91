/* etag — see etag.h. */
#include "etag.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/body.h"
#include "flight.h"

/* Reads the size bytes of fd and checksums them: CRC-32 in the high half,
 * Adler-32 in the low. False when the file ends early or cannot be read (it
 * is being rewritten: this version cannot be named by its bytes). */
static bool etag_checksum(int fd, uint64_t size, uint64_t *out)
{
    unsigned char buf[64 << 10];
    uLong crc = crc32(0L, Z_NULL, 0), adler = adler32(0L, Z_NULL, 0);
    for (uint64_t off = 0; off < size;) {
        size_t want = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
        ssize_t n = pread(fd, buf, want, (off_t)off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        crc = crc32_z(crc, buf, (size_t)n);
        adler = adler32_z(adler, buf, (size_t)n);
        off += (uint64_t)n;
    }
    *out = (uint64_t)crc << 32 | (adler & 0xffffffffu);
    return true;
}

/* The checksum kept for (key, id), or a new one kept now; false when the
 * file could not be read. One thread reads a version; the others wait and
 * take what it kept. */
static bool etag_kept_checksum(struct cache *c, const char *key, const struct file_id *id, int fd,
                               uint64_t *out)
{
    uint64_t generation = cache_generation(c);
    struct body *b = cache_get(c, key, ETAG_VARIANT, id);
    uint64_t name = 0;
    if (!b) {
        name = cache_version_name(key, ETAG_VARIANT, id);
        enum flight role = flight_begin(name);
        name = role == FLIGHT_LEAD ? name : 0;
        b = role == FLIGHT_WAITED ? cache_get(c, key, ETAG_VARIANT, id) : NULL;
    }
    bool ok = b && b->len == sizeof(*out);
    if (ok) {
        memcpy(out, b->data, sizeof(*out));
    } else if ((ok = etag_checksum(fd, id->size, out))) {
        struct body *kept = body_create(sizeof(*out));
        if (kept) {
            memcpy(kept->data, out, sizeof(*out));
            cache_put(c, key, ETAG_VARIANT, id, kept, generation);
            body_unref(kept);
        }
    }
    body_unref(b);
    if (name) {
        flight_end(name);
    }
    return ok;
}

struct etag_content etag_of_file(struct cache *c, const char *key, const struct file_id *id, int fd)
{
    struct etag_content content = {.value = (uint64_t)id->mtime_ns, .size = id->size};
    if (id->size <= ETAG_HASH_MAX && fd >= 0 && etag_kept_checksum(c, key, id, fd, &content.value)) {
        return content;
    }
    content.value = (uint64_t)id->mtime_ns; /* as nginx: what replicas of one image share */
    return content;
}

void etag_format(char *out, size_t size, const struct etag_content *content, const char *tag)
{
    /* Strong (RFC 9110 8.8.3): the bytes of one version, each variant its own. */
    snprintf(out, size, "\"%" PRIx64 "-%" PRIx64 "%s\"", content->value, content->size, tag);
}
