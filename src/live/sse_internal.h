/*
 * sse_internal — what the unit tests observe of the hub beyond sse.h: a
 * wait until so many streams are streaming, or parked (suspended, waiting
 * for bytes), woken by the hub as they change, so a test awaits that state
 * instead of sleeping. Not for the server's own use.
 */
#ifndef FOLIO_SSE_INTERNAL_H
#define FOLIO_SSE_INTERNAL_H

#include "sse.h"

#include <stdbool.h>

enum sse_count {
    SSE_STREAMING, /* sse_hub_client_count */
    SSE_PARKED,    /* suspended by the hub, waiting for something to send */
};

/* Waits up to @ms until @what counts @want streams; true when it does. */
bool sse_hub_await(struct sse_hub *hub, enum sse_count what, size_t want, unsigned ms);

#endif
