/* check_cli — the command line of `folio check`: its own flags (--format,
 * --help), then every other setting as the server reads it (startup.h: the
 * same config file, environment and route folders), one run (check.h), the
 * report printed (check_report.h), and the exit status.
 */
#ifndef FOLIO_CHECK_CLI_H
#define FOLIO_CHECK_CLI_H

/* `folio check [--root DIR] [--base-path /prefix] [--format text|json]` and
 * every other setting as the server reads it (config file, environment):
 * exit status 0 clean, 1 errors, 2 could not run. @argv[0] is "check". */
int check_main(int argc, char **argv, char **envp);

#endif
