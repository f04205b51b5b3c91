#include "exchange.h"

#include "base/allowed_hosts.h"
#include "base/config.h"
#include "base/settings.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "admission.h"
#include "library.h"
#include "base/url_prefix.h"

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
        if (ex->sent_target && t.form == REQUEST_FORM_ABSOLUTE) { /* it names the host, not Host (RFC 9112 3.2.2) */
            ex->authority = ex->sent_target + (t.authority - ex->target);
            ex->authority_len = t.authority_len;
        }
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

/* See exchange.h. */
const char *exchange_host(struct MHD_Connection *conn, const struct exchange *ex, size_t *len)
{
    if (ex->authority) {
        *len = ex->authority_len;
        return ex->authority;
    }
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    *len = host ? strlen(host) : 0;
    return host;
}

/* See exchange.h. */
bool exchange_host_allowed(struct MHD_Connection *conn, const struct exchange *ex)
{
    size_t len;
    const char *host = exchange_host(conn, ex, &len);
    return !host || allowed_hosts_match(host, len, ex->config->allowed_hosts);
}
