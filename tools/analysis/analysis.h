/* analysis.h - the report's model: a trace set analysed (the processes
 * summed up, their findings, grouped, the first failure, the
 * inconsistencies).  The outputs (out/) read it; analysis/ calls rules/,
 * model/, host/ and util/ only, and nothing in it prints (tools/README.md). */
#ifndef CONVGUARD_ANALYSIS_H
#define CONVGUARD_ANALYSIS_H
#include "rules/rules.h"

struct finding {
    const struct rule *r;
    size_t ti;      /* the process */
    json_t *ev;     /* the event that matched (borrowed), NULL for whole-process rules */
    json_t *vars;   /* facts for the texts (owned) */
    int count;      /* how many events matched */
    char *title, *symptom, *seen, *cause, *fix;
    char *driver;   /* the driver's own words about it, quoted (rules/code.c), or NULL */
    int block;      /* index of the first finding with the same rule, cause and fix */
    /* where it stands against how its process ended (outcome.c, issue 27 item 2) */
    const char *severity; /* what it is in this run: the rule's, "warning" for an error in a process that
                           * exited 0, "note" for a failure the same library went on from */
    char *went_on;  /* the evidence that the library went on working after it, NULL */
    int tier;       /* 0 what the process died of, 1 a failure before it never recovered from, 2 context */
    double dist;    /* seconds between its event and the process's end (0: the final line) */
    bool borrowed;  /* its texts are another finding's: an alike process's (analyse.c) */
};

/* What happened to a process (outcome.c): how it ended, and the final error
 * line of what it printed.  Every report starts from these. */
enum outcome_kind {
    OC_OK,      /* exit status 0, nothing fatal printed */
    OC_ENDED,   /* ran to exit(), status not recorded (no capture of its run), nothing fatal printed */
    OC_UNKNOWN, /* no exit line, no crash, no status: killed, _exit, or its trace is cut */
    OC_FAILED,  /* a non-zero exit status, a fatal signal, or an exception line of its own */
};
struct outcome {
    enum outcome_kind kind;
    int status;        /* exit status, -1 not recorded */
    int signal;        /* the signal it died of, 0 none */
    json_t *line;      /* the final error line of its output (an `output` event, borrowed), NULL */
    bool explained;    /* an error finding of the process explains it */
    /* told on the first process that read a run's output, when no traced process owns it: */
    json_t *run;       /* that run's output_capture event, NULL */
    json_t *run_line;  /* its exception line (the program `run` started exited 0), NULL */
    int run_status;    /* the exit status of that program, -1 */
    bool run_ok;       /* its status is not recorded, but it ran to exit() in a run whose program exited 0
                        * and printed no exception of its own: a failure in it was recovered from */
    bool others_lines; /* it did not fail, and the output it shares with a process that failed is that one's */
};

struct proc_sum {
    char *label, *prog;
    const char *cudnn_path, *cudart_path, *driver_path;
    const char *driver_origin; /* whose libcuda it is (diagnose.c diag_lib_origin), NULL: not loaded */
    long long cudnn_ver, cudnn_built_for, cudart_ver, driver_ver;
    bool cudnn_mixed;
    char *cudnn_mix;  /* "libcudnn_graph.so.9 9.14.0 from /usr/lib/..." : parts of other versions */
    int nlibs, nparts, nfail, nfind;
    int main_group;   /* the group of its first finding (a->groups), -1 */
    int first_f;      /* its first finding (a->f), -1 */
    double fail_t;    /* `t` of its first failure, -1: none */
    json_t *fail_ev;  /* that failure (borrowed) */
    char *incomplete; /* what its trace lacks ("the trace of pid 77 is incomplete: ..."), NULL: whole */
    struct outcome out;
    int f_begin, f_end; /* its findings: a->f[f_begin..f_end) */
    int f_rules;        /* the end of those the rules found (outcome.c's come after) */
    int f_extra;        /* and a run-level one told on it (outcome_run_findings), -1 */
};

/* A set of processes, as indexes into the trace set, in set order. */
struct procs { size_t *i; size_t n, cap; };

/* One block: the processes with the same finding (rule, cause, fix). */
struct block { int head; struct procs p; int group; };

