#include "library.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "request.h"

/* The 1.0 API this file uses, by its value in 1.0's header when the header
 * built against is older: the values are fixed (the library's ABI), and the
 * library linked is asked before either is used. */
#if MHD_VERSION >= 0x00097701
#define DISCIPLINE_OPTION MHD_OPTION_CLIENT_DISCIPLINE_LVL
#define HEAD_ONLY_FLAG MHD_RF_HEAD_ONLY_RESPONSE
#else
#define DISCIPLINE_OPTION ((enum MHD_OPTION)38)
#define HEAD_ONLY_FLAG ((enum MHD_ResponseFlags)(1 << 4))
#endif

/* The discipline on 1.0: RFC 9112's reading, strictly ("within the limits
 * set by RFCs for HTTP servers", libmicrohttpd's "suitable for highly loaded
 * public servers"). Its default (0) answers a target with a space by a 301
 * to the target with %20 (RFC 9112 3.2 allows that; folio, as nginx,
 * answers 400), parses a tab as a space and unfolds folded lines; below 0 it
 * turns a bare CR or a NUL in a field into a space, so folio could not
 * refuse it. */
#define DISCIPLINE 1

/* The log's words folio acts on: the same in 0.9.75 and 1.0.1. */
#define SAID_REFUSAL "Error processing request (HTTP response code is %u"
#define SAID_NO_ROOM "Closing connection (failed to create response header)"
#define SAID_NO_POOL "Error allocating memory: "

static const char *const verified[] = {"0.9.75", "1.0.1"};

/* Whether the linked library has 1.0's parser and API (0.9.77 or newer). */
static bool new_parser;
static pthread_once_t probed = PTHREAD_ONCE_INIT;

/* Reads the linked library's version once ("major.minor.patch"). */
static void probe(void)
{
    const char *v = MHD_get_version();
    unsigned long major = 0, minor = 0, patch = 0;
    if (v) {
        char *end;
        major = strtoul(v, &end, 10);
        minor = *end == '.' ? strtoul(end + 1, &end, 10) : 0;
        patch = *end == '.' ? strtoul(end + 1, &end, 10) : 0;
    }
    new_parser = major >= 1 || (major == 0 && (minor > 9 || (minor == 9 && patch >= 77)));
}

/* True when the linked library has 1.0's parser and API. */
static bool is_new(void)
{
    pthread_once(&probed, probe);
    return new_parser;
}

/* See library.h. */
bool library_verified(const char *version, FILE *err)
{
    for (size_t i = 0; version && i < sizeof(verified) / sizeof(verified[0]); i++) {
        if (strcmp(version, verified[i]) == 0) {
            return true;
        }
    }
    if (err) {
        fprintf(err,
                "folio: libmicrohttpd %s is linked, and folio was verified on %s and %s only: it serves, "
                "but its answers to malformed requests may differ from those documented "
                "(what it relies on: src/serve/library.h)\n",
                version ? version : "of no known version", verified[0], verified[1]);
    }
    return false;
}

/* See library.h. The library splits its limit among its workers and
 * counts a closed connection out only when it is cleaned up, after the
 * close is notified and the acceptor has handed its slot on: each worker
 * is given twice the whole limit. Past its share a worker would not just
 * close the socket: 0.9.75's returns from new_connection_process_ holding
 * cleanup_connection_mutex and hangs at its next cleanup (seen in a test
 * of this, not kept: it cannot be stopped). */
const struct MHD_OptionItem *library_daemon_options(struct MHD_OptionItem *items, unsigned limit, unsigned threads)
{
    unsigned long unbound = 2ul * limit * (threads > 1 ? threads : 1);
    size_t n = 0;
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)(unbound < UINT_MAX ? unbound : UINT_MAX),
                                         NULL};
    if (threads > 1) {
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, threads, NULL};
    }
    if (is_new()) {
        items[n++] = (struct MHD_OptionItem){DISCIPLINE_OPTION, DISCIPLINE, NULL};
    }
    items[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return items;
}

/* See library.h. 0.9.75 parses the request line in place and ends the
 * target with the NUL it writes over the space before the version, so the
 * version starts one byte after the target's true end; a distance past the
 * limit, or shorter than the string, is no such layout. */
size_t library_target_length(const char *uri, size_t copied, const char *version, size_t limit)
{
    uintptr_t u = (uintptr_t)uri, v = (uintptr_t)version;
    if (!is_new() && v > u && v - u - 1 >= copied && v - u - 1 <= limit) {
        return v - u - 1;
    }
    return copied;
}

/* See library.h. On 0.9.75 the header block runs from the version's end to
 * the head's end, which is the header size measured from the method (the
 * read buffer's start). */
bool library_header_block(struct MHD_Connection *conn, const char *method, const char *version,
                          const char **from, const char **to)
{
    if (is_new()) {
        return false;
    }
    const union MHD_ConnectionInfo *size = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (!size || size->header_size == 0) {
        return false;
    }
    *from = version + strlen(version);
    *to = method + size->header_size;
    return true;
}

