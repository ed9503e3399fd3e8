/* client_copyload.c - loads a COPY of cuDNN by path (test client).
 *
 * argv[1] is a directory holding copies of libcudnn.so.9 and
 * libcudnn_graph.so.9 (of the doubles or of NVIDIA's).  Loading
 * <dir>/libcudnn.so.9 by path, the dispatcher's bare-name dlopen of its
 * graph library must find the copy next to it (RUNPATH $ORIGIN of the
 * CALLER), not the system's: the maps lines show which one was mapped.
 * A dlopen wrapper that calls the real dlopen from another library changes
 * the caller, and with it the search path. */
#include "common.h"

int main(int argc, char **argv)
{
    char path[4096];
    void *h;
    cudnnHandle_t hd = NULL;
    char msg[512] = "";
    cudnnStatus_t st;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    snprintf(path, sizeof path, "%s/libcudnn.so.9", argv[1]);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(\"<dir>/libcudnn.so.9\", RTLD_NOW|RTLD_LOCAL) = %s\n", h ? "ok" : "NULL");
    printf("dlerror = %s\n", dlerr());
    if (h) {
        __typeof__(&cudnnGetVersion) ver = (__typeof__(&cudnnGetVersion))dlsym(h, "cudnnGetVersion");
        __typeof__(&cudnnCreate) create = (__typeof__(&cudnnCreate))dlsym(h, "cudnnCreate");
        __typeof__(&cudnnDestroy) destroy = (__typeof__(&cudnnDestroy))dlsym(h, "cudnnDestroy");
        __typeof__(&cudnnGetLastErrorString) last =
            (__typeof__(&cudnnGetLastErrorString))dlsym(h, "cudnnGetLastErrorString");
        printf("dlsym x4 = %s\n", ver && create && destroy && last ? "ok" : "NULL");
        printf("dlerror = %s\n", dlerr());
        if (ver && create && destroy && last) {
            printf("cudnnGetVersion = %zu\n", ver());
            st = create(&hd);
            printf("cudnnCreate = %d\n", st);
            if (st) {
                last(msg, sizeof msg);
                printf("cudnnGetLastErrorString = \"%s\"\n", msg);
            } else {
                printf("cudnnDestroy = %d\n", destroy(hd));
            }
        }
    }
    print_maps();
    return 0;
}
