/*
 * sse_internal — what the unit tests observe of the hub beyond sse.h: how
 * many streams are parked (suspended, waiting for bytes), so a test waits
 * for that state instead of sleeping. Not for the server's own use.
 */
#ifndef FOLIO_SSE_INTERNAL_H
#define FOLIO_SSE_INTERNAL_H

#include "sse.h"

/* Streams currently suspended by the hub, waiting for something to send. */
size_t sse_hub_parked_count(struct sse_hub *hub);

#endif
