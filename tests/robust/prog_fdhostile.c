/* prog_fdhostile.c - a host that closes or reuses the shim's descriptor
 * (issue 26 item 1), then fails cudnnCreate.  t_fdhostile.sh checks that
 * the trace still gets the failure and the exit event (after a trace_gap),
 * and that the host's own file holds exactly what the host wrote.
 *   prog_fdhostile DOUBLES MODE HOSTFILE [THREADS]
 * MODE:
 *   closerange  close descriptors 3..1023 (python-daemon, many servers),
 *               then open HOSTFILE (it gets a low number)
 *   dup2        open HOSTFILE and dup2 it onto the trace's descriptor
 *               (found in /proc/self/fd; a shell's `exec 100>log`)
 *   exhaust     close 3..1023, then take every free descriptor, fail
 *               cudnnCreate (no descriptor for the trace), give them back,
 *               fail cudnnCreate again
 *   crash       close 3..1023, then die of SIGSEGV (the crash handler is the
 *               first to find the descriptor gone: it reopens)
 *   count       open /dev/null until no descriptor is left, print how many,
 *               give them back (under `ulimit -n 16`: the shim's cost)
 *   malloc      print whether a 1 MiB malloc succeeds (under `ulimit -v`)
 *   none        touch nothing (the baseline)
 * THREADS (default 1): that many threads fail cudnnCreate at once after the
 * descriptor is gone (several noticing at the same time).
 * cudnnCreate fails by CGTEST_CUDNN_CREATE_STATUS (set by the caller).
 * Prints "host fd N" and the statuses; exits 1 (a failed run). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*create_fn)(void **);
static create_fn create;

static int trace_fd(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    int found = -1;
    while (d && (de = readdir(d))) {
        char p[300], l[4096];
        snprintf(p, sizeof p, "/proc/self/fd/%s", de->d_name);
        ssize_t n = readlink(p, l, sizeof l - 1);
        if (n > 6 && (l[n] = 0, strcmp(l + n - 6, ".jsonl") == 0))
            found = atoi(de->d_name);
    }
    if (d)
        closedir(d);
    return found;
}

static void *fail_create(void *arg)
{
    (void)arg;
    void *h = NULL;
    int st = create(&h);
    return (void *)(long)st;
}

static void fail_in_threads(int n)
{
    pthread_t t[64];
    for (int i = 0; i < n && i < 64; i++)
        pthread_create(&t[i], NULL, fail_create, NULL);
    for (int i = 0; i < n && i < 64; i++) {
        void *r;
        pthread_join(t[i], &r);
        printf("cudnnCreate: %ld\n", (long)r);
    }
}

static void host_write(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
        perror("host write");
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    char p[4096];
    snprintf(p, sizeof p, "%s/cuda/libcuda.so.1", argv[1]);
    if (!dlopen(p, RTLD_NOW | RTLD_GLOBAL))
        return 3;
    snprintf(p, sizeof p, "%s/cudnn9/libcudnn.so.9", argv[1]);
    void *dnn = dlopen(p, RTLD_NOW);
    if (!dnn || !(create = (create_fn)dlsym(dnn, "cudnnCreate")))
        return 3;
    const char *mode = argv[2];
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    int hostfd = -1;
    if (strcmp(mode, "closerange") == 0 || strcmp(mode, "exhaust") == 0 || strcmp(mode, "crash") == 0) {
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    }
    if (strcmp(mode, "count") == 0) {
        int fds[1024], n = 0;
        while (n < 1024 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
            n++;
        printf("opened %d\n", n);
        while (n > 0)
            close(fds[--n]);
    }
    if (strcmp(mode, "malloc") == 0) {
        char *m = malloc(1 << 20);
        if (m)
            memset(m, 1, 1 << 20);
        printf("malloc of 1 MiB: %s\n", m ? "ok" : "failed");
        free(m);
    }
    if (strcmp(mode, "crash") == 0)
        *(volatile int *)(long)argc = 1; /* an address nothing maps */
    if (strcmp(mode, "closerange") == 0) {
        hostfd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    } else if (strcmp(mode, "dup2") == 0) {
        int t = trace_fd(), f = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (t < 0 || f < 0)
            return 4;
        hostfd = dup2(f, t);
        close(f);
    } else if (strcmp(mode, "exhaust") == 0) {
        int fds[1024], n = 0;
        while (n < 1024 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
            n++;
        fail_in_threads(threads);
        while (n > 0)
            close(fds[--n]);
        hostfd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    } else {
        hostfd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    }
    if (hostfd < 0)
        return 4;
    printf("host fd %d\n", hostfd);
    host_write(hostfd, "host line 1\n");
    fail_in_threads(threads);
    host_write(hostfd, "host line 2\n");
    fflush(stdout);
    return 1;
}
