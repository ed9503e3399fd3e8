/* core.h - the core layer (core/README.md): what every layer uses.  The hook
 * table's state and the failure accounting, the process's tracing state, the
 * settings, the trace writer and its folding of repeats, status names,
 * allocation-free helpers, the fork gate, the lazily mapped tables.  Below
 * every other layer: it includes cg.h alone. */
#ifndef CONVGUARD_CORE_H
#define CONVGUARD_CORE_H

#include "cg.h"

struct cg_ev; /* trace.c's, below */

/* ---- core/hooks.c: the hook table's state */
struct cg_hook_info {
    const char *name;
    enum cg_family family;
};
extern const struct cg_hook_info cg_hooks[CG_NHOOKS];

struct cg_slot_info {
    const char *soname;       /* the library's DT_SONAME */
    const char *version_node; /* its symbol version, NULL: unversioned */
    enum cg_family family;
};
extern const struct cg_slot_info cg_slots[CG_NSLOTS];

/* cg_real[s][h]: the real function of hook h in slot s, NULL until known.
 * Filled only while tracing (cg.traced; real.c keeps what it resolves before
 * that apart, and cg_real_promote moves it here when tracing starts), so a
 * non-NULL pointer also says "tracing": the entries test one load. */
extern _Atomic(void *) cg_real[CG_NSLOTS][CG_NHOOKS];
/* Bumped after every change of cg_real (routes.c's driver address index is rebuilt from it). */
extern _Atomic uint32_t cg_real_gen;

struct cg_counter {
    _Atomic uint64_t calls;
    _Atomic uint64_t fails;
} __attribute__((aligned(64)));
extern struct cg_counter cg_count[CG_NHOOKS];

/* ---- core/hooks.c: the failure accounting */
/* How a failure counts: every one in its hook's `fails`; a REPORTED one also
 * in the exit line's failures, a QUIET one not (a capability probe, a refused
 * attribute, an engine declining a graph, a call nested in one that reports it). */
enum cg_fail { CG_FAIL_REPORTED, CG_FAIL_QUIET };
#define CG_NO_HOOK (-1) /* a failure no hook saw (the driver's own log): the exit line's count alone */
void cg_failed(int hook, enum cg_fail how);
void cg_failed_call(int hook, long long status); /* cg_failed, REPORTED, and a plain call_failed event */
/* The start of every event about one call of a hooked function (a failure,
 * a handle, a lookup): cg_ev_begin(name), then "fn": the hook's name. */
void cg_ev_begin_call(struct cg_ev *e, char *storage, size_t cap, const char *name, int hook);
uint64_t cg_failures(void);                      /* the exit line's failures */
void cg_failures_reset(void);                    /* a forked child starts at 0 */

/* ---- core/state.c: the process's tracing state */
struct cg_state {
    atomic_bool traced;    /* false: every hook forwards untouched (setuid, or before init) */
    int fd;                /* trace file, -1 when none */
    pid_t pid;
    char path[4096];       /* trace file path */
    char host[64];
    char rank[16];
    uint64_t t0_ns;        /* CLOCK_MONOTONIC at start */
};
extern struct cg_state cg;

/* ---- core/config.c: CONVGUARD_* read once at load */
struct cg_config {
    char dir[2048];
    bool quiet;
    bool fallback;
    long long workspace_limit_mb; /* -1: unset */
    long long reserve_mb;         /* 0: none */
    long long max_mb;             /* trace size cap */
    char extra_libs[512];         /* CONVGUARD_EXTRA_LIBS: more name prefixes to trace */
    bool crash;                   /* CONVGUARD_CRASH (default 1): crash events (crash.c) */
    int unwind;                   /* CONVGUARD_UNWIND: enum cg_unwind (crash.c) */
    long long repeats;            /* CONVGUARD_REPEATS: identical events written before the rest are counted (repeat.c) */
};
/* auto: libunwind or glibc's unwinder when the process already has it
 * (never adds a library); libunwind / glibc: load that one at start */
