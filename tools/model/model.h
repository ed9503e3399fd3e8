/* model.h - the processes of a trace set, read from disk (trace_read.c),
 * and what one event says (event.c).  The lowest layer that knows traces:
 * it calls util/ only (tools/README.md). */
#ifndef CONVGUARD_MODEL_H
#define CONVGUARD_MODEL_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "util/util.h"

/* ---- arena.c: the memory of a trace's kept events (jansson allocates from
 * the arena its thread entered; everything else is malloc's) */
struct arena;
struct chunk;
struct arena_mark { struct chunk *chunk; char *at; size_t bytes; };
struct arena *arena_new(void);
struct arena *arena_enter(struct arena *a);  /* NULL: malloc again; returns the one it left */
struct arena_mark arena_mark(const struct arena *a);
void arena_rewind(struct arena *a, struct arena_mark m); /* what was built since the mark: gone */
size_t arena_bytes(const struct arena *a);
void arena_free(struct arena *a);

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
    long long_lines;     /* longer than 4 MiB: skipped, never held whole */
    long long nul_bytes; /* NUL bytes (left out of the lines): what a crash of the machine leaves */
    /* the event with the highest seq (the last one written): where a trace
     * without its exit line stops; its name holds [a-z0-9_] only */
    long long last_seq;  /* -1: no event had a seq */
    char last_ev[32];
    double last_t;
    /* the shim's own word that events were lost: trace_gap events (summed
     * `lost`, the first `reason`, [ -~] only) and trace_capped */
    long gap_events;
    long long gap_lost;
    char gap_reason[80];
    bool capped;         /* a trace_capped event, */
    long long capped_mb; /* its max_mb */
};

/* What the timeline needs of every event, kept for all of them (bounded):
 * free GPU memory readings and the sizes asked for. */
enum tl_kind { TL_FREE, TL_ALLOC, TL_WS, TL_FB };
struct tl_point { float t; unsigned char kind; long long v; };

/* One trace file, read once, line by line: its events are judged one at a
 * time and only those of the kinds some rule could look at are kept (see
 * trace_read.c, trace_keep_pattern); the rest are counted. */
struct trace {
    char *file;
    json_t *events;       /* the kept events, in file order (owned) */
    struct arena *arena;  /* where most of them live (arena.c) */
    json_t *start, *exit; /* borrowed from events; NULL when absent */
    struct read_stats st;
    long long pid, ppid, forked_from, rank; /* -1: unknown */
    const char *host;     /* "?" when unknown */
    double wall;          /* wall-clock seconds of the shim's start, 0 unknown */
    int parent;           /* index of the parent process in the set, -1 */
    bool execd;           /* no exit line, but a later file of the same pid and host: it exec'd */
    double t_last;        /* the largest `t` of any event: when the trace ends */
    json_t *elided;       /* {event name: events not kept}, NULL when none */
    struct tl_point *tl;  /* the timeline: at most TL_MAX (256) points, evenly thinned */
    int ntl, tl_cap, tl_stride;
    long tl_seen;
    long long tl_top;     /* the largest value on it, or mem.total */
    /* rules/fw.c's frameworks_of, kept: asked for by many rules of each
     * process, it reads every event; valid while the events are fw_events */
    unsigned fw;
    size_t fw_events;
    bool fw_known;
    /* Alike processes (the ranks of a job) are read as one: a trace whose
     * kept events equal an earlier one's but for the process's own ids and
     * times (pid, tid, host, rank, start time, t) shares that trace's events
     * and their arena (`share`, counted) and keeps of its own only what
     * differs: the fields above, its read stats and timeline, and the `t` of
     * its events (own_t, by seq).  NULL: the trace is alone. */
    struct trace_share *share;
    struct seq_t *own_t;  /* sorted by seq */
    size_t n_own_t;
    char *host_own;       /* host when its start event is another's */
};

