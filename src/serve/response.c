#include "response.h"

#include <inttypes.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

#include "base/body.h"
#include "base/config.h"
#include "encoding.h"
#include "entry.h"
#include "library.h"
#include "precondition.h"
#include "preload.h"

/* See response.h. */
void response_add(struct MHD_Response *r, const char *name, const char *value)
{
    MHD_add_response_header(r, name, value);
}

/* See response.h. */
void response_add_common(struct MHD_Response *r)
{
    response_add(r, "X-Content-Type-Options", "nosniff");
}

/* See response.h. */
struct MHD_Response *response_from_body(struct body *b, uint64_t offset, uint64_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
        (size_t)len, b->data + offset, body_unref_cb, b);
    if (!r) {
        body_unref(b);
    }
    return r;
}

/* See response.h: the library's (library_not_modified). */
struct MHD_Response *response_not_modified(uint64_t size)
{
    return library_not_modified(size);
}

/* See response.h. */
struct MHD_Response *response_from_text(const char *text)
{
    struct body *b = body_from(text, strlen(text));
    return b ? response_from_body(b, 0, b->len) : NULL;
}

/* See response.h. */
struct MHD_Response *response_from_rep(struct entry_rep *rep, uint64_t offset, uint64_t len)
{
    if (rep->body) {
        struct body *b = rep->body;
        rep->body = NULL;
        return response_from_body(b, offset, len);
    }
    if (len == 0) {
        return MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    /* sendfile: the response owns the fd from here, and only if it exists. */
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(len, rep->fd, (int64_t)offset);
    if (r) {
        rep->fd = -1;
    }
    return r;
}

/* preload_each's callback: one Link header on response r. */
static void add_link(void *r, const char *value)
{
    response_add(r, "Link", value);
}

/* See response.h. */
void response_add_rep_headers(struct MHD_Response *resp, const struct config *config,
                              const struct entry_rep *rep, unsigned status, uint64_t first,
                              uint64_t last)
{
    char last_modified[30];
    precondition_date_format(precondition_last_modified(&rep->times, time(NULL)), last_modified);
    if (status != 304) {
        response_add(resp, "Content-Type", rep->type);
    }
    response_add(resp, "ETag", rep->etag);
    if (status != 304 || !rep->etag[0]) {
        /* RFC 9110 15.4.5: a 304 with an ETag SHOULD NOT carry other metadata (nginx, lighttpd) */
        response_add(resp, "Last-Modified", last_modified);
    }
    if (config->production && strncmp(rep->type, "text/html", 9) != 0) {
        char cc[48];
        snprintf(cc, sizeof(cc), "public, max-age=%u", config->max_age);
        response_add(resp, "Cache-Control", cc);
    } else {
        response_add(resp, "Cache-Control", "no-cache");
    }
    response_add(resp, "Accept-Ranges", "bytes");
    /* Every field the choice read (RFC 9110 12.5.5): a cache must not hand a
     * fetch the page a browser loaded, with its client, or the reverse. */
    if (rep->compressible || rep->by_fetch_dest) {
        response_add(resp, "Vary", !rep->by_fetch_dest ? "Accept-Encoding"
                                   : rep->compressible ? "Accept-Encoding, Sec-Fetch-Dest"
                                                       : "Sec-Fetch-Dest");
    }
    /* A 304 describes the selected representation without its body; its
     * ETag says which coding it was (RFC 9110 15.4.5). */
    if (rep->coding != ENCODING_IDENTITY && status != 304) {
        response_add(resp, "Content-Encoding", encoding_name(rep->coding));
    }
    if (status == 200) { /* a 304 keeps what the 200 said (RFC 9110 15.4.5) */
        preload_each(rep->links, add_link, resp);
    }
    if (status == 206) {
        char range[96];
        snprintf(range, sizeof(range), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, rep->size);
        response_add(resp, "Content-Range", range);
    }
}

/* See response.h. */
void response_add_error_headers(struct MHD_Response *resp, unsigned status)
{
    response_add(resp, "Content-Type", "text/html; charset=utf-8");
    /* A missing fragment must never be cached as if it were one (no SPA fallback either). */
    response_add(resp, "Cache-Control", "no-store");
    if (status == 405) {
        response_add(resp, "Allow", "GET, HEAD, OPTIONS");
    }
    if (status == 400) {
        response_add(resp, "Connection", "close"); /* whatever follows a bad request is suspect too */
    }
    if (status == 503) {
        response_add(resp, "Retry-After", "2"); /* RFC 9110 10.2.3: a moment, not a failure */
    }
}

/* See response.h. */
const char *response_status_text(unsigned status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 416: return "Range Not Satisfiable";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

/* See response.h. */
size_t response_error_page(unsigned status, const char *why, const char *script, char *buf, size_t size)
{
    const char *text = response_status_text(status);
    int n = snprintf(buf, size,
                     "<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>%u %s</title>\n"
                     "<h1>%u %s</h1>\n<p>%s</p>\n%s</html>\n",
                     status, text, status, text, why ? why : "folio could not serve this address.", script);
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}
