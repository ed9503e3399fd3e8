/* burst.c - many threads writing long trace events at once (test program).
 * Usage: burst THREADS LOADS [signals]
 * Each thread dlopen()s LOADS names that do not exist, starting with
 * "libcudnn" (a traced library: each failure is a dlopen event listing every
 * candidate path, so with a long LD_LIBRARY_PATH an event of several KiB),
 * of lengths that differ from load to load, so that the lines' sizes fall
 * on both sides of the page size.  "signals": a timer interrupts every thread
 * every 100 us with a handler installed without SA_RESTART, so that system
 * calls return early (EINTR) in the middle of it all. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void tick(int sig) { (void)sig; }

static int loads;

static void *run(void *arg)
{
    long t = (long)arg;
    char name[300];
    for (int i = 0; i < loads; i++) {
        int pad = (int)((t * 7919 + i * 104729) % 200);
        int n = snprintf(name, sizeof name, "libcudnn_burst_t%ld_%d_", t, i);
        memset(name + n, 'x', (size_t)pad);
        strcpy(name + n + pad, ".so.9");
        if (dlopen(name, RTLD_NOW))
            return (void *)1;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    loads = argc > 2 ? atoi(argv[2]) : 100;
    pthread_t th[64];
    if (threads < 1 || threads > 64)
        return 2;
    if (argc > 3 && !strcmp(argv[3], "signals")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = tick; /* no SA_RESTART */
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval it = {{0, 100}, {0, 100}};
        setitimer(ITIMER_REAL, &it, NULL);
    }
    for (long t = 0; t < threads; t++)
        pthread_create(&th[t], NULL, run, (void *)t);
    int bad = 0;
    for (int t = 0; t < threads; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad += r != NULL;
    }
    printf("%d threads x %d failed loads, %d unexpected successes\n", threads, loads, bad);
    return bad != 0;
}