struct seq_t { long long seq; double t; };
struct trace_share {
    int refs;
    struct arena *arena;
    bool diagnosed;       /* analysis/diagnose.c ran on the shared events */
    long long pid;        /* the pid the shared events were written by (its holders' "self") */
    struct seq_t *base_t; /* their times, by seq: a process with the same keeps no own_t */
    size_t n_base_t;
};
/* `t` of event e of trace t: its own when its events are shared */
double trace_event_t(const struct trace *t, json_t *e);
/* the trace's events its own again (a copy, its own times), before it is changed alone */
void trace_unshare(struct trace *t);

/* the reader marks a failed dlopen that a later load resolved (load_resolved) */
#define RESOLVED_KEY "_convguard_resolved"

struct trace_set {
    struct trace *t;
    size_t n, cap;
    json_t *unreadable;   /* [{path, error}] */
    struct id_set seen;   /* folders and files read: each once, whatever links lead to it */
    /* rules/runtime.c m_never_used's answer for the set, asked of every process:
     * the one process it may name (-1: none), once known */
    long never_used_who;
    bool never_used_known;
};

/* The kinds of event kept besides start, exit and lib: those a pattern
 * ("ev[:cond]|ev2&!ev3", rules.def) names.  The rules say theirs
 * (rules_keep_events, rules/table.c) before the first file is read; not
 * thread-safe. */
void trace_keep_pattern(const char *pattern);
/* the index of a kept kind (start, exit, lib, then the patterns' names, in
 * the order they came), -1 for a kind no pattern names; below TRACE_KINDS */
#define TRACE_KINDS 96
int trace_kind(const char *name, size_t len);
int trace_read_file(const char *path, struct trace *out); /* 0, or -1 with errno */
void trace_free(struct trace *t);
/* file or directory (read a few levels down); the files are read in parallel
 * (CONVGUARD_REPORT_THREADS, default: the cores, at most 8) */
int trace_set_add(struct trace_set *s, const char *path);
void trace_set_link(struct trace_set *s);                   /* parents, sort order */
/* Keep only traces whose start is at or after `since` (wall seconds). */
void trace_set_keep_since(struct trace_set *s, double since);
void trace_set_free(struct trace_set *s);

/* ---- runs.c: the runs of a set (processes that ran together, and each
 * process with its traced parent); the latest one kept */
struct run_choice {
    size_t runs;      /* the runs the set held */
    size_t left_out;  /* the processes of the earlier runs, dropped */
    double started;   /* wall seconds: the first start of the run kept */
};
/* 0, or -1 (out of memory: the set as it was); trace_set_link first, and
 * again after (the parents' indices) */
int trace_set_keep_latest_run(struct trace_set *s, struct run_choice *rc);

/* ---- event.c */
bool pattern_match(const char *pattern, json_t *ev);       /* "ev[:cond,...]|ev2", see rules.def */
/* the kinds (trace_kind) of the events a pattern can match, as bits; false
 * when one of its names is no kept kind (then every event must be tried) */
struct kind_set { unsigned long long bits[(TRACE_KINDS + 63) / 64]; };
bool pattern_kinds(const char *pattern, struct kind_set *ks);
static inline bool kind_in(const struct kind_set *ks, int kind)
{
    return kind >= 0 && (ks->bits[kind / 64] >> (kind % 64) & 1);
}
/* with conjunctions: `clause&clause&!clause`, the others over all events */
bool rule_pattern_match(const char *pattern, json_t *ev, json_t *events);
bool load_resolved(struct trace *t, size_t i);             /* dlopen failure later resolved */
/* the kind of a failed load's error ("absent", "dependency_absent",
 * "bad_elf", ...; the shim's error_kind when it gave one); *named_out: the
 * file the error names (into `named`, or the event's error_file) */
const char *load_error_kind(json_t *ev, const char **named_out, char *named, size_t cap);
bool load_failure_absent(json_t *ev); /* the asked file was absent (a probe), not broken */

/* ---- snapshot.c: a running process read from outside (host/proc.c) as a
 * trace set of one process, for analyse() */
struct proc_view;
void snapshot_trace_set(const struct proc_view *p, struct trace_set *s);
#endif
