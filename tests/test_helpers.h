/* Helpers shared by the live-reload unit tests (watch, sse, livereload):
 * clocks, files, and HTTP streams over real sockets. Each asserts (cmocka)
 * on what must not fail, so a test reads as its steps. */
#ifndef FOLIO_TEST_HELPERS_H
#define FOLIO_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Milliseconds on the monotonic clock. */
int64_t th_now_ms(void);

/* Sleeps @ms: only to space out writes a test makes, never to wait for a result. */
void th_sleep_ms(unsigned ms);

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

#endif
