/* startup — what `folio` and `folio check` do first, the same way: the
 * settings from every layer (config.c), then the article's folders checked
 * (each missing one named with where it was set), opened (routes.c) and
 * handed to the resolver (resolve.c). One place, so the checker reads an
 * article exactly as the server would serve it.
 *
 * Errors go to stderr once, where the cause is known; the caller only
 * exits. Start-up path only: not thread-safe (resolve_init is process-wide).
 */
#ifndef FOLIO_STARTUP_H
#define FOLIO_STARTUP_H

#include <stdbool.h>

struct config;
struct routes;

/* Loads the settings of @argv and @envp into @c. -1 when the caller goes on
 * (then it owns @c); otherwise the exit status, @c already finished: 0
 * after --help or --version, 2 for bad settings (the reason on stderr). */
int startup_config(struct config *c, int argc, char **argv, char **envp);

/* startup_config for a subcommand: a bad option's "(see --help)" names
 * @help instead ("folio check --help"), which lists the subcommand's own. */
int startup_config_help(struct config *c, int argc, char **argv, char **envp, const char *help);

/* Checks the route folders of @c (a default one that is absent is not
 * mounted, one line on stderr saying so), opens them into @r and sets the resolver
 * up on them. False (one line on stderr, "@who: " before routes.c's
 * reasons) when a folder is missing or cannot be opened: exit 2, nothing to
 * close. *@openat2 false when the resolver must do without openat2 (then no
 * symlink is followed); saying so is the caller's choice. */
bool startup_routes(struct routes *r, struct config *c, const char *who, bool *openat2);

#endif