/* One group: blocks of one rule whose texts differ only in their numbers
 * (the free memory, a pid): told once, the variants below it. */
struct fgroup { int *blocks; int nb; struct procs p; int tier; double dist; /* of its best finding */ };

/* Processes alike in the table: the same program, libraries and verdict. */
struct pgroup { char *line; struct procs p; };

/* What happened after the first failure, by kind (first_failure). */
enum after_kind { AFTER_SAME, AFTER_KILLED, AFTER_TIMEOUT, AFTER_STOPPED, AFTER_OTHER, AFTER_KINDS };
struct after { struct procs p; double dt_min, dt_max; json_t *signals; /* {SIGABRT: n} */ };

struct first_failure {
    int proc;          /* -1: no process failed */
    double wall;       /* its wall-clock time */
    int rival;         /* the next failure on another host, -1 */
    double rival_dt;
    struct after after[AFTER_KINDS];
    size_t quiet;      /* others that ran on without a failure */
};

/* Where the GPU's memory was at a memory failure (memory.c): the bar's parts
 * in order, other processes first, free last. */
enum mem_part_kind { MP_OTHER, MP_POOL, MP_SELF, MP_UNKNOWN, MP_FREE };
struct mem_part {
    enum mem_part_kind kind;
    long long bytes;  /* -1: not known (listed, not drawn) */
    long long pid;    /* MP_OTHER: the holder's, -1 for the folded rest */
    char *label;      /* "pid 16879 (sleep)", "this process: JAX's pool (one block of 139.2 GiB)", "free" */
};
struct mem_picture {
    size_t ti;        /* the process */
    int group;        /* the problem (a->groups) */
    json_t *ev;       /* the event it was read from (borrowed) */
    long long total, free;
    long long request;   /* what failed asked for, -1: not recorded */
    char *request_text;  /* "cuMemAlloc_v2 of 8 MiB", "cudnnCreate: its cuMemAlloc_v2 of 8 MiB" */
    bool holders_known;  /* NVML listed who holds memory */
    char *title;         /* "GPU memory when cudnnCreate failed (#13, pid 77; a 1.0 GiB GPU, NVML device index:0)" */
    char *note;          /* why the holders are not known, NULL */
    struct mem_part *parts;
    int nparts;
};

struct analysis {
    struct trace_set *s;
    struct finding *f;
    size_t nf, capf;
    struct proc_sum *p;
    json_t *incons;   /* [{what, text, values: [{value, processes: [label], count, who}]}] */
    int nhosts, nblocks;
    struct block *blocks;
    struct fgroup *groups;  /* in rule-table order */
    int ngroups;
    struct pgroup *pgroups;
    int npgroups;
    struct first_failure ff;
    int nincomplete;  /* processes whose trace is incomplete (complete.c) */
    int nfailed;      /* processes whose outcome is OC_FAILED (outcome.c) */
    int nunowned;     /* runs whose failure no traced process owns (outcome.c) */
    struct mem_picture *pics; /* memory failures, one per problem, at most 4 (memory.c) */
    int npics;
};

/* ---- analyse.c */
/* a process the table lists (one that touched a CUDA library, failed or has a
 * finding; the only one of a set of one) */
bool analysis_in_table(struct analysis *a, size_t i);
struct analysis *analyse(struct trace_set *s);
int analysis_problems(struct analysis *a); /* findings told once, plus inconsistencies */
void analysis_free(struct analysis *a);

/* ---- complete.c: a->p[i].incomplete; a report with one is never "no problem found" */
void judge_completeness(struct analysis *a);
int analysis_incomplete(struct analysis *a);

/* ---- outcome.c: how each process ended, first (issue 27 items 1, 2) */
void judge_outcomes(struct analysis *a);   /* a->p[i].out; before the rules */
/* after the rules of process ti: if it failed and no error finding explains
 * it, the plain truth (rule process_failed); each of its findings' tier,
 * distance and severity */
void outcome_findings(struct analysis *a, size_t ti);
/* "exit 1", "killed by SIGSEGV", "exit 0", "ran to exit() (status not recorded)", "no exit line" */
char *outcome_how(struct analysis *a, size_t i);
/* "pid 8118 failed (exit 1): \"RuntimeError: ...\"": the outcome of every process, grouped */
char *outcome_summary(struct analysis *a);
bool finding_counts(const struct finding *f); /* a problem: not a note */
/* the library went on working after ev, the event rule r matched: its finding
 * is context and silences no other rule (findings.c) */
