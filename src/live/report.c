/* report — see report.h. */
#include "report.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/clock.h"
#include "base/escape.h"
#include "base/io.h"
#include "check/check_report.h"
#include "sse.h"

/* One distinct fault: its text as it is printed (escaped, cut), its counts. */
struct report_fault {
    char kind[16];
    char message[REPORT_TEXT_MAX];
    char source[REPORT_SOURCE_MAX];
    char device[REPORT_DEVICE_MAX];
    unsigned long line, column;
    uint64_t count, said;  /* seen, and as many as a line has said */
    int64_t last_ms, said_ms;
};

/* A peer's token bucket (report.h: REPORT_RATE). */
struct report_peer {
    char key[64];
    double tokens;
    int64_t last_ms;
};

struct report {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool stopping;
    struct sse_hub *hub;
    FILE *out;
    char key[33];
    struct report_fault *faults; /* REPORT_DISTINCT_MAX of them */
    size_t nfaults;
    uint64_t unkept;             /* reports of faults past the distinct bound */
    struct report_peer peers[REPORT_PEERS];
};

/* What each kind of fault is called on a line. */
static const char *report_label(const char *kind)
{
    return strcmp(kind, "error") == 0 ? "Uncaught" : strcmp(kind, "rejection") == 0 ? "Unhandled rejection:"
                                                                                     : "console.error:";
}

/* Writes 16 random bytes as 32 hex digits into out. */
static void report_make_key(char out[33])
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        /* No getrandom: the secret still differs between runs; the origin
         * check stands either way. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t a = (uint64_t)ts.tv_sec * 1000000007u, b = (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)out;
        memcpy(r, &a, 8);
        memcpy(r + 8, &b, 8);
    }
    for (size_t i = 0; i < sizeof r; i++) {
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    }
}

const char *report_key(const struct report *r)
{
    return r->key;
}

bool report_key_matches(const struct report *r, const char *key)
{
    if (key == NULL || strlen(key) != 32) {
        return false;
    }
    unsigned char diff = 0;
    for (size_t i = 0; i < 32; i++) {
        diff |= (unsigned char)(key[i] ^ r->key[i]);
    }
    return diff == 0;
}

bool report_same_origin(const char *host, const char *origin, const char *fetch_site)
{
    if (fetch_site != NULL && strcmp(fetch_site, "same-origin") != 0) {
        return false;
    }
    if (origin == NULL) {
        return true;
    }
    const char *authority = strncmp(origin, "http://", 7) == 0    ? origin + 7
                            : strncmp(origin, "https://", 8) == 0 ? origin + 8
                                                                  : NULL; /* "null": a sandbox, a file */
    return authority != NULL && host != NULL && *host && strcasecmp(authority, host) == 0;
}

/* The value of hex digit c, or -1. */
static int report_hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

bool report_form_field(const char *form, const char *name, char *out, size_t size)
{
    size_t nlen = strlen(name);
    for (const char *p = form; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, name, nlen) != 0 || p[nlen] != '=') {
            continue;
        }
        size_t len = 0;
        bool cut = false;
        for (const char *v = p + nlen + 1; *v && *v != '&'; v++) {
            int c = (unsigned char)*v;
            if (c == '%') {
                int hi = report_hex(v[1]), lo = hi < 0 ? -1 : report_hex(v[2]);
                if (lo < 0) {
                    return false;
                }
                c = hi * 16 + lo;
                v += 2;
            } else if (c == '+') {
                c = ' ';
            }
            if (len + 1 < size && !cut) {
                out[len++] = (char)c;
            } else {
                cut = true;
            }
        }
        /* A cut never leaves half a UTF-8 sequence behind. */
        while (cut && len > 0 && ((unsigned char)out[len - 1] & 0xC0) == 0x80) {
            len--;
        }
        if (cut && len > 0 && ((unsigned char)out[len - 1] & 0xC0) == 0xC0) {
            len--;
        }
        out[len] = '\0';
        return true;
    }
    return false;
}

/* A fault as the `fault` event's JSON object, malloc'd; NULL out of memory. */
static char *report_fault_json(const struct report_fault *f)
{
    struct io_text text;
    FILE *out = io_text_open(&text);
    if (out == NULL) {
        return NULL;
    }
    fputs("{\"kind\":", out);
    escape_json_fputs(f->kind, out);
    fputs(",\"message\":", out);
    escape_json_fputs(f->message, out);
    fputs(",\"source\":", out);
    escape_json_fputs(f->source, out);
    fprintf(out, ",\"line\":%lu,\"column\":%lu,\"device\":", f->line, f->column);
    escape_json_fputs(f->device, out);
    fprintf(out, ",\"count\":%llu}", (unsigned long long)f->count);
    return io_text_close(&text, out);
}

