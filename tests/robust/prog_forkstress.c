/* prog_forkstress.c - threads busy inside hooked calls while the main thread
 * forks children, as a DataLoader forks its workers while other threads run
 * cuDNN (issue 21).  For tests/preload/t_fork_threads.sh.
 *
 *   prog_forkstress WORK THREADS FORKS CHILD
 *
 * WORK, what the threads do until the last child is reaped (comma list):
 *   cudnn    cudnnCreate through a dlsym'ed pointer of the real libcudnn.so.9
 *            (CG_CUDNN, default "libcudnn.so.9"; no GPU: it fails 1001)
 *   dlopen   dlopen/dlclose of libz.so.1 and of a library that does not exist
 *   dlsym    dlsym of cudnnCreate on the cuDNN handle and of printf on RTLD_DEFAULT
 *   mem      cuMemAlloc_v2/cuMemFree_v2 and cudaMalloc/cudaFree on the doubles
 *            (CG_DRV, CG_RT: the libcuda / libcudart libraries to dlopen)
 * CHILD, what each forked child does before _exit:
 *   dl       dlopen libz.so.1, dlopen a missing library, dlsym zlibVersion
 *   hooked   dl, then dlsym of cudnnCreate and (with mem) cuMemAlloc_v2 and
 *            cudaMalloc, succeeding and failing (see child_hooked)
 *   exec     execs /bin/sh -c with a command that dlopens nothing (the
 *            shim is preloaded again in the new image)
 *   spawn    the same shell started with posix_spawn (no fork handlers run)
 *   vfork    the same shell started with vfork + execl
 * Each child gets CHILD_TIMEOUT_MS (5000) to exit; one that does not is a
 * hang: killed and counted (with CG_FORK_GDB set, its stacks are printed on
 * stderr first).  Prints facts that do not depend on timing:
 *   "children=N hangs=H bad=B" (bad: a child whose exit status was wrong)
 * and exits 0 when H = B = 0. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_TIMEOUT_MS 5000

typedef int (*create_t)(void **);
typedef int (*mem_alloc_t)(unsigned long long *, size_t);
typedef int (*mem_free_t)(unsigned long long);
typedef int (*rt_malloc_t)(void **, size_t);
typedef int (*rt_free_t)(void *);

static bool w_cudnn, w_dlopen, w_dlsym, w_mem;
static void *cudnn;
static create_t cudnn_create;
static int (*cudnn_destroy)(void *);
static mem_alloc_t mem_alloc;
static mem_free_t mem_free;
static rt_malloc_t rt_malloc;
static rt_free_t rt_free;
static atomic_bool stop;
extern char **environ;

static void *thread_main(void *arg)
{
    unsigned k = (unsigned)(size_t)arg;
    while (!atomic_load(&stop)) {
        k++;
        if (w_cudnn && cudnn_create && k % 4 == 0) {
            void *h = NULL;
            if (cudnn_create(&h) == 0 && cudnn_destroy) /* with a GPU it succeeds */
                cudnn_destroy(h);
        }
        if (w_dlopen && k % 4 == 1) {
            void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
            if (z)
                dlclose(z);
            dlopen("libcg_forkstress_missing.so.7", RTLD_NOW);
        }
        if (w_dlsym && k % 4 == 2) {
            if (cudnn)
                dlsym(cudnn, "cudnnCreate");
            dlsym(RTLD_DEFAULT, "printf");
        }
        if (w_mem && k % 4 == 3) {
            unsigned long long p = 0;
            if (mem_alloc && mem_alloc(&p, 4096) == 0)
                mem_free(p);
            void *q = NULL;
            if (rt_malloc && rt_malloc(&q, 4096) == 0)
                rt_free(q);
        }
    }
    return NULL;
}

/* what a child does; its exit status says whether it saw what it should */
static int child_dl(void)
{
    void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!z)
        return 3;
    if (!dlsym(z, "zlibVersion"))
        return 4;
    if (dlopen("libcg_forkstress_missing.so.7", RTLD_NOW) || !dlerror())
        return 5;
    dlclose(z);
    return 0;
}

/* The child's hooked calls: the shim's dlsym route (a hooked name handed out
 * wrapped), successful and failing allocations (a failure writes an event and
 * asks the driver for its free memory: the shim's own failure path).  Not
 * cudnnCreate of the real cuDNN: cuDNN itself is not fork-safe (a child
 * forked while a parent thread is in its cudnnCreate hangs in cuDNN's own
 * locks, with or without the shim: seen here under gdb). */
