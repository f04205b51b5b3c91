/* settings: the running configuration as an immutable snapshot.
 *
 * A struct config is never written once it is published here. SIGHUP builds
 * a whole new one (config_load, config_check_routes, config_settle) and
 * settings_publish swaps it in with one pointer store; a request takes the
 * snapshot current at its start (settings_acquire) and keeps it to its end,
 * so every setting it reads is of one generation, and nothing it holds is
 * freed under it. The old snapshot is freed by whoever drops its last
 * reference: no thread ever waits for another.
 *
 * Why a mutex round the acquire: loading the pointer and counting the
 * reference must be one step, or a publish in between could free what was
 * loaded. The lock covers those two instructions only (never a send, never
 * an allocation), one acquire per request; a lock-free scheme (hazard
 * pointers, epochs) would cost more code than it could save here.
 *
 * Thread-safe: every function may be called from any thread.
 */
#ifndef FOLIO_SETTINGS_H
#define FOLIO_SETTINGS_H

#include "config.h"

struct settings;

/* Takes first (moved out: the caller's struct is zeroed) as the first
 * snapshot. NULL when memory runs out (first is then finished). */
struct settings *settings_create(struct config *first);

/* Frees the current snapshot; every acquired one must have been released.
 * Accepts NULL. */
void settings_destroy(struct settings *s);

/* The current snapshot, with one reference for the caller. Never NULL. */
const struct config *settings_acquire(struct settings *s);

/* Drops a reference taken by settings_acquire; accepts NULL. */
void settings_release(struct settings *s, const struct config *c);

/* Makes fresh the current snapshot (moved out, as in settings_create); the
 * one it replaces lives on until its last reader releases it. False when
 * memory runs out: then nothing changed and fresh is finished. */
bool settings_publish(struct settings *s, struct config *fresh);

/* How many snapshots have been published before the current one (0 at
 * start): a key for what was built from one generation's settings. */
unsigned settings_generation(const struct config *c);

#endif
