/* check_report — a check_report (check.h) printed: compiler-style text for
 * a terminal and an editor, one JSON object for tools (schema in
 * docs/check.md), and the JSON pieces the live panel's events are made of
 * (check_live.c). The formats are an interface: tests/integration/
 * test_check.py holds them.
 *
 * Pure output to a FILE; no state, safe from any thread.
 */
#ifndef FOLIO_CHECK_REPORT_H
#define FOLIO_CHECK_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "check.h"

/* Compiler-style lines (errors, then warnings) and one summary line. */
void check_print_text(const struct check_report *r, FILE *out);

/* The whole report as one JSON object (schema in docs/check.md). */
void check_print_json(const struct check_report *r, FILE *out);

/* One problem as a JSON object, for the live event stream too. */
void check_print_problem_json(const struct check_problem *p, FILE *out);

/* The summary line, without a newline, into @out. */
void check_summary(const struct check_report *r, char *out, size_t size);

#endif
