/* allowed_hosts: the Host names a preview answers (DNS rebinding).
 *
 * A page on another site can make a browser resolve its own name to
 * 127.0.0.1 (DNS rebinding) and then read, same-origin for the browser,
 * what the preview serves: the author's unpublished article and its event
 * stream. The name the browser used is in the Host field, so a preview
 * answers only names rebinding cannot use: an IP address literal (any:
 * rebinding needs a name, and a phone reaching a container through the
 * host's LAN address sends that address), localhost and its subdomains
 * (RFC 6761: they resolve to loopback, never through DNS), and the names
 * --allowed-hosts gives (as Vite's and webpack's dev servers check). A
 * production server answers any Host: a proxy or its operator chooses.
 *
 * The list: names separated by commas; ".example.org" also allows every
 * name under example.org; "*" allows every name (the check off). Names are
 * compared without case and without a final dot.
 *
 * Pure; thread-safe.
 */
#ifndef FOLIO_ALLOWED_HOSTS_H
#define FOLIO_ALLOWED_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

/* True when list is a well-formed --allowed-hosts value (see above). */
bool allowed_hosts_valid(const char *list);

/* True when a Host field's value (len bytes; host, then ":port" maybe, as
 * admission checked it) names an address the preview answers, list being
 * --allowed-hosts ("" for none). */
bool allowed_hosts_match(const char *host, size_t len, const char *list);

/* The name in a Host field's value, without its port: its length. */
size_t allowed_hosts_name_length(const char *host, size_t len);

#endif
