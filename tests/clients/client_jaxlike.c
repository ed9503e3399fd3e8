/* client_jaxlike.c - JAX-like test client.
 *
 * jaxlib loads its CUDA PJRT plugin (xla_cuda_plugin.so) with
 * dlopen(RTLD_LOCAL); the plugin has no DT_NEEDED on any CUDA library and
 * reaches the driver through cuGetProcAddress_v2 and cuDNN through dlsym.
 * This program dlopen()s argv[1] (plugin_jaxlike.so) and calls its run(). */
#include "common.h"

int main(int argc, char **argv)
{
    void *h;
    int (*run)(void);

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
        return 2;
    }
    h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(plugin, RTLD_NOW|RTLD_LOCAL) = %s\n", h ? "ok" : "NULL");
    printf("dlerror = %s\n", dlerr());
    if (h) {
        run = (int (*)(void))dlsym(h, "run");
        printf("dlsym(plugin, \"run\") = %s\n", run ? "ok" : "NULL");
        printf("dlerror = %s\n", dlerr());
        if (run)
            printf("run = %d\n", run());
    }
    print_maps();
    return 0;
}
