/* crash.c - a `crash` event on a fatal signal, then the signal handed on
 * exactly as if the shim were not there.
 *
 * On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT the handler appends one
 * event (signal, fault address, backtrace as module + offset, seq of the
 * last failure event) and then:
 *  - calls the handler that was installed before ours, with its own flags
 *    and mask (SA_SIGINFO or plain, SA_NODEFER, SA_RESETHAND), or
 *  - restores SIG_DFL and sends the very same siginfo back to this thread
 *    (rt_tgsigqueueinfo), so the process dies of the same signal, with the
 *    same core dump and the same wait status as without the shim.
 *
 * Everything here is async-signal-safe: no malloc, no stdio, no locks.  The
 * event is built on the stack by trace.c's allocation-free builder, written
 * by one write(2).  Module names come from objsnap.c's copy of the link map,
 * never from the dynamic loader.  The unwinder (never loaded in a handler;
 * see choose_unwinder for when it is picked):
 *  - libunwind (libunwind.so.8, never required): unw_init_local2 on the
 *    signal's own context;
 *  - otherwise glibc's backtrace(), called once beforehand because its first
 *    call dlopens libgcc_s (not safe in a handler); libgcc unwinds through
 *    the signal frame, and the frames before the interrupted one (ours) are
 *    skipped;
 *  - otherwise just the interrupted pc (and the return address on top of
 *    the stack when the pc is in no module: a call through a NULL or stale
 *    function pointer).
 *
 * Stacks: the handler runs on the thread's alternate signal stack when the
 * program set one (SA_ONSTACK), else on the current stack.  The shim cannot
 * give every thread an alternate stack (threads it does not create), so a
 * crash by stack overflow on a thread without one faults again inside the
 * handler: the kernel then kills the process with the same SIGSEGV, and the
 * event is lost.  On a small alternate stack the event is skipped.
 *
 * Handlers installed after ours (Python's faulthandler, JAX/TF, a program's
 * own) replace ours: the shim does not interpose sigaction/signal, because
 * that would change what the program reads back from sigaction().  Most
 * crash reporters (faulthandler, absl's failure signal handler, Breakpad)
 * re-raise with the previous handler restored, which is ours: the event is
 * then still written.  See docs/robustness.md. */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <setjmp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "loader/loader.h"

#define MAX_FRAMES 48
#define MAX_CRASH_EVENTS 8        /* per process: a handler that recovers may see many */
/* Stack the handler needs below its own frame (measured: tests/preload/
 * t_crash.sh "small alternate stack"), and the start event of a forked
 * child's first line, which the handler may have to write first. */
#ifndef CG_EVENT_STACK
#define CG_EVENT_STACK (4 * 1024)
#endif
#define START_STACK 1024 /* its buffers are static (shim.c start_event) */

static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NFATAL (int)(sizeof fatal / sizeof fatal[0])
static struct sigaction prev[NFATAL];
static _Atomic int crash_events;
static __thread bool in_handler;
static __thread sigjmp_buf *escape; /* where a fault inside our own work returns to */
static __thread bool holding;       /* this thread holds `writing` */

/* The event and the unwinder's state live here, not on the stack: the
 * handler often runs on a small alternate signal stack (Python's
 * faulthandler chains to it from its own, 16 KiB or so).  One thread at a
 * time; a second crashing thread waits for the first to have written. */
static atomic_flag writing = ATOMIC_FLAG_INIT;
static char ev_buf[8192];
static char frame_name[1024];

/* libunwind, by its exported names (no header needed to build the shim).
 * x86-64: the cursor is 127 words, UNW_REG_IP is 16, UNW_INIT_SIGNAL_FRAME 1. */
