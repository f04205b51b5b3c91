#include "log.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/escape.h"
#include "base/io.h"

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

/* Appends n bytes of s; the caller made room. */
static void put_bytes(struct line *l, const void *s, size_t n)
{
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    l->buf[l->len] = '\0';
}

/* Appends s escaped, keeping room (reserve bytes) for the rest of the line.
 * Text formats: escape.h's rule, and a quote or backslash escaped (a field
 * may be quoted). JSON: escape.h's JSON rule. */
static void put_escaped(struct line *l, const char *s, bool json, size_t reserve)
{
    if (!s) {
        put(l, "%s", json ? "" : "-");
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (l->len + reserve + ESCAPE_JSON_STEP_MAX + 1 >= l->cap) {
            put(l, "...");
            return;
        }
        size_t n = json ? 0 : escape_keep(p);
        if (json) {
            char step[ESCAPE_JSON_STEP_MAX + 1];
            put_bytes(l, step, escape_json_step((const char *)p, step, &n));
            p += n;
        } else if (*p == '"' || *p == '\\') {
            put(l, "\\%c", *p++);
        } else if (n > 0) {
            put_bytes(l, p, n);
            p += n;
        } else {
            put(l, "\\x%02X", *p++);
        }
    }
}

/* A line's time to the second, as text, and the second it is for. */
struct when {
    time_t secs;
    char text[40];
};

/* @secs as a line shows it: UTC in ISO 8601 for JSON, else local time in
 * the common log's form; from @cache when it holds that second: a busy
 * server logs many lines a second, and strftime with the time zone's
 * conversion was a fifth of what a line cost (bench/README.md, Measurements
 * behind the code). */
static const char *when_text(struct when *cache, time_t secs, bool utc)
{
    if (cache->secs != secs || !cache->text[0]) {
        struct tm tm;
        if (utc) {
            gmtime_r(&secs, &tm);
            strftime(cache->text, sizeof(cache->text), "%Y-%m-%dT%H:%M:%S", &tm);
        } else {
            localtime_r(&secs, &tm);
            strftime(cache->text, sizeof(cache->text), "%d/%b/%Y:%H:%M:%S %z", &tm);
        }
        cache->secs = secs;
    }
    return cache->text;
}

/* One JSON object on a line, every field named. */
static void format_json(struct line *l, const struct log_record *r, size_t reserve)
{
    static _Thread_local struct when utc;
    const char *when = when_text(&utc, r->time.tv_sec, true);
    put(l, "{\"time\":\"%s.%03ldZ\",\"remote\":\"", when, r->time.tv_nsec / 1000000);
    put_escaped(l, r->remote, true, reserve);
    put(l, "\",\"method\":\"");
    put_escaped(l, r->method, true, reserve);
    put(l, "\",\"uri\":\"");
    put_escaped(l, r->target, true, reserve + 200);
    put(l, "\",\"protocol\":\"");
    put_escaped(l, r->protocol, true, reserve);
    if (r->status) {
        put(l, "\",\"status\":%u", r->status);
    } else {
        put(l, "\",\"status\":null"); /* nothing was sent */
    }
    put(l, ",\"bytes\":%llu,\"referer\":\"", (unsigned long long)r->bytes);
    put_escaped(l, r->referer, true, reserve);
    put(l, "\",\"user_agent\":\"");
    put_escaped(l, r->user_agent, true, 60);
    put(l, "\",\"duration_ms\":%.3f,\"complete\":%s}\n", r->duration_ms, r->incomplete ? "false" : "true");
}

/* The common (or combined) log format's fields, in their standard places. */
static void format_common(struct line *l, enum log_format format, const struct log_record *r, size_t reserve)
{
    static _Thread_local struct when local;
    const char *when = when_text(&local, r->time.tv_sec, false);
    put_escaped(l, r->remote, false, reserve);
    put(l, " - - [%s] \"", when);
    put_escaped(l, r->method, false, reserve);
    put(l, " ");
    put_escaped(l, r->target, false, reserve + 200);
    put(l, " ");
    put_escaped(l, r->protocol, false, reserve);
    if (r->status) {
        put(l, "\" %u %llu", r->status, (unsigned long long)r->bytes);
    } else {
        put(l, "\" - %llu", (unsigned long long)r->bytes); /* nothing was sent */
    }
    if (format == LOG_FORMAT_COMBINED) {
        put(l, " \"");
        put_escaped(l, r->referer, false, reserve);
        put(l, "\" \"");
        put_escaped(l, r->user_agent, false, 8);
        put(l, "\"");
    }
    /* A cut response's line ends with one more field, as an nginx format
     * that appends $request_completion would: the standard fields keep their
     * places, so common and combined parsers (which read from the start)
     * still read them; a complete line is exactly the standard one. */
    if (r->incomplete) {
        put(l, " incomplete");
    }
}

