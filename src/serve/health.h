/* health: `folio --health-check [URL]`, a client for a running folio.
 *
 * A container's HEALTHCHECK and a platform's probe need a check that works
 * in an image without curl: one GET of /__folio/health over a plain socket,
 * bounded by a timeout, 200 or not. No state; safe from any thread.
 */
#ifndef FOLIO_HEALTH_H
#define FOLIO_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

struct config;

/* The User-Agent of the check's request: the server leaves its own probe
 * out of the access log by it, and by more (serve/health_probe.h). */
#define HEALTH_USER_AGENT "folio-health-check"

/* The URL the check asks when none is given: the server these settings
 * would start, on loopback when it binds all addresses. False (reason in
 * err) when the settings cannot name one (port 0). */
bool health_default_url(const struct config *c, char *url, size_t url_size, char *err,
                        size_t err_size);

/* GET url (http://host[:port][/path]; a path not ending in __folio/health
 * gets it appended) within timeout_ms. 0 when the answer is 200, 1 when
 * it is not or none came (reason in err), 2 when url is not such a URL. */
int health_check(const char *url, unsigned timeout_ms, char *err, size_t err_size);

#endif
