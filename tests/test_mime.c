/* mime: the extension table decides web types (libmagic calls CSS text/plain),
 * libmagic only what the table does not know. */
#include "cmocka_prelude.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/mime.h"

static const struct {
    const char *path;
    const char *type; /* NULL: not in the table */
    bool compressible;
} cases[] = {
    {"/index.html", "text/html; charset=utf-8", true},
    {"/INDEX.HTM", "text/html; charset=utf-8", true},
    {"/style.css", "text/css; charset=utf-8", true},
    {"/app.js", "text/javascript; charset=utf-8", true},
    {"/mod.mjs", "text/javascript; charset=utf-8", true},
    {"/data.json", "application/json", true},
    {"/a/fig.svg", "image/svg+xml", true},
    {"/x.wasm", "application/wasm", true},
    {"/f.woff2", "font/woff2", false},
    {"/p.png", "image/png", false},
    {"/p.JPEG", "image/jpeg", false},
    {"/p.jpg", "image/jpeg", false},
    {"/p.gif", "image/gif", false},
    {"/p.webp", "image/webp", false},
    {"/p.avif", "image/avif", false},
    {"/s.wav", "audio/wav", false},
    {"/assets/read aloud, intro.mp3", "audio/mpeg", false},
    {"/v.mp4", "video/mp4", false},
    {"/v.webm", "video/webm", false},
    {"/doc.pdf", "application/pdf", false},
    {"/refs.bib", "text/x-bibtex; charset=utf-8", true},
    {"/notes.txt", "text/plain; charset=utf-8", true},
    {"/feed.xml", "application/xml", true},
    {"/data.csv", "text/csv; charset=utf-8", true},
    {"/noext", NULL, false},
    {"/.hidden", NULL, false},
    {"/dir.d/noext", NULL, false},
    {"/x.unknownext", NULL, false},
};

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct mime_type *t = mime_from_extension(cases[i].path);
        if (!cases[i].type) {
            if (t) {
                fail_msg("%s: want no table entry, got %s", cases[i].path, t->name);
            }
            continue;
        }
        if (!t) {
            fail_msg("%s: no table entry", cases[i].path);
        }
        assert_string_equal(t->name, cases[i].type);
        assert_int_equal(t->compressible, cases[i].compressible);
    }
}

static char *sniff_bytes(const void *bytes, size_t len)
{
    char path[] = "/tmp/folio-mime-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    char *type = mime_sniff(fd);
    close(fd);
    unlink(path);
    return type;
}

static void test_sniff(void **state)
{
    assert_true(mime_init());
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
                                        'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0};
    char *t = sniff_bytes(png, sizeof(png));
    assert_string_equal(t, "image/png");
    free(t);
    t = sniff_bytes("just some words\n", 16);
    assert_string_equal(t, "text/plain; charset=utf-8"); /* us-ascii widened */
    assert_true(mime_is_compressible(t));
    free(t);
    t = sniff_bytes("", 0);
    assert_string_equal(t, "application/octet-stream"); /* never inode/x-empty */
    free(t);
    static const unsigned char pdf[] = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n";
    t = sniff_bytes(pdf, sizeof(pdf) - 1);
    assert_string_equal(t, "application/pdf");
    assert_false(mime_is_compressible(t));
    free(t);
    mime_finish();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_sniff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
