/* prog_routes.c - errno and dlerror() across every route into a hook, for
 * tests/preload/t_security.sh.  Linked against the libcuda.so.1 and
 * libcudart.so.13 doubles (PLT route), it also reaches the same functions
 * through dlsym, cuGetProcAddress_v2 and cudaGetDriverEntryPoint, and calls
 * the loader functions the shim interposes.  Before each call it sets errno
 * to a marker and leaves a dlerror() text pending; after it, it prints the
 * result, errno and dlerror().  The output must be the same with and
 * without the shim.  Every hooked call here fails, so the shim does work
 * (an event) on each.  `prog_routes fork` does it all in a forked child
 * (whose trace is opened inside its first hooked call). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_double.h"

static int step;

static void before(void)
{
    errno = 1000 + ++step;
    dlsym(RTLD_DEFAULT, "cg_no_such_symbol_for_test"); /* leaves a dlerror() text */
}

static void after(const char *route, long long rc)
{
    int e = errno;
    const char *d = dlerror();
    printf("%s rc=%lld errno=%d dlerror=%s\n", route, rc, e, d ? d : "(none)");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid > 0) {
            int st = 0;
            waitpid(pid, &st, 0);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 9;
        }
    }
    CUdeviceptr dp;
    void *p;
    CUresult (*alloc)(CUdeviceptr *, size_t);
    cudaError_t (*rt_malloc)(void **, size_t);

    before();
    after("plt cuMemAlloc_v2", cuMemAlloc_v2(&dp, 0));
    before();
    after("plt cudaMalloc", cudaMalloc(&p, (size_t)1 << 60));

    void *hd = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *hr = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!hd || !hr)
        return 3;
    before();
    alloc = (CUresult(*)(CUdeviceptr *, size_t))dlsym(hd, "cuMemAlloc_v2");
    after("dlsym cuMemAlloc_v2 lookup", alloc != NULL);
    before();
    after("dlsym cuMemAlloc_v2", alloc ? alloc(&dp, 0) : -1);
    rt_malloc = (cudaError_t(*)(void **, size_t))dlsym(hr, "cudaMalloc");
    before();
    after("dlsym cudaMalloc", rt_malloc ? rt_malloc(&p, (size_t)1 << 60) : -1);

    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    before();
    after("cuGetProcAddress_v2", cuGetProcAddress_v2("cuMemAlloc", &fn, 13000, 0, &st));
    before();
    after("entry point cuMemAlloc_v2", fn ? ((CUresult(*)(CUdeviceptr *, size_t))fn)(&dp, 0) : -1);

    fn = NULL;
    cudaDriverEntryPointQueryResult rst;
    before();
    after("cudaGetDriverEntryPoint", cudaGetDriverEntryPoint("cuMemAlloc", &fn, 0, &rst));
    before();
    after("runtime entry point cuMemAlloc_v2", fn ? ((CUresult(*)(CUdeviceptr *, size_t))fn)(&dp, 0) : -1);

    before();
    after("dlopen traced, missing", dlopen("libcudnn_no_such_for_test.so.9", RTLD_NOW) != NULL);
    before();
    void *h2 = dlopen("libcuda.so.1", RTLD_NOW);
    after("dlopen traced, loaded", h2 != NULL);
    before();
    after("dlsym missing", dlsym(hd, "cuNoSuchFunctionForTest") != NULL);
    before();
    after("dlvsym", dlvsym(hr, "cudaMalloc", "libcudart.so.13") != NULL);
    before();
    after("dlclose", dlclose(h2));
    before();
    after("dlopen untraced, missing", dlopen("libno_such_for_test.so", RTLD_NOW) != NULL);
    fflush(stdout);
    return 0;
}
