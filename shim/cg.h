/* cg.h - convguard's internal interface: the hook table expanded into ids and
 * types, and the prototypes each file offers the others, grouped by file, in
 * the order of the layers (shim/README.md): core/, loader/, cuda/, graph/, the
 * top level.  Each layer's private parts have their own header beside them
 * (loader/libs.h, fallback/fallback.h, cuda/gpuinfo.h, cuda/codeimage.h,
 * cudnn/cudnn_desc.h, graph/graph.h).  Nothing here is exported from
 * libconvguard.so; export.c and routes.c hold the only exported names. */
#ifndef CONVGUARD_CG_H
#define CONVGUARD_CG_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "cudefs.h"

#define CG_HIDDEN __attribute__((visibility("hidden")))
#define CG_EXPORT __attribute__((visibility("default")))
#define CG_LIKELY(x) __builtin_expect(!!(x), 1)
#define CG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CG_UNPAREN(...) __VA_ARGS__
/* The calling thread's id.  gettid() is glibc 2.30's; the system call works on
 * every glibc (the portable build targets 2.17) and in a signal handler. */
static inline pid_t cg_gettid(void) { return (pid_t)syscall(SYS_gettid); }
/* pthread_atfork without libpthread.so.0: before glibc 2.34 pthread_atfork,
 * pthread_sigmask, pthread_mutex_trylock and the mutexattr calls live there,
 * and a shim that needed it would add a library to a program that has none
 * (on 2.34+ libpthread.so.0 is an empty stub).  libc's __register_atfork is
 * what glibc's own pthread_atfork stub calls, on every version. */
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso);
extern void *__dso_handle __attribute__((visibility("hidden")));
static inline int cg_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return __register_atfork(prepare, parent, child, __dso_handle);
}
/* ... and a use of those fails the build (-Werror), with the way round, on
 * every glibc: the system's gcc build alone would not show it. */
#define CG_LIBPTHREAD(alt) __attribute__((deprecated("libpthread.so.0's before glibc 2.34: " alt " (cg.h)")))
int pthread_atfork(void (*)(void), void (*)(void), void (*)(void)) CG_LIBPTHREAD("cg_atfork()");
int pthread_sigmask(int, const sigset_t *, sigset_t *) CG_LIBPTHREAD("sigprocmask()");
int pthread_mutex_trylock(pthread_mutex_t *) CG_LIBPTHREAD("an atomic_flag");
int pthread_mutexattr_init(pthread_mutexattr_t *) CG_LIBPTHREAD("a static initialiser");
int pthread_mutexattr_settype(pthread_mutexattr_t *, int) CG_LIBPTHREAD("a static initialiser");
pid_t gettid(void) __attribute__((deprecated("glibc 2.30's: cg_gettid() (cg.h)")));
/* CG_REGISTERED: a pointer put in a named section whose __start_/__stop_
 * symbols are the list (the fork mutexes, the lazy tables).  Nothing else
 * refers to the section, so a linker that collects unused sections past
 * their start/stop symbols (lld 13 and later: zig's, for the wheel) drops it
 * and the list is empty: `retain` keeps it where the compiler knows it
 * (gcc 11, clang 13); older compilers come with linkers that keep it anyway.
 * packaging/check-glibc.sh checks the shipped shim defines both lists. */
#if defined(__has_attribute)
#if __has_attribute(retain)
#define CG_REGISTERED(sec) __attribute__((used, retain, section(sec)))
#endif
#endif
#ifndef CG_REGISTERED
#define CG_REGISTERED(sec) __attribute__((used, section(sec)))
#endif
/* CG_FORK_REINIT(m), after `static pthread_mutex_t m`: a forked child gets
 * m re-initialised (shim.c), so that it never inherits it locked by a thread
 * that does not exist in the child, whatever the other threads were doing. */
#define CG_FORK_REINIT(m)                                                                                     \
    static pthread_mutex_t *const cg_fork_mutex_##m CG_REGISTERED("cg_fork_mutexes") = &m

#ifndef CONVGUARD_VERSION
#define CONVGUARD_VERSION "0.0.0"
#endif

/* ---- the hook table (hooks.def) */
enum cg_family { CG_FAM_CUDNN, CG_FAM_CUDART, CG_FAM_DRV, CG_NFAMILIES };

enum cg_hook_id {
#define CG_HOOK(fam, ret, name, params, args) CG_H_##name,
#define CG_HOOK_PLAIN CG_HOOK
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN
    CG_NHOOKS
};

/* Every wrapper's second parameter: the return address of the program's call
 * into the entry (where the call came from), for the reports of failures.
 * A plain argument, not a thread-local: inlined into the entry (LTO) it is
 * read from the stack only on the paths that use it. */