/* See library.h: 1.0 closes on a NUL in the line (connection_answer.h answers). */
bool library_skips_nul_lines(void)
{
    return !is_new();
}

/* True when fmt starts with prefix. */
static bool starts(const char *fmt, const char *prefix)
{
    return strncmp(fmt, prefix, strlen(prefix)) == 0;
}

/* See library.h. A connection closed on an error is logged "%s\n" with the
 * reason as the argument (connection_close_error). */
enum library_said library_heard(const char *fmt, va_list ap, unsigned *status)
{
    va_list copy;
    enum library_said said = LIBRARY_SAID_OTHER;
    if (starts(fmt, SAID_REFUSAL)) {
        va_copy(copy, ap);
        *status = va_arg(copy, unsigned);
        va_end(copy);
        said = LIBRARY_SAID_REFUSAL;
    } else if (starts(fmt, SAID_NO_POOL)) {
        said = LIBRARY_SAID_NO_POOL;
    } else if (strcmp(fmt, "%s\n") == 0) {
        va_copy(copy, ap);
        const char *reason = va_arg(copy, const char *);
        va_end(copy);
        said = reason && starts(reason, SAID_NO_ROOM) ? LIBRARY_SAID_NO_ROOM : LIBRARY_SAID_OTHER;
    }
    return said;
}

/* See library.h. */
bool library_refusing_head(struct MHD_Connection *conn)
{
    return MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) &&
           !MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS);
}

/* The refusals of this thread not yet taken, oldest first (the oldest is
 * dropped when a flood overfills it), and how many were ever noted. Every
 * callback of a connection runs on the worker thread that took it. */
enum { REFUSALS_KEPT = 32 };
static _Thread_local struct {
    unsigned status[REFUSALS_KEPT];
    size_t count;
    uint64_t noted;
} refusals;

/* Removes refusal i of this thread's list; its status. */
static unsigned refusal_remove(size_t i)
{
    unsigned status = refusals.status[i];
    memmove(&refusals.status[i], &refusals.status[i + 1], (refusals.count - i - 1) * sizeof(unsigned));
    refusals.count--;
    return status;
}

/* See library.h. */
void library_note_refusal(unsigned status)
{
    if (refusals.count == REFUSALS_KEPT) {
        refusal_remove(0);
    }
    refusals.status[refusals.count++] = status;
    refusals.noted++;
}

/* See library.h. */
uint64_t library_refusals_noted(void)
{
    return refusals.noted;
}

/* See library.h. */
void library_take_request_refusal(unsigned status)
{
    for (size_t i = refusals.count; i-- > 0;) {
        if (refusals.status[i] == status) {
            refusal_remove(i);
            return;
        }
    }
}

/* See library.h. */
unsigned library_take_refusal_since(uint64_t mark)
{
    return mark != refusals.noted && refusals.count > 0 ? refusal_remove(0) : 0;
}

/* One request field for asks_close: MHD_NO (stop) at a Connection field
 * that lists "close", setting *cls. */
static enum MHD_Result find_close(void *cls, enum MHD_ValueKind kind, const char *name, size_t name_len,
                                  const char *value, size_t value_len)
{
    (void)kind; (void)value_len; /* libmicrohttpd's signature */
    bool *close = cls;
    if (name_len == sizeof(MHD_HTTP_HEADER_CONNECTION) - 1 && strcasecmp(name, MHD_HTTP_HEADER_CONNECTION) == 0 &&
        request_lists_token(value, "close")) {
        *close = true;
        return MHD_NO;
    }
    return MHD_YES;
}

/* True when any Connection field of the request lists "close": both
 * versions' keepalive_possible reads every one (MHD_lookup_header_token_ci
 * walks the whole list), as RFC 9110 5.3 makes repeated lines one list. */
static bool asks_close(struct MHD_Connection *conn)
{
    bool close = false;
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, find_close, &close);
    return close;
}

/* See library.h. */
bool library_kept_alive(struct MHD_Connection *conn, unsigned status, bool last_on_connection,
                        const char *protocol, enum MHD_RequestTerminationCode why)
{
    return why == MHD_REQUEST_TERMINATED_COMPLETED_OK && status && !last_on_connection &&
           strcmp(protocol, MHD_HTTP_VERSION_1_1) == 0 && !asks_close(conn);
}

/* The body reader of a 0.9.75 304: never called, as no 304 has a body. */
static ssize_t never_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls; (void)pos; (void)buf; (void)max; /* libmicrohttpd's signature */
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* See library.h. 0.9.75's reader buffer, allocated with the response, is
 * one byte: at its default size every ready entry's 304 held a buffer the
 * cache did not count. */
struct MHD_Response *library_not_modified(uint64_t size)
{
    if (!is_new()) {
        return MHD_create_response_from_callback(size, 1, never_read, NULL, NULL);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (r && MHD_set_response_options(r, HEAD_ONLY_FLAG, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(r);
        r = NULL;
    }
    return r;
}

/* See library.h. */
bool library_not_modified_has_length(void)
{
    return !is_new();
}
