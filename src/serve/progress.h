/* progress: how much of a response really left, as the kernel counts it.
 *
 * libmicrohttpd tells the completion callback only that a response was cut,
 * not how far it got. The kernel knows: one TCP_INFO tells the new bytes
 * sent and those not yet sent, so their sum is what was handed to it on
 * that connection.
 * Less what went out before this response (a mark: the derived header and
 * body bytes of the connection's earlier responses, a running total kept
 * on the connection) and less this response's header block
 * (progress_head_length, derived from libmicrohttpd's layout, library.h) it is
 * the body bytes sent. Only a cut pays, one syscall; a response that
 * completes logs its size as before. Where a response's bytes cannot be
 * derived (an interim 100 Continue went before it) later marks on that
 * connection ask the kernel at queue time, for bodies of PROGRESS_MARK_MIN
 * or more. An event stream (chunked, of no length known) always logs what
 * the kernel took: its chunks, with their framing, as nginx's
 * $body_bytes_sent counts them.
 */
#ifndef FOLIO_PROGRESS_H
#define FOLIO_PROGRESS_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

/* Bodies this large get a mark from the kernel at queue time where the
 * running total is unknown (a syscall is noise beside sending them),
 * and are held to --send-rate by the bytes acknowledged. A smaller body cut
 * on such a connection logs 0 bytes (still marked incomplete). */
#define PROGRESS_MARK_MIN ((uint64_t)64 * 1024)

/* The bytes handed to the kernel on socket fd so far (our FIN excluded);
 * false when fd is no TCP socket any more. */
bool progress_kernel_bytes(int fd, uint64_t *out);

/* The bytes the peer acknowledged on socket fd so far (TCP_INFO); false
 * when fd is no TCP socket any more. */
bool progress_acked_bytes(int fd, uint64_t *out);

/* What libmicrohttpd adds to a header block when it closes after it. */
#define PROGRESS_CLOSE_LINE (sizeof("Connection: close\r\n") - 1)

/* A response's header block, as libmicrohttpd writes it. */
struct progress_head {
    uint64_t bytes;      /* on a connection it keeps open */
    unsigned close_adds; /* what closing adds: PROGRESS_CLOSE_LINE, or 0 when resp names Connection */
};

/* A body_length for progress_head_length: none known, sent chunked. */
#define PROGRESS_CHUNKED UINT64_MAX

/* The header block libmicrohttpd writes for resp with status:
 * "HTTP/1.1 <status> <reason>", its Date, resp's own fields in order, its
 * Content-Length when resp has none (Transfer-Encoding: chunked for
 * PROGRESS_CHUNKED; none on a 304 the library writes without one,
 * library_not_modified_has_length), the blank line. The same for every
 * queue of resp: a response kept for many requests (ready.c) measures it
 * once. tests/integration/test_progress.py pins this against the bytes a
 * client receives. */
struct progress_head progress_head_length(struct MHD_Response *resp, unsigned status, uint64_t body_length);

/* Test hook: true when FOLIO_TEST_MEASURE_BYTES=1 asks that every response's
 * logged bytes come from the kernel, so a test can pin the derivation on
 * responses that complete. Read once. */
bool progress_measure_all(void);

#endif