bool went_on_from(struct analysis *a, size_t ti, const struct rule *r, json_t *ev);
/* after every process's rules: a run's failure no traced process owns (an
 * exception while the program `run` started exited 0; that program failed
 * with no trace of its own), told once */
void outcome_run_findings(struct analysis *a);

/* ---- diagnose.c: THE diagnosis of a process's facts (issue 27): verdicts
 * derived from its lib events, cuDNN's parts told apart (one version from two
 * folders, or two installs), the likely cause of failed creates and
 * executions; added to its events before the rules run.  Also asked by
 * doctor of the files on disk. */
void diagnose_trace(struct trace *t);
bool diag_driver_older(long long driver, long long runtime);   /* both known, driver < runtime */
bool diag_parts_mixed(long long ver_a, long long ver_b, long long built_a, long long built_b);
/* cuDNN files' versions and builds (<= 0: unknown): "one_version", "mixed" or "unknown" */
const char *diag_parts(const long long *ver, const long long *built, size_t n);
bool diag_low_free(long long free_bytes);                        /* known and under CG_LOW_FREE_BYTES */
/* what kind of file a CUDA-family library is, read from its path (lib event or doctor's file):
 * "driver", "forward_compat", "toolkit_stub", "wheel", "conda", "toolkit", "system_package", "copy";
 * and the words for it ("a CUDA toolkit's link stub") */
const char *diag_lib_origin(const char *path, const char *family);
const char *diag_origin_words(const char *origin);

/* ---- findings.c: the rules applied to process ti, its findings added */
struct finding *finding_new(struct analysis *a); /* appended to a->f, zeroed */
void apply_rules(struct analysis *a, size_t ti);

/* ---- procs.c: a->p[ti] filled; the texts of a process's libraries */
void summarise(struct analysis *a, size_t ti, struct procs *fails); /* fails: its failure events' indexes, or NULL */
/* ti alike to `like` (the same events, model.h): its sum, its own name and first failure by its clock */
void summarise_alike(struct analysis *a, size_t ti, size_t like, const struct procs *fails);
char *lib_summary(struct proc_sum *p);
char *lib_short(struct proc_sum *p);

/* ---- compare.c: a->incons, the same library loaded differently across processes */
void compare_processes(struct analysis *a);

/* ---- group.c */
void procs_add(struct procs *p, size_t i);
void procs_free(struct procs *p);
char *hosts_text(struct analysis *a, const struct procs *p); /* "node0-node125" */
/* "rank 37 (node4:1234)" for one, "ranks 0-999 on node0-node125" for more */
char *who_text(struct analysis *a, const struct procs *p);
/* "1000 processes: ranks 0-999 on node0-node125", or the one label */
char *who_counted(struct analysis *a, const struct procs *p);
void group_findings(struct analysis *a);  /* blocks and groups */
void group_processes(struct analysis *a, bool (*shown)(struct analysis *, size_t));
void analysis_groups_free(struct analysis *a);

/* ---- memory.c: a->pics, after the groups */
void memory_pictures(struct analysis *a);
long long mem_picture_span(const struct mem_picture *m); /* the bytes the whole bar stands for */
const char *mem_part_kind_name(enum mem_part_kind k);   /* "other_process", "pool", "self", "unknown", "free" */
void mem_picture_free(struct mem_picture *m);

/* ---- first_failure.c */
void find_first_failure(struct analysis *a);
char *first_failure_head(struct analysis *a);  /* "rank 3 (h:1) at 2026-... UTC, 7.07 s after it started: #8 ..." */
char *after_text(struct analysis *a, enum after_kind k); /* one line per kind, NULL when none */
char *clock_note(struct analysis *a);    /* NULL when one host */

/* ---- machine.c: `convguard doctor`'s verdict on its result r (the copies,
 * the picks, NVML); cvd: CUDA_VISIBLE_DEVICES as doctor found it */
json_t *machine_verdict(json_t *r, const char *cvd);
#endif
