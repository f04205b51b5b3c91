/* library: everything folio relies on in libmicrohttpd beyond its API.
 *
 * folio runs on libmicrohttpd 0.9.75 (Debian 12) and 1.0 (Debian 13's
 * 1.0.1). Where the documented API does not say what folio needs, it asks
 * here: each function says what it guarantees on both versions, and only
 * this file's code knows which one is linked (asked at run time: a binary
 * built on one release may load the other's library, whose soname is the
 * same). tests/test_library.c pins every reliance below on the library
 * linked, with each version's own expectation where they differ, so a
 * library that behaves otherwise fails there rather than in production.
 *
 * Relied on, on both versions:
 *   - the log: a refusal is logged as LIBRARY_SAID_REFUSAL, with its status,
 *     on the refusing worker's thread before any byte of the library's own
 *     answer goes out; a connection whose head leaves its pool no room for
 *     the answer's header block is dropped with LIBRARY_SAID_NO_ROOM; a
 *     socket a worker cannot start is closed unnotified with
 *     LIBRARY_SAID_NO_POOL on that worker's thread (library_heard);
 *   - a head is parsed, checked and handed to the handler in one pass, so
 *     while a head read whole is being refused, no other connection of its
 *     thread holds one the handler has not seen (library_refusing_head);
 *   - the per-thread refusals: the log says a refusal's status, never its
 *     connection (library_note_refusal and the rest);
 *   - keepalive_possible(): when a connection is read on (library_kept_alive);
 *   - with MHD_USE_TURBO, a connection the library closes for a request line
 *     it cannot read is notified with its socket still writable, its write
 *     side not shut (connection_answer.h answers that 400 itself);
 *   - a response queued on the handler's first call for a request ends its
 *     connection (http.c answers on the second);
 *   - MHD_add_connection gives a socket to the worker its descriptor picks,
 *     and each connection a worker takes is notified closed once, before its
 *     socket is closed (acceptor.h, address_limit.h);
 *   - a connection waiting for a request of which it has read nothing closes
 *     when it reads its client's end (address_limit.h takes its slot back
 *     as soon as that end is in the socket);
 *   - a file response's mutex is held across each sendfile of it (ready.c);
 *     a sendfile that meets a file's new end sends nothing and waits for a
 *     writability that never comes (deadline.h);
 *   - half of --header-limit's pool takes a request head (the promise of
 *     docs/reliability.md), and the header block it writes is laid out as
 *     progress.h derives it.
 * On 0.9.75 only:
 *   - the request line is parsed in place, the target cut at a NUL
 *     (library_target_length), and the header block lies between the version
 *     and the head's end, names and values cut at a NUL and the block ended
 *     by a line starting with ':' (library_header_block); a field value keeps
 *     the whitespace after it (admission.c);
 *   - a request line starting with a NUL is skipped as an empty one
 *     (library_skips_nul_lines).
 * On 1.0, through its API: MHD_OPTION_CLIENT_DISCIPLINE_LVL 1
 * (library_daemon_options), under which the library refuses itself, before
 * folio sees them, the request lines and field lines folio would refuse for
 * their bytes (a space in the target, a NUL, a bare CR or LF, a folded line,
 * a name that is no token...), and MHD_RF_HEAD_ONLY_RESPONSE
 * (library_not_modified).
 * Guarded against, on every version: the library frames a body by the first
 * Content-Length field alone (0.9.75, 1.0.1; 1.0.4 refuses a second), so a
 * second is admission's to refuse.
 * Worked around (library_daemon_options, http.c, connection_answer.h,
 * live/sse.c): a pool of one worker is warned of on stderr (both); in
 * 0.9.75, the answer to a Content-Length it cannot read goes out twice (its
 * state is overwritten after queueing), a worker past its share of the
 * connection limit keeps its cleanup mutex and hangs, MHD_quiesce_daemon
 * with a thread pool races its workers and aborts, and a HEAD answered by a
 * chunked response gets the last chunk after its header.
 *
 * A library of another version is started with a note, not refused: it
 * gets the 1.0 paths when it is 0.9.77 or newer (the API they use exists),
 * else the 0.9.75 ones. Thread-safe.
 */
#ifndef FOLIO_LIBRARY_H
#define FOLIO_LIBRARY_H

#include <microhttpd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the version ---- */

/* True when version (MHD_get_version()'s answer; NULL for none) is one
 * folio was verified on, 0.9.75 or 1.0.1; else says so on err, in one line
 * that tells the user what it means for them (err NULL: silently). */
