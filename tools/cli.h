/* cli.h - what the convguard command's parts share: the trace set read from
 * disk, the rule table's types, and small formatting helpers. */
#ifndef CONVGUARD_CLI_H
#define CONVGUARD_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "model/model.h"

struct analysis;
struct analysis *analyse(struct trace_set *s);
void analysis_free(struct analysis *a);
int analysis_problems(struct analysis *a);
void print_text(struct analysis *a, FILE *out, bool verbose, bool all);
json_t *analysis_json(struct analysis *a);
void analysis_json_write(struct analysis *a, FILE *out); /* the same, streamed */
int write_html(struct analysis *a, const char *path);

int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_smoke(int argc, char **argv);
int cmd_inspect(int argc, char **argv);

/* doctor.c: fn(arg) in a forked child, its JSON answer ({error} when it died);
 * child_nvml: the driver and the GPUs with their memory holders, from NVML */
typedef json_t *(*probe_fn)(const char *arg);
json_t *probe(probe_fn fn, const char *arg);
json_t *child_nvml(const char *unused);

/* shared by run and smoke: the shim next to the binary or in ../lib */
char *find_shim(void);
/* runs argv with the shim preloaded; returns the exit status (128+sig) */
struct run_opts { const char *dir; bool fallback, quiet; long long ws_mb, reserve_mb; bool capture; /* relay.c */ };
int run_traced(const struct run_opts *o, char **argv, double *started);
/* the report of the traces in dir started at or after `since`, printed when
 * there are problems or `force`; returns the number of problems, -1 (and says
 * so) when no process of the run left a trace */
int report_recent(const char *dir, double since, FILE *out, bool force);

#endif
