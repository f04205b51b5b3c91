/* facts — see facts.h. */
#include "facts.h"

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/config.h"
#include "base/settings.h"
#include "encoding.h"
#include "exchange.h"
#include "site/routes.h"

/* A list longer than this keeps the lines that fit: past 4 KiB of entity
 * tags. */
enum { CONDITIONAL_JOINED_MAX = 4096 };

static atomic_uint_fast64_t reads;

/* The field walk's state: the headers so far, and the exchange that owns
 * a list joined from several lines. */
struct walk {
    struct facts *f;
    struct exchange *ex;
    const char *accept_encoding, *fetch_dest; /* their first lines, as libmicrohttpd's lookup gives */
};

/* Appends value to the list in *slot, sent on an earlier line: repeated
 * list lines are one comma-separated list (RFC 9110 5.3). The joined list
 * is the exchange's (ex->joined[which]), freed with it. */
static void join_list(struct exchange *ex, int which, const char **slot, const char *value)
{
    size_t have = strlen(*slot), add = strlen(value);
    if (have + 2 + add >= CONDITIONAL_JOINED_MAX) {
        return; /* the lines so far */
    }
    char *joined = realloc(ex->joined[which], have + 2 + add + 1);
    if (!joined) {
        return; /* the lines so far: a weaker condition, never a wrong one */
    }
    if (*slot != ex->joined[which]) {
        memcpy(joined, *slot, have + 1);
    }
    snprintf(joined + have, 2 + add + 1, ", %s", value);
    ex->joined[which] = joined;
    *slot = joined;
}

/* Where the field called name goes in w, or NULL: every field of every
 * request comes here, so the first letter sorts them. */
static const char **slot_of(struct walk *w, const char *name)
{
    struct precondition_headers *h = &w->f->conditionals;
    switch (name[0] | 0x20) {
    case 'a':
        return strcasecmp(name, "Accept-Encoding") == 0 ? &w->accept_encoding : NULL;
    case 'i':
        return strcasecmp(name, "If-Match") == 0              ? &h->if_match
               : strcasecmp(name, "If-None-Match") == 0       ? &h->if_none_match
               : strcasecmp(name, "If-Modified-Since") == 0   ? &h->if_modified_since
               : strcasecmp(name, "If-Unmodified-Since") == 0 ? &h->if_unmodified_since
               : strcasecmp(name, "If-Range") == 0            ? &w->f->if_range
                                                              : NULL;
    case 'r':
        return strcasecmp(name, "Range") == 0 ? &w->f->range : NULL;
    case 's':
        return strcasecmp(name, "Sec-Fetch-Dest") == 0 ? &w->fetch_dest : NULL;
    }
    return NULL;
}

/* One request field (cls: a walk), read once here. A second line of
 * If-Match or If-None-Match extends the first; of the rest (a date is no
 * list) the first line counts, as a lookup would find it. */
static enum MHD_Result note_field(void *cls, enum MHD_ValueKind kind, const char *name, size_t name_len,
                                  const char *value, size_t value_len)
{
    (void)kind; (void)name_len; (void)value_len; /* libmicrohttpd's signature */
    struct walk *w = cls;
    const char **slot = value ? slot_of(w, name) : NULL;
    const struct precondition_headers *h = &w->f->conditionals;
    if (slot && *slot && (slot == &h->if_match || slot == &h->if_none_match)) {
        join_list(w->ex, slot == &h->if_match ? 0 : 1, slot, value);
    } else if (slot && !*slot) {
        *slot = value;
    }
    return MHD_YES;
}

/* Where a browser that said Sec-Fetch-Dest dest will load the answer. */
static enum facts_dest dest_of(const char *dest)
{
    if (!dest) {
        return FACTS_DEST_UNSAID;
    }
    return strcmp(dest, "document") == 0 || strcmp(dest, "iframe") == 0 || strcmp(dest, "frame") == 0 ||
                   strcmp(dest, "embed") == 0 || strcmp(dest, "object") == 0
               ? FACTS_DEST_DOCUMENT
               : FACTS_DEST_OTHER;
}

/* See facts.h: one walk over the fields. */
const struct facts *facts_of(struct MHD_Connection *conn, struct exchange *ex)
{
    if (ex->facts_read) {
        return &ex->facts;
    }
    atomic_fetch_add_explicit(&reads, 1, memory_order_relaxed);
    struct facts *f = &ex->facts;
    const struct config *c = ex->config;
    *f = (struct facts){0};
    struct walk w = {f, ex, NULL, NULL};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, note_field, &w);
    f->dest = dest_of(w.fetch_dest);
    f->entry = (struct entry_facts){
        .accept = encoding_parse(w.accept_encoding),
        .has_range = f->range != NULL,
        .production = c->production,
        .prefix = ex->prefix,
        .target = ex->target,
        .gzip_level = c->gzip_level,
        .brotli_quality = c->brotli_quality,
        .zstd_level = c->zstd_level,
        .settings_generation = settings_generation(c),
    };
    ex->facts_read = true;
    return f;
}

/* See facts.h. */
struct entry_facts facts_for_route(const struct facts *f, const struct route *route)
{
    struct entry_facts e = f->entry;
    e.document = route && (f->dest == FACTS_DEST_DOCUMENT || (f->dest == FACTS_DEST_UNSAID && !route->is_fragments));
    return e;
}

/* See facts.h. */
uint64_t facts_reads(void)
{
    return atomic_load_explicit(&reads, memory_order_relaxed);
}
