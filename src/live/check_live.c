/* check_live — see check_live.h. */
#include "check_live.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "check/check.h"
#include "base/escape.h"
#include "base/io.h"
#include "check/check_report.h"
#include "site/routes.h"
#include "sse.h"

/* What the browsers were last told about one file: a non-empty list, and
 * its problems' keys (check_live_keys), to say what a save broke and fixed. */
struct check_live_entry {
    char *url, *file, *json, *keys;
};

/* What one batch broke and fixed, for its two lines on stderr. */
struct check_live_says {
    FILE *broke, *fixed;
    size_t nbroke, nfixed;
};
#define CHECK_LIVE_SAY_MAX 3 /* problems named on a line; the rest are counted */

/* One server's worth of it: the watcher thread is its only writer, but a
 * process may run several (the unit tests do), hence the lock. */
static struct {
    pthread_mutex_t lock;
    const struct sse_hub *hub;
    struct check_live_entry *entries;
    size_t n;
} check_live_sent = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* True for the files a live check reads: HTML and CSS. */
static bool check_live_document(const char *url)
{
    size_t n = strlen(url);
    return (n > 4 && strcasecmp(url + n - 4, ".css") == 0) ||
           (n > 5 && strcasecmp(url + n - 5, ".html") == 0) || (n > 4 && strcasecmp(url + n - 4, ".htm") == 0);
}

/* The URLs of the batch's HTML and CSS files into @focus (malloc'd each);
 * *pages when anything else changed, which may break a page. */
static size_t check_live_focus(const struct routes *r, const struct watch_batch *b, char **focus,
                               bool *pages)
{
    size_t count = 0;
    *pages = b->overflow;
    for (size_t i = 0; i < b->n; i++) {
        const struct watch_change *c = &b->changes[i];
        char *url = NULL;
        if (c->id < 0 || (size_t)c->id >= r->count ||
            asprintf(&url, "%s%s", r->items[c->id].prefix, c->relpath) < 0) {
            continue;
        }
        if (check_live_document(url)) {
            *pages |= r->items[c->id].is_fragments; /* a page may load it, or no longer can */
            focus[count++] = url;
        } else {
            *pages = true;
            free(url);
        }
    }
    return count;
}

/* A check event must never be what closes a stream (sse.h: a client whose
 * queue passes SSE_CLIENT_MAX_QUEUE is dropped, and with it that save's
 * reload): each file lists at most CHECK_LIVE_FILE_MAX problems and says how
 * many more ("more"), and an event holds files up to CHECK_LIVE_EVENT_MAX
 * bytes, then says how many it left out ("more_files"; they are sent with a
 * later save). `folio check` lists every one. */
#define CHECK_LIVE_FILE_MAX 40
#define CHECK_LIVE_START_SHOWN 10 /* errors listed at start; the rest are counted */
#define CHECK_LIVE_EVENT_MAX (SSE_CLIENT_MAX_QUEUE / 4)

/* The errors of the file at @url in @rep as a JSON array, the first
 * CHECK_LIVE_FILE_MAX of them, then `,"more":N` for the rest; malloc'd
 * ("[]" when none); *file gets its name when there are some. The text is
 * what follows "problems": in the event, and what is remembered as sent. */
static char *check_live_errors(const struct check_report *rep, const char *url, const char **file)
{
    struct io_text text;
    FILE *out = io_text_open(&text);
    if (out == NULL) {
        return NULL;
    }
    fputc('[', out);
    size_t k = 0;
    for (size_t i = 0; i < rep->count; i++) {
        const struct check_problem *p = &rep->problems[i];
        if (p->severity == CHECK_ERROR && strcmp(p->url, url) == 0) {
            if (k < CHECK_LIVE_FILE_MAX) {
                fputs(k ? "," : "", out);
                check_print_problem_json(p, out);
            }
            k++;
            *file = p->file;
        }
    }
    fputc(']', out);
    if (k > CHECK_LIVE_FILE_MAX) {
        fprintf(out, ",\"more\":%zu", k - CHECK_LIVE_FILE_MAX);
    }
    return io_text_close(&text, out);
}

/* The entry last sent for @url, or NULL. */
static struct check_live_entry *check_live_find(const char *url)
{
    for (size_t i = 0; i < check_live_sent.n; i++) {
        if (strcmp(check_live_sent.entries[i].url, url) == 0) {
            return &check_live_sent.entries[i];
        }
    }
    return NULL;
}