#if defined(__x86_64__)
#define UNW_LIB "libunwind.so.8"
#define UNW_INIT_LOCAL2 "_ULx86_64_init_local2"
#define UNW_STEP "_ULx86_64_step"
#define UNW_GET_REG "_ULx86_64_get_reg"
#define UNW_REG_IP 16
#elif defined(__aarch64__)
#define UNW_LIB "libunwind.so.8"
#define UNW_INIT_LOCAL2 "_ULaarch64_init_local2"
#define UNW_STEP "_ULaarch64_step"
#define UNW_GET_REG "_ULaarch64_get_reg"
#define UNW_REG_IP 30
#endif
#define UNW_CURSOR_WORDS 256 /* libunwind needs 127 (x86-64) or 250 (aarch64) */
static uintptr_t unw_cursor[UNW_CURSOR_WORDS];
static void *raw_frames[64];
static struct {
    int (*init_local2)(void *cursor, void *uc, int flags);
    int (*step)(void *cursor);
    int (*get_reg)(void *cursor, int reg, uintptr_t *val);
} unw;
static bool glibc_bt;

static uintptr_t pc_of(const ucontext_t *uc)
{
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

static uintptr_t sp_of(const ucontext_t *uc)
{
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.sp;
#else
    (void)uc;
    return 0;
#endif
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    }
    return "?";
}

static const char *code_name(int sig, int code)
{
    switch (code) {
    case SI_USER: return "SI_USER";
    case SI_TKILL: return "SI_TKILL";
    case SI_QUEUE: return "SI_QUEUE";
    case SI_KERNEL: return "SI_KERNEL";
    }
    switch (sig) {
    case SIGSEGV:
        switch (code) {
        case SEGV_MAPERR: return "SEGV_MAPERR";
        case SEGV_ACCERR: return "SEGV_ACCERR";
        }
        break;
    case SIGBUS:
        switch (code) {
        case BUS_ADRALN: return "BUS_ADRALN";
        case BUS_ADRERR: return "BUS_ADRERR";
        case BUS_OBJERR: return "BUS_OBJERR";
        }
        break;
    case SIGILL:
        switch (code) {
        case ILL_ILLOPC: return "ILL_ILLOPC";
        case ILL_ILLOPN: return "ILL_ILLOPN";
        case ILL_ILLADR: return "ILL_ILLADR";
        case ILL_ILLTRP: return "ILL_ILLTRP";
        case ILL_PRVOPC: return "ILL_PRVOPC";
        case ILL_PRVREG: return "ILL_PRVREG";
        case ILL_COPROC: return "ILL_COPROC";
        case ILL_BADSTK: return "ILL_BADSTK";
        }
        break;
    case SIGFPE:
        switch (code) {
        case FPE_INTDIV: return "FPE_INTDIV";
        case FPE_INTOVF: return "FPE_INTOVF";
        case FPE_FLTDIV: return "FPE_FLTDIV";
        case FPE_FLTOVF: return "FPE_FLTOVF";
        case FPE_FLTUND: return "FPE_FLTUND";
        case FPE_FLTRES: return "FPE_FLTRES";
        case FPE_FLTINV: return "FPE_FLTINV";
        case FPE_FLTSUB: return "FPE_FLTSUB";
        }
        break;
    }
    return NULL;
}

/* ---- backtrace */
static int unwind_libunwind(ucontext_t *uc, uintptr_t *out)
{
    void *cursor = unw_cursor;
    int n = 0;
    int (*init)(void *, void *, int) = __atomic_load_n(&unw.init_local2, __ATOMIC_ACQUIRE);
    if (!init || init(cursor, uc, 1 /* UNW_INIT_SIGNAL_FRAME */) != 0)
        return 0;
    do {
        uintptr_t ip = 0;
        if (unw.get_reg(cursor, UNW_REG_IP, &ip) != 0 || !ip)
            break;
        out[n++] = ip;
    } while (n < MAX_FRAMES && unw.step(cursor) > 0);
    return n;
}

static int unwind_glibc(uintptr_t pc, uintptr_t *out)
{
    void **raw = raw_frames;
    int n = backtrace(raw, (int)(sizeof raw_frames / sizeof raw_frames[0]));
    /* libgcc steps through the signal frame and reports the interrupted pc
     * exactly: everything before it is this handler. */
    int first = -1;
    for (int i = 0; i < n && first < 0; i++)
        if ((uintptr_t)raw[i] == pc)
            first = i;
    if (first < 0)
        return 0;
    int k = 0;
    for (int i = first; i < n && k < MAX_FRAMES; i++)
        out[k++] = (uintptr_t)raw[i];
    return k;
}

