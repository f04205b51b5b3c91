/* fuzz_config: config_apply_ini over arbitrary text.
 *
 * Input: a config file, any bytes (cut at the first NUL, as config_load
 * refuses files holding one). Invariants: no crash, no leak (config_init
 * and config_finish around every input; ASan or valgrind find leaks); on
 * failure the error is NUL-terminated and starts with "line " (or is "out of
 * memory"); on success every setting is within its documented range and
 * every route prefix is a URL path that starts and ends with "/".
 */
#include "fuzz.h"

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    struct config c;
    config_init(&c);
    char err[256];
    memset(err, 0x55, sizeof(err));
    bool ok = config_apply_ini(&c, text, err, sizeof(err));
    if (!ok) {
        fuzz_check(memchr(err, '\0', sizeof(err)) != NULL, "the error is NUL-terminated");
        fuzz_check(strncmp(err, "line ", 5) == 0 || strcmp(err, "out of memory") == 0,
                   "the error starts with \"line \"");
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
