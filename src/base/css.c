/* css — see css.h. */
#include "css.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* True when css[i..] starts with @word in any case. */
static bool css_starts_ci(const char *css, size_t len, size_t i, const char *word)
{
    size_t n = strlen(word);
    return len - i >= n && strncasecmp(css + i, word, n) == 0;
}

/* Past the string whose quote is at @i: to its closing quote (escapes
 * skipped) or the end of input. *end gets where its content ends. */
static size_t css_string(const char *css, size_t len, size_t i, size_t *end)
{
    char quote = css[i];
    size_t j = i + 1;
    while (j < len && css[j] != quote) {
        j += css[j] == '\\' && j + 1 < len ? 2 : 1;
    }
    *end = j;
    return j < len ? j + 1 : len;
}

/* A url( at @i is a function only after something that cannot be part of an
 * identifier: "myurl(" and "-url(" are other names. */
static bool css_url_at(const char *css, size_t len, size_t i)
{
    return css_starts_ci(css, len, i, "url(") &&
           (i == 0 || !(isalnum((unsigned char)css[i - 1]) || css[i - 1] == '-' || css[i - 1] == '_'));
}

bool css_next_ref(const char *css, size_t len, size_t *pos, struct css_ref *r)
{
    size_t i = *pos;
    while (i < len) {
        char c = css[i];
        if (c == '/' && i + 1 < len && css[i + 1] == '*') {
            const char *end = NULL;
            for (size_t j = i + 2; j + 2 <= len && !end; j++) {
                end = css[j] == '*' && css[j + 1] == '/' ? css + j : NULL;
            }
            i = end ? (size_t)(end - css) + 2 : len;
            continue;
        }
        bool url = css_url_at(css, len, i), import = !url && css_starts_ci(css, len, i, "@import");
        if (!url && !import) {
            size_t ignored;
            i = c == '"' || c == '\'' ? css_string(css, len, i, &ignored) : i + 1;
            continue;
        }
        size_t j = i + (url ? 4 : 7);
        while (j < len && isspace((unsigned char)css[j])) {
            j++;
        }
        if (j < len && (css[j] == '"' || css[j] == '\'')) {
            size_t end;
            *pos = css_string(css, len, j, &end);
            *r = (struct css_ref){.url = j + 1, .url_len = end - j - 1, .import = import};
            return true;
        }
        if (!url) {
            i = j; /* "@import url(...)": the url() is read next */
            continue;
        }
        size_t end = j;
        while (end < len && css[end] != ')') {
            end++;
        }
        *pos = end;
        while (end > j && isspace((unsigned char)css[end - 1])) {
            end--;
        }
        *r = (struct css_ref){.url = j, .url_len = end - j};
        return true;
    }
    *pos = len;
    return false;
}