bool library_verified(const char *version, FILE *err);

enum { LIBRARY_OPTIONS_MAX = 4 };

/* Fills items (LIBRARY_OPTIONS_MAX of them) with the options folio's daemon
 * takes from this library, for MHD_OPTION_ARRAY, and returns it: a pool of
 * threads workers (none at all for one: the library warns of a pool of 1
 * on stderr), a connection limit that never binds before limit, folio's
 * own, does (the acceptor's; 0.9.75 hangs a worker past its share), and on
 * 1.0 the discipline above. */
const struct MHD_OptionItem *library_daemon_options(struct MHD_OptionItem *items, unsigned limit, unsigned threads);

/* ---- the request line and the header block ---- */

/* The length of the target as the client sent it, from the URI-log
 * callback's uri, copied bytes long as a C string then (the library may
 * write into it later: 1.0 ends it at the '?'), and the handler's version:
 * on 0.9.75 the distance from uri to the version when it is at most limit
 * (a NUL cut the string short), on 1.0 copied (it refuses a NUL before
 * folio sees the line). Reads no memory. */
size_t library_target_length(const char *uri, size_t copied, const char *version, size_t limit);

/* The header block's bounds [*from, *to), for admission's count of bytes no
 * field covers (admission.h), from the handler's method and version: true
 * on 0.9.75, whose parser may leave such bytes; false on 1.0, whose parser
 * refuses them. */
bool library_header_block(struct MHD_Connection *conn, const char *method, const char *version,
                          const char **from, const char **to);

/* True when the library skips a request line starting with a NUL as an
 * empty line and waits for another (0.9.75; nginx answers 400): folio then
 * looks for one itself (connection_refuse_nul_line). */
bool library_skips_nul_lines(void);

/* ---- what the library says, and its own refusals ---- */

enum library_said {
    LIBRARY_SAID_OTHER,   /* nothing folio acts on */
    LIBRARY_SAID_REFUSAL, /* it is answering a request itself, with *status */
    LIBRARY_SAID_NO_ROOM, /* it drops a connection whose response's header block found no room */
    LIBRARY_SAID_NO_POOL, /* a worker closes a socket it could not start, unnotified */
};

/* What a log message (the external logger's fmt and ap; ap is left as it
 * was) says; *status is set for LIBRARY_SAID_REFUSAL. */
enum library_said library_heard(const char *fmt, va_list ap, unsigned *status);

/* During a LIBRARY_SAID_REFUSAL, on its thread: true when conn, a
 * connection of that thread whose request line was read and whose head our
 * handler has not seen, is the one being refused: its head was read whole
 * and no response is queued on it. (A head is parsed, checked and handed
 * over in one pass, so no other connection of the thread is in that state.)
 * A refusal of a line, or of a field line on the way, is no such head. */
bool library_refusing_head(struct MHD_Connection *conn);

/* The library answered a request itself on this thread with status: its
 * log says so, not for which connection. A thread keeps the last few until
 * the request or the connection they were for takes them. */
void library_note_refusal(unsigned status);

/* How many refusals this thread ever noted: a wait's mark. */
uint64_t library_refusals_noted(void);

/* The request just completed got the library's own answer status: takes
 * that refusal, the latest with that status. */
void library_take_request_refusal(unsigned status);

/* The oldest refusal of this thread not yet taken, taken, if any was noted
 * since mark; 0 otherwise. */
unsigned library_take_refusal_since(uint64_t mark);

/* ---- connections and responses ---- */

/* Whether the library reads another request on conn after one that ended
 * for why: its keepalive_possible() for what folio sends. A response of
 * ours (status not 0) that did not end the connection (last_on_connection),
 * to an HTTP/1.1 request (protocol) that did not ask for the end on any of
 * its Connection lines. HTTP/1.0 keep-alive counts as not kept (a wrong
 * guess then is a silent close, never a stray 400 after a response). */
bool library_kept_alive(struct MHD_Connection *conn, unsigned status, bool last_on_connection,
                        const char *protocol, enum MHD_RequestTerminationCode why);

/* A 304 for a representation of size bytes (RFC 9110 15.4.5: no body): on
 * 1.0 a head-only response, without Content-Length, as nginx answers; on
 * 0.9.75, which writes a Content-Length from every response's size, a
 * response of that size (8.6: the one the 200 would have had) whose body
 * is never read. NULL when out of memory. */
struct MHD_Response *library_not_modified(uint64_t size);

/* Whether library_not_modified's responses carry a Content-Length. */
bool library_not_modified_has_length(void);

#endif