static void put_frame(struct cg_ev *e, uintptr_t addr)
{
    uintptr_t base;
    cg_ev_open(e, NULL, '{');
    if (cg_objsnap_name_at(addr, frame_name, sizeof frame_name, &base)) {
        cg_ev_str(e, "module", frame_name);
        cg_ev_hex(e, "offset", addr - base);
    } else {
        cg_ev_str(e, "module", NULL);
        cg_ev_hex(e, "offset", addr);
    }
    cg_ev_close(e, '}');
}

static const char *next_action(int i)
{
    void (*h)(int) = prev[i].sa_handler;
    return h == SIG_DFL ? "default" : h == SIG_IGN ? "ignored" : "program_handler";
}

static uintptr_t frames[MAX_FRAMES];

/* ---- the library being loaded on this thread (set around dlopen by
 * routes.c), so that a crash inside the dynamic loader - SIGBUS while it
 * maps a truncated file, a fault in a constructor - names what was being
 * loaded and the file it resolved to, not just ld-linux. */
static __thread const char *loading_name;

const char *cg_loading_enter(const char *name)
{
    const char *prev = loading_name;
    loading_name = name;
    return prev;
}

void cg_loading_leave(const char *prev) { loading_name = prev; }

/* The file mapped at addr, from /proc/self/maps (open, read and close are
 * async-signal-safe; the loader may be half way through mapping it, so its
 * own list does not have it yet).  out: the path, "" when none. */
static char maps_buf[4096];
static void mapped_file_at(uintptr_t addr, char *out, size_t cap)
{
    out[0] = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t have = 0;
    for (;;) {
        ssize_t r = read(fd, maps_buf + have, sizeof maps_buf - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        maps_buf[have] = 0;
        char *line = maps_buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            /* "lo-hi perms offset dev inode   path" */
            uintptr_t lo = 0, hi = 0;
            const char *p = line;
            for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
                lo = lo * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
            if (*p == '-')
                for (p++; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
                    hi = hi * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
            if (addr >= lo && addr < hi) {
                const char *path = strchr(p, '/');
                if (path)
                    cg_strlcpy(out, path, cap);
                close(fd);
                return;
            }
            line = nl + 1;
        }
        /* keep the unfinished line for the next read */
        have = strlen(line);
        memmove(maps_buf, line, have);
        if (have >= sizeof maps_buf - 1)
            have = 0; /* a line longer than the buffer: skip it */
    }
    close(fd);
}

static char loading_file[1024];
static void put_loading(struct cg_ev *e, const siginfo_t *si, int sig)
{
    const char *name = loading_name;
    if (!name)
        return;
    cg_ev_open(e, "loading", '{');
    cg_ev_str(e, "name", name);
    loading_file[0] = 0;
    if (si && si->si_code > 0 && (sig == SIGBUS || sig == SIGSEGV))
        mapped_file_at((uintptr_t)si->si_addr, loading_file, sizeof loading_file);
    struct stat st;
    if (loading_file[0]) {
        cg_ev_str(e, "file", loading_file);
        if (stat(loading_file, &st) == 0)
            cg_ev_i64(e, "size", (long long)st.st_size);
    } else {
        cg_ev_raw(e, "file", "null");
    }
    cg_ev_close(e, '}');
}

/* Reads a word without faulting: false where nothing is mapped. */
static bool safe_read(uintptr_t addr, uintptr_t *out)
{
    struct iovec local = {out, sizeof *out}, remote = {(void *)addr, sizeof *out};
    /* longs: syscall() reads each argument as one, and the last goes on the
     * stack, where an int 0 may leave the slot's upper half unset (clang) */
    return syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L) == (long)sizeof *out;
}

/* The crash event's signal: its number and name, code, fault address, sender
 * and the thread's name (signal-safe: no allocation, stdio or lock). */