#define CG_CALLER __attribute__((unused)) const void *caller
#define CG_HOOK(fam, ret, name, params, args)                                                                \
    typedef ret(*cg_t_##name) params;                                                                         \
    ret cg_w_##name(cg_t_##name real, const void *caller, CG_UNPAREN params);
#define CG_HOOK_PLAIN CG_HOOK
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN

/* CG_HOOK_EXEC (hooks.def): what the entry keeps for a failure, with plain
 * stores, instead of in callee-saved registers across the real call: real
 * and the 6 register arguments (pointers in every such hook).  Only these
 * entries write it; the real function does not call them on the same thread
 * (cuDNN calls itself directly), and the failure path copies it out first.
 * Should a callback re-enter one of them on this thread all the same (a
 * profiler's), the stamp no longer matches the failing call's own stack
 * argument: the failure path then steps aside (no retry, no arguments read
 * from here) instead of using the inner call's values. */
struct cg_exec_call {
    const void *real;
    const void *stk; /* the address of the entry's first stack argument: a stamp of this call */
    const void *reg[6];
};
extern __thread struct cg_exec_call cg_exec_call;
static inline __attribute__((always_inline)) void cg_exec_save(const void *real, const void *stk, const void *a0,
                                                              const void *a1, const void *a2, const void *a3,
                                                              const void *a4, const void *a5)
{
    struct cg_exec_call *c = &cg_exec_call;
    c->real = real;
    c->stk = stk;
    c->reg[0] = a0;
    c->reg[1] = a1;
    c->reg[2] = a2;
    c->reg[3] = a3;
    c->reg[4] = a4;
    c->reg[5] = a5;
}
/* The failure path (cudnn.c): the status, then the addresses of the stack arguments. */
#define CG_HOOK(fam, ret, name, params, args)
#define CG_HOOK_PLAIN CG_HOOK
#define CG_HOOK_EXEC(fam, ret, name, params, args, regs, stack) ret cg_wf_##name(ret r, ...);
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN
#undef CG_HOOK_EXEC

struct cg_hook_info {
    const char *name;
    enum cg_family family;
};
extern const struct cg_hook_info cg_hooks[CG_NHOOKS];

/* A slot is one library a hooked function can come from: each has its own
 * real pointers and its own entry functions, so two libraries of one family
 * (cuDNN 8 and 9, cudart 12 and 13) never share a forward. */
enum cg_slot { CG_SLOT_CUDNN9, CG_SLOT_CUDNN8, CG_SLOT_CUDART13, CG_SLOT_CUDART12, CG_SLOT_CUDART11,
               CG_SLOT_DRV, CG_NSLOTS };
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
/* cg_entry[s][h]: our entry function for hook h in slot s (NULL where the
 * hook belongs to another family).  dlsym and cuGetProcAddress hand these out. */
extern void *const cg_entry[CG_NSLOTS][CG_NHOOKS];

struct cg_counter {
    _Atomic uint64_t calls;
    _Atomic uint64_t fails;
} __attribute__((aligned(64)));
extern struct cg_counter cg_count[CG_NHOOKS];

/* ---- core/hooks.c: the tables above (but cg_entry: export.c, read by routes.c alone), and the failure accounting */
/* How a failure counts: every one in its hook's `fails`; a REPORTED one also
 * in the exit line's failures, a QUIET one not (a capability probe, a refused
 * attribute, an engine declining a graph, a call nested in one that reports it). */
enum cg_fail { CG_FAIL_REPORTED, CG_FAIL_QUIET };
#define CG_NO_HOOK (-1) /* a failure no hook saw (the driver's own log): the exit line's count alone */
void cg_failed(int hook, enum cg_fail how);
void cg_failed_call(int hook, long long status); /* cg_failed, REPORTED, and a plain call_failed event */
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
/* "12.345678": dt_ns as the trace's seconds with microseconds; returns the length (out: 32 bytes) */
size_t cg_fmt_t(char *out, uint64_t dt_ns);

/* ---- core/repeat.c: an event identical to an earlier one, past the first
 * CONVGUARD_REPEATS of it, is counted, not written; the counts go out as
 * `repeated` events before the next event written (exit and crash too) */
bool cg_repeat_fold(struct cg_ev *e); /* true: counted, not to be written (e sealed) */
void cg_repeat_flush(void);           /* the `repeated` events owed, written now */
void cg_repeat_after_fork(void);      /* a forked child's counts start afresh */
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
extern _Atomic uint64_t cg_events_written, cg_events_dropped;
/* seq + 1 of the last event that reported a failure (a name ending in
 * "_failed", a top-level "ok": false or non-zero "status"); 0: none */
extern _Atomic uint64_t cg_last_failure_seq;
/* Called by cg_ev_end with each failure event before it is written, when set
 * (drvlog.c sets it once a driver log callback is registered). */
extern void (*cg_ev_on_failure)(struct cg_ev *e);
void cg_trace_test_adopt(int fd); /* tests only: take over a descriptor opened elsewhere */

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
unsigned cg_fork_gate_gave_up(void);


struct dl_phdr_info;
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

/* ---- loader/dl.c: libc's dynamic-loader functions, and the dlerror() text kept per thread */
struct cg_libc_dl {
    void *(*dlopen)(const char *, int);
    void *(*dlmopen)(long, const char *, int);
    void *(*dlsym)(void *, const char *);
    void *(*dlvsym)(void *, const char *, const char *);
    char *(*dlerror)(void);
    int (*dlclose)(void *);
    /* libc's own, never an interposer's: a sanitizer runtime intercepts it
     * and calls our dlsym before it can forward anything (elf.c) */
    int (*dl_iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
};
extern struct cg_libc_dl cg_dl; /* filled by cg_real_dl_init (real.c) */
/* A dlerror() text the shim had to consume, with the errno glibc's dlerror()
 * set for it (code, 0: none): set (replacing any), keep (unless one is kept
 * already), clear; take hands it to the program's dlerror() once, setting
 * errno as glibc's would.  read: the real dlerror(), its code in *code,
 * errno left as it was. */
void cg_dlerror_clear(void);
void cg_dlerror_set(const char *msg, int code);
void cg_dlerror_keep(const char *msg, int code);
char *cg_dlerror_take(void); /* NULL: none kept */
const char *cg_dlerror_read(int *code);

/* ---- loader/elf.c: reading loaded objects without calling into the dynamic loader */
struct cg_obj {
    uintptr_t base;           /* load bias (l_addr) */
    uintptr_t start, end;     /* lowest and highest mapped address */
    const char *name;         /* dlpi_name: path, "" for the main program */
    const void *dyn;          /* PT_DYNAMIC */
    const void *phdr;
    int phnum;
};
bool cg_elf_find_obj(const void *addr, struct cg_obj *out);
/* dl_iterate_phdr through cg_dl's pointer once known, gated against fork (forkgate.c) */
int cg_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
/* Calls fn for every loaded object; stops when fn returns non-zero. */
int cg_elf_each_obj(int (*fn)(const struct cg_obj *o, void *arg), void *arg);
const char *cg_elf_soname(const struct cg_obj *o);
const char *cg_elf_runpath(const struct cg_obj *o, bool *is_rpath);
/* i-th DT_NEEDED entry, NULL past the end */
const char *cg_elf_needed(const struct cg_obj *o, int i);
/* Address of symbol `name` defined by o, with version `ver` (NULL: the default one). */
void *cg_elf_sym(const struct cg_obj *o, const char *name, const char *ver);
/* Does o import `name` (a relocation against that undefined symbol: it calls it through its PLT/GOT)? */
bool cg_elf_imports(const struct cg_obj *o, const char *name);
/* Does o define symbol versions of its own (DT_VERDEF)? */
bool cg_elf_defines_versions(const struct cg_obj *o);
/* How o refers to the undefined symbol `name` (STB_GLOBAL, STB_WEAK), -1: it does not. */
int cg_elf_import_bind(const struct cg_obj *o, const char *name);
/* An address inside o's code holding a `ret` instruction, 0 if none. */
uintptr_t cg_elf_ret_gadget(const struct cg_obj *o);
/* ---- loader/objsnap.c: a copy of the link map that signal handlers can read */
void cg_objsnap_refresh(void); /* at start and after dlopen/dlclose; never in a handler */
void cg_objsnap_after_fork(void);
bool cg_objsnap_find(uintptr_t addr, char *name, size_t cap, uintptr_t *base); /* async-signal-safe */
/* The copied object holding addr: 1 found, 0 in none of a complete copy, -1 no usable copy. */
int cg_objsnap_lookup(const void *addr, struct cg_obj *out);
bool cg_objsnap_has_dyn(const void *dyn); /* is the object with this PT_DYNAMIC in the copy? */
uint64_t cg_objsnap_generation(void);     /* changes whenever the copy is refreshed */

/* ---- loader/real.c: finding the real functions, and calling them "as" a caller */
bool cg_real_dl_init(void); /* fills cg_dl from libc's symbol table; false: not all found */
/* Calls fn(a, b, c) so that the dynamic loader sees `caller` as its caller.
 * glibc resolves bare names, $ORIGIN, RTLD_DEFAULT and RTLD_NEXT relative to
 * the return address; this keeps those answers exactly what they would have
 * been without the shim. */
void *cg_call_as(const void *caller, void *fn, void *a, void *b, void *c);
void *cg_call_as_asm(uintptr_t gadget, void *fn, void *a, void *b, void *c); /* callas_x86_64.S */
/* The function of (slot, hook) in the slot's own library (libcuda.so.1,
 * libcudnn.so.9, ...), read from its symbol table; NULL when it is not loaded.
 * What the entries handed out by dlsym/cuGetProcAddress forward to, and what
 * the shim itself calls; not what a PLT caller reaches (bind.c). */
void *cg_real_in_lib(int slot, int hook);
/* Tracing has just started: what cg_real_in_lib found before goes into cg_real
 * (after cg_bind_reset: the PLT answers kept while not tracing are plain forwards). */
void cg_real_promote(void);

/* ---- loader/bind.c: what a call through the PLT would have reached without the shim.
 * cg_plt[s][h]: the slot library's function (cg_real's), when every PLT caller
 * reaches it; cg_plt_plain[s][h]: another definition every PLT caller reaches
 * (a framework's stub, or anything while not tracing), forwarded untouched.
 * NULL in both: the PLT entry's cold path asks cg_bind_plt. */
extern _Atomic(void *) cg_plt[CG_NSLOTS][CG_NHOOKS];
extern _Atomic(void *) cg_plt_plain[CG_NSLOTS][CG_NHOOKS];
/* The definition this caller's reference reaches with the shim left out;
 * *wrap: it is the slot library's, to be wrapped.  NULL: nothing defines it. */
void *cg_bind_plt(int slot, int hook, const void *caller, bool *wrap);
/* Nothing defines it: exits as the loader would, or (weak reference) returns a status. */
long long cg_bind_unbound(int slot, int hook, const void *caller);
/* dlsym(RTLD_DEFAULT, name) from caller, the shim left out (ver: dlvsym's). */
void *cg_bind_lookup(const void *caller, const char *name, const char *ver);
void cg_bind_after_load(void); /* a dlopen added objects */
void cg_bind_reset(void);      /* a dlclose, or tracing started */

/* ---- loader/libs.c: the CUDA-family libraries seen (the table itself: loader/libs.h) */
int cg_lib_family_of_name(const char *path); /* -1: not a traced library */
bool cg_lib_is_traced_name(const char *path);
/* Is this caller one of the traced CUDA-family libraries? family or -1 */
int cg_caller_family(const void *caller);
void cg_libs_scan(const char *reason); /* record objects mapped since the last scan (at start: all complete) */
void cg_libs_scan_opened(const char *reason, const void *opened_dyn); /* after the shim's own dlopen */
void cg_libs_scan_exit(void);          /* at exit: objects not yet recorded, without calling into them */
void cg_libs_check_replaced(const char *when);
const char *cg_libs_primary(char *out, size_t cap); /* "libcudnn.so.9 9.19.0 (/path)" or "" */
/* "caller" (the object holding this return address, "(main program)",
 * or null) and "caller_offset" into an event. */
void cg_ev_caller(struct cg_ev *e, const void *caller);

/* ---- loader/nvversion.c: the kernel module's version in /proc/driver/nvidia/version's text */
bool cg_nvidia_module_version(const char *text, char *out, size_t cap);

/* ---- loader/versions.c: versions of the loaded libraries (facts; no verdicts) */
void cg_versions_on_load(const struct cg_obj *o, const char *soname, int family);
int cg_versions_cudnn(void); /* cudnnGetVersion as first read, 0 if unknown */

/* ---- loader/crash.c: a `crash` event on SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGABRT, then the signal handed on */
void cg_crash_install(void);
void cg_crash_after_fork(void);
void cg_crash_after_load(void); /* a dlopen added objects: an unwinder may have arrived (auto) */
const char *cg_crash_unwinder(void); /* "libunwind", "glibc" or "none" */
/* The library this thread is loading now (dlopen), for a crash inside the
 * loader: enter returns what was set before (a constructor's own dlopen nests). */
const char *cg_loading_enter(const char *name);
void cg_loading_leave(const char *prev);


/* ---- cuda/gpuinfo.c: > 0 while the shim itself calls the driver on this thread:
 * the messages those calls cause are counted, not written (drvlog.c) */
extern __thread int cg_drvlog_mute;
/* ---- cuda/drvlog.c: the CUDA driver's own error messages (cuLogsRegisterCallback) */
/* When a libcuda.so.1 is recorded (libs.c calls it through the pointer the
 * lifecycle hands cg_libs_init): registers the callback with that copy;
 * returns its lib event's "driver_log" ("registered", "unavailable", ...) */
const char *cg_drvlog_on_load(const struct cg_obj *o);
void cg_drvlog_exit(struct cg_ev *e); /* exit: "driver_log":{messages, written, not_written, own} */
void cg_drvlog_after_fork(void);

/* ---- graph/graph_report.c: the graph (backend) API layer at exit */
void cg_graph_exit_events(void);               /* before the exit event: graphs whose plans all failed */
void cg_graph_exit_summary(struct cg_ev *e);   /* the exit event's "graph" member */

/* ---- shim.c (top): the lifecycle */
void cg_shim_init(void);
#endif
