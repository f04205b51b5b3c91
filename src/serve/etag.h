/* etag: what names one version of a file in its ETag.
 *
 * The same bytes must have the same ETag wherever they are served: two
 * replicas of one image hold them under other inode numbers, and a rebuilt
 * image under other mtimes, yet a browser's revalidation that the balancer
 * sends to the other replica must get 304, not the file again. So a file's
 * tag is a checksum of its content (CRC-32 and Adler-32, zlib's, 64 bits in
 * all) and its size, taken once per version (file_id: a change is still
 * told by the full identity) and kept in the cache; a file past
 * ETAG_HASH_MAX is tagged by its mtime and size instead (as nginx tags
 * every file), which replicas of one image share too, rather than read
 * whole on its first request. The variant's part (a coding and its level,
 * a transform) follows the content's (entry.c): "\"<content>-<size><tag>\"".
 *
 * Thread-safe (the cache is; one read per version at a time: flight.h).
 */
#ifndef FOLIO_ETAG_H
#define FOLIO_ETAG_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

/* Files up to this are tagged by their content, bigger ones by mtime and size. */
#define ETAG_HASH_MAX (64u << 20)
/* The cache variant a file's content tag is kept under, beside its bodies. */
#define ETAG_VARIANT "etag"

struct etag_content {
    uint64_t value; /* the checksum, or the mtime in ns */
    uint64_t size;
};

/* The content tag of the version id of the file open at fd, kept in c under
 * (key, ETAG_VARIANT): read once, then taken from the cache. A file that
 * cannot be read whole is tagged by its mtime and size. */
struct etag_content etag_of_file(struct cache *c, const char *key, const struct file_id *id, int fd);

/* Writes the ETag of content with the variant's tag into out (size bytes). */
void etag_format(char *out, size_t size, const struct etag_content *content, const char *tag);

#endif
