/* fuzz_sse: sse_format, Server-Sent Events framing.
 *
 * Input: an event name and data separated by the first NUL byte; without a
 * NUL the whole input is data and the event is NULL. Invariants: the result
 * is 0 exactly when the event holds CR or LF; otherwise the frame is
 * "event: <name>\n" (when named), one "data: <line>\n" per line of data
 * (CRLF, CR and LF all end a line), then "\n"; it holds no CR, so no byte of
 * data can start a field of its own; and a smaller buffer receives a
 * NUL-terminated prefix of the same frame with the same length returned.
 */
#include "fuzz.h"

#include "live/sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    const char *event = NULL, *payload = text;
    const char *nul = memchr(text, '\0', size);
    if (nul != NULL) {
        event = text;
        payload = nul + 1;
    }
    bool bad_event = event != NULL && strpbrk(event, "\r\n") != NULL;
    size_t n = sse_format(NULL, 0, event, payload);
    if (bad_event) {
        fuzz_check(n == 0, "an event with CR or LF is refused");
        char one[4] = "xyz";
        fuzz_check(sse_format(one, sizeof(one), event, payload) == 0 && one[0] == '\0',
                   "a refused frame leaves an empty string");
        free(text);
        return 0;
    }
    fuzz_check(n > 0, "a valid frame is not empty");
    char *frame = malloc(n + 1);
    if (frame == NULL) {
        abort();
    }
    fuzz_check(sse_format(frame, n + 1, event, payload) == n, "the same length with a buffer");
    fuzz_check(frame[n] == '\0' && strlen(frame) == n, "the frame is NUL-terminated");
    fuzz_check(strchr(frame, '\r') == NULL, "no CR in a frame");
    fuzz_check(n >= 2 && frame[n - 1] == '\n' && frame[n - 2] == '\n', "a frame ends with a blank line");

    /* Rebuild the expected frame by hand. */
    const char *f = frame;
    if (event != NULL && event[0] != '\0') {
        size_t el = strlen(event);
        fuzz_check(strncmp(f, "event: ", 7) == 0 && strncmp(f + 7, event, el) == 0 && f[7 + el] == '\n',
                   "the event line comes first");
        f += 8 + el;
    }
    const char *d = payload;
    for (;;) {
        size_t line = strcspn(d, "\r\n");
        fuzz_check(strncmp(f, "data: ", 6) == 0 && strncmp(f + 6, d, line) == 0 && f[6 + line] == '\n',
                   "one data line per line of data");
        f += 7 + line;
        d += line;
        if (*d == '\0') {
            break;
        }
        d += (d[0] == '\r' && d[1] == '\n') ? 2 : 1;
    }
    fuzz_check(strcmp(f, "\n") == 0, "nothing after the blank line");

    /* Short buffers get a prefix. */
    size_t shorter[] = {1, 2, n / 2 + 1, n};
    for (size_t i = 0; i < sizeof(shorter) / sizeof(shorter[0]); i++) {
        size_t k = shorter[i];
        char *part = malloc(k);
        if (part == NULL) {
            abort();
        }
        fuzz_check(sse_format(part, k, event, payload) == n, "the full length from a short buffer");
        fuzz_check(part[k - 1] == '\0' && memcmp(part, frame, k - 1) == 0,
                   "a short buffer holds a prefix");
        free(part);
    }
    free(frame);
    free(text);
    return 0;
}
