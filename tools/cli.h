/* cli.h - what the convguard command's parts share: the trace set read from
 * disk, the rule table's types, and small formatting helpers. */
#ifndef CONVGUARD_CLI_H
#define CONVGUARD_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

/* ---- trace_read.c: one trace file = one process image */
struct read_stats {
    long lines;          /* newline-terminated lines plus a last unterminated one */
    long events;         /* lines that parsed as an event object */
    long bad_lines;      /* not JSON, not an object, or without "ev" */
    long huge_lines;     /* longer than 1 MiB (read anyway) */
    long cut_lines;      /* lines the shim marked "truncated": true */
    long fixed_utf8;     /* lines with bytes that were not UTF-8 (replaced by '?') */
    long seq_gaps;       /* missing seq numbers: lost lines */
    bool last_line_cut;  /* the file ended inside a line that did not parse */
    long elided;         /* events read and counted, not kept: past the cap of their kind */
};

/* What the timeline needs of every event, kept for all of them (bounded):
 * free GPU memory readings and the sizes asked for. */
enum tl_kind { TL_FREE, TL_ALLOC, TL_WS, TL_FB };
struct tl_point { float t; unsigned char kind; long long v; };

/* One trace file, read once, line by line: its events are judged one at a
 * time and only those some row of rules.def could look at are kept (see
 * trace_read.c); the rest are counted. */
struct trace {
    char *file;
    json_t *events;       /* the kept events, in file order (owned) */
    json_t *start, *exit; /* borrowed from events; NULL when absent */
    struct read_stats st;
    long long pid, ppid, forked_from, rank; /* -1: unknown */
    const char *host;     /* "?" when unknown */
    double wall;          /* wall-clock seconds of the shim's start, 0 unknown */
    int parent;           /* index of the parent process in the set, -1 */
    bool execd;           /* no exit line, but a later file of the same pid and host: it exec'd */
    double t_last;        /* the largest `t` of any event: when the trace ends */
    json_t *elided;       /* {event name: events not kept}, NULL when none */
    struct tl_point *tl;  /* the timeline: at most TL_MAX points, evenly thinned */
    int ntl, tl_stride;
    long tl_seen;
    long long tl_top;     /* the largest value on it, or mem.total */
};

/* the reader marks a failed dlopen that a later load resolved (load_resolved) */
#define RESOLVED_KEY "_convguard_resolved"

struct trace_set {
    struct trace *t;
    size_t n, cap;
    json_t *unreadable;   /* [{path, error}] */
};

int trace_read_file(const char *path, struct trace *out); /* 0, or -1 with errno */
void trace_free(struct trace *t);
/* file or directory (read a few levels down); the files are read in parallel
 * (CONVGUARD_REPORT_THREADS, default: the cores, at most 8) */
int trace_set_add(struct trace_set *s, const char *path);
void trace_set_link(struct trace_set *s);                   /* parents, sort order */
void trace_set_free(struct trace_set *s);
/* Keep only traces whose start is at or after `since` (wall seconds). */
void trace_set_keep_since(struct trace_set *s, double since);

/* ---- json_scan.c: is this line one JSON object (as jansson judges it), and
 * its top-level ev, seq, t, pid, truncated, workspace and mem.free/total */
struct json_scan {
    const char *ev;                  /* into the line; not NUL-terminated */
    size_t ev_len;
    bool has_ev, ev_escaped, has_seq, truncated;
    bool high_bytes;                 /* bytes >= 0x80 inside strings */
    bool escaped_key;                /* a top-level key with an escape: the picks may miss it */
    long long seq, pid, workspace, mem_free, mem_total; /* -1: absent */
    double t;
};
bool json_scan_line(const char *line, size_t n, struct json_scan *out);

/* ---- group.c: host names in natural order ("node2" before "node10") */
int natural_cmp(const char *a, const char *b);

/* ---- json helpers (util.c): every accessor tolerates NULL and wrong types */
json_t *jget(json_t *obj, const char *dotted_path);
const char *jstr(json_t *obj, const char *path, const char *dflt);
long long jint(json_t *obj, const char *path, long long dflt);
double jnum(json_t *obj, const char *path, double dflt);
bool jtrue(json_t *obj, const char *path);
bool jhas(json_t *obj, const char *path); /* present and not null/false */

/* ---- formatting helpers (util.c) */
const char *status_name(const char *fn, long long status);
char *fmt_size(long long bytes, char *buf, size_t n);      /* "1.5 GiB" */
char *fmt_cudnn_ver(long long v, char *buf, size_t n);     /* 91900 -> "9.19.0" */
char *fmt_cuda_ver(long long v, char *buf, size_t n);      /* 13000 -> "13.0" */
const char *base_name(const char *path);
char *dir_name(const char *path, char *buf, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a growing string */
struct sbuf { char *s; size_t len, cap; };
void sb_add(struct sbuf *b, const char *s);
void sb_addn(struct sbuf *b, const char *s, size_t n);
void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_take(struct sbuf *b); /* never NULL */

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

bool pattern_match(const char *pattern, json_t *ev);       /* see rules.def */
char *expand(const char *tmpl, json_t *vars, json_t *ev);  /* {path[:fmt]} */
bool is_failure_event(struct trace *t, size_t i);          /* also: unresolved loads */
char *describe_event(json_t *ev);                          /* "#8 cudnnCreate -> ..." */
bool load_resolved(struct trace *t, size_t i);             /* dlopen failure later resolved */
bool load_failure_absent(json_t *ev); /* rules.c: the asked file was absent (a probe), not broken */
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
int cmd_kernel(int argc, char **argv); /* kernel.c */

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
