/* prog_crash.c - a host program that dies of a chosen fatal signal, for
 * tests/preload/t_crash.sh.
 *   prog_crash segv|bus|fpe|ill|abort|nullcall|overflow   die that way
 *   prog_crash chain        install a SIGSEGV handler that, like Python's
 *                           faulthandler, reports and re-raises with the
 *                           previous handler restored; then segv
 *   prog_crash recover      install a SIGSEGV handler that siglongjmps back;
 *                           segv, recover, print "recovered", exit 0
 *   prog_crash altstack     set a 64 KiB alternate signal stack, then overflow
 *   prog_crash smallstack N set an alternate signal stack of N bytes, then segv
 *   prog_crash faulthandler as Python's faulthandler: a handler on its own
 *                           alternate stack (SIGSTKSZ + AT_MINSIGSTKSZ bytes,
 *                           SA_NODEFER|SA_ONSTACK) that reports, restores the
 *                           previous handler and raises again; then segv
 *   prog_crash badcfa       SIGILL in a function whose frame the unwinders
 *                           cannot read (its CFA register points at an
 *                           unmapped page): unwinding faults in the handler
 *   prog_crash child_segv   fork; the child segfaults before anything else;
 *                           the parent prints "child signal N" and exits 0
 *   prog_crash thread_segv  a second thread segfaults
 * CG_DLOPEN=name: first dlopen that library (say libgcc_s.so.1).
 * CG_FAIL_FIRST=N: first make N failing hooked calls (cuMemAlloc_v2 of the
 * libcuda.so.1 double without cuInit), so that the crash has a last failure
 * (N > 8: the shim counts the repeats, and the crash writes their count). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *s) { ssize_t r = write(2, s, strlen(s)); (void)r; }

static struct sigaction chained;
static void chain_handler(int sig)
{
    say("program handler ran\n");
    sigaction(sig, &chained, NULL); /* the previous one back, as faulthandler does */
    raise(sig);
}

static struct sigaction fh_prev;
static void fh_handler(int sig)
{
    say("Fatal Python error: Segmentation fault (as faulthandler)\n");
    sigaction(sig, &fh_prev, NULL);
    raise(sig);
}

#if defined(__x86_64__)
/* ud2 with the CFA (rbp + 16, by its CFI) at an unmapped address */
void cg_badcfa(void);
__asm__(".text\n.globl cg_badcfa\n.type cg_badcfa,@function\ncg_badcfa:\n.cfi_startproc\n"
        "push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset rbp,-16\nmov %rsp,%rbp\n.cfi_def_cfa_register rbp\n"
        "mov $0x1000,%rbp\nud2\n.cfi_endproc\n.size cg_badcfa,.-cg_badcfa\n");
#endif

static sigjmp_buf back;
static void recover_handler(int sig)
{
    (void)sig;
    siglongjmp(back, 1);
}

static volatile int limit = 1 << 30; /* volatile: the compiler cannot see it never ends */
__attribute__((noinline)) static int recurse(volatile char *p, int depth)
{
    volatile char pad[4096];
    pad[0] = (char)depth;
    if (depth > limit)
        return 0;
    return recurse(pad, depth + 1) + (p ? p[0] : 0);
}

__attribute__((noinline)) static void crash(const char *how)
{
    if (strcmp(how, "segv") == 0) {
        *(volatile int *)8 = 1;
    } else if (strcmp(how, "bus") == 0) {
        int fd = memfd_create("empty", 0);
        volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            exit(3);
        (void)p[0];
    } else if (strcmp(how, "fpe") == 0) {
        volatile int z = 0, x = 1;
        x = x / z;
    } else if (strcmp(how, "ill") == 0) {
        __builtin_trap();
    } else if (strcmp(how, "abort") == 0) {
        abort();
    } else if (strcmp(how, "badcfa") == 0) {
#if defined(__x86_64__)
        cg_badcfa();
#else
        __builtin_trap();
#endif
    } else if (strcmp(how, "nullcall") == 0) {
        void (*volatile f)(void) = NULL;
        f();
    } else if (strcmp(how, "overflow") == 0) {
        recurse(NULL, 0);
    }
}

static void *thread_crash(void *arg)
{
    crash(arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *lib = getenv("CG_DLOPEN");
    if (lib && !dlopen(lib, RTLD_NOW))
        return 5;
    const char *ff = getenv("CG_FAIL_FIRST");
    if (ff && atoi(ff) > 0) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        int (*alloc)(unsigned long long *, size_t) = h ? (int (*)(unsigned long long *, size_t))dlsym(h, "cuMemAlloc_v2") : NULL;
        unsigned long long p;
        for (int i = 0; i < atoi(ff); i++)
            if (!alloc || alloc(&p, 16) == 0)
                return 4;
    }
    const char *how = argv[1];
    if (strcmp(how, "chain") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = chain_handler;
        sigaction(SIGSEGV, &sa, &chained);
        how = "segv";
    } else if (strcmp(how, "recover") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = recover_handler;
        sigaction(SIGSEGV, &sa, NULL);
        if (sigsetjmp(back, 1) == 0)
            crash("segv");
        printf("recovered\n");
        return 0;
    } else if (strcmp(how, "smallstack") == 0 && argc > 2) {
        size_t n = (size_t)atol(argv[2]);
        stack_t ss = {.ss_sp = malloc(n), .ss_size = n};
        if (sigaltstack(&ss, NULL) != 0)
            return 6;
        how = "segv";
    } else if (strcmp(how, "faulthandler") == 0) {
        size_t n = 8192 + getauxval(AT_MINSIGSTKSZ);
        stack_t ss = {.ss_sp = malloc(n), .ss_size = n};
        sigaltstack(&ss, NULL);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = fh_handler;
        sa.sa_flags = SA_NODEFER | SA_ONSTACK;
        sigaction(SIGSEGV, &sa, &fh_prev);
        how = "segv";
    } else if (strcmp(how, "child_segv") == 0) {
        pid_t p = fork();
        if (p == 0)
            crash("segv");
        int st = 0;
        waitpid(p, &st, 0);
        printf("child signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        return 0;
    } else if (strcmp(how, "thread_segv") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, thread_crash, "segv");
        pthread_join(t, NULL);
        return 1;
    } else if (strcmp(how, "altstack") == 0) {
        stack_t ss = {.ss_sp = malloc(64 * 1024), .ss_size = 64 * 1024};
        sigaltstack(&ss, NULL);
        how = "overflow";
    }
    crash(how);
    return 1;
}
