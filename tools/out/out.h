/* out.h - the report's outputs: each reads the model (analysis/analysis.h)
 * and writes it one way; none calls another, and nothing below calls them
 * (tools/README.md).  A new output is a new file here. */
#ifndef CONVGUARD_OUT_H
#define CONVGUARD_OUT_H
#include <stdio.h>

#include "analysis/analysis.h"

/* ---- text.c */
void print_text(struct analysis *a, FILE *out, bool verbose, bool all);

/* ---- json.c (docs/report-json.md) */
json_t *analysis_json(struct analysis *a);
void analysis_json_write(struct analysis *a, FILE *out); /* the same, streamed */

/* ---- html.c: the page written to path ("-": stdout); 0, or -1 with errno */
int write_html(struct analysis *a, const char *path);
#endif
