/* unbound.c - a hooked name that nothing defines (test program).
 * Usage: unbound DIR strong|weak [PRELOAD_LIB]
 *   strong  libunbound.so (bound lazily) calls cuMemAllocAsync, which no
 *           loaded object defines: the loader ends the program ("symbol
 *           lookup error", status 127) at that call
 *   weak    libunbound_weak.so refers to it weakly and calls only when its
 *           address is not NULL
 *   PRELOAD_LIB  dlopen()ed RTLD_GLOBAL first (the driver double): then it
 *           is defined and both calls reach it */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    char p[4096];
    if (argc < 3)
        return 2;
    if (argc > 3 && !dlopen(argv[3], RTLD_NOW | RTLD_GLOBAL)) {
        printf("dlopen %s: %s\n", argv[3], dlerror());
        return 1;
    }
    int weak = !strcmp(argv[2], "weak");
    snprintf(p, sizeof p, "%s/%s", argv[1], weak ? "libunbound_weak.so" : "libunbound.so");
    void *h = dlopen(p, RTLD_LAZY | RTLD_LOCAL);
    printf("dlopen(RTLD_LAZY) = %s\n", h ? "ok" : dlerror());
    int (*f)(void) = h ? (int (*)(void))dlsym(h, "call_it") : NULL;
    fflush(stdout);
    printf("call_it = %d\n", f ? f() : -9);
    return 0;
}