/* Forgets everything sent (to another hub: another server, or a test's). */
static void check_live_forget(const struct sse_hub *hub)
{
    for (size_t i = 0; i < check_live_sent.n; i++) {
        free(check_live_sent.entries[i].url);
        free(check_live_sent.entries[i].file);
        free(check_live_sent.entries[i].json);
        free(check_live_sent.entries[i].keys);
    }
    free(check_live_sent.entries);
    check_live_sent.entries = NULL;
    check_live_sent.n = 0;
    check_live_sent.hub = hub;
}

/* Records @json and @keys (owned) as what was sent for @url; "[]" removes the entry. */
static void check_live_remember(const char *url, const char *file, char *json, char *keys)
{
    struct check_live_entry *e = check_live_find(url);
    if (strcmp(json, "[]") == 0) {
        if (e != NULL) {
            free(e->url);
            free(e->file);
            free(e->json);
            free(e->keys);
            *e = check_live_sent.entries[--check_live_sent.n];
        }
        free(json);
        free(keys);
        return;
    }
    if (e == NULL) {
        struct check_live_entry *grown =
            realloc(check_live_sent.entries, (check_live_sent.n + 1) * sizeof(*grown));
        char *u = strdup(url), *f = strdup(file);
        if (grown == NULL || u == NULL || f == NULL) {
            check_live_sent.entries = grown ? grown : check_live_sent.entries;
            free(u);
            free(f);
            free(json);
            free(keys);
            return;
        }
        check_live_sent.entries = grown;
        e = &grown[check_live_sent.n++];
        *e = (struct check_live_entry){u, f, NULL, NULL};
    }
    free(e->json);
    free(e->keys);
    e->json = json;
    e->keys = keys;
}

/* The problems of the file at @url in @rep that a terminal hears of (an
 * anchor only a script may make is the browser's to settle), one key a line
 * ("message\x1freference\n"), malloc'd; "" when none. */
static char *check_live_keys(const struct check_report *rep, const char *url)
{
    struct io_text text;
    FILE *out = io_text_open(&text);
    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < rep->count; i++) {
        const struct check_problem *p = &rep->problems[i];
        if (p->severity == CHECK_ERROR && p->code != CHECK_CODE_UNVERIFIED_ANCHOR && strcmp(p->url, url) == 0) {
            fprintf(out, "%s\x1f%s\n", p->message, p->reference);
        }
    }
    return io_text_close(&text, out);
}

/* True when @keys (check_live_keys) holds the line @key (its newline included). */
static bool check_live_has_key(const char *keys, const char *key, size_t len)
{
    for (const char *k = keys; k && *k; k = strchr(k, '\n') + 1) {
        if (strncmp(k, key, len) == 0) {
            return true;
        }
    }
    return false;
}

/* Names on @out, past the first CHECK_LIVE_SAY_MAX, one problem: @file and
 * the key's message, escaped (the article's bytes reach a terminal). */
static void check_live_say(FILE *out, size_t *n, const char *file, const char *key, size_t len)
{
    if ((*n)++ >= CHECK_LIVE_SAY_MAX) {
        return;
    }
    char text[512];
    snprintf(text, sizeof(text), "%.*s", (int)(strcspn(key, "\x1f") < len ? strcspn(key, "\x1f") : len), key);
    fputs(*n > 1 ? "; " : " ", out);
    escape_fputs(file, out);
    fputs(": ", out);
    escape_fputs(text, out);
}

/* Adds to @says what going from @before to @after (check_live_keys; NULL:
 * none) broke and fixed in @file. */
static void check_live_compare(struct check_live_says *says, const char *file, const char *before, const char *after)
{
    for (const char *k = after; says->broke && k && *k; k = strchr(k, '\n') + 1) {
        size_t len = strcspn(k, "\n") + 1;
        if (!check_live_has_key(before, k, len)) {
            check_live_say(says->broke, &says->nbroke, file, k, len);
        }
    }
    for (const char *k = before; says->fixed && k && *k; k = strchr(k, '\n') + 1) {
        size_t len = strcspn(k, "\n") + 1;
        if (!check_live_has_key(after, k, len)) {
            check_live_say(says->fixed, &says->nfixed, file, k, len);
        }
    }
}

/* True when the file at @url is a page: HTML outside the fragments route. */
static bool check_live_page(const struct routes *r, const char *url)
{
    bool bare;
    const struct route *route = routes_match(r, url, &bare);
    size_t n = strlen(url);
    return route && !route->is_fragments && n > 4 && strcasecmp(url + n - 4, ".css") != 0 &&
           check_live_document(url);
}

/* Adds @url to the candidate list unless it is there already. */
static void check_live_candidate(const char **list, size_t *n, const char *url)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(list[i], url) == 0) {
            return;
        }
    }
    list[(*n)++] = url;
}