enum cg_unwind { CG_UNWIND_AUTO, CG_UNWIND_LIBUNWIND, CG_UNWIND_GLIBC, CG_UNWIND_NONE };
extern struct cg_config cg_cfg;
void cg_config_load(void);
const char *cg_getenv(const char *name); /* reads environ directly, usable before libc's own init */

/* ---- core/trace.c: one JSON object per line, one write(2) per event */
struct cg_ev {
    char *buf;
    size_t len, cap;
    bool overflow;
    bool failure; /* a failure event: its seq becomes crash.last_failure */
    bool final;   /* exit, crash: written even past CONVGUARD_MAX_MB */
    int depth;    /* nesting of open arrays/objects */
    uint64_t seq; /* this event's seq, set by cg_ev_begin (other events point to it) */
    const char *name; /* the event's name (cg_ev_begin's) */
    size_t body_at;   /* where its own members start, past the header (seq, t, pid, tid) */
    uint64_t t_ns;    /* its "t": nanoseconds since start */
};
#define CG_EV_BUF 16384
#define CG_EV_MIN 64 /* smaller buffers build nothing: the event is dropped */
void cg_ev_begin(struct cg_ev *e, char *storage, size_t cap, const char *name);
void cg_ev_str(struct cg_ev *e, const char *key, const char *val);  /* NULL -> null */
void cg_ev_strn(struct cg_ev *e, const char *key, const char *val, size_t n);
void cg_ev_i64(struct cg_ev *e, const char *key, long long v);
void cg_ev_u64(struct cg_ev *e, const char *key, unsigned long long v);
void cg_ev_bool(struct cg_ev *e, const char *key, bool v);
void cg_ev_hex(struct cg_ev *e, const char *key, unsigned long long v);
void cg_ev_raw(struct cg_ev *e, const char *key, const char *json); /* pre-formatted JSON value */
void cg_ev_open(struct cg_ev *e, const char *key, char bracket);    /* "key":[ or "key":{ (key NULL in arrays) */
void cg_ev_close(struct cg_ev *e, char bracket);
/* "status" and its "status_name" (the caller's lookup: the numbering is the library's; NULL -> null) */
void cg_ev_status(struct cg_ev *e, long long status, const char *status_name);
/* "shm":{"total":n,"free":n}: /dev/shm as this process sees it (its mount namespace), one statfs(2),
 * signal-safe; with small_only, written only when it holds less than CG_SHM_SMALL (a container's
 * default 64 MiB: DataLoader workers and NCCL pass data through it).  Failure paths and start only. */
#define CG_SHM_SMALL (1024ull << 20)
void cg_ev_shm(struct cg_ev *e, bool small_only);
/* "12.345678": dt_ns as the trace's seconds with microseconds; returns the length (out: 32 bytes) */
size_t cg_fmt_t(char *out, uint64_t dt_ns);
void cg_ev_end(struct cg_ev *e); /* writes the line */
int cg_trace_open(void); /* opens this process's file, sets cg.fd; 0, or -1 (warned) when it cannot */
/* the file cg_trace_open makes: one per (parent, key), not per pid; where a
 * sibling already made it, none (and no warning) */
void cg_trace_name_once(long long parent, const char *key);
int cg_trace_fd(void);   /* cg.fd, read atomically: a descriptor, CG_FD_BY_PATH, or -1 (off) */
bool cg_trace_refused(void); /* the trace folder was refused (warned once): tracing is off for good */
/* cg.fd while the shim holds no descriptor of the file: under an
 * RLIMIT_NOFILE of 100 or less, or after the program closed or reused the
 * shim's and no descriptor was free: each event opens the file by its path
 * (trace.c, docs/robustness.md). */
#define CG_FD_BY_PATH (-2)
void cg_trace_after_fork(void); /* a forked child starts its file at seq 0, size 0 */
/* open_fn opens the file and writes `start` at the first event (every
 * process since a file is only made for one that has something to say). */
