/* cuda_client.c - what a framework does first, for the report tests.
 *   cuda_client create [DIR]  load DIR/libcudnn.so.9 by path, cudnnCreate, then
 *                             cudaMalloc through DIR/libcudart.so.13
 *                             (DIR defaults to /usr/local/cuda/lib)
 *   cuda_client load DIR      only load DIR/libcudart.so.13: a run that uses a
 *                             CUDA library and fails nowhere
 * Exit 0 when it worked, 1 when a call failed, 2 when a library did not load. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "create";
    const char *dir = argc > 2 ? argv[2] : "/usr/local/cuda/lib";
    char path[4096];
    if (strcmp(mode, "load") == 0) {
        snprintf(path, sizeof path, "%s/libcudart.so.13", dir);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        printf("%s\n", h ? "loaded" : dlerror());
        return h ? 0 : 2;
    }
    snprintf(path, sizeof path, "%s/libcudnn.so.9", dir);
    void *cudnn = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!cudnn) {
        printf("dlopen %s: %s\n", path, dlerror());
        return 2;
    }
    int (*create)(void **) = (int (*)(void **))dlsym(cudnn, "cudnnCreate");
    void *handle = NULL;
    int st = create ? create(&handle) : -1;
    printf("cudnnCreate -> %d\n", st);
    snprintf(path, sizeof path, "%s/libcudart.so.13", dir);
    void *rt = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int (*cmalloc)(void **, size_t) = rt ? (int (*)(void **, size_t))dlsym(rt, "cudaMalloc") : NULL;
    if (cmalloc) {
        void *p = NULL;
        printf("cudaMalloc -> %d\n", cmalloc(&p, 1 << 20));
    }
    return st == 0 ? 0 : 1;
}
