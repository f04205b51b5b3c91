/* startup — see startup.h. */
#include "startup.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "resolve.h"
#include "routes.h"

int startup_config(struct config *c, int argc, char **argv, char **envp)
{
    return startup_config_help(c, argc, argv, envp, NULL);
}

int startup_config_help(struct config *c, int argc, char **argv, char **envp, const char *help)
{
    struct config_error err;
    switch (config_load(c, argc, argv, envp, &err)) {
    case CONFIG_OK:
        if (c->notes[0]) {
            fprintf(stderr, "%s\n", c->notes);
        }
        return -1;
    case CONFIG_EXIT:
        config_finish(c);
        return 0;
    case CONFIG_INVALID:
        break;
    }
    char *see = help ? strstr(err.message, "(see --help)") : NULL;
    if (see != NULL) {
        char tail[sizeof(err.message)];
        snprintf(tail, sizeof(tail), "%s", see + strlen("(see --help)"));
        snprintf(see, sizeof(err.message) - (size_t)(see - err.message), "(see %s)%s", help, tail);
    }
    config_error_print(&err, stderr);
    config_finish(c);
    return 2;
}

bool startup_routes(struct routes *r, struct config *c, const char *who, bool *openat2)
{
    *r = (struct routes){0};
    struct config_error bad;
    if (!config_check_routes(c, &bad, stderr)) {
        config_error_print(&bad, stderr);
        return false;
    }
    char err[512];
    if (!routes_open(r, c, err, sizeof(err))) {
        fprintf(stderr, "%s: %s\n", who, err);
        return false;
    }
    /* The first route's folder: resolve.c probes openat2 beneath it. */
    *openat2 = resolve_init(r->count ? r->items[0].dir_fd : AT_FDCWD);
    return true;
}
