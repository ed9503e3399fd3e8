/* prog_basic.c - a tiny host program for the shell tests.
 *   prog_basic echo WORDS...   print the words, exit 0
 *   prog_basic fork            fork; the child prints "child", the parent waits
 *   prog_basic exec            exec itself as "prog_basic echo after-exec"
 *   prog_basic status N        exit with status N
 *   prog_basic errno           check errno survives a dlopen failure through the shim
 *   prog_basic load STEP...    steps in order: a path or name to dlopen (RTLD_NOW|RTLD_LOCAL),
 *                              call:NAME (call size_t NAME(void) from the last library loaded),
 *                              mv:FROM:TO (rename a file while the libraries stay mapped)
 * PROG_CUDA_LIB=PATH: first dlopen PATH (a CUDA-family library: the shim
 * makes a trace file only for a process that touches one); a forked child
 * then asks for a missing cuDNN name, so that it has an event of its own. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *cuda = getenv("PROG_CUDA_LIB");
    if (cuda && *cuda && !dlopen(cuda, RTLD_NOW | RTLD_LOCAL))
        fprintf(stderr, "prog_basic: %s\n", dlerror());
    if (strcmp(argv[1], "echo") == 0) {
        for (int i = 2; i < argc; i++)
            printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
        return 0;
    }
    if (strcmp(argv[1], "fork") == 0) {
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) {
            if (cuda && *cuda)
                dlopen("libcudnn_forked_child_for_test.so.9", RTLD_NOW);
            printf("child\n");
            exit(0);
        }
        int st;
        waitpid(p, &st, 0);
        printf("parent %d\n", WEXITSTATUS(st));
        return 0;
    }
    if (strcmp(argv[1], "exec") == 0) {
        execl("/proc/self/exe", argv[0], "echo", "after-exec", (char *)NULL);
        return 3;
    }
    if (strcmp(argv[1], "status") == 0 && argc > 2)
        return atoi(argv[2]);
    if (strcmp(argv[1], "errno") == 0) {
        errno = 1234;
        void *h = dlopen("libcudnn_missing_for_test.so.9", RTLD_NOW);
        int e = errno;
        const char *msg = dlerror();
        printf("h=%s errno_kept=%s msg=%s\n", h ? "yes" : "no", e == 1234 ? "yes" : "no", msg ? msg : "(null)");
        msg = dlerror();
        printf("again=%s\n", msg ? msg : "(null)");
        return 0;
    }
    if (strcmp(argv[1], "load") == 0) {
        void *last = NULL;
        for (int i = 2; i < argc; i++) {
            if (strncmp(argv[i], "call:", 5) == 0) {
                size_t (*fn)(void) = last ? (size_t(*)(void))dlsym(last, argv[i] + 5) : NULL;
                printf("%s = %zu\n", argv[i] + 5, fn ? fn() : (size_t)0);
            } else if (strncmp(argv[i], "mv:", 3) == 0) {
                char from[1024];
                const char *colon = strchr(argv[i] + 3, ':');
                if (!colon || (size_t)(colon - argv[i] - 3) >= sizeof from)
                    return 2;
                memcpy(from, argv[i] + 3, (size_t)(colon - argv[i] - 3));
                from[colon - argv[i] - 3] = 0;
                printf("rename %s\n", rename(from, colon + 1) == 0 ? "ok" : "failed");
            } else {
                last = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
                const char *e = last ? NULL : dlerror();
                printf("dlopen %s: %s\n", argv[i], last ? "ok" : e);
            }
        }
        return 0;
    }
    return 2;
}