/* See log.h. */
size_t log_format_line(enum log_format format, const struct log_record *r, char *buf, size_t size)
{
    struct line l = {buf, 0, size};
    buf[0] = '\0';
    const size_t reserve = 160; /* status, size, time and the closing fields */
    if (format == LOG_FORMAT_JSON) {
        format_json(&l, r, reserve);
        return l.len;
    }
    format_common(&l, format, r, reserve);
    put(&l, "\n");
    if (l.buf[l.len - 1] != '\n') { /* truncated: a line is still a line */
        l.buf[l.len - 1] = '\n';
    }
    assert(l.len < size && memchr(l.buf, '\n', l.len) == l.buf + l.len - 1); /* one line, within size */
    return l.len;
}

/* The access log leaves through one writer thread, so a reader that stops
 * reading (a full pipe) stalls that thread alone, never a worker: workers
 * append to a bounded ring and, when it is full, drop the line and count it.
 *
 * The writer gathers: woken by the first line into an empty ring, it lets
 * lines collect for LOG_GATHER_MS (or until a quarter of the ring is full, or
 * a flush waits) and writes them in one go: waking it and writing for every
 * line cost two futex calls and a write a request (bench/README.md,
 * Measurements behind the code); nginx's `access_log ... buffer= flush=` is
 * the same trade, off by default there. A line is on stdout within about
 * LOG_GATHER_MS. */
#define RING_BYTES (1u << 20)
#define LOG_GATHER_MS 20
#define RING_EARLY_BYTES (RING_BYTES / 4)

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* the ring emptied or a write ended: for log_flush */
    pthread_cond_t wake;    /* for the writer: CLOCK_MONOTONIC, set up in start_writer */
    char data[RING_BYTES];
    size_t head, len;       /* the bytes not yet written: [head, head + len) mod RING_BYTES */
    bool idle;              /* the writer waits for a first line: a worker must wake it */
    bool writing;           /* the writer holds a chunk it has not written yet */
    unsigned flushers;      /* log_flush calls waiting: the writer gathers no longer */
    uint64_t dropped, reported;
} ring = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static pthread_once_t writer_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t dropped_total;

/* Under ring.lock: waits for a line, then lets lines gather for LOG_GATHER_MS
 * unless the ring is a quarter full or a flush waits. */
static void gather_lines(void)
{
    while (ring.len == 0) {
        ring.idle = true;
        pthread_cond_wait(&ring.wake, &ring.lock);
    }
    ring.idle = false;
    struct timespec until = clock_deadline(CLOCK_MONOTONIC, LOG_GATHER_MS);
    while (ring.len < RING_EARLY_BYTES && ring.flushers == 0 &&
           pthread_cond_timedwait(&ring.wake, &ring.lock, &until) == 0) {
    }
}

/* The writer thread: takes what the ring holds, writes it to stdout outside
 * the lock (blocking there is its job), for as long as the process lives. */
static void *writer_main(void *unused)
{
    (void)unused; /* pthread_create's signature */
    static char chunk[64 << 10];
    pthread_mutex_lock(&ring.lock);
    for (;;) {
        pthread_cond_broadcast(&ring.changed); /* empty, nothing held: a flush may return */
        gather_lines();
        while (ring.len > 0) {
            size_t n = ring.len < sizeof(chunk) ? ring.len : sizeof(chunk);
            size_t first = n < RING_BYTES - ring.head ? n : RING_BYTES - ring.head;
            memcpy(chunk, ring.data + ring.head, first);
            memcpy(chunk + first, ring.data, n - first);
            ring.head = (ring.head + n) % RING_BYTES;
            ring.len -= n;
            ring.writing = true;
            uint64_t dropped = ring.dropped - ring.reported;
            ring.reported = ring.dropped;
            pthread_mutex_unlock(&ring.lock);
            io_write_all(STDOUT_FILENO, chunk, n); /* a closed log never stops the server */
            if (dropped > 0) {
                char note[96];
                int k = snprintf(note, sizeof(note),
                                 "folio: access log fell behind: %llu line%s dropped\n",
                                 (unsigned long long)dropped, dropped == 1 ? "" : "s");
                io_write_all(STDERR_FILENO, note, (size_t)k);
            }
            pthread_mutex_lock(&ring.lock);
            ring.writing = false;
        }
    }
    return NULL;
}