static int child_hooked(void)
{
    int r = child_dl();
    if (r)
        return r;
    if (cudnn && !dlsym(cudnn, "cudnnCreate"))
        return 6;
    if (mem_alloc) {
        unsigned long long p = 0;
        if (mem_alloc(&p, 4096) == 0)
            mem_free(p);
        if (mem_alloc(&p, (size_t)1 << 60) == 0) /* more than any GPU: fails */
            return 8;
    }
    if (rt_malloc) {
        void *q = NULL;
        if (rt_malloc(&q, 4096) == 0)
            rt_free(q);
        if (rt_malloc(&q, (size_t)1 << 60) == 0)
            return 9;
    }
    return 0;
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* 0: exited 0; 1: wrong status; 2: hung (killed) */
static int reap(pid_t pid)
{
    long long deadline = now_ms() + CHILD_TIMEOUT_MS;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
                return 0;
            fprintf(stderr, "prog_forkstress: child %d: %s %d\n", (int)pid, WIFEXITED(st) ? "exit" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return 1;
        if (now_ms() > deadline) {
            if (getenv("CG_FORK_GDB")) { /* where it hangs, on stderr, before it is killed */
                char cmd[160];
                snprintf(cmd, sizeof cmd, "gdb -q -batch -p %d -ex 'thread apply all bt' >&2 </dev/null", (int)pid);
                if (system(cmd) != 0)
                    fprintf(stderr, "prog_forkstress: gdb could not show child %d\n", (int)pid);
            }
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return 2;
        }
        usleep(1000);
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s WORK THREADS FORKS dl|hooked|exec|spawn|vfork\n", argv[0]);
        return 2;
    }
    w_cudnn = strstr(argv[1], "cudnn") != NULL;
    w_dlopen = strstr(argv[1], "dlopen") != NULL;
    w_dlsym = strstr(argv[1], "dlsym") != NULL;
    w_mem = strstr(argv[1], "mem") != NULL;
    int nthreads = atoi(argv[2]), nforks = atoi(argv[3]);
    const char *child = argv[4];
    if (nthreads < 0 || nthreads > 256 || nforks < 0)
        return 2;

    const char *cudnn_name = getenv("CG_CUDNN") ? getenv("CG_CUDNN") : "libcudnn.so.9";
    if (w_cudnn || w_dlsym || strcmp(child, "hooked") == 0) {
        cudnn = dlopen(cudnn_name, RTLD_NOW | RTLD_LOCAL);
        if (cudnn) {
            cudnn_create = (create_t)dlsym(cudnn, "cudnnCreate");
            cudnn_destroy = (int (*)(void *))dlsym(cudnn, "cudnnDestroy");
        }
    }
    if (w_mem) {
        void *drv = getenv("CG_DRV") ? dlopen(getenv("CG_DRV"), RTLD_NOW | RTLD_LOCAL) : NULL;
        void *rt = getenv("CG_RT") ? dlopen(getenv("CG_RT"), RTLD_NOW | RTLD_LOCAL) : NULL;
        if (drv) {
            mem_alloc = (mem_alloc_t)dlsym(drv, "cuMemAlloc_v2");
            mem_free = (mem_free_t)dlsym(drv, "cuMemFree_v2");
        }
        if (rt) {
            rt_malloc = (rt_malloc_t)dlsym(rt, "cudaMalloc");
            rt_free = (rt_free_t)dlsym(rt, "cudaFree");
        }
        if (!mem_alloc || !mem_free)
            mem_alloc = NULL;
        if (!rt_malloc || !rt_free)
            rt_malloc = NULL;
    }

    pthread_t *t = calloc((size_t)nthreads + 1, sizeof *t);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)(size_t)(i * 7919u));

    int hangs = 0, bad = 0;
    for (int f = 0; f < nforks; f++) {
        usleep(200 + (unsigned)(f * 37) % 1500); /* forks at varied moments */
        fflush(NULL);
        pid_t pid;
        if (strcmp(child, "spawn") == 0) { /* posix_spawn: clone(CLONE_VM|CLONE_VFORK) + exec, no fork handlers */
            char *args[] = {"sh", "-c", "exit 0", NULL};
            if (posix_spawn(&pid, "/bin/sh", NULL, NULL, args, environ) != 0)
                pid = -1;
        } else if (strcmp(child, "vfork") == 0) {
            pid = vfork();
            if (pid == 0) {
                execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
                _exit(7);
            }
        } else {
            pid = fork();
        }
        if (pid == 0) {
            if (strcmp(child, "exec") == 0) {
                execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
                _exit(7);
            }
            _exit(strcmp(child, "hooked") == 0 ? child_hooked() : child_dl());
        }
        if (pid < 0) {
            bad++;
            continue;
        }
        int r = reap(pid);
        hangs += r == 2;
        bad += r == 1;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    printf("children=%d hangs=%d bad=%d\n", nforks, hangs, bad);
    return hangs || bad;
}
