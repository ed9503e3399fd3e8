/* prog_threads.c - many threads calling hooked driver functions at once,
 * for tests/preload/t_threads.sh and t_kill.sh.
 *
 *   prog_threads THREADS ITERS FAIL_EVERY [fork|kill|forever]
 *
 * Loads the libcuda.so.1 double with dlopen and resolves its functions with
 * dlsym (the shim hands out its entries).  Each thread makes ITERS calls:
 * cuMemFree_v2(0), which succeeds (the shim only counts it), and every
 * FAIL_EVERY-th a failing one, returning CUDA_ERROR_INVALID_VALUE (1):
 *   CG_FAIL_KIND=release  cuMemRelease(0): a call_failed event each time
 *   CG_FAIL_KIND=alloc    cuMemAlloc_v2(&p, 0): an alloc_failed event (the
 *                         shim writes the first 256, counts the rest), which
 *                         takes the shim's failure locks and asks the double
 *                         for free memory (under its lock)
 *   mixed (default)       release and alloc in turn
 *   fork     thread 0 forks half-way; the child runs 4 threads x 1000 calls
 *            the same way and exits; the parent waits for it
 *   forkfirst  the same child, forked before any thread starts (ThreadSanitizer
 *            supports no thread creation after a multithreaded fork)
 *   kill     after the calls, the process sends itself SIGKILL
 *   forever  the threads never stop (the test kills the process)
 * Prints "calls=N fails=M wrong=W" (the parent's own calls) and exits 0 when
 * every call returned what the double returns (W = 0). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*alloc_t)(unsigned long long *, size_t);
typedef int (*free_t)(unsigned long long);
static alloc_t mem_alloc;
static free_t mem_free;
static int (*mem_release)(unsigned long long);
static int (*ctx_set)(void *);
static int fail_kind; /* 0 release, 1 alloc, 2 mixed */
static void *ctx;
static long iters, fail_every;
static const char *mode = "";
static atomic_long calls, fails, wrong;

static void run_calls(long n, long fork_at)
{
    ctx_set(ctx);
    for (long i = 0; i < n || !strcmp(mode, "forever"); i++) {
        if (i == fork_at) {
            fflush(stdout);
            pid_t p = fork();
            if (p == 0) {
                /* the child: a few threads of its own, then exit */
                mode = "";
                extern void child_main(void);
                child_main();
            }
            int st = 0;
            waitpid(p, &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                atomic_fetch_add(&wrong, 1);
        }
        unsigned long long p;
        if (i % fail_every == fail_every - 1) {
            bool alloc = fail_kind == 1 || (fail_kind == 2 && (i / fail_every) % 2 == 1);
            if ((alloc ? mem_alloc(&p, 0) : mem_release(0)) != 1)
                atomic_fetch_add(&wrong, 1);
            atomic_fetch_add(&fails, 1);
        } else if (mem_free(0) != 0) {
            atomic_fetch_add(&wrong, 1);
        }
        atomic_fetch_add(&calls, 1);
    }
}

static void *worker(void *arg)
{
    long idx = (long)arg;
    run_calls(iters, idx == 0 && !strcmp(mode, "fork") ? iters / 2 : -1);
    return NULL;
}

static void *child_worker(void *arg)
{
    (void)arg;
    run_calls(1000, -1);
    return NULL;
}

void child_main(void)
{
    atomic_store(&calls, 0);
    atomic_store(&fails, 0);
    atomic_store(&wrong, 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, child_worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    exit(atomic_load(&wrong) ? 1 : 0);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    long nthreads = atol(argv[1]);
    iters = atol(argv[2]);
    fail_every = atol(argv[3]);
    if (argc > 4)
        mode = argv[4];
    if (nthreads < 1 || nthreads > 1024 || iters < 0 || fail_every < 1)
        return 2;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 3;
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*dev_get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
    int (*retain)(void **, int) = (int (*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
    ctx_set = (int (*)(void *))dlsym(h, "cuCtxSetCurrent");
    mem_alloc = (alloc_t)dlsym(h, "cuMemAlloc_v2");
    mem_free = (free_t)dlsym(h, "cuMemFree_v2");
    mem_release = (free_t)dlsym(h, "cuMemRelease");
    const char *kind = getenv("CG_FAIL_KIND");
    fail_kind = !kind ? 2 : !strcmp(kind, "release") ? 0 : !strcmp(kind, "alloc") ? 1 : 2;
    int dev;
    if (!init || !dev_get || !retain || !ctx_set || !mem_alloc || !mem_free || !mem_release || init(0) || dev_get(&dev, 0) ||
        retain(&ctx, dev))
        return 3;
    if (!strcmp(mode, "forkfirst")) {
        ctx_set(ctx);
        fflush(stdout);
        pid_t p = fork();
        if (p == 0)
            child_main();
        int st = 0;
        waitpid(p, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            atomic_fetch_add(&wrong, 1);
    }
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    for (long i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 3;
    for (long i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    printf("calls=%ld fails=%ld wrong=%ld\n", atomic_load(&calls), atomic_load(&fails), atomic_load(&wrong));
    fflush(stdout);
    if (!strcmp(mode, "kill"))
        raise(SIGKILL);
    free(t);
    return atomic_load(&wrong) ? 1 : 0;
}
