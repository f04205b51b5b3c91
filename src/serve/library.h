/* library: what folio relies on in libmicrohttpd, and the start-up check.
 *
 * folio was verified against libmicrohttpd 0.9.75 (Debian 12) and leans on
 * behaviours its API does not promise, each tested by tests/test_library.c
 * on the library linked, so an upgrade that changes one fails there loudly:
 *   - its log wording: the refusal message carries the status it sent
 *     (connection.c's access-log lines for 414, 431, 505), and the two
 *     Content-Length messages come just before the doubled answer folio
 *     replaces (connection_refuse_unread_length);
 *   - the request line is parsed in place: the version starts one byte past
 *     the target's end, so a NUL inside the target is seen
 *     (admission_sent_length), and the header block follows it;
 *   - with MHD_USE_TURBO the socket is still writable, its write side not
 *     shut, when the close of a line it could not parse is notified
 *     (connection.h), so folio can answer the 400 itself;
 *   - every Connection line counts for keep-alive (connection_kept_alive);
 *   - MHD_add_connection gives a socket to the worker its descriptor's
 *     number picks (the next with room), and every connection a worker
 *     takes is notified closed once (acceptor.h: the spread and the count);
 *     one it cannot start for want of memory for its pool it closes
 *     unnotified, logging LIBRARY_MSG_NO_POOL on its own thread
 *     (acceptor_lost).
 * A library of another version is started with a warning, not refused: a
 * distribution's patched build keeps the version string, and one that does
 * differ may well behave the same; what matters is that someone looks.
 */
#ifndef FOLIO_LIBRARY_H
#define FOLIO_LIBRARY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/* The version every reliance above was verified on. */
#define LIBRARY_VERIFIED "0.9.75"

/* The starts of libmicrohttpd 0.9.75's log messages folio acts on. */
#define LIBRARY_MSG_REFUSAL "Error processing request (HTTP response code is %u"
#define LIBRARY_MSG_LENGTH_MALFORMED "Failed to parse `Content-Length' header"
#define LIBRARY_MSG_LENGTH_TOO_LARGE "Too large value of 'Content-Length' header"
#define LIBRARY_MSG_NO_ROOM_FOR_HEADER "Closing connection (failed to create response header)"
/* A worker closing an added socket it could not start serving, unnotified. */
#define LIBRARY_MSG_NO_POOL "Error allocating memory: "

/* True when fmt (a log message's format) starts with prefix. */
bool library_message_is(const char *fmt, const char *prefix);

/* True when the message is one libmicrohttpd 0.9.75 logs as it closes a
 * connection on an error (connection_close_error: "%s\n", the reason as
 * the argument) and its reason starts with prefix; ap is left as it was. */
bool library_close_message_is(const char *fmt, va_list ap, const char *prefix);

/* True when version (MHD_get_version()'s answer; NULL for none) is the one
 * verified. */
bool library_is_verified(const char *version);

/* Says on err, once, when the linked library is not the verified one;
 * returns whether it is. */
bool library_check(FILE *err);

#endif
