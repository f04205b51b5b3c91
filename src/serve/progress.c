/* progress: see progress.h. */
#include "progress.h"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* its tcp_info has tcpi_bytes_acked; glibc's does not */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "library.h"

/* The kernel's TCP states after our FIN (include/net/tcp_states.h; no
 * user-space header names them). */
enum { STATE_FIN_WAIT1 = 4, STATE_FIN_WAIT2 = 5, STATE_TIME_WAIT = 6, STATE_LAST_ACK = 9, STATE_CLOSING = 11 };

/* Whether a socket in state has queued our FIN, which takes a sequence
 * number but is no byte we sent. */
static bool fin_queued(unsigned state)
{
    return state == STATE_FIN_WAIT1 || state == STATE_FIN_WAIT2 || state == STATE_CLOSING ||
           state == STATE_LAST_ACK || state == STATE_TIME_WAIT;
}

/* TCP_INFO of socket fd into *info, *len its length: false when fd is no
 * TCP socket any more, or the kernel's answer stops before
 * tcpi_bytes_acked (before Linux 4.1). */
static bool read_tcp_info(int fd, struct tcp_info *info, socklen_t *len)
{
    *len = sizeof(*info);
    return fd >= 0 && getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, len) == 0 &&
           *len >= offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(info->tcpi_bytes_acked);
}

/* See progress.h. One TCP_INFO is one snapshot, taken under the socket's
 * lock: new bytes sent (all sent, less retransmissions) plus those not yet
 * sent. (Acknowledged plus SIOCOUTQ, two calls, undercounts by whatever
 * the peer acknowledges between them, a lot on a busy loopback.) A FIN
 * not yet sent is in the unsent count. Kernels before 4.19 lack the
 * fields: there, the two calls. */
bool progress_kernel_bytes(int fd, uint64_t *out)
{
    struct tcp_info info;
    socklen_t len;
    if (!read_tcp_info(fd, &info, &len)) {
        return false;
    }
    bool fin = fin_queued(info.tcpi_state);
    if (len >= offsetof(struct tcp_info, tcpi_bytes_retrans) + sizeof(info.tcpi_bytes_retrans)) {
        uint64_t unsent = info.tcpi_notsent_bytes;
        *out = info.tcpi_bytes_sent - info.tcpi_bytes_retrans + (fin && unsent ? unsent - 1 : unsent);
        return true;
    }
    int queued = 0;
    if (ioctl(fd, SIOCOUTQ, &queued) != 0 || queued < 0) {
        queued = 0;
    }
    uint64_t total = info.tcpi_bytes_acked + (uint64_t)queued;
    *out = fin && total ? total - 1 : total; /* the FIN, acknowledged or queued */
    return true;
}

/* See progress.h. */
bool progress_acked_bytes(int fd, uint64_t *out)
{
    struct tcp_info info;
    socklen_t len;
    if (!read_tcp_info(fd, &info, &len)) {
        return false;
    }
    *out = info.tcpi_bytes_acked;
    return true;
}

struct head_sum {
    uint64_t length;
    bool has_connection, has_length;
};

/* One field of a response for progress_head_length: "name: value\r\n". */
static enum MHD_Result add_field(void *cls, enum MHD_ValueKind kind, const char *name, const char *value)
{
    (void)kind; /* libmicrohttpd's signature */
    struct head_sum *sum = cls;
    sum->length += strlen(name) + 2 + strlen(value ? value : "") + 2;
    sum->has_connection |= strcasecmp(name, MHD_HTTP_HEADER_CONNECTION) == 0;
    sum->has_length |= strcasecmp(name, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0;
    return MHD_YES;
}

/* See progress.h. */
struct progress_head progress_head_length(struct MHD_Response *resp, unsigned status, uint64_t body_length)
{
    struct head_sum sum = {0, false, false};
    MHD_get_response_headers(resp, add_field, &sum);
    uint64_t length = sizeof("HTTP/1.1 200 \r\n") - 1 + strlen(MHD_get_reason_phrase_for(status));
    length += sizeof("Date: Wed, 02 Dec 2026 13:56:16 GMT\r\n") - 1; /* an IMF-fixdate is 29 bytes */
    length += sum.length;
    if (body_length == PROGRESS_CHUNKED) {
        length += sizeof("Transfer-Encoding: chunked\r\n") - 1;
    } else if (!sum.has_length && (status != 304 || library_not_modified_has_length())) {
        /* every 304 of folio's is library_not_modified's */
        length += sizeof("Content-Length: \r\n") - 1;
        do { /* its digits */
            length++;
            body_length /= 10;
        } while (body_length > 0);
    }
    return (struct progress_head){length + 2, sum.has_connection ? 0 : (unsigned)PROGRESS_CLOSE_LINE};
}

static bool measure_all;

/* Reads the test hook's variable once. */
static void read_measure_all(void)
{
    const char *v = getenv("FOLIO_TEST_MEASURE_BYTES");
    measure_all = v && strcmp(v, "1") == 0;
}

/* See progress.h. */
bool progress_measure_all(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, read_measure_all);
    return measure_all;
}
