/* fuzz_html: html_inject, html_inject_offset and html_early_offset, the
 * live-reload rewriter.
 *
 * Input: an HTML document, any bytes (NULs included: the length is given).
 * Invariants: early offset <= offset <= len; at the offset stands "</head" or
 * "</body" (case-insensitive) unless it is len; the output is len +
 * strlen(early) + strlen(snippet) bytes, NUL-terminated, holds the early
 * snippet at the early offset and the snippet after it at the offset, and
 * with both removed equals the input.
 */
#include "fuzz.h"

#include <strings.h>

#include "base/html.h"

static const char snippet[] = "<script src=\"/__folio/reload.js\" defer></script>";
static const char early[] = "<script src=\"/__folio/early.js\" data-folio></script>";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy so a read past the end is caught even when data
     * came from somewhere roomier. */
    char *html = malloc(size ? size : 1);
    if (html == NULL) {
        return 0;
    }
    if (size > 0) {
        memcpy(html, data, size);
    }
    size_t at = size == 0 ? 0 : html_inject_offset(html, size);
    fuzz_check(at <= size, "offset <= len");
    if (at < size) {
        fuzz_check(size - at >= 6 && (strncasecmp(html + at, "</head", 6) == 0 ||
                                      strncasecmp(html + at, "</body", 6) == 0),
                   "the snippet goes before </head or </body");
    }
    if (size > 0) {
        fuzz_check(html_inject_offset(html, size) == at, "deterministic");
    }
    size_t first = size == 0 ? 0 : html_early_offset(html, size);
    fuzz_check(first <= at, "early offset <= offset");
    size_t sn = strlen(snippet), en = strlen(early), out_len = 0;
    char *out = html_inject(size ? html : NULL, size, early, snippet, &out_len);
    fuzz_check(out != NULL, "html_inject succeeds");
    fuzz_check(out_len == size + en + sn, "output length == input length + both snippets' lengths");
    fuzz_check(out[out_len] == '\0', "the output is NUL-terminated");
    fuzz_check(memcmp(out, html, first) == 0, "the input before the early offset is kept");
    fuzz_check(memcmp(out + first, early, en) == 0, "the early snippet stands at the early offset");
    fuzz_check(memcmp(out + first + en, html + first, at - first) == 0, "the input between is kept");
    fuzz_check(memcmp(out + at + en, snippet, sn) == 0, "the snippet stands at the offset");
    fuzz_check(memcmp(out + at + en + sn, html + at, size - at) == 0, "the input after the offset is kept");
    free(out);
    free(html);
    return 0;
}
