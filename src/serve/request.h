/* request: what RFC 9112 and RFC 9110 ask of a request before it is served.
 *
 * Pure checks on bytes with their lengths (never on C strings alone: a NUL
 * inside a request line must be seen, not cut at), used by admission.c on
 * a request's head (and by a few stages after it: request_skip_ows,
 * request_lists_token, the redirects' Location) and fuzzed by
 * tests/fuzz/fuzz_request.c. No I/O, no state, thread-safe.
 */
#ifndef FOLIO_REQUEST_H
#define FOLIO_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum request_form {
    REQUEST_FORM_ORIGIN,    /* "/path?query" (RFC 9112 3.2.1) */
    REQUEST_FORM_ABSOLUTE,  /* "http://host:port/path?query" (3.2.2) */
    REQUEST_FORM_AUTHORITY, /* "host:port", CONNECT only (3.2.3) */
    REQUEST_FORM_ASTERISK,  /* "*", OPTIONS only (3.2.4) */
};

struct request_target {
    enum request_form form;
    const char *path;      /* origin and absolute form: the path and query as sent ("" or "?q" for an empty path) */
    size_t path_len;
    const char *authority; /* absolute and authority form: "host[:port]" */
    size_t authority_len;
    bool fragment;         /* a "#..." followed, which path does not hold */
};

/* Splits a request-target of len bytes into its form, path and authority.
 * False (a 400) when it is none of the four forms, or holds a byte a target
 * cannot carry: NUL, a control, a space, DEL (RFC 9112 3: a server SHOULD
 * NOT autocorrect; nginx refuses these too). A fragment ("#..."), which a
 * client should never send (RFC 9112 3.2), is dropped, not refused: nginx
 * and lighttpd serve "/a#f" as "/a" and so does every browser's own view. An absolute form must use the
 * http or https scheme and carry no userinfo; its authority is checked like
 * Host. Bytes above 0x7F are let through (nginx does), as are '%' escapes,
 * which resolve.c decodes. */
bool request_target_parse(const char *raw, size_t len, struct request_target *out);

/* True when value is a valid Host: uri-host [":" port] (RFC 9110 7.2, RFC
 * 3986 3.2.2): a reg-name, an IPv4 address or a bracketed IPv6 (or IPvFuture)
 * literal, then optionally ':' and at most five digits up to 65535. An empty
 * host is refused. */
bool request_host_valid(const char *value, size_t len);

/* p past optional whitespace (RFC 9110 5.6.3: spaces and tabs). */
const char *request_skip_ows(const char *p);

/* True when s (len bytes) is a non-empty token (RFC 9110 5.6.2): what a
 * method or a field name must be. */
bool request_is_token(const char *s, size_t len);

/* True when the comma-separated list value (a Connection header) holds token,
 * compared case-insensitively (RFC 9110 5.6.1, 7.6.1); value may be NULL. */
bool request_lists_token(const char *value, const char *token);

enum request_method {
    REQUEST_METHOD_GET,
    REQUEST_METHOD_HEAD,
    REQUEST_METHOD_OPTIONS,
    REQUEST_METHOD_CONNECT,
    REQUEST_METHOD_KNOWN,   /* POST, PUT, DELETE, TRACE, PATCH, WebDAV's: 405 with Allow */
    REQUEST_METHOD_UNKNOWN, /* a token no registry defines: 501 (RFC 9110 9.1) */
    REQUEST_METHOD_INVALID, /* not a token: 400 */
};

/* What the method of len bytes is. Methods are case-sensitive (RFC 9110 9.1). */
enum request_method request_method_classify(const char *method, size_t len);

/* Merges one Content-Length field value into *length: a list of decimal
 * numbers ("5" or "5, 5", RFC 9110 8.6) that must all agree with each other
 * and with *length when *seen is already true. False (a 400 and a close,
 * RFC 9112 6.3) for anything else. */
bool request_content_length(const char *value, size_t len, bool *seen, uint64_t *length);

/* Writes the relative reference a folder redirect sends in Location for the
 * folder's last path segment name (decoded, len bytes) and the raw query
 * (may be NULL): the name percent-encoded again (everything but unreserved,
 * sub-delims, ':' and '@'), then "/", then "?query". A name with ':' gets
 * "./" first so it cannot read as a scheme (RFC 3986 4.2). Returns the length
 * written, or 0 when it does not fit in size (NUL included). */
size_t request_folder_location(const char *name, size_t len, const char *query, char *out,
                               size_t size);

/* For a path (len bytes, no query) that repeats a "/" somewhere, the
 * relative reference that takes a browser from it to canonical (the path
 * resolve_normalize made of it, decoded) plus "?query": one "../" per folder
 * the browser counts in the path as sent, then canonical encoded again.
 * Returns the length written; 0 when the path repeats no "/" or the
 * reference does not fit in size (NUL included). */
size_t request_slash_location(const char *path, size_t len, const char *canonical,
                              const char *query, char *out, size_t size);

#endif
