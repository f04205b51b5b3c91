/* allowed_hosts — see allowed_hosts.h. */
#include "allowed_hosts.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

/* The longest name DNS carries (RFC 1035 2.3.4), and a dotted IPv4 address. */
#define NAME_MAX_LEN 253
#define IPV4_MAX_LEN 15

size_t allowed_hosts_name_length(const char *host, size_t len)
{
    while (len > 0 && (host[len - 1] == ' ' || host[len - 1] == '\t')) {
        len--; /* trailing OWS is no part of the value (RFC 9110 5.5) */
    }
    if (len > 0 && host[0] == '[') { /* an IP literal's colons are its own (RFC 3986 3.2.2) */
        const char *end = memchr(host, ']', len);
        return end ? (size_t)(end - host) + 1 : len;
    }
    const char *colon = memchr(host, ':', len);
    return colon ? (size_t)(colon - host) : len;
}

/* True when s (n bytes) is a dotted IPv4 address. */
static bool is_ipv4(const char *s, size_t n)
{
    char text[IPV4_MAX_LEN + 1];
    struct in_addr a;
    if (n == 0 || n > IPV4_MAX_LEN) {
        return false;
    }
    memcpy(text, s, n);
    text[n] = '\0';
    return inet_pton(AF_INET, text, &a) == 1;
}

/* True when name (n bytes, no final dot) is pattern (p bytes), or, for a
 * pattern ".d", d or a name under it. */
static bool name_is(const char *name, size_t n, const char *pattern, size_t p)
{
    if (p > 0 && pattern[p - 1] == '.') {
        p--;
    }
    if (p > 1 && pattern[0] == '.') {
        return (n == p - 1 && strncasecmp(name, pattern + 1, n) == 0) ||
               (n > p && strncasecmp(name + n - p, pattern, p) == 0);
    }
    return n == p && p > 0 && strncasecmp(name, pattern, n) == 0;
}

/* True when c may be in a name of the list: a reg-name's letters, digits,
 * hyphens and dots (RFC 3986 3.2.2, as a host a browser sends). */
static bool name_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

/* The next element of the list at *p, its spaces trimmed, its length in
 * *n; NULL at the list's end. Moves *p past it. */
static const char *next_element(const char **p, size_t *n)
{
    if (!**p) {
        return NULL;
    }
    const char *at = *p;
    size_t len = strcspn(at, ",");
    *p += len + (at[len] == ',');
    while (len > 0 && (*at == ' ' || *at == '\t')) {
        at++;
        len--;
    }
    while (len > 0 && (at[len - 1] == ' ' || at[len - 1] == '\t')) {
        len--;
    }
    *n = len;
    return at;
}

bool allowed_hosts_valid(const char *list)
{
    size_t entries = 0, n;
    for (const char *p = list, *at; (at = next_element(&p, &n)) != NULL; entries++) {
        bool star = n == 1 && at[0] == '*';
        for (size_t i = 0; i < n && !star; i++) {
            if (!name_byte(at[i])) {
                return false;
            }
        }
        if (n == 0 || n > NAME_MAX_LEN || (!star && strspn(at, ".") >= n)) {
            return false; /* an empty element, or dots alone */
        }
    }
    return entries > 0;
}

bool allowed_hosts_match(const char *host, size_t len, const char *list)
{
    size_t n = allowed_hosts_name_length(host, len), e;
    if (n == 0 || host[0] == '[' || is_ipv4(host, n)) {
        return true; /* no name at all (HTTP/1.0), or an IP literal */
    }
    if (host[n - 1] == '.') {
        n--;
    }
    if (name_is(host, n, ".localhost", 10)) {
        return true;
    }
    for (const char *p = list, *at; (at = next_element(&p, &e)) != NULL;) {
        if ((e == 1 && at[0] == '*') || name_is(host, n, at, e)) {
            return true;
        }
    }
    return false;
}
