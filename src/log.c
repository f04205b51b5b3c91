#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool log_format_parse(const char *name, enum log_format *out)
{
    static const char *const names[] = {"common", "combined", "json"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (enum log_format)i;
            return true;
        }
    }
    return false;
}

/* A bounded writer: appends never overflow, and what does not fit is dropped. */
struct line {
    char *buf;
    size_t len, cap;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->buf + l->len, l->cap - l->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        l->len += (size_t)n < l->cap - l->len ? (size_t)n : l->cap - l->len - 1;
    }
}

/* Appends s escaped, keeping room (reserve bytes) for the rest of the line. */
static void put_escaped(struct line *l, const char *s, bool json, size_t reserve)
{
    if (!s) {
        put(l, "%s", json ? "" : "-");
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (l->len + reserve + 7 >= l->cap) {
            put(l, "...");
            return;
        }
        if (*p == '"' || *p == '\\') {
            put(l, "\\%c", *p);
        } else if (*p >= 0x20 && *p < 0x7f) {
            l->buf[l->len++] = (char)*p;
            l->buf[l->len] = '\0';
        } else {
            put(l, json ? "\\u%04x" : "\\x%02X", *p);
        }
    }
}

size_t log_format_line(enum log_format format, const struct log_record *r, char *buf, size_t size)
{
    struct line l = {buf, 0, size};
    buf[0] = '\0';
    const size_t reserve = 160; /* status, size, time and the closing fields */
    struct tm tm;
    time_t secs = r->time.tv_sec;
    if (format == LOG_FORMAT_JSON) {
        gmtime_r(&secs, &tm);
        char when[32];
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        put(&l, "{\"time\":\"%s.%03ldZ\",\"remote\":\"", when, r->time.tv_nsec / 1000000);
        put_escaped(&l, r->remote, true, reserve);
        put(&l, "\",\"method\":\"");
        put_escaped(&l, r->method, true, reserve);
        put(&l, "\",\"uri\":\"");
        put_escaped(&l, r->target, true, reserve + 200);
        put(&l, "\",\"protocol\":\"");
        put_escaped(&l, r->protocol, true, reserve);
        put(&l, "\",\"status\":%u,\"bytes\":%llu,\"referer\":\"", r->status,
            (unsigned long long)r->bytes);
        put_escaped(&l, r->referer, true, reserve);
        put(&l, "\",\"user_agent\":\"");
        put_escaped(&l, r->user_agent, true, 60);
        put(&l, "\",\"duration_ms\":%.3f}\n", r->duration_ms);
        return l.len;
    }
    localtime_r(&secs, &tm);
    char when[40];
    strftime(when, sizeof(when), "%d/%b/%Y:%H:%M:%S %z", &tm);
    put_escaped(&l, r->remote, false, reserve);
    put(&l, " - - [%s] \"", when);
    put_escaped(&l, r->method, false, reserve);
    put(&l, " ");
    put_escaped(&l, r->target, false, reserve + 200);
    put(&l, " ");
    put_escaped(&l, r->protocol, false, reserve);
    put(&l, "\" %u %llu", r->status, (unsigned long long)r->bytes);
    if (format == LOG_FORMAT_COMBINED) {
        put(&l, " \"");
        put_escaped(&l, r->referer, false, reserve);
        put(&l, "\" \"");
        put_escaped(&l, r->user_agent, false, 8);
        put(&l, "\"");
    }
    put(&l, "\n");
    if (l.buf[l.len - 1] != '\n') { /* truncated: a line is still a line */
        l.buf[l.len - 1] = '\n';
    }
    return l.len;
}

void log_write(enum log_format format, const struct log_record *r)
{
    char buf[8192];
    size_t len = log_format_line(format, r, buf, sizeof(buf));
    for (size_t off = 0; off < len;) {
        ssize_t n = write(STDOUT_FILENO, buf + off, len - off);
        if (n <= 0) {
            return; /* a closed or full log never stops the server */
        }
        off += (size_t)n;
    }
}
