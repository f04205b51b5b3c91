/* fuzz_config: config_apply_ini over arbitrary text.
 *
 * Input: a config file, any bytes (cut at the first NUL, as config_load
 * refuses files holding one). Invariants: no crash, no leak (config_init
 * and config_finish around every input; ASan or valgrind find leaks); on
 * failure the error is NUL-terminated and starts with "line " (or is "out of
 * memory"); an error about a setting names a line that holds a setting (a
 * "key = value", "key: value" or an indented continuation line; checked
 * when no line is longer than inih's 200-byte buffer, which splits lines);
 * on success every setting is within its documented range and every route
 * prefix is a URL path that starts and ends with "/".
 */
#include "fuzz.h"

#include <ctype.h>

#include "base/config.h"
#include "serve/log.h"

#define INIH_MAX_LINE 200

/* Line n (1-based) of text, or NULL; *len gets its length. */
static const char *nth_line(const char *text, long n, size_t *len)
{
    const char *p = text;
    for (long i = 1; i < n; i++) {
        p = strchr(p, '\n');
        if (p == NULL) {
            return NULL;
        }
        p++;
    }
    *len = strcspn(p, "\n");
    return p;
}

static bool lines_fit(const char *text)
{
    for (const char *p = text;;) {
        size_t n = strcspn(p, "\n");
        if (n + 2 >= INIH_MAX_LINE) {
            return false;
        }
        if (p[n] == '\0') {
            return true;
        }
        p += n + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    struct config c;
    config_init(&c);
    struct config_error err;
    memset(&err, 0x55, sizeof(err));
    bool ok = config_apply_ini(&c, text, &err);
    if (!ok) {
        fuzz_check(memchr(err.message, '\0', sizeof(err.message)) != NULL, "the error is NUL-terminated");
        fuzz_check(err.source.line > 0 || strcmp(err.message, "out of memory") == 0,
                   "the error names a line");
        int n = err.source.line;
        if (n > 0 && strcmp(err.message, "not a [section] or key = value") != 0 && lines_fit(text)) {
            size_t len = 0;
            const char *line = nth_line(text, n, &len);
            fuzz_check(line != NULL, "the error names a line of the file");
            /* A continuation line starts with any space inih's isspace() knows,
             * form feed and vertical tab too (fuzz_config found "\fi"). */
            fuzz_check(memchr(line, '=', len) != NULL || memchr(line, ':', len) != NULL ||
                           (len > 0 && isspace((unsigned char)line[0])),
                       "an error about a setting names a line that holds one");
        }
    } else {
        fuzz_check(c.port <= 65535, "port in range");
        fuzz_check(c.threads <= 256, "threads in range");
        fuzz_check(c.gzip_level >= 1 && c.gzip_level <= 9, "gzip-level in range");
        fuzz_check(c.timeout >= 1 && c.timeout <= 86400, "timeout in range");
        fuzz_check(c.header_limit >= 4096 && c.header_limit <= 16u << 20, "header-limit in range");
        fuzz_check(c.log_format == LOG_FORMAT_COMMON || c.log_format == LOG_FORMAT_COMBINED ||
                       c.log_format == LOG_FORMAT_JSON,
                   "a known log format");
        fuzz_check(c.root != NULL && c.root[0] != '\0', "root is set");
        fuzz_check(c.host != NULL && c.host[0] != '\0', "host is set");
        for (size_t i = 0; i < c.route_count; i++) {
            const char *prefix = c.routes[i].prefix;
            size_t pl = strlen(prefix);
            fuzz_check(pl > 0 && prefix[0] == '/' && prefix[pl - 1] == '/', "a route prefix is /.../");
            fuzz_check(strstr(prefix, "//") == NULL && strstr(prefix, "/.") == NULL,
                       "a route prefix has no // and no dot segment");
            fuzz_check(c.routes[i].dir != NULL && c.routes[i].dir[0] != '\0', "a route has a folder");
            for (size_t j = 0; j < i; j++) {
                fuzz_check(strcmp(c.routes[j].prefix, prefix) != 0, "route prefixes are unique");
            }
        }
    }
    config_finish(&c);
    free(text);
    return 0;
}
