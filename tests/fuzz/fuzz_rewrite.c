/* fuzz_rewrite: rewrite_html and rewrite_css, the proxy-prefix rewriter.
 *
 * Input: first byte = the depth (0..7) and which rewriter (bit 3: CSS), the
 * rest a document. The prefix is a byte that never occurs in the document
 * (\x01; inputs holding one are skipped), so the invariant is exact: the
 * output is the input with copies of the prefix inserted before a "/", or in
 * place of the leading "../" and "./" of a reference that climbs past the
 * root (written as prefix + "/"), and nothing else.
 */
#include "fuzz.h"

#include "site/rewrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || memchr(data, '\x01', size) != NULL) {
        return 0;
    }
    struct rewrite_context ctx = {.prefix = "\x01", .depth = data[0] & 7};
    bool css = data[0] & 8;
    size_t len = size - 1;
    char *doc = malloc(len ? len : 1); /* exact size: reads past the end are caught */
    if (doc == NULL) {
        return 0;
    }
    memcpy(doc, data + 1, len);
    size_t out_len = 0;
    char *out = css ? rewrite_css(doc, len, &ctx, &out_len) : rewrite_html(doc, len, &ctx, &out_len);
    fuzz_check(out != NULL, "the rewriter succeeds");
    fuzz_check(out[out_len] == '\0', "the output is NUL-terminated");
    size_t in = 0;
    for (size_t i = 0; i < out_len; i++) {
        if (out[i] == '\x01') {
            fuzz_check(i + 1 < out_len && out[i + 1] == '/', "the prefix stands before a \"/\"");
            if (in < len && doc[in] == '/') {
                continue; /* an absolute path: the prefix was inserted */
            }
            size_t start = in; /* a climbing reference: its dot segments became "/" */
            for (;;) {
                if (len - in >= 3 && memcmp(doc + in, "../", 3) == 0) {
                    in += 3;
                } else if (len - in >= 2 && memcmp(doc + in, "./", 2) == 0) {
                    in += 2;
                } else {
                    break;
                }
            }
            /* A ".." that ends the reference went too; the output says which. */
            if (len - in >= 2 && memcmp(doc + in, "..", 2) == 0 &&
                !(out_len - i >= 4 && memcmp(out + i + 2, "..", 2) == 0)) {
                in += 2;
            }
            fuzz_check(in > start, "the prefix replaced only dot segments");
            i++;
            continue;
        }
        fuzz_check(in < len && out[i] == doc[in], "the input is kept, byte for byte");
        in++;
    }
    fuzz_check(in == len, "all of the input is kept");
    free(out);
    free(doc);
    return 0;
}
