#include "url_prefix.h"

#include <ctype.h>
#include <string.h>

bool url_prefix_valid(const char *text)
{
    size_t len = strlen(text);
    if (len < 2 || text[0] != '/' || text[len - 1] == '/' || strstr(text, "//") ||
        strstr(text, "/.")) {
        return false;
    }
    for (const char *p = text; *p; p++) {
        /* No '%': an escaped dot segment ("%2e%2e") would climb out again. */
        if (!isalnum((unsigned char)*p) && !strchr("/-._~!$&+,;=:@", *p)) {
            return false;
        }
    }
    return true;
}

bool url_prefix_clean(const char *text, char *out, size_t size)
{
    size_t len = strlen(text);
    while (len > 0 && text[len - 1] == '/') {
        len--;
    }
    if (len >= size) {
        return false;
    }
    memcpy(out, text, len);
    out[len] = '\0';
    return len == 0 || url_prefix_valid(out);
}
