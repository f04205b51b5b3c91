/* health_probe — is this request folio's own `--health-check`?
 *
 * A container's HEALTHCHECK asks every few seconds; its lines would bury the
 * access log (one every 5 s in the image). The probe goes unlogged, and only
 * it: nothing a client sends can make a request of its own look like one
 * (see health_probe_is_own). Stateless; safe from any thread.
 */
#ifndef FOLIO_HEALTH_PROBE_H
#define FOLIO_HEALTH_PROBE_H

#include <stdbool.h>

struct MHD_Connection;

/* True when conn's request carries the probe's User-Agent and no proxy's
 * X-Forwarded-For, and conn comes from a loopback address whose socket
 * belongs to this process's own user (read from /proc/self/net/tcp and
 * tcp6: a client over the network, a proxy or another user on the machine
 * cannot own it). False whenever that cannot be told. */
bool health_probe_is_own(struct MHD_Connection *conn);

#endif
