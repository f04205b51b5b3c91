#include "exchange.h"

#include "base/config.h"
#include "base/settings.h"

#include <microhttpd.h>
#include <string.h>

#include "encoding.h"
#include "precondition.h"
#include "routes.h"

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
        .settings_generation = settings_generation(ex->config),
    };
}

/* See exchange.h. */
void exchange_conditionals(struct MHD_Connection *conn, struct precondition_headers *out)
{
    *out = (struct precondition_headers){
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Match"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Modified-Since"),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-Unmodified-Since"),
    };
}
