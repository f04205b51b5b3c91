/* log: access-log lines.
 *
 * One line per request on stdout, in the common or combined log format that
 * nginx and Apache write, or as JSON lines. Every string that came from the
 * client is escaped (in the text formats by base/escape.h's rule; in JSON,
 * UTF-8 as it is, controls as \u00HH and bytes that are no UTF-8 as
 * U+FFFD), so a request cannot forge log lines or smuggle terminal escapes. Diagnostics go to
 * stderr, never here. Thread-safe: lines go through a bounded ring to one
 * writer thread, so a stdout nobody reads never blocks a caller (lines that
 * do not fit are dropped, counted and reported on stderr).
 */
#ifndef FOLIO_LOG_H
#define FOLIO_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct MHD_Connection;
struct config;

enum log_format {
    LOG_FORMAT_COMMON,
    LOG_FORMAT_COMBINED,
    LOG_FORMAT_JSON,
};

struct log_record {
    const char *remote;   /* client address */
    struct timespec time; /* when the request arrived (CLOCK_REALTIME) */
    const char *method, *target, *protocol;
    unsigned status;      /* 0: none was sent (the client left, or was dropped): "-" */
    uint64_t bytes;       /* body bytes sent */
    bool incomplete;      /* the response was cut before its end */
    const char *referer, *user_agent; /* may be NULL */
    double duration_ms;
};

/* Parses "common", "combined" or "json". */
bool log_format_parse(const char *name, enum log_format *out);

/* Formats one line, newline included, into buf (truncating client strings to
 * fit). Pure; returns the line's length. size must be at least 512. */
size_t log_format_line(enum log_format format, const struct log_record *r, char *buf, size_t size);

/* Formats one line and queues it for stdout; never blocks on stdout. */
void log_write(enum log_format format, const struct log_record *r);

/* Queues r's access-log line for a request on conn, in config's format,
 * with the client's address (the proxy's X-Forwarded-For when config trusts
 * it) and, when fields, its Referer and User-Agent: fields are read only
 * while the request's are still there (a closed connection's memory pool is
 * gone: its socket address is all there is). */
void log_request_line(struct MHD_Connection *conn, const struct config *config,
                      const struct log_record *r, bool fields);

/* Waits up to timeout_ms for every queued line to be written; true when it
 * was. For a clean exit. */
bool log_flush(unsigned timeout_ms);

/* How many lines were dropped because stdout was not read fast enough. */
uint64_t log_dropped(void);

#endif