static void put_signal(struct cg_ev *e, int sig, const siginfo_t *si)
{
    cg_ev_i64(e, "signal", sig);
    cg_ev_str(e, "signal_name", signal_name(sig));
    int code = si ? si->si_code : SI_KERNEL;
    cg_ev_i64(e, "code", code);
    cg_ev_str(e, "code_name", code_name(sig, code));
    /* si_addr means something only for faults the kernel raised */
    if (si && code > 0 && sig != SIGABRT)
        cg_ev_hex(e, "addr", (uintptr_t)si->si_addr);
    else
        cg_ev_raw(e, "addr", "null");
    if (si && (code == SI_USER || code == SI_TKILL || code == SI_QUEUE) && si->si_pid != cg.pid)
        cg_ev_i64(e, "sent_by", si->si_pid);
    char tname[17] = {0};
    if (prctl(PR_GET_NAME, tname, 0, 0, 0) == 0)
        cg_ev_str(e, "thread", tname);
}

/* Fills the file-static frames[] (not the handler's small stack) and names the
 * unwinder that did; returns the number of frames.  Signal-safe. */
static int unwind(ucontext_t *uc, bool no_unwind, const char **how_out)
{
    int n = 0;
    const char *how = "none";
    uintptr_t pc = uc ? pc_of(uc) : 0;
    if (no_unwind)
        how = "failed"; /* the unwinder faulted on this stack */
    else if (uc && __atomic_load_n(&unw.init_local2, __ATOMIC_ACQUIRE) && (n = unwind_libunwind(uc, frames)) > 0)
        how = "libunwind";
    else if (uc && __atomic_load_n(&glibc_bt, __ATOMIC_ACQUIRE) && (n = unwind_glibc(pc, frames)) > 0)
        how = "glibc";
    if (n == 0 && uc)
        frames[n++] = pc;
    if (n == 1 && uc && !no_unwind) {
        /* A jump to a bad address (a NULL or stale function pointer) leaves
         * nothing to unwind from, but the caller's return address is still
         * on top of the stack. */
        char name[8];
        uintptr_t base, sp = sp_of(uc), ret;
        if (!cg_objsnap_name_at(pc, name, sizeof name, &base) && sp && safe_read(sp, &ret) &&
            cg_objsnap_name_at(ret, name, sizeof name, &base))
            frames[n++] = ret;
    }
    *how_out = how;
    return n;
}

__attribute__((noinline)) static void write_event(int i, int sig, siginfo_t *si, ucontext_t *uc, bool no_unwind)
{
    struct cg_ev e;
    /* Another thread is writing its crash event: wait, but not forever (a
     * handler of the program may have jumped out of that thread's writing). */
    uint64_t give_up = cg_now_ns() + 2000000000ull;
    while (atomic_flag_test_and_set(&writing)) {
        if (cg_now_ns() > give_up)
            return;
        sched_yield();
    }
    holding = true;
    cg_ev_begin(&e, ev_buf, sizeof ev_buf, "crash");
    put_signal(&e, sig, si);
    const char *how;
    int n = unwind(uc, no_unwind, &how);
    cg_ev_str(&e, "unwinder", how);
    cg_ev_open(&e, "backtrace", '[');
    for (int k = 0; k < n; k++)
        put_frame(&e, frames[k]);
    cg_ev_close(&e, ']');
    put_loading(&e, si, sig);
    if (sig == SIGBUS) /* a write into a full /dev/shm (a DataLoader worker's batch) is a bus error */
        cg_ev_shm(&e, false);
    uint64_t last = atomic_load(&cg_last_failure_seq);
    if (last)
        cg_ev_u64(&e, "last_failure", last - 1);
    else
        cg_ev_raw(&e, "last_failure", "null");
    cg_ev_str(&e, "next", next_action(i));
    cg_ev_end(&e);
    holding = false;
    atomic_flag_clear(&writing);
}

/* Is there room on the stack we run on?  Only an alternate stack has a
 * size we can know; the thread's own stack is assumed large. */
