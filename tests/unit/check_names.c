/* check_names.c - the shim's cuDNN status names (shim/cudnn_names.c) are
 * the real library's: every status the real cudnnGetErrorString names is
 * named the same by the shim, and the shim names nothing the library does
 * not know.  argv[1]: the real libcudnn.so.9. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"

int main(int argc, char **argv)
{
    void *h = dlopen(argc > 1 ? argv[1] : "libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    const char *(*name)(int) = h ? (const char *(*)(int))dlsym(h, "cudnnGetErrorString") : NULL;
    int bad = 0, named = 0;
    if (!name) {
        printf("cannot load cudnnGetErrorString: %s\n", dlerror());
        return 2;
    }
    const char *unknown = name(999999);
    for (int st = 0; st < 6000; st++) {
        const char *real = name(st), *ours = cg_cudnn_status_name(st, false);
        bool real_known = real && (!unknown || strcmp(real, unknown) != 0);
        if (real_known)
            named++;
        if (real_known != (ours != NULL) || (ours && strcmp(ours, real) != 0)) {
            printf("MISMATCH %d: real %s, ours %s\n", st, real_known ? real : "(unknown)", ours ? ours : "(none)");
            bad++;
        }
    }
    printf("%d statuses named by the library, %d mismatches\n", named, bad);
    return bad != 0;
}
