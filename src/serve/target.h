/* target: a GET or HEAD past admission, from its target to its answer.
 *
 * Decodes and normalises the path once (resolve.c), sends "//" spellings
 * and bare folders to their address, answers folio's own addresses under
 * /__folio/ (health; the rest through the live hook), matches a route and
 * serves the file beneath it: from a ready response when there is one
 * (ready.h), else opened, represented (entry.h), validated and ranged
 * (precondition.c, range.c). Runs on the request's worker thread.
 */
#ifndef FOLIO_TARGET_H
#define FOLIO_TARGET_H

#include <microhttpd.h>

struct exchange;

/* Answers ex (its target in origin form, its prefix known) on conn. */
enum MHD_Result target_serve(struct MHD_Connection *conn, struct exchange *ex);

#endif
