/* progress: how much of a response really left, as the kernel counts it.
 *
 * libmicrohttpd tells the completion callback only that a response was cut,
 * not how far it got. The kernel knows: every byte written to a TCP socket
 * is either acknowledged (TCP_INFO tcpi_bytes_acked) or still queued
 * (SIOCOUTQ), so their sum is what was handed to it on that connection.
 * Less what went out before this response (a mark: 0 on a connection's
 * first response, else read at queue time) and less this response's header
 * block (progress_head_length, derived from libmicrohttpd 0.9.75's layout)
 * it is the body bytes sent. A cut pays two syscalls, and so does the mark
 * of a body of PROGRESS_MARK_MIN or more on a connection's later response;
 * a response that completes logs its size as before. (A running total of
 * the derived bytes of each completed response would make every mark free.)
 */
#ifndef FOLIO_PROGRESS_H
#define FOLIO_PROGRESS_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

/* Bodies this large get a mark at queue time on a kept-alive connection:
 * two syscalls are noise beside sending them. A smaller body cut on a
 * connection's later response logs 0 bytes (still marked incomplete). */
#define PROGRESS_MARK_MIN ((uint64_t)64 * 1024)

/* The bytes handed to the kernel on socket fd so far (our FIN excluded);
 * false when fd is no TCP socket any more. */
bool progress_kernel_bytes(int fd, uint64_t *out);

/* The bytes the peer acknowledged on socket fd so far (TCP_INFO); false
 * when fd is no TCP socket any more. */
bool progress_acked_bytes(int fd, uint64_t *out);

/* The length of the header block libmicrohttpd 0.9.75 writes for resp with
 * status: "HTTP/1.1 <status> <reason>", its Date, "Connection: close" when
 * closing (unless resp names Connection), resp's own fields in order, its
 * Content-Length when resp has none, the blank line.
 * tests/integration/test_progress.py pins this against the bytes a client
 * receives. */
uint64_t progress_head_length(struct MHD_Response *resp, unsigned status, bool closing, uint64_t body_length);

/* Test hook: true when FOLIO_TEST_MEASURE_BYTES=1 asks that every response's
 * logged bytes come from the kernel, so a test can pin the derivation on
 * responses that complete. Read once. */
bool progress_measure_all(void);

#endif
