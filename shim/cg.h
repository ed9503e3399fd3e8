/* cg.h - what every file of the shim shares below the layers: the CG_
 * macros, the rules for glibc (no libpthread.so.0 names), and the hook table
 * (hooks.def) expanded into ids, slots, the wrappers' types and prototypes,
 * and the table of handed-out entries.  What each layer's files offer the
 * others is in that layer's header (core/core.h, loader/loader.h,
 * fallback/fallback.h, cuda/cuda.h, cudnn/cudnn.h, graph/graph.h), which
 * includes only the headers of the layers below it (shim/LAYERS).  Nothing
 * here is exported from libconvguard.so; export.c and routes.c hold the only
 * exported names. */
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

/* A slot is one library a hooked function can come from: each has its own
 * real pointers and its own entry functions, so two libraries of one family
 * (cuDNN 8 and 9, cudart 12 and 13) never share a forward. */
enum cg_slot { CG_SLOT_CUDNN9, CG_SLOT_CUDNN8, CG_SLOT_CUDART13, CG_SLOT_CUDART12, CG_SLOT_CUDART11,
               CG_SLOT_DRV, CG_NSLOTS };

/* cg_entry[s][h]: our entry function for hook h in slot s (NULL where the
 * hook belongs to another family), expanded from hooks.def by export.c; dlsym
 * and cuGetProcAddress hand these out (routes.c, the one reader: the pair is
 * one unit, shim/README.md says why). */
extern void *const cg_entry[CG_NSLOTS][CG_NHOOKS];
#endif
