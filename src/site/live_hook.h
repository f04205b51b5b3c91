/* live_hook: all serving knows of live reload, handed to it by main.c.
 *
 * serve/ never includes a live/ header, nor live/ a serve/ one: preview
 * mode fills one of these (live/preview.c) and hands it to the server;
 * production hands NULL. Both know only this. What preview adds to a
 * request is exactly this: the client's two tags put into pages, its own
 * addresses under /__folio/ (the event stream, the scripts), two counters for
 * the health endpoint, and the end of the streams when the server stops.
 *
 * Every function may be called from any HTTP worker thread at once (stop
 * from the thread that stops the server); ctx must outlive the server.
 */
#ifndef FOLIO_LIVE_HOOK_H
#define FOLIO_LIVE_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct MHD_Connection;
struct MHD_Response;

struct serve_live_hook {
    void *ctx;
    /* Writes into out (NUL-terminated, truncated to size) the tag that
     * loads the live-reload client into a page depth folders deep. */
    void (*script_tag)(void *ctx, size_t depth, char *out, size_t size);
    /* The same for the client's first part, which goes before the page's
     * own scripts (html.h's html_early_offset). */
    void (*early_tag)(void *ctx, size_t depth, char *out, size_t size);
    /* Answers /__folio/<name> (health aside) on conn, for a HEAD when head:
     * a response with its headers, *status (200) and *bytes set, and
     * *unlogged true when its access-log line would be noise (a page's
     * report, taken: follow mode sends one a frame); NULL with *status 503
     * when there is no room, 404 when name is not preview's, 0 out of
     * memory. */
    struct MHD_Response *(*reserved)(void *ctx, struct MHD_Connection *conn, const char *name,
                                     bool head, unsigned *status, uint64_t *bytes, bool *unlogged);
    /* For /__folio/health: folders watched and event streams open. */
    void (*counts)(void *ctx, size_t *folders_watched, size_t *event_streams);
    /* The server stops: ends the event streams, so none holds it open. */
    void (*stop)(void *ctx);
};

#endif
