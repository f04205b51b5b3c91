/* fuzz_html: html_inject and html_inject_offset, the live-reload rewriter.
 *
 * Input: an HTML document, any bytes (NULs included: the length is given).
 * Invariants: offset <= len; at the offset stands "</head" or "</body"
 * (case-insensitive) unless it is len; the output is len + strlen(snippet)
 * bytes, NUL-terminated, holds the snippet at the offset, and with the
 * snippet removed equals the input.
 */
#include "fuzz.h"

#include <strings.h>

#include "base/html.h"

static const char snippet[] = "<script src=\"/__folio/reload.js\" defer></script>";

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
    size_t sn = strlen(snippet), out_len = 0;
    char *out = html_inject(size ? html : NULL, size, snippet, &out_len);
    fuzz_check(out != NULL, "html_inject succeeds");
    fuzz_check(out_len == size + sn, "output length == input length + snippet length");
    fuzz_check(out[out_len] == '\0', "the output is NUL-terminated");
    fuzz_check(memcmp(out + at, snippet, sn) == 0, "the snippet stands at the offset");
    fuzz_check(memcmp(out, html, at) == 0, "the input before the offset is kept");
    fuzz_check(memcmp(out + at + sn, html + at, size - at) == 0, "the input after the offset is kept");
    free(out);
    free(html);
    return 0;
}