void cg_trace_open_lazily(void (*open_fn)(void));
bool cg_trace_lazy_pending(void);
void cg_trace_write(const char *line, size_t len);
uint64_t cg_now_ns(void);
extern _Atomic uint64_t cg_events_dropped;
/* seq + 1 of the last event that reported a failure (a name ending in
 * "_failed", a top-level "ok": false or non-zero "status"); 0: none */
extern _Atomic uint64_t cg_last_failure_seq;
/* Called by cg_ev_end with each failure event before it is written, when set
 * (drvlog.c sets it once a driver log callback is registered). */
extern void (*cg_ev_on_failure)(struct cg_ev *e);
void cg_trace_test_adopt(int fd); /* tests only: take over a descriptor opened elsewhere */

/* ---- core/repeat.c: an event identical to an earlier one, past the first
 * CONVGUARD_REPEATS of it, is counted, not written; the counts go out as
 * `repeated` events before the next event written (exit and crash too) */
bool cg_repeat_fold(struct cg_ev *e); /* true: counted, not to be written (e sealed) */
void cg_repeat_flush(void);           /* the `repeated` events owed, written now */
void cg_repeat_after_fork(void);      /* a forked child's counts start afresh */

/* ---- core/fmt.c: allocation-free helpers, safe in signal handlers */
size_t cg_strlcpy(char *dst, const char *src, size_t cap); /* src NULL: "" */
/* The bounded append: src after the n bytes of the string in dst[cap], cut to
 * fit and NUL-terminated; returns n + strlen(src), the length it would have
 * made (as strlcpy), so a result >= cap means cut, and appending to a full
 * buffer writes nothing: `n = cg_append(buf, sizeof buf, n, s);` in a row. */
size_t cg_append(char *dst, size_t cap, size_t n, const char *src);
size_t cg_append_u(char *dst, size_t cap, size_t n, unsigned long long v); /* v in decimal */
size_t cg_utoa(char *dst, unsigned long long v); /* returns length, no NUL */
const char *cg_basename(const char *path);
bool cg_starts_with(const char *s, const char *prefix);
void cg_term_safe(char *s, size_t n); /* controls, C1, bidi overrides, non-UTF-8 bytes -> '?' in place */
void cg_warn(const char *msg1, const char *msg2); /* "convguard: warning: msg1msg2\n" once per call */
/* String equality without libc: the dlsym path (real.c, elf.c) runs while a
 * sanitizer runtime is still starting and has not resolved its own strcmp. */
static inline bool cg_streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* ---- core/forkgate.c: the shim's own calls into foreign locks never overlap a fork */
void cg_fork_gate_init(void); /* first of the shim's atfork handlers */
void cg_fork_gate_enter(void);
void cg_fork_gate_leave(void);

/* ---- core/lazytab.c: the large tables, made when first needed (an anonymous
 * mapping each, published by one compare-and-swap, never freed).  A table is
 * declared with CG_LAZYTAB(var) after `static struct cg_lazytab var = {...}`;
 * cg_lazytab_for(hook) makes every table that hook's wrapper reads, and is
 * called before a wrapped entry of the hook is stored (cg_real, cg_plt): a
 * wrapper always finds its tables.  false: one could not be made; tracing is
 * then off (warned once) and nothing may be wrapped. */
struct cg_lazytab {
    bool (*read_by)(int hook); /* does this hook's wrapper read the table? */
    size_t size;           /* bytes */
    void (*init)(void *p); /* fills a new table before anyone sees it, or NULL */
    void *p;               /* the table; NULL until made (atomic access) */
};
#define CG_LAZYTAB(t)                                                                                         \
    static struct cg_lazytab *const cg_lazytab_##t CG_REGISTERED("cg_lazytabs") = &t
bool cg_lazytab_for(int hook);

/* ---- core/status.c: the names of status codes (from ../status.def).  cuDNN 8
 * and 9 number their statuses differently: the slot says which numbering applies. */
const char *cg_cudnn_status_name(int slot, int status);
const char *cg_cuda_error_name(int err);  /* cudaError_t */
const char *cg_cu_result_name(int res);   /* CUresult */
#endif
