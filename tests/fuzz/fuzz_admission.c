/* fuzz_admission: the verdict on a request's head (admission.c).
 *
 * Input: a head as text, "METHOD TARGET VERSION\n" then "name:value" lines
 * (NULs included). It is laid out as a library that parses in place leaves
 * it (serve/library.h: library_header_block; each line end and first ':' a
 * NUL, names and values pointing into the block) and admitted. Invariants: the verdict is deterministic and one of 0, 400,
 * 413, 501; an accepted head has a token method, a target of the form its
 * method allows, at most one Host (one for HTTP/1.1 in origin form), never
 * both framings, and a declared length within ADMISSION_BODY_MAX for GET,
 * no bare CR in a value, chunked at most once, and an absolute form whose
 * origin form (admission_origin_form) starts with '/'.
 */
#include "fuzz.h"

#include <strings.h>

#include "serve/admission.h"

#define FIELDS_MAX 32

struct head {
    char *method, *target, *version;
    size_t target_len;
    char *name[FIELDS_MAX], *value[FIELDS_MAX];
    size_t n;
    char *block, *end;
};

/* Splits text (NUL-terminated copy, changed in place) as MHD would. */
static bool split(char *text, size_t size, struct head *h)
{
    char *line_end = memchr(text, '\n', size);
    if (!line_end) {
        return false;
    }
    *line_end = '\0';
    char *sp1 = strchr(text, ' '), *sp2 = sp1 ? strrchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2) {
        return false;
    }
    *sp1 = *sp2 = '\0';
    *h = (struct head){.method = text, .target = sp1 + 1, .version = sp2 + 1,
                       .target_len = (size_t)(sp2 - sp1 - 1), .block = sp2 + 1 + strlen(sp2 + 1),
                       .end = text + size};
    for (char *p = line_end + 1; p < h->end && h->n < FIELDS_MAX;) {
        char *nl = memchr(p, '\n', (size_t)(h->end - p));
        char *stop = nl ? nl : h->end;
        char *colon = memchr(p, ':', (size_t)(stop - p));
        if (nl) {
            *nl = '\0';
        }
        if (colon && colon > p) {
            *colon = '\0';
            h->name[h->n] = p;
            h->value[h->n++] = colon + 1;
        }
        p = stop + 1;
    }
    return true;
}

static unsigned admit(const struct head *h, struct admission *a, struct request_target *t)
{
    admission_start(a, h->block, h->end);
    for (size_t i = 0; i < h->n; i++) {
        if (!admission_field(a, h->name[i], strlen(h->name[i]), h->value[i], strlen(h->value[i]))) {
            break;
        }
    }
    struct admission_head head = {h->method, h->version, h->target, h->target_len, strlen(h->target)};
    return admission_finish(a, &head, t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    struct head h;
    if (!split(text, size, &h)) {
        free(text);
        return 0;
    }
    struct admission a, again;
    struct request_target t, t2;
    unsigned v = admit(&h, &a, &t);
    fuzz_check(admit(&h, &again, &t2) == v, "deterministic");
    fuzz_check(v == 0 || v == 400 || v == 413 || v == 501, "a known status");
    if (v == 0) {
        enum request_method m = request_method_classify(h.method, strlen(h.method));
        fuzz_check(m != REQUEST_METHOD_INVALID, "a token method");
        fuzz_check(m != REQUEST_METHOD_CONNECT && m != REQUEST_METHOD_UNKNOWN, "a method we serve");
        fuzz_check(t.form != REQUEST_FORM_AUTHORITY, "no authority form without CONNECT");
        fuzz_check(t.form != REQUEST_FORM_ASTERISK || m == REQUEST_METHOD_OPTIONS, "* is for OPTIONS");
        fuzz_check(a.hosts <= 1, "at most one Host");
        fuzz_check(a.hosts == 1 || strcmp(h.version, "HTTP/1.1") != 0, "HTTP/1.1 has a Host");
        fuzz_check(!(a.length_seen && (a.chunked || a.other_coding)), "one framing");
        fuzz_check(!a.other_coding, "no unknown coding");
        fuzz_check(!(m == REQUEST_METHOD_GET || m == REQUEST_METHOD_HEAD) || a.length <= ADMISSION_BODY_MAX,
                   "a body within the limit");
        size_t chunked = 0;
        for (size_t i = 0; i < h.n; i++) {
            fuzz_check(!strchr(h.value[i], '\r'), "no bare CR in a value");
            chunked += strcasecmp(h.name[i], "Transfer-Encoding") == 0 && strcasecmp(h.value[i], "chunked") == 0;
        }
        fuzz_check(chunked <= 1, "chunked at most once");
        if (t.form == REQUEST_FORM_ABSOLUTE) {
            size_t len = strlen(h.target);
            admission_origin_form(h.target, &t);
            fuzz_check(h.target[0] == '/' && strlen(h.target) < len, "an origin form, shorter");
        }
    }
    free(text);
    return 0;
}
