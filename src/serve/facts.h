/* facts: what a request's headers say that its answer depends on, read
 * once per request into one struct that the stages after admission read.
 *
 * The codings it accepts, its conditionals (lists sent on several lines
 * joined), its Range and If-Range, where the browser will load it
 * (Sec-Fetch-Dest), with what the entry stage needs of the settings
 * snapshot and the proxy prefix. target.c (the ready look, the file's
 * representation, validators and range) and respond.c (the 404 page) read
 * it; none asks libmicrohttpd for a header again. Read on the request's
 * worker thread; its strings are libmicrohttpd's (valid until the request
 * completes) or held by the exchange.
 */
#ifndef FOLIO_FACTS_H
#define FOLIO_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "entry.h"
#include "precondition.h"

struct MHD_Connection;
struct exchange;
struct route;

/* Where the browser will load what it asked for (Sec-Fetch-Dest). */
enum facts_dest {
    FACTS_DEST_UNSAID,   /* no Sec-Fetch-Dest: judged by the route (facts_for_route) */
    FACTS_DEST_DOCUMENT, /* a page: document, iframe, frame, embed, object */
    FACTS_DEST_OTHER,    /* fetched by a script, an image, a stylesheet... */
};

struct facts {
    struct entry_facts entry;  /* its document judged for no route: see facts_for_route */
    enum facts_dest dest;
    struct precondition_headers conditionals;
    const char *range, *if_range; /* NULL: not sent */
};

/* ex's facts, read from conn's headers on the first call (its prefix and
 * target as they stand then: call it once they are settled); every later
 * call returns the same struct. */
const struct facts *facts_of(struct MHD_Connection *conn, struct exchange *ex);

/* What the entry stage needs of f for a file of route (NULL: none is
 * known): f's entry facts, with document judged for it. Without a
 * Sec-Fetch-Dest only fragments/ is taken to be fetched by script. Pure. */
struct entry_facts facts_for_route(const struct facts *f, const struct route *route);

/* How many requests had their facts read, since the process started: for
 * the tests that hold a request to one read. */
uint64_t facts_reads(void);

#endif