/* Sends f to the browsers. Called without r->mu: the hub has a lock of its own. */
static void report_send_fault(struct report *r, char *json)
{
    if (json != NULL) {
        sse_hub_broadcast(r->hub, "fault", json);
    }
    free(json);
}

/* The line of a fault: where and on what, after its message. */
static void report_print(struct report *r, const struct report_fault *f, const char *lead)
{
    fprintf(r->out, "folio: browser: %s%s %s (%s:%lu:%lu; %s)\n", lead, report_label(f->kind), f->message,
            f->source[0] ? f->source : "(no source)", f->line, f->column, f->device);
    fflush(r->out);
}

/* A field into out escaped by the log's rule and cut to size ("..." at the
 * cut); "" when absent. */
static void report_text(const char *form, const char *name, char *out, size_t size)
{
    char raw[4 * REPORT_TEXT_MAX];
    if (!report_form_field(form, name, raw, sizeof(raw))) {
        raw[0] = '\0';
    }
    escape_text(raw, out, size);
}

/* A number field, 0 when absent or not one. */
static unsigned long report_number(const char *form, const char *name)
{
    char text[24];
    if (!report_form_field(form, name, text, sizeof(text)) || text[0] < '0' || text[0] > '9') {
        return 0;
    }
    unsigned long n = strtoul(text, NULL, 10);
    return n > 100000000ul ? 100000000ul : n;
}

/* The fault of @form, counted: printed and sent when it is new. Lock held;
 * *json gets the event to send after unlocking. 400 when it is no fault. */
static unsigned report_fault(struct report *r, const char *form, int64_t now_ms, char **json)
{
    struct report_fault f = {0};
    report_text(form, "kind", f.kind, sizeof(f.kind));
    if (strcmp(f.kind, "error") != 0 && strcmp(f.kind, "rejection") != 0 && strcmp(f.kind, "console") != 0) {
        return 400;
    }
    report_text(form, "message", f.message, sizeof(f.message));
    report_text(form, "source", f.source, sizeof(f.source));
    report_text(form, "device", f.device, sizeof(f.device));
    f.line = report_number(form, "line");
    f.column = report_number(form, "column");
    unsigned long count = report_number(form, "count");
    f.count = count ? count : 1;
    for (size_t i = 0; i < r->nfaults; i++) {
        struct report_fault *k = &r->faults[i];
        if (!strcmp(k->kind, f.kind) && !strcmp(k->message, f.message) && !strcmp(k->source, f.source) &&
            k->line == f.line && k->column == f.column) {
            k->count += f.count;
            k->last_ms = now_ms;
            return 204; /* the thread says it */
        }
    }
    if (r->nfaults == REPORT_DISTINCT_MAX) {
        if (r->unkept++ == 0) {
            fprintf(r->out, "folio: browser: more than %d distinct errors; the rest are not said\n",
                    REPORT_DISTINCT_MAX);
        }
        return 204;
    }
    f.said = 1; /* repeats the client counted before sending are the thread's to say */
    f.last_ms = f.said_ms = now_ms;
    r->faults[r->nfaults++] = f;
    report_print(r, &f, "");
    *json = report_fault_json(&f);
    return 204;
}

/* True when every byte of s is one a place or a tab's id is written with
 * (reload.js: indices, encodeURIComponent'd ids, a tag, a fraction). */
static bool report_place_text(const char *s, bool id)
{
    static const char extra[] = "%._~!*'()|/:,-";
    for (const char *p = s; *p; p++) {
        bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
        if (!alnum && (id || strchr(extra, *p) == NULL)) {
            return false;
        }
    }
    return *s != '\0';
}

/* The place of @form, passed on to every browser. 400 when it is no place. */
static unsigned report_place(struct report *r, const char *form)
{
    char from[40], place[REPORT_PLACE_MAX + 2];
    if (!report_form_field(form, "from", from, sizeof(from)) || strlen(from) > 32 || !report_place_text(from, true) ||
        !report_form_field(form, "place", place, sizeof(place)) || strlen(place) > REPORT_PLACE_MAX ||
        !report_place_text(place, false)) {
        return 400;
    }
    char data[sizeof(from) + sizeof(place) + 2];
    snprintf(data, sizeof(data), "%s %s", from, place);
    sse_hub_broadcast(r->hub, "follow", data);
    return 204;
}

/* Whether @peer may send one more report at @now_ms (its bucket, made or
 * taken from the least recent peer). Lock held. */
