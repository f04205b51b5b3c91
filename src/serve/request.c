#include "request.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

/* RFC 3986 2.3 unreserved. */
static bool is_unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 2.2 sub-delims. */
static bool is_sub_delim(unsigned char c)
{
    return c != '\0' && strchr("!$&'()*+,;=", c) != NULL;
}

/* RFC 5234 HEXDIG, either case. */
static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* RFC 9110 5.6.2 tchar. */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* See request.h. */
const char *request_skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    return p;
}

/* See request.h. */
bool request_is_token(const char *s, size_t len)
{
    if (len == 0) {
        return false;
    }

    for (size_t i = 0; i < len; i++) {
        if (!is_tchar((unsigned char)s[i])) {
            return false;
        }
    }
    return true;
}

/* See request.h: one element of a #list, with its optional whitespace. */
bool request_lists_token(const char *value, const char *token)
{
    size_t want = strlen(token);
    for (const char *p = value; p && *p;) {
        p += strspn(p, " \t,");
        size_t len = strcspn(p, ",");
        size_t end = len;
        while (end && (p[end - 1] == ' ' || p[end - 1] == '\t')) {
            end--;
        }
        if (end == want && strncasecmp(p, token, want) == 0) {
            return true;
        }
        p += len;
    }
    return false;
}

/* A reg-name (RFC 3986 3.2.2): unreserved, sub-delims and %HH escapes; an
 * IPv4 address is one too. Empty is refused (nginx does: no site has it). */
static bool reg_name_valid(const char *s, size_t len)
{
    if (len == 0) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= len || !is_hex((unsigned char)s[i + 1]) ||
                !is_hex((unsigned char)s[i + 2])) {
                return false;
            }
            i += 2;
        } else if (!is_unreserved(c) && !is_sub_delim(c)) {
            return false;
        }
    }
    return true;
}

/* The inside of "[...]": an IPv6 address, or "v" HEXDIG+ "." then
 * unreserved / sub-delims / ":" (IPvFuture, RFC 3986 3.2.2). */
static bool ip_literal_valid(const char *s, size_t len)
{
    if (len > 0 && (s[0] == 'v' || s[0] == 'V')) {
        size_t i = 1;
        while (i < len && is_hex((unsigned char)s[i])) {
            i++;
        }
        if (i == 1 || i >= len || s[i] != '.' || i + 1 == len) {
            return false;
        }
        for (i++; i < len; i++) {
            unsigned char c = (unsigned char)s[i];
            if (!is_unreserved(c) && !is_sub_delim(c) && c != ':') {
                return false;
            }
        }
        return true;
    }
    char copy[64];
    if (len == 0 || len >= sizeof(copy)) {
        return false;
    }
    for (size_t i = 0; i < len; i++) { /* inet_pton reads a C string: no NUL may end it early */
        if (!is_hex((unsigned char)s[i]) && s[i] != ':' && s[i] != '.') {
            return false;
        }
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    unsigned char addr[16];
    return inet_pton(AF_INET6, copy, addr) == 1;
}

/* port = *DIGIT (RFC 3986 3.2.3), and a TCP port at that: at most 65535. */
static bool port_valid(const char *s, size_t len, bool required)
{
    if (len == 0) {
        return !required;
    }
    if (len > 5) {
        return false;
    }
    unsigned value = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        value = value * 10 + (unsigned)(s[i] - '0');
    }
    return value <= 65535;
}

/* uri-host [":" port], the port required or not. */
static bool authority_valid(const char *value, size_t len, bool port_required)
{
    if (len > 0 && value[0] == '[') {
        const char *close = memchr(value, ']', len);
        if (!close) {
            return false;
        }
        size_t host_len = (size_t)(close - value) + 1;
        if (!ip_literal_valid(value + 1, host_len - 2)) {
            return false;
        }
        if (host_len == len) {
            return !port_required;
        }
        return value[host_len] == ':' &&
               port_valid(value + host_len + 1, len - host_len - 1, port_required);
    }
    const char *colon = memchr(value, ':', len);
    size_t host_len = colon ? (size_t)(colon - value) : len;
    if (!reg_name_valid(value, host_len)) {
        return false;
    }
    if (!colon) {
        return !port_required;
    }
    return port_valid(colon + 1, len - host_len - 1, port_required);
}

