/* job_client.c - the program tests/slurm/t_slurm.sh runs as a Slurm task.
 * It reaches cuDNN the way TensorFlow does (dlopen libcudnn.so.9 from
 * LD_LIBRARY_PATH, dlsym; the test doubles), so that the shim traces it,
 * and prints facts on stdout, one per line, prefixed by its rank.
 *
 *   cudnn        cudnnCreate; on failure TensorFlow's line on stderr, exit 1
 *   env          the variables the plugin may set (or "unset"), exit 0
 *   exit N       cuDNN loaded, then exit N
 *   kill SIG     cuDNN loaded, then dies of signal SIG
 *   count SIG    cuDNN loaded, "ready" and its pid, then waits (20 s at most)
 *                for signal SIG, counting them; "got N", exit 5 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *rank(void)
{
    const char *r = getenv("SLURM_PROCID");
    return r ? r : "-";
}

/* as TensorFlow's stream executor: the driver first (cuInit), then cuDNN */
static void *cudnn(void)
{
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(unsigned) = drv ? (int (*)(unsigned))dlsym(drv, "cuInit") : NULL;
    if (init)
        printf("%s: cuInit = %d\n", rank(), init(0));
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fprintf(stderr, "job_client: %s\n", dlerror());
    return h;
}

static int create(void)
{
    void *h = cudnn();
    int (*create_fn)(void **) = h ? (int (*)(void **))dlsym(h, "cudnnCreate") : NULL;
    const char *(*name)(int) = h ? (const char *(*)(int))dlsym(h, "cudnnGetErrorString") : NULL;
    void *handle = NULL;
    int st = create_fn ? create_fn(&handle) : -1;
    printf("%s: cudnnCreate = %d\n", rank(), st);
    if (st != 0) {
        fprintf(stderr, "Could not create cudnn handle: %s\n", name && st > 0 ? name(st) : "?");
        return 1;
    }
    return 0;
}

static volatile sig_atomic_t got;
static void on_signal(int s)
{
    (void)s;
    got++;
}

static int count(int sig)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(sig, &sa, NULL);
    cudnn();
    printf("%s: ready %ld\n", rank(), (long)getpid());
    fflush(stdout);
    for (int i = 0; i < 200 && !got; i++) {
        struct timespec t = {0, 100000000};
        nanosleep(&t, NULL);
    }
    struct timespec t = {0, 300000000}; /* a second delivery, if any, arrives meanwhile */
    nanosleep(&t, NULL);
    printf("%s: got %d\n", rank(), (int)got);
    return 5;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "cudnn") == 0)
        return create();
    if (strcmp(mode, "env") == 0) {
        static const char *const names[] = {"LD_PRELOAD", "CONVGUARD_DIR", "CONVGUARD_FALLBACK"};
        for (int i = 0; i < 3; i++)
            printf("%s: %s=%s\n", rank(), names[i], getenv(names[i]) ? getenv(names[i]) : "unset");
        return 0;
    }
    if (strcmp(mode, "exit") == 0 && argc > 2) {
        cudnn();
        return atoi(argv[2]);
    }
    if (strcmp(mode, "kill") == 0 && argc > 2) {
        cudnn();
        signal(atoi(argv[2]), SIG_DFL);
        raise(atoi(argv[2]));
        return 0;
    }
    if (strcmp(mode, "count") == 0 && argc > 2)
        return count(atoi(argv[2]));
    fprintf(stderr, "usage: job_client cudnn | env | exit N | kill SIG | count SIG\n");
    return 2;
}
