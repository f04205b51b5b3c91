/* url_prefix: the one rule for a URL path prefix, wherever one is given: a
 * route's mount point, the base-path setting, a proxy's X-Forwarded-Prefix.
 *
 * A prefix is written into every reference of a rewritten page and into
 * Location headers, so it must not need escaping in an HTML attribute or a
 * CSS string, and must never climb: no "%" (an escaped dot segment "%2e%2e"
 * would), no "//", no dot segment. Pure; thread-safe.
 */
#ifndef FOLIO_URL_PREFIX_H
#define FOLIO_URL_PREFIX_H

#include <stdbool.h>
#include <stddef.h>

/* Room for a prefix and its NUL. */
#define URL_PREFIX_MAX 256

/* True for "/a" or "/a/b": a leading "/", no trailing one, no "//", no dot
 * segment, and only unreserved characters, sub-delims, ":" and "@". */
bool url_prefix_valid(const char *text);

/* A prefix made ready for use: trailing "/" dropped ("/article/" and
 * "/article" are one prefix; "" and "/" are none, written as ""). True when
 * the result fits in out (size bytes) and is none or url_prefix_valid. */
bool url_prefix_clean(const char *text, char *out, size_t size);

#endif