bool request_host_valid(const char *value, size_t len)
{
    return authority_valid(value, len, false);
}

/* RFC 9112 3: no byte a request-target cannot hold. */
static bool target_bytes_valid(const char *raw, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c <= 0x20 || c == 0x7f) {
            return false;
        }
    }
    return true;
}

/* "http://" or "https://" (case-insensitive, RFC 3986 3.1): its length, else 0. */
static size_t scheme_length(const char *raw, size_t len)
{
    if (len >= 7 && strncasecmp(raw, "http://", 7) == 0) {
        return 7;
    }
    if (len >= 8 && strncasecmp(raw, "https://", 8) == 0) {
        return 8;
    }
    return 0;
}

bool request_target_parse(const char *raw, size_t len, struct request_target *out)
{
    *out = (struct request_target){.form = REQUEST_FORM_ORIGIN, .path = "", .authority = ""};
    if (!target_bytes_valid(raw, len)) {
        return false;
    }
    const char *hash = memchr(raw, '#', len);
    out->fragment = hash != NULL;
    len = hash ? (size_t)(hash - raw) : len; /* a fragment is no part of a target: dropped */
    if (len == 0) {
        return false;
    }
    if (raw[0] == '/') {
        out->path = raw;
        out->path_len = len;
        return true;
    }
    if (len == 1 && raw[0] == '*') {
        out->form = REQUEST_FORM_ASTERISK;
        return true;
    }
    size_t scheme = scheme_length(raw, len);
    if (scheme) {
        const char *auth = raw + scheme;
        size_t auth_len = 0;
        while (auth_len < len - scheme && auth[auth_len] != '/' && auth[auth_len] != '?') {
            auth_len++;
        }
        if (memchr(auth, '@', auth_len) || !authority_valid(auth, auth_len, false)) {
            return false; /* userinfo is deprecated and never ours (RFC 9110 4.2.4) */
        }
        out->form = REQUEST_FORM_ABSOLUTE;
        out->authority = auth;
        out->authority_len = auth_len;
        out->path = auth + auth_len;
        out->path_len = len - scheme - auth_len;
        return true; /* "http://h?q": an empty path, which is "/" (RFC 9110 4.2.3) */
    }
    if (authority_valid(raw, len, true)) {
        out->form = REQUEST_FORM_AUTHORITY;
        out->authority = raw;
        out->authority_len = len;
        return true;
    }
    return false;
}

enum request_method request_method_classify(const char *m, size_t len)
{
    if (!request_is_token(m, len)) {
        return REQUEST_METHOD_INVALID;
    }
    static const struct {
        const char *name;
        enum request_method method;
    } known[] = {
        {"GET", REQUEST_METHOD_GET},         {"HEAD", REQUEST_METHOD_HEAD},
        {"OPTIONS", REQUEST_METHOD_OPTIONS}, {"CONNECT", REQUEST_METHOD_CONNECT},
        {"POST", REQUEST_METHOD_KNOWN},      {"PUT", REQUEST_METHOD_KNOWN},
        {"DELETE", REQUEST_METHOD_KNOWN},    {"TRACE", REQUEST_METHOD_KNOWN},
        {"PATCH", REQUEST_METHOD_KNOWN},
        /* WebDAV's, from the IANA method registry: known, just not here. */
        {"PROPFIND", REQUEST_METHOD_KNOWN},  {"PROPPATCH", REQUEST_METHOD_KNOWN},
        {"MKCOL", REQUEST_METHOD_KNOWN},     {"COPY", REQUEST_METHOD_KNOWN},
        {"MOVE", REQUEST_METHOD_KNOWN},      {"LOCK", REQUEST_METHOD_KNOWN},
        {"UNLOCK", REQUEST_METHOD_KNOWN},    {"SEARCH", REQUEST_METHOD_KNOWN},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        if (strlen(known[i].name) == len && memcmp(known[i].name, m, len) == 0) {
            return known[i].method;
        }
    }
    return REQUEST_METHOD_UNKNOWN;
}