static bool stack_room(void)
{
    stack_t ss;
    if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
        return true;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0), lo = (uintptr_t)ss.ss_sp;
    size_t need = CG_EVENT_STACK + (cg_trace_lazy_pending() ? START_STACK : 0);
    return here > lo && here - lo > need;
}

/* ---- handing the signal on */
static void send_again_default(int sig, siginfo_t *si)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* The signal is blocked until this handler returns; it is then
     * delivered with the default action: same status, same core. */
    pid_t pid = getpid(), tid = cg_gettid();
    if (!si || syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) != 0)
        syscall(SYS_tgkill, pid, tid, sig);
}

static void hand_on(int i, int sig, siginfo_t *si, void *uc)
{
    struct sigaction p = prev[i];
    if (p.sa_handler == SIG_DFL) {
        send_again_default(sig, si);
        return;
    }
    if (p.sa_handler == SIG_IGN) {
        /* The kernel does not let a fault it raised be ignored: it kills. */
        if (si && si->si_code > 0 && sig != SIGABRT)
            send_again_default(sig, si);
        return;
    }
    /* The program's handler, as the kernel would have called it. */
    if (p.sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        prev[i] = dfl;
        sigaction(sig, &dfl, NULL);
    }
    /* its mask: the interrupted code's, plus its sa_mask, plus the signal
     * (as the kernel builds it; ours blocks more while the event is written) */
    sigset_t mask, saved; /* sigprocmask: this thread's mask, as pthread_sigmask (see cg_atfork) */
    sigprocmask(SIG_BLOCK, NULL, &saved);
    sigorset(&mask, uc ? &((ucontext_t *)uc)->uc_sigmask : &saved, &p.sa_mask);
    sigaddset(&mask, sig);
    if ((p.sa_flags & SA_NODEFER) && !sigismember(&p.sa_mask, sig))
        sigdelset(&mask, sig);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (p.sa_flags & SA_SIGINFO)
        p.sa_sigaction(sig, si, uc);
    else
        p.sa_handler(sig);
    sigprocmask(SIG_SETMASK, &saved, NULL);
}

/* write_event, with a way back if it faults: once more without unwinding */
static void write_event_guarded(int i, int sig, siginfo_t *si, ucontext_t *uc)
{
    sigjmp_buf jb;
    for (volatile int attempt = 0; attempt < 2; attempt++) {
        escape = &jb;
        if (sigsetjmp(jb, 1) == 0) {
            write_event(i, sig, si, uc, attempt > 0);
            break;
        }
        if (holding) {
            holding = false;
            atomic_flag_clear(&writing);
        }
    }
    escape = NULL;
}

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    int i = 0;
    while (i < NFATAL && fatal[i] != sig)
        i++;
    if (i == NFATAL)
        return;
    if (in_handler) {
        /* A fault inside our own work (an unwinder reading a corrupt stack):
         * back to the outer handler, which hands its own signal on, so the
         * process still ends by the signal it would have ended by. */
        if (escape)
            siglongjmp(*escape, 1);
    } else if (atomic_load(&cg.traced) && stack_room() && atomic_fetch_add(&crash_events, 1) < MAX_CRASH_EVENTS) {
        in_handler = true;
        write_event_guarded(i, sig, si, uc);
        in_handler = false;
    }
    errno = saved_errno; /* the next handler sees the interrupted errno */
    hand_on(i, sig, si, uc);
}

/* ---- choosing the unwinder, outside any handler
 *
 * CONVGUARD_UNWIND=auto (the default) never adds a library to the process:
 * the program's maps stay exactly what they would be without the shim.  It
 * uses libunwind.so.8 when the program has it mapped, else glibc's unwinder
 * when libgcc_s.so.1 is mapped (every C++ program: PyTorch, TensorFlow and
 * JAX all bring it in), checked at start and again after each dlopen that
 * added objects.  =libunwind / =glibc load that one at start (the machine
 * must have it); =none keeps just the pc. */
static int mapped_cb(const struct cg_obj *o, void *arg)
{
    const char *want = arg;
    return cg_starts_with(cg_basename(o->name), want);
}
static bool mapped(const char *prefix) { return cg_elf_each_obj(mapped_cb, (void *)prefix) != 0; }

