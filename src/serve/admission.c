#include "admission.h"

#include <string.h>
#include <strings.h>

/* True when [from, to) holds only what the library leaves between the
 * parts of a header block (library_header_block): whitespace around values,
 * and at most ends line ends or colons (which it overwrites with NULs: one
 * for ':' or a bare LF, two for CRLF). */
static bool only_separators(const char *from, const char *to, unsigned ends)
{
    unsigned seen = 0;
    for (; from < to; from++) {
        if (*from == '\0' || *from == '\r' || *from == '\n') {
            seen++;
        } else if (*from != ' ' && *from != '\t') {
            return false;
        }
    }
    return seen <= ends;
}

/* Accounts for len bytes at from: what lies between them and the last field
 * must be separators, ends of them at most. */
static void account_bytes(struct admission *a, const char *from, size_t len, unsigned ends)
{
    if (!a->cursor || from < a->cursor || from + len > a->end) {
        return; /* not inside the block (an empty value may be a constant) */
    }
    if (!only_separators(a->cursor, from, ends)) {
        a->refused = true;
    }
    a->cursor = from + len;
}

/* See admission.h. */
void admission_start(struct admission *a, const char *from, const char *to)
{
    *a = (struct admission){0};
    if (from && to && to > from) {
        a->cursor = from;
        a->end = to;
    }
}

/* One Transfer-Encoding line (the list may go on over more lines).
 * libmicrohttpd frames a body as chunked only on the value "chunked" alone
 * (as it reports the value: with the whitespace after it on some versions,
 * library.h), so that is the one chunked line; chunked twice is a 400
 * (RFC 9112 6.1). Any other value is a list it does not frame: a 400 when
 * chunked is in it before another coding (6.3: the length cannot be told),
 * else a 501 for the coding folio does not know (chunked with a space or an
 * empty element after it too: refused, never read another way than it is
 * framed). */
static void note_codings(struct admission *a, const char *value, size_t len)
{
    if (len == 7 && strncasecmp(value, "chunked", 7) == 0) {
        a->refused = a->refused || a->chunked;
        a->chunked = true;
        return;
    }
    bool after_chunked = a->chunked;
    for (size_t at = 0; at < len; at++) {
        size_t end = at;
        while (end < len && value[end] != ',') {
            end++;
        }
        while (at < end && (value[at] == ' ' || value[at] == '\t')) {
            at++;
        }
        if (at < end) { /* else an empty element */
            a->refused = a->refused || after_chunked;
            after_chunked = end - at == 7 && strncasecmp(value + at, "chunked", 7) == 0;
        }
        at = end;
    }
    a->other_coding = true;
}

/* See admission.h: a token name, Host counted and kept, lengths merged,
 * codings noted. */
bool admission_field(struct admission *a, const char *name, size_t name_len, const char *value,
                     size_t value_len)
{
    account_bytes(a, name, name_len, 2);   /* the line end before it */
    account_bytes(a, value, value_len, 1); /* the colon */
    if (!request_is_token(name, name_len)) {
        a->refused = true; /* RFC 9112 5.1: field-name is a token */
    } else if (memchr(value, '\r', value_len)) {
        a->refused = true; /* RFC 9110 5.5, RFC 9112 2.2: a bare CR is no field content (nginx: 400) */
    } else if (name_len == 4 && strncasecmp(name, "Host", 4) == 0) {
        a->hosts++;
        a->host = value;
        a->host_len = value_len;
        while (a->host_len > 0 && (value[a->host_len - 1] == ' ' || value[a->host_len - 1] == '\t')) {
            a->host_len--; /* trailing OWS is not part of the value (RFC 9110 5.5) */
        }
    } else if (name_len == 14 && strncasecmp(name, "Content-Length", 14) == 0) {
        /* One field of one number, as nginx: RFC 9112 6.3 lets a server
         * refuse a repeated length even where the values agree, and one
         * that disagrees is unrecoverable (the library frames the body by
         * its first field alone, a proxy in front maybe by another: a
         * request smuggled in the body) */
        a->refused = a->length_seen || memchr(value, ',', value_len) ||
                     !request_content_length(value, value_len, &a->length_seen, &a->length);
    } else if (name_len == 6 && strncasecmp(name, "Expect", 6) == 0) {
        a->expect = true;
    } else if (name_len == 17 && strncasecmp(name, "Transfer-Encoding", 17) == 0) {
        note_codings(a, value, value_len);
    }
    return !a->refused;
}

/* The request line alone: 400 for a method that is no token, a target
 * that is none of the four forms (a NUL, a space or a control in it, or no
 * target at all), or a form its method may not use; else 0. */
static unsigned check_line(const struct admission_head *h, enum request_method m,
                           struct request_target *t)
{
    if (m == REQUEST_METHOD_INVALID || h->target_len != h->copied_len ||
        !request_target_parse(h->target, h->target_len, t)) {
        return 400;
    }
    if ((t->form == REQUEST_FORM_ASTERISK && m != REQUEST_METHOD_OPTIONS) ||
        (t->form == REQUEST_FORM_AUTHORITY) != (m == REQUEST_METHOD_CONNECT)) {
        return 400; /* "*" is for OPTIONS, host:port for CONNECT, and only them (3.2.3, 3.2.4) */
    }
    return 0;
}

/* See admission.h. */
unsigned admission_finish(const struct admission *a, const struct admission_head *h,
                          struct request_target *t)
{
    bool said = h->method != NULL;
    enum request_method m = said ? request_method_classify(h->method, strlen(h->method)) : REQUEST_METHOD_GET;
    unsigned line = check_line(h, m, t);
    if (line) {
        return line;
    }
    if (a->refused || (a->cursor && !only_separators(a->cursor, a->end, 4))) {
        return 400; /* the last line end and the blank line are all that may follow */
    }
    bool http11 = !h->version || strcmp(h->version, "HTTP/1.1") == 0;
    if (a->hosts > 1 || (http11 && a->hosts == 0) ||
        (a->hosts == 1 && t->form != REQUEST_FORM_ABSOLUTE && !request_host_valid(a->host, a->host_len))) {
        return 400; /* RFC 9112 3.2: MUST; an absolute form's Host is ignored (3.2.2) */
    }
    if ((a->chunked || a->other_coding) && (a->length_seen || !http11)) {
        return 400; /* RFC 9112 6.1, 6.3: both framings at once is a smuggling attempt */
    }
    if (a->other_coding) {
        return 501; /* RFC 9112 6.1: a transfer coding we do not know */
    }
    if (m == REQUEST_METHOD_UNKNOWN || m == REQUEST_METHOD_CONNECT) {
        return 501; /* RFC 9110 9.1; folio is no proxy, so no tunnel either */
    }
    if (said && (m == REQUEST_METHOD_GET || m == REQUEST_METHOD_HEAD) && a->length > ADMISSION_BODY_MAX) {
        return 413;
    }
    return 0;
}

/* See admission.h: memmove, as t's path lies inside target. */
void admission_origin_form(char *target, const struct request_target *t)
{
    size_t slash = t->path_len == 0 || t->path[0] != '/';
    memmove(target + slash, t->path, t->path_len);
    target[0] = slash ? '/' : target[0];
    target[t->path_len + slash] = '\0';
}
