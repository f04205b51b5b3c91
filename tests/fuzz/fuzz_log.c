/* fuzz_log: log_format_line with hostile client strings.
 *
 * Input: byte 0 picks the format, byte 1 the buffer size (512 to 8192),
 * bytes 2-9 the body size; the rest is split at NUL bytes into remote,
 * method, target, protocol, referer and user agent (missing ones: "-" for
 * the first four, absent for the last two). Invariants: the returned length
 * is strlen(buf) and below the buffer size; the line ends in its only '\n';
 * every other byte is printable ASCII or well-formed UTF-8 (JSON text is
 * UTF-8), and in the text formats (base/escape.h's rule) no character of it
 * a control (C1), a bidirectional or a line separator, so a request can
 * neither forge a line nor reach a terminal nor make the JSON unreadable;
 * a JSON line starts with '{', ends with "}\n" and its unescaped quotes pair
 * up; a common or combined line has an even number of unescaped quotes.
 */
#include "fuzz.h"

#include "serve/log.h"

static const size_t buffer_sizes[] = {512, 513, 600, 1024, 4096, 8192};

/* The length of the well-formed UTF-8 sequence at p (at most left bytes),
 * or 0: decoded to a code point (*code) and checked against its shortest
 * form. */
static size_t utf8_sequence(const char *s, size_t left, unsigned long *code)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
    if (n == 0 || n > left || p[0] > 0xf4) {
        return 0;
    }
    unsigned long cp = p[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    static const unsigned long shortest[] = {0, 0, 0x80, 0x800, 0x10000};
    bool ok = cp >= shortest[n] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    *code = cp;
    return ok ? n : 0;
}

static bool escaped(const char *buf, size_t i)
{
    size_t backslashes = 0;
    while (i > backslashes && buf[i - 1 - backslashes] == '\\') {
        backslashes++;
    }
    return backslashes % 2 == 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10) {
        return 0;
    }
    enum log_format format = (enum log_format)(data[0] % 3);
    size_t cap = buffer_sizes[data[1] % (sizeof(buffer_sizes) / sizeof(buffer_sizes[0]))];
    uint64_t bytes = 0;
    for (size_t i = 2; i < 10; i++) {
        bytes = bytes << 8 | data[i];
    }
    char *text = fuzz_cstring(data + 10, size - 10);
    const char *field[6] = {"-", "-", "-", "-", NULL, NULL};
    const char *p = text, *end = text + (size - 10);
    for (int i = 0; i < 6 && p <= end; i++) {
        field[i] = p;
        p += strlen(p) + 1;
    }
    struct log_record r = {
        .remote = field[0],
        .time = {784111777 + (time_t)(bytes % 4000000000u), (long)(bytes % 1000000000u)},
        .method = field[1],
        .target = field[2],
        .protocol = field[3],
        .status = 100 + (unsigned)(bytes % 500),
        .bytes = bytes,
        .referer = field[4],
        .user_agent = field[5],
        .duration_ms = (double)(bytes % 100000000u) / 1000.0,
    };
    char *buf = malloc(cap);
    if (buf == NULL) {
        abort();
    }
    memset(buf, 0x7f, cap);
    size_t len = log_format_line(format, &r, buf, cap);
    fuzz_check(len > 0 && len < cap, "0 < length < buffer size");
    fuzz_check(memchr(buf, '\0', cap) != NULL && strlen(buf) == len, "length is strlen(buf)");
    fuzz_check(buf[len - 1] == '\n', "the line ends in a newline");
    unsigned quotes = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c >= 0x80) {
            unsigned long cp = 0;
            size_t n = utf8_sequence(buf + i, len - 1 - i, &cp);
            fuzz_check(n > 0, "only well-formed UTF-8 above ASCII");
            fuzz_check(format == LOG_FORMAT_JSON ||
                           !(cp <= 0x9f || cp == 0x061c || cp == 0x200e || cp == 0x200f || cp == 0x2028 ||
                             cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)),
                       "text: no C1 control, bidirectional or line separator");
            i += n - 1;
            continue;
        }
        fuzz_check(c >= 0x20 && c < 0x7f, "only printable ASCII before the newline");
        if (c == '"' && !escaped(buf, i)) {
            quotes++;
        }
    }
    fuzz_check(quotes % 2 == 0, "unescaped quotes pair up");
    if (format == LOG_FORMAT_JSON) {
        fuzz_check(buf[0] == '{' && len >= 3 && buf[len - 2] == '}', "a JSON line is one object");
    }
    free(buf);
    free(text);
    return 0;
}
