/* mime: the extension table decides web types (libmagic calls CSS text/plain),
 * libmagic only what the table does not know. */
#include "cmocka_prelude.h"

#include <fcntl.h>
#include <magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "serve/mime.h"

static const struct {
    const char *path;
    const char *type; /* NULL: not in the table */
    bool compressible;
} cases[] = {
    {"/index.html", "text/html; charset=utf-8", true},
    {"/INDEX.HTM", "text/html; charset=utf-8", true},
    {"/style.css", "text/css; charset=utf-8", true},
    {"/app.js", "text/javascript; charset=utf-8", true},
    {"/mod.mjs", "text/javascript; charset=utf-8", true},
    {"/data.json", "application/json", true},
    {"/a/fig.svg", "image/svg+xml", true},
    {"/x.wasm", "application/wasm", true},
    {"/f.woff2", "font/woff2", false},
    {"/p.png", "image/png", false},
    {"/p.JPEG", "image/jpeg", false},
    {"/p.jpg", "image/jpeg", false},
    {"/p.gif", "image/gif", false},
    {"/p.webp", "image/webp", false},
    {"/p.avif", "image/avif", false},
    {"/s.wav", "audio/wav", false},
    {"/assets/read aloud, intro.mp3", "audio/mpeg", false},
    {"/v.mp4", "video/mp4", false},
    {"/v.webm", "video/webm", false},
    {"/doc.pdf", "application/pdf", false},
    {"/refs.bib", "text/x-bibtex; charset=utf-8", true},
    {"/notes.txt", "text/plain; charset=utf-8", true},
    {"/feed.xml", "application/xml", true},
    {"/data.csv", "text/csv; charset=utf-8", true},
    {"/noext", NULL, false},
    {"/.hidden", NULL, false},
    {"/dir.d/noext", NULL, false},
    {"/x.unknownext", NULL, false},
};

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct mime_type *t = mime_from_extension(cases[i].path);
        if (!cases[i].type) {
            if (t) {
                fail_msg("%s: want no table entry, got %s", cases[i].path, t->name);
            }
            continue;
        }
        if (!t) {
            fail_msg("%s: no table entry", cases[i].path);
        }
        assert_string_equal(t->name, cases[i].type);
        assert_int_equal(t->compressible, cases[i].compressible);
    }
}

static char *sniff_bytes(const void *bytes, size_t len)
{
    char path[] = "/tmp/folio-mime-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    char *type = mime_sniff(fd);
    close(fd);
    unlink(path);
    return type;
}

/* ---- the gate: a sniff held inside libmagic, as a slow input holds it ---- */

/* How long a wait for something that must happen may take before the test
 * fails: a bound on a failure, not a window the result depends on. */
#define GATE_WAIT_MS 10000

static struct {
    pthread_mutex_t lock;
    pthread_cond_t moved;
    bool held;     /* a sniff of bytes beginning "HOLD" is inside the gate */
    bool released; /* the test let it go */
    bool other_done; /* the other thread's sniff returned */
    size_t length;    /* what the last call was shown: its bytes */
    size_t regex_max; /* and how far its cookie lets a regular expression scan */
    bool fail_opens;  /* magic_open fails, as without memory */
    bool open_failed; /* and it did */
} gate = {.lock = PTHREAD_MUTEX_INITIALIZER, .moved = PTHREAD_COND_INITIALIZER};

const char *__real_magic_buffer(magic_t cookie, const void *buffer, size_t length);
const char *__wrap_magic_buffer(magic_t cookie, const void *buffer, size_t length);
magic_t __real_magic_open(int flags);
magic_t __wrap_magic_open(int flags);

/* libmagic's magic_open, wrapped: NULL while gate.fail_opens is set. */
magic_t __wrap_magic_open(int flags)
{
    pthread_mutex_lock(&gate.lock);
    bool fail = gate.fail_opens;
    gate.open_failed = gate.open_failed || fail;
    pthread_cond_broadcast(&gate.moved);
    pthread_mutex_unlock(&gate.lock);
    return fail ? NULL : __real_magic_open(flags);
}

/* libmagic's magic_buffer, wrapped (-Wl,--wrap, tests/meson.build): bytes
 * that begin "HOLD" wait inside the call until the test releases them, so
 * whatever mime.c holds around the call stays held meanwhile. */
const char *__wrap_magic_buffer(magic_t cookie, const void *buffer, size_t length)
{
    pthread_mutex_lock(&gate.lock);
    gate.length = length;
    if (magic_getparam(cookie, MAGIC_PARAM_REGEX_MAX, &gate.regex_max) != 0) {
        gate.regex_max = SIZE_MAX; /* no bound known */
    }
    pthread_mutex_unlock(&gate.lock);
    if (length >= 4 && memcmp(buffer, "HOLD", 4) == 0) {
        struct timespec until = clock_deadline(CLOCK_REALTIME, GATE_WAIT_MS);
        pthread_mutex_lock(&gate.lock);
        gate.held = true;
        pthread_cond_broadcast(&gate.moved);
        while (!gate.released && pthread_cond_timedwait(&gate.moved, &gate.lock, &until) == 0) {
        }
        pthread_mutex_unlock(&gate.lock);
    }
    return __real_magic_buffer(cookie, buffer, length);
}

