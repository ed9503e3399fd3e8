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

/* ---- the commands' own outputs, of what host/ read */
struct proc_view;
/* inspect_text.c: a running process's snapshot and its findings */
void inspect_print(const struct proc_view *p, struct analysis *a, FILE *out);
/* json.c: the same as JSON (`inspect --json`), with the command's exit status */
json_t *snapshot_json(const struct proc_view *p, struct analysis *a, int rc);
/* doctor_text.c: `convguard doctor`'s result (its --json) as text on stdout */
void doctor_print(json_t *r);
/* smoke_text.c: on stdout, as smoke runs: which cuDNN (want: --cudnn's; who
 * and path: the framework's; loader: what a bare libcudnn.so.9 gets), each
 * step as it starts and ends (host/conv.c's conv_report), the end */
void smoke_say_choice(const char *want, const char *who, const char *path, const char *loader);
void smoke_say_traces(const char *dir);
void smoke_step(const char *what);
void smoke_ok(const char *detail);
void smoke_failed(const char *why);
void smoke_say_passed(double worst, double seconds);
void smoke_say_failed(double seconds);
#endif