/* The shim's own loader calls: never across a fork (forkgate.c). */
static bool use_libunwind_gated(bool load);
static bool use_libunwind(bool load)
{
    cg_fork_gate_enter();
    bool r = use_libunwind_gated(load);
    cg_fork_gate_leave();
    return r;
}

static bool use_libunwind_gated(bool load)
{
#ifdef UNW_LIB
    if (!cg_dl.dlopen)
        return false;
    void *h = cg_dl.dlopen(UNW_LIB, RTLD_NOW | RTLD_LOCAL | (load ? 0 : RTLD_NOLOAD));
    if (h) {
        unw.step = (int (*)(void *))cg_dl.dlsym(h, UNW_STEP);
        unw.get_reg = (int (*)(void *, int, uintptr_t *))cg_dl.dlsym(h, UNW_GET_REG);
        void *init = unw.step && unw.get_reg ? cg_dl.dlsym(h, UNW_INIT_LOCAL2) : NULL;
        if (init) {
            __atomic_store_n(&unw.init_local2, (int (*)(void *, void *, int))init, __ATOMIC_RELEASE);
            return true;
        }
        cg_dl.dlclose(h);
    }
    cg_dl.dlerror(); /* leave no dlerror() text behind for the program */
#else
    (void)load;
#endif
    return false;
}

static void use_glibc(void)
{
    /* The first backtrace() dlopens libgcc_s: do it here, never in a handler. */
    void *one[2];
    if (backtrace(one, 2) > 0)
        __atomic_store_n(&glibc_bt, true, __ATOMIC_RELEASE);
}

static void choose_unwinder(bool at_start)
{
    if (__atomic_load_n(&unw.init_local2, __ATOMIC_ACQUIRE))
        return;
    switch (cg_cfg.unwind) {
    case CG_UNWIND_LIBUNWIND:
        if (at_start && !use_libunwind(true))
            use_glibc(); /* asked for, but the machine has none */
        break;
    case CG_UNWIND_GLIBC:
        if (at_start)
            use_glibc();
        break;
    case CG_UNWIND_AUTO:
        if (mapped("libunwind.so.8") && use_libunwind(false))
            break;
        if (!__atomic_load_n(&glibc_bt, __ATOMIC_ACQUIRE) && mapped("libgcc_s.so"))
            use_glibc();
        break;
    }
}

void cg_crash_after_load(void)
{
    if (cg_cfg.crash && cg_cfg.unwind == CG_UNWIND_AUTO)
        choose_unwinder(false);
}

const char *cg_crash_unwinder(void)
{
    return __atomic_load_n(&unw.init_local2, __ATOMIC_ACQUIRE) ? "libunwind"
           : __atomic_load_n(&glibc_bt, __ATOMIC_ACQUIRE)      ? "glibc"
                                                               : "none";
}

void cg_crash_install(void)
{
    if (!cg_cfg.crash)
        return;
    int saved = errno;
    choose_unwinder(true);
    cg_objsnap_refresh();
    for (int i = 0; i < NFATAL; i++) {
        struct sigaction cur;
        if (sigaction(fatal[i], NULL, &cur) != 0 || cur.sa_handler == SIG_IGN)
            continue; /* ignored by the program's parent: leave it so */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        /* Nothing may interrupt the event's writing (a handler of the
         * program jumping out of it would leave this thread marked as in
         * the handler), except a fault of our own, which comes back to us. */
        sigfillset(&sa.sa_mask);
        sigdelset(&sa.sa_mask, SIGSEGV);
        sigdelset(&sa.sa_mask, SIGBUS);
        sigdelset(&sa.sa_mask, SIGILL);
        sigdelset(&sa.sa_mask, SIGFPE);
        prev[i] = cur;
        sigaction(fatal[i], &sa, &prev[i]);
    }
    errno = saved;
}

/* A forked child may write its own crash events. */
void cg_crash_after_fork(void) { atomic_store(&crash_events, 0); }