/* Waits (GATE_WAIT_MS at most) until *flag is true; whether it is. */
static bool gate_await(const bool *flag)
{
    struct timespec until = clock_deadline(CLOCK_REALTIME, GATE_WAIT_MS);
    pthread_mutex_lock(&gate.lock);
    while (!*flag && pthread_cond_timedwait(&gate.moved, &gate.lock, &until) == 0) {
    }
    bool seen = *flag;
    pthread_mutex_unlock(&gate.lock);
    return seen;
}

/* Closes the gate and forgets what it saw, for the next test. */
static void gate_reset(void)
{
    pthread_mutex_lock(&gate.lock);
    gate.held = gate.released = gate.other_done = false;
    gate.fail_opens = gate.open_failed = false;
    pthread_mutex_unlock(&gate.lock);
}

/* Sets *flag and says so to the waiters. */
static void gate_mark(bool *flag)
{
    pthread_mutex_lock(&gate.lock);
    *flag = true;
    pthread_cond_broadcast(&gate.moved);
    pthread_mutex_unlock(&gate.lock);
}

/* A thread's sniff of the bytes it is handed (a NUL-terminated text). */
static void *sniff_held(void *text)
{
    return sniff_bytes(text, strlen(text));
}

static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
                                    'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0};

/* The other thread's sniff: a PNG, then says it returned. */
static void *sniff_other(void *unused)
{
    char *type = sniff_bytes(png, sizeof(png));
    gate_mark(&gate.other_done);
    return type;
}

/* Holds one sniff inside libmagic, starts another of a PNG, waits (GATE_WAIT_MS
 * at most) for *awaited, then lets both finish; whether *awaited came true. */
static bool hold_one_sniff_and_start_another(const bool *awaited, char **held_type, char **other_type)
{
    pthread_t held, other;
    assert_int_equal(pthread_create(&held, NULL, sniff_held, "HOLD these words\n"), 0);
    assert_true(gate_await(&gate.held));
    assert_int_equal(pthread_create(&other, NULL, sniff_other, NULL), 0);
    bool seen = gate_await(awaited);
    gate_mark(&gate.released);
    pthread_join(held, (void **)held_type);
    pthread_join(other, (void **)other_type);
    return seen;
}

/* One sniff held inside libmagic (a file it is slow on) holds no other
 * thread's sniff of another file: each has a cookie of its own. */
static void test_a_held_sniff_holds_no_other(void **state)
{
    gate_reset();
    assert_true(mime_init());
    char *held_type, *other_type;
    bool other_done = hold_one_sniff_and_start_another(&gate.other_done, &held_type, &other_type);
    assert_true(other_done); /* returned while the first was still inside libmagic */
    assert_string_equal(other_type, "image/png");
    assert_string_equal(held_type, "text/plain; charset=utf-8");
    free(held_type);
    free(other_type);
    mime_finish();
}

/* When no more cookies can be opened (no memory), a sniff waits for one in
 * use rather than answering without libmagic. */
static void test_a_sniff_waits_when_no_cookie_can_be_opened(void **state)
{
    gate_reset();
    assert_true(mime_init());
    pthread_mutex_lock(&gate.lock);
    gate.fail_opens = true; /* the first cookie is open already */
    pthread_mutex_unlock(&gate.lock);
    char *held_type, *other_type;
    bool open_failed = hold_one_sniff_and_start_another(&gate.open_failed, &held_type, &other_type);
    assert_true(open_failed);
    assert_string_equal(other_type, "image/png"); /* libmagic's answer, once the cookie came back */
    free(held_type);
    free(other_type);
    gate_reset();
    mime_finish();
}

/* A sniff's worst case is bounded by what libmagic is let do: of the 16 KiB
 * it is shown, its regular expressions (some quadratic on a run of newlines,
 * bench/README.md) scan 4 KiB at most. The type of such a file is kept. */
static void test_a_sniff_is_bounded(void **state)
{
    assert_true(mime_init());
    size_t len = 64 * 1024;
    char *newlines = malloc(len);
    assert_non_null(newlines);
    memset(newlines, '\n', len);
    char *t = sniff_bytes(newlines, len);
    assert_string_equal(t, "text/plain; charset=utf-8");
    assert_true(gate.length <= 16 * 1024);
    assert_true(gate.regex_max <= 4096);
    free(t);
    free(newlines);
    mime_finish();
}

static void test_sniff(void **state)
{
    assert_true(mime_init());
    char *t = sniff_bytes(png, sizeof(png));
    assert_string_equal(t, "image/png");
    free(t);
    t = sniff_bytes("just some words\n", 16);
    assert_string_equal(t, "text/plain; charset=utf-8"); /* us-ascii widened */
    assert_true(mime_is_compressible(t));
    free(t);
    t = sniff_bytes("", 0);
    assert_string_equal(t, "application/octet-stream"); /* never inode/x-empty */
    free(t);
    static const unsigned char pdf[] = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n";
    t = sniff_bytes(pdf, sizeof(pdf) - 1);
    assert_string_equal(t, "application/pdf");
    assert_false(mime_is_compressible(t));
    free(t);
    mime_finish();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_a_held_sniff_holds_no_other),
        cmocka_unit_test(test_a_sniff_waits_when_no_cookie_can_be_opened),
        cmocka_unit_test(test_a_sniff_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
