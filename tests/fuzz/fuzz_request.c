/* fuzz_request: the request checks of request.c.
 *
 * Input: one selector byte, then any bytes (NULs included: these functions
 * take lengths). The selector picks:
 *   0 request_target_parse: deterministic; accepted only when no byte is a
 *     control, a space, DEL or '#'; the origin form is the whole input; an
 *     absolute form's path is empty or starts with "/", its authority is a
 *     valid Host and lies inside the input; an authority form is a valid
 *     Host with a port;
 *   1 request_host_valid: deterministic; a valid Host holds no control,
 *     space, '/', '?', '#' or '@', and stays valid with ":80" appended when
 *     it had no port;
 *   2 request_content_length: on success the length written out in decimal
 *     parses back to itself, and the value twice ("v, v") agrees;
 *   3 request_folder_location: the reference holds only pchar, '%', '/' and
 *     '.'; decoding it (without "./" and the final "/") gives the name back;
 *   4 request_is_token and request_method_classify agree on what a token is;
 *     request_lists_token finds "close" only where the text holds it, and
 *     always once ", close" is appended.
 */
#include "fuzz.h"

#include "serve/request.h"

static bool is_pchar_or_escape(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("-._~!$&'()*+,;=:@%/", c) != NULL);
}

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void check_target(const char *s, size_t n)
{
    struct request_target t, again;
    bool ok = request_target_parse(s, n, &t);
    fuzz_check(request_target_parse(s, n, &again) == ok, "target: deterministic");
    if (!ok) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        fuzz_check(c > 0x20 && c != 0x7f && c != '#', "target: no control, space or '#'");
    }
    switch (t.form) {
    case REQUEST_FORM_ORIGIN:
        fuzz_check(t.path == s && t.path_len == n && s[0] == '/', "origin form is the input");
        break;
    case REQUEST_FORM_ABSOLUTE:
        fuzz_check(t.authority >= s && t.authority + t.authority_len <= s + n, "authority inside");
        fuzz_check(request_host_valid(t.authority, t.authority_len), "authority is a Host");
        fuzz_check(t.path_len == 0 || t.path[0] == '/' || t.path[0] == '?', "absolute path, or an empty one's query");
        fuzz_check(t.path + t.path_len == s + n, "path runs to the end");
        break;
    case REQUEST_FORM_AUTHORITY:
        fuzz_check(request_host_valid(s, n) && memchr(s, ':', n) != NULL, "host:port");
        break;
    case REQUEST_FORM_ASTERISK:
        fuzz_check(n == 1 && s[0] == '*', "asterisk form is *");
        break;
    }
}

static void check_host(const char *s, size_t n)
{
    bool ok = request_host_valid(s, n);
    fuzz_check(request_host_valid(s, n) == ok, "host: deterministic");
    if (!ok) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        fuzz_check(c > 0x20 && c < 0x7f && !strchr("/?#@", c), "host: no delimiter");
    }
    const char *bracket = n ? memchr(s, ']', n) : NULL;
    const char *port_from = bracket ? bracket : s;
    if (!memchr(port_from, ':', n - (size_t)(port_from - s))) {
        char *with = malloc(n + 4);
        if (!with) {
            abort();
        }
        memcpy(with, s, n);
        memcpy(with + n, ":80", 3);
        fuzz_check(request_host_valid(with, n + 3), "host:80 stays valid");
        free(with);
    }
}

static void check_length(const char *s, size_t n)
{
    bool seen = false;
    uint64_t len = 0;
    if (!request_content_length(s, n, &seen, &len)) {
        return;
    }
    fuzz_check(seen, "length: seen");
    char text[48];
    int k = snprintf(text, sizeof(text), "%llu", (unsigned long long)len);
    bool seen2 = false;
    uint64_t len2 = 0;
    fuzz_check(request_content_length(text, (size_t)k, &seen2, &len2) && len2 == len,
               "length: decimal round trip");
    fuzz_check(request_content_length(s, n, &seen, &len), "length: agrees with itself");
}

static void check_location(const char *s, size_t n)
{
    char out[4096];
    size_t k = request_folder_location(s, n, NULL, out, sizeof(out));
    if (k == 0) {
        fuzz_check(n * 3 + 4 > sizeof(out), "location: only too long fails");
        return;
    }
    fuzz_check(k == strlen(out) && out[k - 1] == '/', "location: ends in /");
    size_t i = 0;
    if (memchr(s, ':', n)) {
        fuzz_check(strncmp(out, "./", 2) == 0, "location: ./ before a colon");
        i = 2;
    }
    size_t m = 0;
    for (; i + 1 < k; i++, m++) {
        unsigned char c = (unsigned char)out[i];
        fuzz_check(is_pchar_or_escape(c) && c != '/', "location: pchar only");
        char d = out[i];
        if (c == '%') {
            fuzz_check(i + 2 < k && hex(out[i + 1]) >= 0 && hex(out[i + 2]) >= 0, "escape");
            d = (char)(hex(out[i + 1]) << 4 | hex(out[i + 2]));
            i += 2;
        }
        fuzz_check(m < n && d == s[m], "location: decodes to the name");
    }
    fuzz_check(m == n, "location: the whole name");
}

static void check_token(const char *s, size_t n)
{
    bool token = request_is_token(s, n);
    enum request_method m = request_method_classify(s, n);
    fuzz_check(token == (m != REQUEST_METHOD_INVALID), "token and method agree");
    if (token) {
        fuzz_check(n > 0 && !memchr(s, ' ', n) && !memchr(s, ':', n), "token: no space or colon");
    }
    char *list = malloc(n + 8);
    if (!list) {
        abort();
    }
    memcpy(list, s, n);
    list[n] = '\0'; /* a header value is a C string: it ends at the first NUL */
    if (request_lists_token(list, "close")) {
        fuzz_check(strcasestr(list, "close") != NULL, "list: close is in the text");
    }
    strcat(list, ", close");
    fuzz_check(request_lists_token(list, "close"), "list: an appended close is found");
    free(list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 5) {
    case 0: check_target(s, n); break;
    case 1: check_host(s, n); break;
    case 2: check_length(s, n); break;
    case 3: check_location(s, n); break;
    default: check_token(s, n); break;
    }
    return 0;
}