bool request_content_length(const char *value, size_t len, bool *seen, uint64_t *length)
{
    size_t i = 0;
    do {
        while (i < len && (value[i] == ' ' || value[i] == '\t')) {
            i++;
        }
        if (i == len || value[i] < '0' || value[i] > '9') {
            return false;
        }
        uint64_t n = 0;
        for (; i < len && value[i] >= '0' && value[i] <= '9'; i++) {
            if (n > (UINT64_MAX - 9) / 10) {
                return false;
            }
            n = n * 10 + (uint64_t)(value[i] - '0');
        }
        while (i < len && (value[i] == ' ' || value[i] == '\t')) {
            i++;
        }
        if (*seen && n != *length) {
            return false;
        }
        *seen = true;
        *length = n;
        if (i == len) {
            return true;
        }
    } while (value[i++] == ',');
    return false;
}

/* Appends s (len bytes) to out at *n, percent-encoding what a path segment
 * may not hold as is (RFC 3986 3.3 pchar). False when it does not fit. */
static bool put_encoded(const char *s, size_t len, char *out, size_t size, size_t *n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool plain = is_unreserved(c) || is_sub_delim(c) || c == ':' || c == '@';
        if (*n + (plain ? 1 : 3) >= size) {
            return false;
        }
        if (plain) {
            out[(*n)++] = (char)c;
        } else {
            out[(*n)++] = '%';
            out[(*n)++] = hex[c >> 4];
            out[(*n)++] = hex[c & 15];
        }
    }
    out[*n] = '\0';
    return true;
}

/* Appends "?query" (already encoded as the client sent it) when there is one. */
static bool put_query(const char *query, char *out, size_t size, size_t *n)
{
    if (!query) {
        return true;
    }
    size_t q = strlen(query);
    if (*n + q + 2 > size) {
        return false;
    }
    out[(*n)++] = '?';
    memcpy(out + *n, query, q + 1);
    *n += q;
    return true;
}

size_t request_folder_location(const char *name, size_t len, const char *query, char *out,
                               size_t size)
{
    size_t n = 0;
    if (size < 3) {
        return 0;
    }
    out[0] = '\0';
    if (memchr(name, ':', len)) {
        memcpy(out, "./", 3); /* "a:b/" would read as the scheme "a" */
        n = 2;
    }
    if (!put_encoded(name, len, out, size, &n) || n + 2 > size) {
        return 0;
    }
    out[n++] = '/';
    out[n] = '\0';
    return put_query(query, out, size, &n) ? n : 0;
}

size_t request_slash_location(const char *path, size_t len, const char *canonical,
                              const char *query, char *out, size_t size)
{
    size_t slashes = 0;
    bool repeated = false;
    for (size_t i = 0; i < len; i++) {
        if (path[i] == '/') {
            slashes++;
            repeated = repeated || (i > 0 && path[i - 1] == '/');
        }
    }
    if (!repeated || size == 0) {
        return 0;
    }
    /* The browser resolves against the folder of the path as sent: climb
     * every folder it counts, empty ones included, back to the root. */
    size_t n = 0;
    for (size_t i = 1; i < slashes; i++) {
        if (n + 4 > size) {
            return 0;
        }
        memcpy(out + n, "../", 4);
        n += 3;
    }
    for (const char *seg = canonical + 1; *seg;) {
        size_t seg_len = strcspn(seg, "/");
        if (!put_encoded(seg, seg_len, out, size, &n)) {
            return 0;
        }
        seg += seg_len;
        if (*seg == '/') {
            if (n + 2 > size) {
                return 0;
            }
            out[n++] = '/';
            out[n] = '\0';
            seg++;
        }
    }
    if (n == 0) {
        return 0; /* unreachable: two slashes climb at least once */
    }
    return put_query(query, out, size, &n) ? n : 0;
}