/* Writes the files whose errors differ from what was sent into @out as the
 * event's "files" list, and remembers them; those past the event's budget
 * are counted in *left_out, not remembered. Returns how many. Lock held. */
static size_t check_live_diff(const struct routes *r, const struct check_report *rep,
                              char **focus, size_t nfocus, bool pages, FILE *out, size_t *left_out,
                              struct check_live_says *says)
{
    size_t cap = nfocus + rep->count + check_live_sent.n, n = 0, changed = 0, used = 0;
    const char **urls = calloc(cap ? cap : 1, sizeof(*urls));
    if (urls == NULL) {
        return 0;
    }
    for (size_t i = 0; i < nfocus; i++) {
        check_live_candidate(urls, &n, focus[i]);
    }
    for (size_t i = 0; i < rep->count; i++) {
        if (rep->problems[i].severity == CHECK_ERROR) {
            check_live_candidate(urls, &n, rep->problems[i].url);
        }
    }
    for (size_t i = 0; pages && i < check_live_sent.n; i++) {
        if (check_live_page(r, check_live_sent.entries[i].url)) {
            check_live_candidate(urls, &n, check_live_sent.entries[i].url);
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct check_live_entry *e = check_live_find(urls[i]);
        const char *file = e ? e->file : "";
        char *now = check_live_errors(rep, urls[i], &file);
        if (now == NULL || strcmp(now, e ? e->json : "[]") == 0) {
            free(now);
            continue;
        }
        char *keys = check_live_keys(rep, urls[i]);
        check_live_compare(says, file, e ? e->keys : NULL, keys);
        used += strlen(now) + strlen(file) + strlen(urls[i]) + 40;
        if (changed > 0 && used > CHECK_LIVE_EVENT_MAX) {
            (*left_out)++;
            free(now);
            free(keys);
            continue;
        }
        fputs(changed++ ? "," : "", out);
        fputs("{\"file\":", out);
        escape_json_fputs(file, out);
        fputs(",\"url\":", out);
        escape_json_fputs(urls[i], out);
        fprintf(out, ",\"problems\":%s}", now);
        char *url = strdup(urls[i]), *name = strdup(file); /* urls[i] may be an entry's own */
        if (url != NULL && name != NULL) {
            check_live_remember(url, name, now, keys);
        } else {
            free(now);
            free(keys);
        }
        free(url);
        free(name);
    }
    free(urls);
    return changed;
}

/* The `check` event's data for @rep, or NULL when what the browsers know
 * has not changed (or memory ran out); remembers what it says as told. */
static char *check_live_diff_event(const struct routes *r, const struct check_report *rep, char **focus,
                                   size_t nfocus, bool pages, const struct sse_hub *hub,
                                   struct check_live_says *says)
{
    struct io_text text;
    FILE *out = io_text_open(&text);
    if (out == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&check_live_sent.lock);
    if (check_live_sent.hub != hub) {
        check_live_forget(hub);
    }
    fputs("{\"server\":", out); /* the hello's id: a client drops what another server said */
    escape_json_fputs(sse_hub_instance(hub), out);
    fputs(",\"files\":[", out);
    size_t left_out = 0;
    size_t changed = check_live_diff(r, rep, focus, nfocus, pages, out, &left_out, says);
    fputc(']', out);
    if (left_out) {
        fprintf(out, ",\"more_files\":%zu", left_out);
    }
    fputc('}', out);
    pthread_mutex_unlock(&check_live_sent.lock);
    char *event = io_text_close(&text, out);
    if (changed == 0) {
        free(event);
        return NULL;
    }
    return event;
}

/* check_live_event, adding to @says what the batch broke and fixed. */
static char *check_live_run(const struct routes *r, const struct watch_batch *b, const struct sse_hub *hub,
                            struct check_live_says *says)
{
    char **focus = calloc(b->n + 1, sizeof(*focus));
    bool pages = false;
    size_t nfocus = focus ? check_live_focus(r, b, focus, &pages) : 0;
    char *event = NULL;
    if (nfocus > 0 || pages) {
        /* strict: an id no source holds is sent (code "unverified-anchor") even where the page
         * runs scripts; the browser, in the rendered page, keeps it only if the id is not there. */
        struct check_options o = {.focus = (const char *const *)focus, .nfocus = nfocus, .focus_pages = pages,
                                  .strict = true};
        char err[256];
        struct check_report *rep = check_run(r, &o, err, sizeof(err));
        if (rep != NULL) {
            event = check_live_diff_event(r, rep, focus, nfocus, pages, hub, says);
        }
        check_report_free(rep);
    }
    for (size_t i = 0; i < nfocus; i++) {
        free(focus[i]);
    }
    free(focus);
    return event;
}

char *check_live_event(const struct routes *r, const struct watch_batch *b, const struct sse_hub *hub)
{
    struct check_live_says quiet = {0};
    return check_live_run(r, b, hub, &quiet);
}

/* Prints one of a batch's two lines: what it @did ("broke", "fixed"), how
 * many, the first few of @text, how many more. */
static void check_live_print_says(FILE *out, const char *did, size_t n, const char *text)
{
    if (n == 0 || text == NULL) {
        return;
    }
    fprintf(out, "folio: check: this save %s %zu:%s", did, n, text);
    if (n > CHECK_LIVE_SAY_MAX) {
        fprintf(out, "; and %zu more (folio check lists them)", n - CHECK_LIVE_SAY_MAX);
    }
    fputc('\n', out);
}

void check_live_batch(const struct routes *r, const struct watch_batch *b, struct sse_hub *hub, FILE *out)
{
    struct io_text broke, fixed;
    struct check_live_says says = {0};
    if (out != NULL) {
        says.broke = io_text_open(&broke);
        says.fixed = io_text_open(&fixed);
    }
    char *event = check_live_run(r, b, hub, &says);
    if (event != NULL) {
        sse_hub_broadcast(hub, "check", event);
    }
    free(event);
    char *broke_text = says.broke ? io_text_close(&broke, says.broke) : NULL;
    char *fixed_text = says.fixed ? io_text_close(&fixed, says.fixed) : NULL;
    if (broke_text != NULL) {
        check_live_print_says(out, "broke", says.nbroke, broke_text);
    }
    if (fixed_text != NULL) {
        check_live_print_says(out, "fixed", says.nfixed, fixed_text);
    }
    free(broke_text);
    free(fixed_text);
}

/* Prints @rep's errors, the first CHECK_LIVE_START_SHOWN, then how many more,
 * and its summary, as `folio check` does (escaped by the same rule). */
static void check_live_print_start(const struct check_report *rep, FILE *out)
{
    size_t shown = 0;
    for (size_t i = 0; i < rep->count; i++) {
        const struct check_problem *p = &rep->problems[i];
        if (p->severity != CHECK_ERROR || shown++ >= CHECK_LIVE_START_SHOWN) {
            continue;
        }
        fputs("folio: check: ", out);
        escape_fputs(p->file, out);
        fprintf(out, ":%u:%u: error: ", p->line, p->column);
        escape_fputs(p->message, out);
        fputc('\n', out);
    }
    if (shown > CHECK_LIVE_START_SHOWN) {
        fprintf(out, "folio: check: and %zu more errors (folio check lists them all)\n", shown - CHECK_LIVE_START_SHOWN);
    }
    char summary[512];
    check_summary(rep, summary, sizeof(summary));
    fprintf(out, "%s\n", summary); /* "folio check: ..." */
}

void check_live_start(const struct routes *r, const struct sse_hub *hub, FILE *out)
{
    char err[256];
    struct check_options plain = {0};
    struct check_report *rep = check_run(r, &plain, err, sizeof(err));
    if (rep == NULL) {
        fprintf(out, "folio: check: %s\n", err);
        return;
    }
    check_live_print_start(rep, out);
    check_report_free(rep);
    /* What the browsers are told is strict, as after a save (check_live_event). */
    struct check_options strict = {.strict = true};
    rep = check_run(r, &strict, err, sizeof(err));
    if (rep != NULL) {
        struct check_live_says quiet = {0};
        free(check_live_diff_event(r, rep, NULL, 0, true, hub, &quiet));
    }
    check_report_free(rep);
}

char *check_live_state(const struct sse_hub *hub)
{
    struct io_text text;
    FILE *out = io_text_open(&text);
    if (out == NULL) {
        return NULL;
    }
    fputs("{\"full\":true,\"server\":", out);
    escape_json_fputs(sse_hub_instance(hub), out);
    fputs(",\"files\":[", out);
    pthread_mutex_lock(&check_live_sent.lock);
    for (size_t i = 0; check_live_sent.hub == hub && i < check_live_sent.n; i++) {
        const struct check_live_entry *e = &check_live_sent.entries[i];
        fputs(i ? ",{\"file\":" : "{\"file\":", out);
        escape_json_fputs(e->file, out);
        fputs(",\"url\":", out);
        escape_json_fputs(e->url, out);
        fprintf(out, ",\"problems\":%s}", e->json);
    }
    pthread_mutex_unlock(&check_live_sent.lock);
    fputs("]}", out);
    return io_text_close(&text, out);
}
