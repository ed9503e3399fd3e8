/* cli.h - what the convguard command's parts share: the trace set read from
 * disk, the rule table's types, and small formatting helpers. */
#ifndef CONVGUARD_CLI_H
#define CONVGUARD_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "model/model.h"

/* ---- report.c */
struct rule {
    const char *id, *layer, *severity, *group, *pattern;
    bool (*match)(struct trace_set *s, size_t ti, json_t *ev, json_t *vars);
    const char *title, *symptom, *cause, *fix;
};
extern const struct rule rules[];
extern const size_t n_rules;

struct failure_text { const char *pattern, *text; };
extern const struct failure_text failure_texts[];
extern const size_t n_failure_texts;
/* hands every pattern of both tables to the reader (trace_keep_pattern):
 * before the first trace is read */
void rules_keep_events(void);

char *expand(const char *tmpl, json_t *vars, json_t *ev);  /* {path[:fmt]} */
bool is_failure_event(struct trace *t, size_t i);          /* also: unresolved loads */
char *describe_event(json_t *ev);                          /* "#8 cudnnCreate -> ..." */
/* rules_versions.c: a cuDNN file's own version (its lib event, its file name,
 * the names it probed), -1 unknown */
long long cudnn_file_version(struct trace *t, const char *path);
/* rules_fw.c: "you see" in the words of the process's framework (takes text) */
char *frame_symptom(struct trace_set *s, size_t ti, char *text);

/* ---- rules_code.c: the rules about GPU code and the driver's log */
bool m_code_arch(struct trace_set *s, size_t ti, json_t *ev, json_t *vars);
bool m_ptx_version(struct trace_set *s, size_t ti, json_t *ev, json_t *vars);
bool m_driver_error(struct trace_set *s, size_t ti, json_t *ev, json_t *vars);
bool m_code_no_fit(struct trace_set *s, size_t ti, json_t *ev, json_t *vars);
/* The driver's messages that explain ev, quoted: "No device ..." "Returning 209 ...", or NULL. */
char *driver_words(struct trace *t, json_t *ev);

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
