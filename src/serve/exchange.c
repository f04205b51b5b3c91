#include "exchange.h"

#include "base/config.h"
#include "base/settings.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "admission.h"
#include "library.h"
#include "base/url_prefix.h"
#include "encoding.h"
#include "precondition.h"
#include "site/routes.h"

/* True when the browser will load this HTML as a page (so it gets the
 * live-reload client), false when a script fetches it (a fragment). Browsers
 * say which with Sec-Fetch-Dest; without it, only fragments/ is assumed to be
 * fetched by script. */
static bool loads_as_document(struct MHD_Connection *conn, const struct route *route)
{
    const char *dest = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Dest");
    if (!dest) {
        return !route->is_fragments;
    }
    return strcmp(dest, "document") == 0 || strcmp(dest, "iframe") == 0 ||
           strcmp(dest, "frame") == 0 || strcmp(dest, "embed") == 0 || strcmp(dest, "object") == 0;
}

/* See exchange.h. */
struct entry_facts exchange_facts(struct MHD_Connection *conn, const struct exchange *ex,
                                  const struct route *route)
{
    return (struct entry_facts){
        .accept = encoding_parse(
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding")),
        .has_range = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Range") != NULL,
        .production = ex->config->production,
        .document = route && loads_as_document(conn, route),
        .prefix = ex->prefix,
        .target = ex->target,
        .gzip_level = ex->config->gzip_level,
        .brotli_quality = ex->config->brotli_quality,
        .zstd_level = ex->config->zstd_level,
        .settings_generation = settings_generation(ex->config),
    };
}

/* Where a list sent on several lines is joined: per thread, valid until its
 * next exchange_conditionals (whose caller compares at once). A list longer
 * than this keeps the lines that fit: past 4 KiB of entity tags. */
enum { CONDITIONAL_JOINED_MAX = 4096 };
static _Thread_local char joined_lists[2][CONDITIONAL_JOINED_MAX];

/* One request field for exchange_conditionals (cls: the headers so far). A
 * second line of If-Match or If-None-Match extends the first: repeated list
 * lines are one comma-separated list (RFC 9110 5.3). A date is no list: its
 * first line counts. */
static enum MHD_Result note_conditional(void *cls, enum MHD_ValueKind kind, const char *name, size_t name_len,
                                        const char *value, size_t value_len)
{
    (void)kind; (void)value_len; /* libmicrohttpd's signature */
    struct precondition_headers *h = cls;
    if (name_len < 8 || strncasecmp(name, "If-", 3) != 0) {
        return MHD_YES; /* every field of every request comes here: most stop at once */
    }
    bool match = strcasecmp(name, "If-Match") == 0;
    const char **slot = match                                      ? &h->if_match
                        : strcasecmp(name, "If-None-Match") == 0      ? &h->if_none_match
                        : strcasecmp(name, "If-Modified-Since") == 0  ? &h->if_modified_since
                        : strcasecmp(name, "If-Unmodified-Since") == 0 ? &h->if_unmodified_since
                                                                      : NULL;
    if (!slot || !value) {
        return MHD_YES;
    }
    bool list = slot == &h->if_match || slot == &h->if_none_match;
    if (!*slot || !list) {
        *slot = *slot ? *slot : value;
        return MHD_YES;
    }
    char *buf = joined_lists[match ? 0 : 1];
    size_t have = strlen(*slot);
    if (have + 2 + strlen(value) >= CONDITIONAL_JOINED_MAX) {
        return MHD_YES; /* the lines so far */
    }
    if (*slot != buf) {
        memcpy(buf, *slot, have + 1);
    }
    snprintf(buf + have, CONDITIONAL_JOINED_MAX - have, ", %s", value);
    *slot = buf;
    return MHD_YES;
}

/* See exchange.h: one walk over the fields (four lookups walked them four times). */
void exchange_conditionals(struct MHD_Connection *conn, struct precondition_headers *out)
{
    *out = (struct precondition_headers){0};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, note_conditional, out);
}

/* One field for admission, from libmicrohttpd's iteration; MHD_NO stops
 * at the first refusal. */
static enum MHD_Result admit_field(void *cls, enum MHD_ValueKind kind, const char *name,
                                   size_t name_len, const char *value, size_t value_len)
{
    (void)kind; /* libmicrohttpd's signature */
    return admission_field(cls, name, name_len, value, value_len) ? MHD_YES : MHD_NO;
}

/* See exchange.h: the header block's bounds are the library's to tell
 * (library_header_block). */
unsigned exchange_admit(struct MHD_Connection *conn, struct exchange *ex, const char *method,
                        const char *version)
{
    size_t copied = strlen(ex->target);
    struct admission_head head = {
        .method = method,
        .version = version,
        .target = ex->target,
        .target_len = version ? library_target_length(ex->sent_uri, copied, version, ex->config->header_limit)
                         : copied,
        .copied_len = copied,
    };
    const char *from = NULL, *to = NULL;
    if (method) {
        library_header_block(conn, method, version, &from, &to);
    }
    struct admission a;
    admission_start(&a, from, to);
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, admit_field, &a);
    struct request_target t;
    unsigned refused = admission_finish(&a, &head, &t);
    ex->interim = a.expect;
    if (!refused && (t.form == REQUEST_FORM_ABSOLUTE || t.fragment)) { /* the log keeps what came */
        ex->sent_target = strdup(ex->target);
        admission_origin_form(ex->target, &t);
    }
    return refused;
}

/* See exchange.h. */
bool exchange_prefix(struct MHD_Connection *conn, struct exchange *ex)
{
    const struct config *c = ex->config;
    const char *sent = c->trust_proxy
        ? MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Forwarded-Prefix") : NULL;
    ex->prefix = c->base_path[0] ? c->base_path : NULL;
    if (!sent) {
        return true;
    }
    if (!url_prefix_clean(sent, ex->prefix_buf, sizeof(ex->prefix_buf))) {
        return false;
    }
    ex->prefix = ex->prefix_buf[0] ? ex->prefix_buf : NULL; /* "/": the proxy says none */
    return true;
}
