/* Helpers shared by the live-reload unit tests (watch, sse, livereload):
 * clocks, files, HTTP streams over real sockets, and a watch run on a fake
 * clock. Each asserts (cmocka)
 * on what must not fail, so a test reads as its steps. */
#ifndef FOLIO_TEST_HELPERS_H
#define FOLIO_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "live/watch.h"
#include "live/watch_window.h"

/* Milliseconds on the monotonic clock. */
int64_t th_now_ms(void);

/* Writes @text to @dir/@rel, asserting it worked. */
void th_write_file(const char *dir, const char *rel, const char *text);

/* Removes @path and everything under it, asserting it worked. */
void th_remove_tree(const char *path);

/* A TCP connection to 127.0.0.1:@port; @rcvbuf > 0 sets SO_RCVBUF first. */
int th_dial(uint16_t port, int rcvbuf);

/* th_dial() and a GET of @path sent on it. */
int th_open_get(uint16_t port, const char *path, int rcvbuf);

/* What a socket delivered so far, NUL-terminated. */
struct th_stream {
    int fd;
    char buf[16384];
    size_t len;
    bool eof;
};

/* Reads until @needle is in the buffer (true), or EOF or @ms pass (false).
 * @needle NULL reads until EOF or the deadline. */
bool th_read_until(struct th_stream *s, const char *needle, int ms);

/* How often @needle occurs in @hay. */
size_t th_count_of(const char *hay, const char *needle);

/* A watch (live/watch.h) run stepped on a fake clock, or on its own thread
 * and the real one, and what it reported: the watcher tests' harness. */
#define TH_MAX_BATCHES 64
#define TH_MAX_CHANGES 64

/* What the callback saw, copied out of the watcher's turn (or thread). */
struct th_seen_batch {
    int64_t at_ms; /* when the callback ran, on the rig's clock */
    bool overflow;
    size_t n;
    int ids[TH_MAX_CHANGES];
    char paths[TH_MAX_CHANGES][128];
};

/* A watch, the clock it reads, and what it reported. Stepped: the fake
 * clock is read and moved by the test thread only. */
struct th_rig {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct th_seen_batch batches[TH_MAX_BATCHES];
    size_t nbatches, taken;
    size_t swaps;
    uint64_t now;             /* the fake clock */
    struct clock clock;
    bool threaded;            /* real clock and thread: waits on cv */
    struct watch *w;
};


/* A struct clock's now_ms reading the uint64_t at @ctx. */
int64_t th_fake_now(void *ctx);

/* Starts the fake clock somewhere past 0 (0 means "no window"). */
void th_rig_init(struct th_rig *t);

/* Destroys the rig's watch (if any). */
void th_rig_finish(struct th_rig *t);

/* The rig's clock: fake, or the real one when threaded. */
int64_t th_rig_now(const struct th_rig *t);

/* watch_fn and watch_swap_fn that record into the rig at @ctx. */
void th_record(void *ctx, const struct watch_batch *b);
void th_record_swap(void *ctx, int id, bool there);

/* Watches @n @paths with a 100 ms window (polling every 50 ms), stepped on
 * the rig's fake clock; asserts nothing (NULL if it failed). */
struct watch *th_rig_watch(struct th_rig *t, const char *const *paths, size_t n,
                           enum watch_mode mode);

/* Lets @ms pass on the fake clock, the watcher taking its turns when due
 * (what its thread would do while the test slept). */
void th_pass(struct th_rig *t, unsigned ms);

/* The next batch, or NULL if none comes within @ms (on the rig's clock:
 * stepped, or awaited on the real one). */
const struct th_seen_batch *th_next_batch(struct th_rig *t, unsigned ms);

/* Steps until the watch counts @want folders, or @ms pass. */
bool th_wait_count(struct th_rig *t, size_t want, unsigned ms);

/* Descriptors open in this process; lines of file @path starting with
 * @prefix (an inotify fd's fdinfo has one "inotify wd:" line per watch);
 * this process's one inotify descriptor. */
size_t th_count_fds(void);
size_t th_count_lines(const char *path, const char *prefix);
int th_inotify_fd(void);

#endif
