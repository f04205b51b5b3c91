/* log: access-log lines.
 *
 * One line per request on stdout, in the common or combined log format that
 * nginx and Apache write, or as JSON lines. Every string that came from the
 * client is escaped (\xHH in the text formats, \uXXXX in JSON), so a request
 * cannot forge log lines or smuggle terminal escapes. Diagnostics go to
 * stderr, never here. Thread-safe: a line leaves in a single write().
 */
#ifndef FOLIO_LOG_H
#define FOLIO_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum log_format {
    LOG_FORMAT_COMMON,
    LOG_FORMAT_COMBINED,
    LOG_FORMAT_JSON,
};

struct log_record {
    const char *remote;   /* client address */
    struct timespec time; /* when the request arrived (CLOCK_REALTIME) */
    const char *method, *target, *protocol;
    unsigned status;
    uint64_t bytes;       /* body bytes sent */
    const char *referer, *user_agent; /* may be NULL */
    double duration_ms;
};

/* Parses "common", "combined" or "json". */
bool log_format_parse(const char *name, enum log_format *out);

/* Formats one line, newline included, into buf (truncating client strings to
 * fit). Pure; returns the line's length. size must be at least 512. */
size_t log_format_line(enum log_format format, const struct log_record *r, char *buf, size_t size);

/* Formats and writes one line to stdout. */
void log_write(enum log_format format, const struct log_record *r);

#endif
