/* exchange: one request in flight and the server it came to, as the
 * modules that answer it (http.c, target.c, respond.c) share them: its
 * admission (RFC 9112, by admission.c's rules), its proxy prefix, and its
 * facts (facts.h), read from its headers once.
 *
 * The server part is fixed once the daemon starts (the ready pool's counter
 * aside, which is atomic); the request part belongs to the one worker
 * thread running the request, from the URI-log callback to the completion
 * callback (http.c). Neither is freed by anyone but http.c.
 */
#ifndef FOLIO_EXCHANGE_H
#define FOLIO_EXCHANGE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "entry.h"
#include "facts.h"
#include "progress.h"
#include "ready.h"
#include "base/url_prefix.h"

struct MHD_Connection;
struct config;
struct settings;
struct route;
struct routes;
struct serve_live_hook;

struct exchange_server {
    struct settings *settings;  /* each request acquires its snapshot from here */
    const struct routes *routes;
    const struct route *root_route; /* the "/" route, home of 404.html; may be NULL */
    const struct serve_live_hook *live; /* NULL: no live reload */
    struct entry_server entries;
    struct ready_pool ready;
    struct cache *cache;
    time_t started;
};

/* Per request, from the URI-log callback (the first thing MHD tells us,
 * with the target still undecoded) to the completion callback. */
struct exchange {
    struct exchange_server *server;
    const struct config *config;   /* the settings snapshot current at the request's start, held to its end */
    struct timespec start_real, start_mono;
    const char *method, *protocol; /* MHD's strings, valid until completion */
    const char *prefix;            /* the proxy's path prefix, or NULL: see exchange_prefix */
    const char *sent_uri;          /* the URI-log callback's pointer, for the target's length (library_target_length) */
    char *sent_target;             /* the target as sent when it was changed, for the log; else NULL */
    const char *authority;         /* an absolute form's host[:port] (in sent_target), which names the
                                    * host instead of Host; else NULL */
    size_t authority_len;
    unsigned status;
    uint64_t bytes, body_bytes;
    bool measurable;               /* a cut can tell how far it got (progress.h): */
    uint64_t sent_mark;            /* the bytes before this response on its connection */
    struct progress_head head;     /* its header block */
    bool interim;                  /* it asked for 100 Continue: bytes no response counts */
    bool stream;                   /* an event stream: its bytes are always the kernel's count */
    uint64_t body_bytes_queued;    /* the body's length as queued (a HEAD's too, for its Content-Length) */
    bool headers_seen, checked;
    bool last_on_connection;       /* our response ends the connection (library_kept_alive) */
    bool unlogged;                 /* folio's own health probe, answered: no access-log line (health_probe.h) */
    bool facts_read;               /* facts holds what facts_of read */
    struct facts facts;            /* what its headers say, read once (facts.h) */
    char *joined[2];               /* If-Match and If-None-Match sent on several lines, joined (facts.c) */
    char protocol_buf[16];         /* the version as the handler was given it, kept to the end */
    char prefix_buf[URL_PREFIX_MAX];
    char target[]; /* percent-encoded, with the query: as received, but in origin form
                    * (admission) and with its folders as served (target.c) */
};

/* Whether a preview answers the host the request names (its absolute
 * form's authority, else Host; none: yes): base/allowed_hosts.h. */
bool exchange_host_allowed(struct MHD_Connection *conn, const struct exchange *ex);

/* The host the request names, for respond_host_refused: *len bytes. */
const char *exchange_host(struct MHD_Connection *conn, const struct exchange *ex, size_t *len);

/* RFC 9112 and 9110 on the request line and the fields, before anything is
 * looked up (admission.h): the status to refuse the request with, or 0. An
 * absolute-form target is turned into its origin form in ex here. method
 * and version are the handler's; both NULL for a head the library is
 * refusing itself before our handler was called
 * (connection_answer_refused_head), where they are not known
 * (admission_finish says what that leaves out). */
unsigned exchange_admit(struct MHD_Connection *conn, struct exchange *ex, const char *method,
                        const char *version);

/* Sets ex->prefix, the path prefix a proxy serves us under: X-Forwarded-
 * Prefix when the proxy is trusted, else --base-path, else none (NULL).
 * False when the header is not a clean path, which is a misconfigured proxy
 * or a forgery: 400. */
bool exchange_prefix(struct MHD_Connection *conn, struct exchange *ex);

#endif
