/* load_cudnn.c - loads NVIDIA's cuDNN and asks its version, as a framework's
 * import does: dlopen("libcudnn.so.9") (which dlopens libcudnn_graph.so.9 to
 * answer cudnnGetVersion), then exits.  bench/startup.sh times it with and
 * without the shim.  Usage: load_cudnn [LIBDIR]   (default /usr/local/cuda/lib) */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libcudnn.so.9", argc > 1 ? argv[1] : "/usr/local/cuda/lib");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "load_cudnn: %s\n", dlerror());
        return 1;
    }
    size_t (*ver)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
    if (!ver)
        return 1;
    printf("%zu\n", ver());
    return 0;
}
