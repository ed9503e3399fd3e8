/* cli.h - the commands of convguard (convguard.c dispatches to them) and
 * what they share with each other.  The layers below have headers of their
 * own: util/util.h, model/model.h, rules/rules.h, analysis/analysis.h,
 * out/out.h (tools/README.md). */
#ifndef CONVGUARD_CLI_H
#define CONVGUARD_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "util/util.h"

int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_smoke(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_kernel(int argc, char **argv); /* kernel.c */
int cmd_step_report(int argc, char **argv); /* step_report.c: the Slurm plugin's report of a failed step */
/* jobdir.c: the step folders of Slurm job JOB under roots (none: the plugin's dir= of plugstack.conf),
 * sorted, NULL-terminated, *n of them; NULL (and said why) when none */
char **job_folders(const char *job, char **roots, int nroots, int *n);
void job_folders_free(char **v);

/* shared by run and smoke: the shim next to the binary or in ../lib */
char *find_shim(void);
/* runs argv with the shim preloaded; returns the exit status (128+sig).
 * status: where the wait status goes, and signals after the program's end
 * end convguard as the program ended (NULL: the handlers as they were) */
struct run_opts { const char *dir; bool fallback, quiet; long long ws_mb, reserve_mb; bool capture; /* relay.c */
                  int *status;
                  int *exec_errno; /* where the errno of a failed exec goes (0: it ran); NULL: not asked */ };
int run_traced(const struct run_opts *o, char **argv, double *started);
/* the report of the traces in dir started at or after `since`, printed when
 * there are problems or `force`; returns the number of problems, -1 (and says
 * so) when no process of the run left a trace */
int report_recent(const char *dir, double since, FILE *out, bool force);

#endif
