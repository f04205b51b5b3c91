/* check_cli — see check_cli.h. */
#include "check_cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/escape.h"
#include "check.h"
#include "check_report.h"
#include "site/routes.h"
#include "site/startup.h"

/* What the command line asks of check itself; the rest is settings. */
struct check_cli {
    bool json;   /* --format json; text otherwise */
    bool strict; /* --strict: anchors no source names are errors even where scripts run */
};

/* `folio check --help`. */
static void check_usage(FILE *out)
{
    fputs("usage: folio check [--root DIR] [--base-path /prefix] [--format text|json] [--strict]\n"
          "                   [server options: see folio --help]\n"
          "Finds every broken reference of the article: each src, href, srcset, poster, data,\n"
          "url() and @import of its HTML and CSS, each fragment element, each in-page anchor,\n"
          "resolved as a browser does and served as folio would serve it. External URLs are\n"
          "listed (--format json), never fetched. Reads the same config file and environment\n"
          "as the server.\n"
          "An anchor whose id is in no source of a page that runs scripts is a warning\n"
          "(unverified-anchor: a script may make the id); --strict makes it an error.\n"
          "Exit status: 0 clean, 1 errors, 2 could not run.\n",
          out);
}

/* Takes check's own flags out of @argv into @cli, and the rest, after
 * "folio", into @rest (NULL-terminated) for the settings. -1 when the run
 * goes on; otherwise the exit status: 0 after --help, 2 for a bad --format
 * (the reason on stderr). */
static int check_args(int argc, char **argv, struct check_cli *cli, char **rest, int *nrest)
{
    *nrest = 0;
    rest[(*nrest)++] = "folio";
    for (int i = 1; i < argc; i++) {
        const char *format = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            check_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "folio check: --format needs a value (text or json)\n");
                return 2;
            }
            format = argv[++i];
        } else if (strncmp(argv[i], "--format=", 9) == 0) {
            format = argv[i] + 9;
        } else if (strcmp(argv[i], "--strict") == 0) {
            cli->strict = true;
            continue;
        } else {
            rest[(*nrest)++] = argv[i];
            continue;
        }
        if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
            fputs("folio check: --format: '", stderr);
            escape_fputs(format, stderr);
            fputs("' is not text or json\n", stderr);
            return 2;
        }
        cli->json = strcmp(format, "json") == 0;
    }
    rest[*nrest] = NULL;
    return -1;
}

/* One run over the opened article, printed to stdout; the exit status. */
static int check_article(const struct routes *routes, const struct config *config,
                         const struct check_cli *cli)
{
    char err[512];
    struct check_options o = {.base_path = config->base_path, .unreferenced = true, .strict = cli->strict};
    struct check_report *rep = check_run(routes, &o, err, sizeof(err));
    if (rep == NULL) {
        fputs("folio check: ", stderr);
        escape_fputs(err, stderr);
        fputc('\n', stderr);
        return 2;
    }
    (cli->json ? check_print_json : check_print_text)(rep, stdout);
    int status = rep->errors ? 1 : 0;
    check_report_free(rep);
    /* A report that did not reach its reader is no clean bill. */
    return fflush(stdout) == 0 || status != 0 ? status : 2;
}

int check_main(int argc, char **argv, char **envp)
{
    /* The rest of argv, for the settings: "folio" first, NULL last. */
    char **rest = calloc((size_t)argc + 2, sizeof(*rest));
    if (rest == NULL) {
        return 2;
    }
    struct check_cli cli = {0};
    struct config config;
    int nrest = 0;
    int status = check_args(argc, argv, &cli, rest, &nrest);
    if (status < 0) {
        status = startup_config_help(&config, nrest, rest, envp, "folio check --help");
    }
    free(rest); /* the settings keep copies; nothing looks at rest again */
    if (status >= 0) {
        return status;
    }
    struct routes routes;
    bool openat2; /* check says nothing of it: its output is its report */
    if (!startup_routes(&routes, &config, "folio check", &openat2)) {
        config_finish(&config);
        return 2;
    }
    status = check_article(&routes, &config, &cli);
    routes_close(&routes);
    config_finish(&config);
    return status;
}
