/*
 * sse — Server-Sent Events hub over libmicrohttpd (suspend/resume).
 *
 * Owns: the list of connected stream clients, one byte queue per client, a
 * heartbeat thread, and the server instance id sent in every `hello`.
 *
 * How a stream works (HTML spec, "Server-sent events"): sse_hub_attach()
 * builds ONE MHD response per client from a content reader. The reader
 * hands out the client's queued bytes; when there are none it calls
 * MHD_suspend_connection() and returns 0, so an idle stream costs no thread
 * and no CPU. Broadcasts and heartbeats append to every queue and resume
 * the suspended clients. The first bytes are
 *     retry: <retry_ms>\nevent: hello\ndata: <instance id>\n\n
 * so a client that reconnects to a restarted server sees a new id.
 * A `: ping` comment every heartbeat_ms makes MHD write to idle streams
 * (proxies keep them open, a dead peer fails the write). Suspended
 * connections neither time out nor notice a closed peer, so the heartbeat
 * thread also polls each parked stream's socket every SSE_PEER_CHECK_MS: a
 * closed tab leaves the count within about a second.
 *
 * Daemon requirements: MHD_USE_INTERNAL_POLLING_THREAD (a thread pool is
 * fine) with MHD_ALLOW_SUSPEND_RESUME (which implies ITC); not
 * thread-per-connection. Shutdown order: sse_hub_close() (ends every
 * stream, resumes every suspended client), then MHD_stop_daemon(), then
 * sse_hub_destroy().
 *
 * A client whose queue exceeds SSE_CLIENT_MAX_QUEUE bytes (it stopped
 * reading) is dropped: its queue is freed and its stream ends with an error
 * the next time MHD asks for data.
 *
 * Memory: the hub is reference-counted by its owner and by each client's
 * response; whichever of sse_hub_destroy() and the last response's free
 * callback comes last frees it.
 *
 * Thread-safety: every function is safe from any thread, including MHD's
 * handler threads. One mutex guards the client list and queues; MHD is never
 * called with it held except MHD_suspend_connection() from the reader (on
 * MHD's own thread), and MHD_resume_connection() is only called on a client
 * the hub itself saw suspended, so no resume races a close.
 */
#ifndef FOLIO_SSE_H
#define FOLIO_SSE_H

#include <stdbool.h>
#include <stddef.h>

struct MHD_Connection;
struct MHD_Response;
struct sse_hub;

#define SSE_HEARTBEAT_DEFAULT_MS 15000u
#define SSE_RETRY_DEFAULT_MS 1000u
#define SSE_CLIENT_MAX_QUEUE (64u * 1024u)
#define SSE_PEER_CHECK_MS 1000u

/* Starts the heartbeat thread. 0 picks the defaults above. NULL on failure. */
struct sse_hub *sse_hub_create(unsigned heartbeat_ms, unsigned retry_ms);

/*
 * From the access handler of a GET for the stream: returns a new response
 * with the event-stream headers set, or NULL once the hub is closed (answer
 * 503) or when memory runs out (answer 500). The caller queues it with
 * MHD_HTTP_OK and destroys it at once, as with any response; if queueing
 * fails, destroying it removes the client again.
 */
struct MHD_Response *sse_hub_attach(struct sse_hub *hub,
                                    struct MHD_Connection *conn);

/*
 * From the access handler of a HEAD for the stream: the stream's headers
 * and no content, attaching no client; NULL when a GET would get no stream
 * (the hub closed or full: answer 503) or memory runs out. Queued and
 * destroyed as sse_hub_attach's.
 */
struct MHD_Response *sse_hub_head(struct sse_hub *hub);

/* Caps the open streams: past max_clients, sse_hub_attach returns NULL (the
 * caller answers 503), so a flood of streams cannot take every connection.
 * 0: no cap (the default). */
void sse_hub_set_limit(struct sse_hub *hub, size_t max_clients);

/*
 * Sends one event to every client. @event may be NULL (a plain "message");
 * it must not hold CR or LF. @data must not be empty: browsers do not
 * dispatch an event with empty data. Returns false if the event is invalid
 * or memory ran out; a client that cannot take it is dropped.
 */
bool sse_hub_broadcast(struct sse_hub *hub, const char *event, const char *data);

/* Clients currently streaming (dropped ones excluded). */
size_t sse_hub_client_count(struct sse_hub *hub);

/* This server instance's id, as sent in `hello`. Valid until destroy. */
const char *sse_hub_instance(const struct sse_hub *hub);

/*
 * Ends every stream cleanly (queued bytes, then the chunked terminator) so
 * browsers reconnect to the next server; later attaches return NULL. Waits
 * up to @wait_ms for the streams to finish; returns true if they all did.
 * Must run before MHD_stop_daemon(). Idempotent.
 */
bool sse_hub_close(struct sse_hub *hub, unsigned wait_ms);

/* Stops the heartbeat thread and drops the owner's reference. Call after
 * MHD_stop_daemon(). Accepts NULL. */
void sse_hub_destroy(struct sse_hub *hub);

/*
 * Pure framing: writes "event: <event>\n" (unless @event is NULL or empty),
 * one "data: <line>\n" per line of @data (CRLF, LF and CR all split lines,
 * as the HTML spec's parser does) and a blank line into @buf, NUL-terminated
 * when @size allows. Returns the length of the frame (without the NUL), as
 * snprintf does, or 0 if @event holds CR or LF.
 */
size_t sse_format(char *buf, size_t size, const char *event, const char *data);

#endif