/* Starts the writer, once (pthread_once); without it lines stay queued. */
static void start_writer(void)
{
    clock_cond_init(&ring.wake); /* the gathering window ignores clock steps */
    pthread_t t;
    if (pthread_create(&t, NULL, writer_main, NULL) == 0) {
        pthread_detach(t);
    }
}

void log_write(enum log_format format, const struct log_record *r)
{
    char buf[8192];
    size_t len = log_format_line(format, r, buf, sizeof(buf));
    pthread_once(&writer_once, start_writer);
    pthread_mutex_lock(&ring.lock);
    if (ring.len + len > RING_BYTES) {
        ring.dropped++;
        atomic_fetch_add(&dropped_total, 1);
    } else {
        size_t tail = (ring.head + ring.len) % RING_BYTES;
        size_t first = len < RING_BYTES - tail ? len : RING_BYTES - tail;
        memcpy(ring.data + tail, buf, first);
        memcpy(ring.data, buf + first, len - first);
        bool crossed = ring.len < RING_EARLY_BYTES && ring.len + len >= RING_EARLY_BYTES;
        ring.len += len;
        assert(ring.head < RING_BYTES && ring.len <= RING_BYTES);
        if (ring.idle || crossed) { /* else the writer is gathering or writing: it comes back */
            ring.idle = false;
            pthread_cond_signal(&ring.wake);
        }
    }
    pthread_mutex_unlock(&ring.lock);
}

bool log_flush(unsigned timeout_ms)
{
    struct timespec deadline = clock_deadline(CLOCK_REALTIME, timeout_ms);
    pthread_mutex_lock(&ring.lock);
    ring.flushers++;
    if (ring.len > 0) { /* a line came, so the writer runs: if gathering, it writes now */
        pthread_cond_signal(&ring.wake);
    }
    int rc = 0;
    while ((ring.len > 0 || ring.writing) && rc == 0) {
        rc = pthread_cond_timedwait(&ring.changed, &ring.lock, &deadline);
    }
    bool empty = ring.len == 0 && !ring.writing;
    ring.flushers--;
    pthread_mutex_unlock(&ring.lock);
    return empty;
}

uint64_t log_dropped(void)
{
    return atomic_load(&dropped_total);
}

/* The client's address for the log: the proxy's word when trusted, else the peer's. */
static void client_address(struct MHD_Connection *conn, bool trust_proxy, char *out, size_t size)
{
    const char *forwarded = trust_proxy
        ? MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Forwarded-For") : NULL;
    if (forwarded) {
        /* The rightmost entry is the one our proxy added; the rest is the client's word. */
        const char *last = strrchr(forwarded, ',');
        last = last ? last + 1 : forwarded;
        last += strspn(last, " \t");
        int len = (int)strcspn(last, " \t");
        char text[INET6_ADDRSTRLEN];
        unsigned char bin[sizeof(struct in6_addr)];
        /* An address, or the peer's (as nginx's realip ignores what is none):
         * an empty entry or a word would say nothing true in its field. */
        if (len > 0 && (size_t)len < sizeof(text)) {
            snprintf(text, sizeof(text), "%.*s", len, last);
            if (inet_pton(AF_INET, text, bin) == 1 || inet_pton(AF_INET6, text, bin) == 1) {
                snprintf(out, size, "%s", text);
                return;
            }
        }
    }
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = info ? info->client_addr : NULL;
    snprintf(out, size, "-");
    if (sa && sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out, (socklen_t)size);
    } else if (sa && sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out, (socklen_t)size);
    }
}

/* See log.h. */
void log_request_line(struct MHD_Connection *conn, const struct config *config,
                      const struct log_record *r, bool fields)
{
    char remote[INET6_ADDRSTRLEN + 64];
    client_address(conn, fields && config->trust_proxy, remote, sizeof(remote));
    struct log_record rec = *r;
    rec.remote = remote;
    if (fields) {
        rec.referer = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Referer");
        rec.user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");
    }
    log_write(config->log_format, &rec);
}
