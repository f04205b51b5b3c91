/* respond: queueing a response for a request, and the responses folio
 * makes up itself (errors, redirects, 204, 416).
 *
 * Every response of a request goes out through respond_queue or
 * respond_ready: they record the status and byte count for the access log,
 * give the connection its sending deadline, and note whether the response
 * ends the connection. Each returns libmicrohttpd's answer; a response that
 * could not be made (out of memory) is MHD_NO, which closes the connection.
 * Called on the request's worker thread only.
 */
#ifndef FOLIO_RESPOND_H
#define FOLIO_RESPOND_H

#include <microhttpd.h>
#include <stdint.h>

struct exchange;
struct ready_answer;

/* Queues resp (NULL: out of memory, the connection is closed) with the
 * common headers, records status and bytes, and drops our reference. */
enum MHD_Result respond_queue(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                              struct MHD_Response *resp, uint64_t body_bytes);

/* respond_queue for a body of body_bytes sent from file fd (resp's) from
 * offset first: should the file be cut short while it is sent, the
 * connection ends at once (connection_watch_file). */
enum MHD_Result respond_queue_file(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                                   struct MHD_Response *resp, uint64_t body_bytes, int fd, uint64_t first);

/* Queues a ready answer as it is (shared, its headers set when it was
 * built) and releases it. */
enum MHD_Result respond_ready(struct MHD_Connection *conn, struct exchange *ex, struct ready_answer *a);

/* A small HTML error page for status; for 404, www/404.html when the
 * article has one, prepared for the address that was not found. */
enum MHD_Result respond_error(struct MHD_Connection *conn, struct exchange *ex, unsigned status);

/* respond_error with folio's page saying why (response_error_page). */
enum MHD_Result respond_error_why(struct MHD_Connection *conn, struct exchange *ex, unsigned status,
                                  const char *why);

/* 503 to the first request of a connection over --per-ip-limit
 * (address_limit.h), with Retry-After and Connection: close: a short page,
 * as nginx's limit_conn answers, where a close alone looks like a crash. */
enum MHD_Result respond_too_many(struct MHD_Connection *conn, struct exchange *ex);

/* A 301 to location, a relative reference: it stays right behind any proxy
 * prefix (PEERS.md theme I). */
enum MHD_Result respond_moved(struct MHD_Connection *conn, struct exchange *ex, const char *location);

/* A folder (decoded path) asked for without its slash: a 301 to its last
 * segment encoded again, with query; a 404 when that does not fit. */
enum MHD_Result respond_redirect(struct MHD_Connection *conn, struct exchange *ex, const char *path,
                                 const char *query);

/* 416 with the size a range must fit (RFC 9110 15.5.17). */
enum MHD_Result respond_unsatisfiable(struct MHD_Connection *conn, struct exchange *ex, uint64_t size);

/* OPTIONS (any target, "*" too): 204 and what is allowed (RFC 9110 9.3.7). */
enum MHD_Result respond_options(struct MHD_Connection *conn, struct exchange *ex);

/* 403 for a request to a preview under a host name it does not answer
 * (base/allowed_hosts.h: DNS rebinding; exchange_host): a page and a line
 * on stderr (one a minute at most) that say how to allow it. */
enum MHD_Result respond_host_refused(struct MHD_Connection *conn, struct exchange *ex);

#endif
