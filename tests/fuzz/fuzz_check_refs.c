/* fuzz_check_refs: check_refs_html, check_refs_css and check_url_resolve,
 * the pure half of `folio check`.
 *
 * Input: first byte bit 0 = CSS (else HTML), the rest a document.
 * Invariants: extraction succeeds and is deterministic; every reference and
 * id lies inside the document; a reference whose bytes hold no '&' or NUL
 * (so nothing was decoded) is the document's bytes at its offset; a
 * fragment element's offset is its id's "fragment-"; every reference
 * resolves, a path one to an absolute path, a document one to none. (A NUL
 * in an attribute is read as U+FFFD, so such bytes are not compared.)
 */
#include "fuzz.h"

#include "check/check_refs.h"

/* Extracts @doc's references into @d. */
static void extract(const char *doc, size_t len, bool css, struct check_doc *d)
{
    *d = (struct check_doc){0};
    bool ok = css ? check_refs_css(doc, len, 0, d) : check_refs_html(doc, len, d);
    fuzz_check(ok, "extraction succeeds");
}

/* The invariants of one reference. */
static void check_ref(const char *doc, size_t len, const struct check_ref *r)
{
    size_t n = strlen(r->url);
    fuzz_check(r->offset <= len, "a reference lies inside the document");
    if (r->fragment) {
        fuzz_check(len - r->offset >= 9, "a fragment element's id lies inside the document");
        if (memchr(doc + r->offset, '&', 9) == NULL) {
            fuzz_check(memcmp(doc + r->offset, "fragment-", 9) == 0, "a fragment is at its id");
        }
    } else if (n <= len - r->offset && memchr(doc + r->offset, '&', n) == NULL &&
               memchr(doc + r->offset, '\0', n) == NULL) {
        fuzz_check(memcmp(doc + r->offset, r->url, n) == 0, "an undecoded reference is the document's bytes");
    }
    struct check_url u;
    fuzz_check(check_url_resolve(r->url, "/a/b.html", &u), "a reference resolves");
    fuzz_check(u.kind != CHECK_URL_PATH || (u.path != NULL && u.path[0] == '/'), "a path is absolute");
    fuzz_check(u.kind == CHECK_URL_PATH || u.path == NULL, "only a path has one");
    check_url_free(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    bool css = data[0] & 1;
    size_t len = size - 1;
    char *doc = malloc(len ? len : 1); /* exact size: reads past the end are caught */
    if (doc == NULL) {
        return 0;
    }
    memcpy(doc, data + 1, len);
    struct check_doc a, b;
    extract(doc, len, css, &a);
    extract(doc, len, css, &b);
    fuzz_check(a.nrefs == b.nrefs && a.nids == b.nids, "deterministic");
    for (size_t i = 0; i < a.nrefs; i++) {
        fuzz_check(strcmp(a.refs[i].url, b.refs[i].url) == 0, "deterministic references");
        check_ref(doc, len, &a.refs[i]);
    }
    for (size_t i = 0; i < a.nids; i++) {
        fuzz_check(a.ids[i].offset <= len && a.ids[i].id[0] != '\0', "ids are inside and not empty");
    }
    check_doc_free(&a);
    check_doc_free(&b);
    free(doc);
    return 0;
}