static bool report_allowed(struct report *r, const char *peer, int64_t now_ms)
{
    struct report_peer *p = NULL, *oldest = &r->peers[0];
    for (size_t i = 0; i < REPORT_PEERS && p == NULL; i++) {
        if (strcmp(r->peers[i].key, peer) == 0) {
            p = &r->peers[i];
        } else if (r->peers[i].last_ms < oldest->last_ms) {
            oldest = &r->peers[i];
        }
    }
    if (p == NULL) {
        p = oldest;
        snprintf(p->key, sizeof(p->key), "%s", peer);
        p->tokens = 2.0 * REPORT_RATE;
        p->last_ms = now_ms;
    }
    double refill = (double)(now_ms - p->last_ms) * REPORT_RATE / 1000.0;
    p->tokens = p->tokens + refill > 2.0 * REPORT_RATE ? 2.0 * REPORT_RATE : p->tokens + refill;
    p->last_ms = now_ms;
    if (p->tokens < 1.0) {
        return false;
    }
    p->tokens -= 1.0;
    return true;
}

unsigned report_take(struct report *r, const char *peer, const char *form, int64_t now_ms)
{
    char kind[8];
    if (!report_form_field(form, "kind", kind, sizeof(kind))) {
        return 400;
    }
    pthread_mutex_lock(&r->mu);
    bool allowed = report_allowed(r, peer, now_ms);
    pthread_mutex_unlock(&r->mu);
    if (!allowed) {
        return 429;
    }
    if (strcmp(kind, "place") == 0) {
        return report_place(r, form);
    }
    char *json = NULL;
    pthread_mutex_lock(&r->mu);
    unsigned status = report_fault(r, form, now_ms, &json);
    pthread_mutex_unlock(&r->mu);
    report_send_fault(r, json);
    return status;
}

/* Says the repeats that paused (or went on long) by @now_ms; all of them
 * when @all. Each said one's event is sent. */
static void report_say_repeats(struct report *r, int64_t now_ms, bool all)
{
    char *events[REPORT_DISTINCT_MAX];
    size_t n = 0;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nfaults; i++) {
        struct report_fault *f = &r->faults[i];
        if (f->count > f->said &&
            (all || now_ms - f->last_ms >= REPORT_QUIET_MS || now_ms - f->said_ms >= REPORT_AGAIN_MS)) {
            char lead[64];
            snprintf(lead, sizeof(lead), "the same again, %llu times in all: ", (unsigned long long)f->count);
            report_print(r, f, lead);
            f->said = f->count;
            f->said_ms = now_ms;
            events[n++] = report_fault_json(f);
        }
    }
    pthread_mutex_unlock(&r->mu);
    for (size_t i = 0; i < n; i++) {
        report_send_fault(r, events[i]);
    }
}

/* The thread: a look at the repeats every quarter of a second. */
static void *report_thread(void *arg)
{
    struct report *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stopping) {
        struct timespec due = clock_deadline(CLOCK_MONOTONIC, 250);
        if (pthread_cond_timedwait(&r->cv, &r->mu, &due) != ETIMEDOUT || r->stopping) {
            continue;
        }
        pthread_mutex_unlock(&r->mu);
        report_say_repeats(r, clock_now_ms(), false);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

struct report *report_create(struct sse_hub *hub, FILE *out)
{
    struct report *r = calloc(1, sizeof(*r));
    struct report_fault *faults = calloc(REPORT_DISTINCT_MAX, sizeof(*faults));
    if (r == NULL || faults == NULL) {
        free(r);
        free(faults);
        return NULL;
    }
    r->hub = hub;
    r->out = out;
    r->faults = faults;
    report_make_key(r->key);
    pthread_mutex_init(&r->mu, NULL);
    clock_cond_init(&r->cv);
    if (pthread_create(&r->thread, NULL, report_thread, r) != 0) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
        free(faults);
        free(r);
        return NULL;
    }
    return r;
}

void report_destroy(struct report *r)
{
    if (r == NULL) {
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->stopping = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    report_say_repeats(r, clock_now_ms(), true);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r->faults);
    free(r);
}

char *report_faults_json(struct report *r)
{
    struct io_text text;
    FILE *out = io_text_open(&text);
    if (out == NULL) {
        return NULL;
    }
    fputc('[', out);
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nfaults; i++) {
        char *one = report_fault_json(&r->faults[i]);
        fprintf(out, "%s%s", i ? "," : "", one ? one : "null");
        free(one);
    }
    pthread_mutex_unlock(&r->mu);
    fputc(']', out);
    return io_text_close(&text, out);
}
