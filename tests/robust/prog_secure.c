/* prog_secure.c - linked against libconvguard.so (not preloaded: glibc
 * ignores LD_PRELOAD paths in setuid programs), so the shim is loaded even
 * when a setuid/setgid copy of this program runs.  Prints whether the shim
 * is mapped, whether a SIGSEGV handler is installed, the result of a traced
 * dlopen, and errno after it.  With AT_SECURE the shim must be inert: no
 * file, no warning, no handler. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int find_shim(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libconvguard"))
        *(int *)arg = 1;
    return 0;
}

int main(void)
{
    int mapped = 0;
    dl_iterate_phdr(find_shim, &mapped);
    struct sigaction sa;
    sigaction(SIGSEGV, NULL, &sa);
    errno = 77;
    void *h = dlopen("libcudnn_missing_for_test.so.9", RTLD_NOW);
    int e = errno;
    printf("shim mapped: %s\n", mapped ? "yes" : "no");
    printf("SIGSEGV handler: %s\n", sa.sa_handler == SIG_DFL ? "default" : "installed");
    printf("dlopen: %s errno=%d\n", h ? "loaded" : "failed", e);
    printf("euid=%d ruid=%d\n", (int)geteuid(), (int)getuid());
    return 0;
}
