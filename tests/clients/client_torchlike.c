/* client_torchlike.c - PyTorch-like test client.
 *
 * Python imports torch._C, an extension module, with dlopen(RTLD_NOW |
 * RTLD_LOCAL); its libraries (libcudnn.so.9, libcudart.so.13) come in as
 * its DT_NEEDED, in that local scope only.  This program does the same with
 * argv[1] (ext_torchlike.so or ext_torchlike_real.so) and calls its run(). */
#include "common.h"

int main(int argc, char **argv)
{
    void *h;
    int (*run)(void);

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s EXTENSION.so\n", argv[0]);
        return 2;
    }
    h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(extension, RTLD_NOW|RTLD_LOCAL) = %s\n", h ? "ok" : "NULL");
    printf("dlerror = %s\n", dlerr());
    if (h) {
        run = (int (*)(void))dlsym(h, "run");
        printf("dlsym(extension, \"run\") = %s\n", run ? "ok" : "NULL");
        printf("dlerror = %s\n", dlerr());
        if (run)
            printf("run = %d\n", run());
    }
    print_maps();
    return 0;
}
