/* hookcall_main.c - the routes of hookcall (tests/clients/gen_hookcall.py says
 * what it does; tests/preload/t_hook_routes.sh runs it).  Linked against the
 * libcuda.so.1, libcudart.so.13 and libcudnn.so.9 doubles. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hookcall_main.h"

#define ERRNO_MARK 7777
#define PTDS 2 /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, cudaEnablePerThreadDefaultStream */

char scratch[24][1 << 16];
cudnnHandle_t g_handle;
cudnnTensorDescriptor_t g_tensor;
cudnnFilterDescriptor_t g_filter;
cudnnConvolutionDescriptor_t g_conv;
cudnnActivationDescriptor_t g_act;

static const char *const routes[] = {"plt", "dlsym", "cuGetProcAddress", "cuGetProcAddress_v2",
                                     "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion"};
#define N_ROUTES (sizeof routes / sizeof routes[0])
/* the driver versions a base name is asked at, highest first */
static const int versions[] = {13000, 12050, 12000, 11030, 11020, 10020, 7000, 4000, 3020, 2020, 2000};
#define N_VERSIONS (sizeof versions / sizeof versions[0])

/* the driver's and the runtime's entry-point getters, from dlsym */
static CUresult (*get_v1)(const char *, void **, int, cuuint64_t);
static CUresult (*get_v2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
static cudaError_t (*rt_get)(const char *, void **, unsigned long long, cudaDriverEntryPointQueryResult *);
static cudaError_t (*rt_get_ver)(const char *, void **, unsigned int, unsigned long long,
                                 cudaDriverEntryPointQueryResult *);

/* cuMemAllocAsync_ptsz -> cuMemAllocAsync, per-thread stream; cuMemAlloc_v2 -> cuMemAlloc */
static void base_name(const char *name, char *out, size_t cap, unsigned long long *flags)
{
    snprintf(out, cap, "%s", name);
    size_t n = strlen(out);
    *flags = 0;
    if (n > 5 && strcmp(out + n - 5, "_ptsz") == 0) {
        out[n -= 5] = 0;
        *flags = PTDS;
    }
    char *v = strrchr(out, '_');
    if (v && v[1] == 'v' && v[2] && strspn(v + 2, "0123456789") == strlen(v + 2))
        *v = 0;
}

static void *ask(int route, const char *base, int version, unsigned long long flags)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult qs;
    cudaDriverEntryPointQueryResult rs;
    int rc = -1;
    if (route == 2 && get_v1)
        rc = get_v1(base, &fn, version, flags);
    if (route == 3 && get_v2)
        rc = get_v2(base, &fn, version, flags, &qs);
    if (route == 4 && rt_get)
        rc = rt_get(base, &fn, flags, &rs);
    if (route == 5 && rt_get_ver)
        rc = rt_get_ver(base, &fn, (unsigned)version, flags, &rs);
    return rc == 0 ? fn : NULL;
}

/* the function for hook h by route; NULL where that route does not reach it */
static void *lookup(int route, const struct hook *h, int *version)
{
    *version = 0;
    void *lib = dlopen(h->soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    void *want = dlsym(lib, h->name);
    if (route == 0)
        return (void *)h; /* called by name */
    if (route == 1 || !want || strcmp(h->family, "DRV") != 0)
        return route == 1 ? want : NULL;
    char base[128];
    unsigned long long flags;
    base_name(h->name, base, sizeof base, &flags);
    for (size_t i = 0; i < N_VERSIONS; i++) {
        if (ask(route, base, versions[i], flags) == want) {
            *version = versions[i];
            return want;
        }
        if (route == 4)
            break; /* the runtime's own version only */
    }
    return NULL;
}

static long call(int route, const struct hook *h, void *fn)
{
    return route == 0 ? h->plt(NULL) : h->ptr(fn);
}

static int route_index(const char *name)
{
    for (size_t r = 0; r < N_ROUTES; r++)
        if (strcmp(routes[r], name) == 0)
            return (int)r;
    fprintf(stderr, "hookcall: no route %s\n", name);
    exit(2);
}

/* the objects of the calls' arguments, and the getters */
static void setup(void)
{
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    CUcontext ctx = NULL;
    if (!drv || !rt)
        exit(3);
    *(void **)&get_v1 = dlsym(drv, "cuGetProcAddress");
    *(void **)&get_v2 = dlsym(drv, "cuGetProcAddress_v2");
    *(void **)&rt_get = dlsym(rt, "cudaGetDriverEntryPoint");
    *(void **)&rt_get_ver = dlsym(rt, "cudaGetDriverEntryPointByVersion");
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cudnnCreate(&g_handle) ||
        cudnnCreateTensorDescriptor(&g_tensor) || cudnnCreateFilterDescriptor(&g_filter) ||
        cudnnCreateConvolutionDescriptor(&g_conv) || cudnnCreateActivationDescriptor(&g_act) ||
        cudnnSetTensor4dDescriptor(g_tensor, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 4, 4) ||
        cudnnSetFilter4dDescriptor(g_filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 3, 3) ||
        cudnnSetConvolution2dDescriptor(g_conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) ||
        cudnnSetActivationDescriptor(g_act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0)) {
        fprintf(stderr, "hookcall: setup on the doubles failed\n");
        exit(3);
    }
}

/* runs fn(route, hook, mode) in a forked child; a child that did not exit 0 is said */
static void in_child(int r, size_t i, const char *mode, void (*fn)(int, const struct hook *, const char *))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn(r, &hooks[i], mode);
        fflush(stdout);
        exit(0); /* exit, not _exit: the shim writes its exit event */
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        printf("bad %s %s %s status %d\n", routes[r], hooks[i].name, mode, st);
}

static void count_child(int r, const struct hook *h, const char *mode)
{
    int v;
    dlopen("libcudnn_hookcall_absent.so.1", RTLD_NOW); /* a CUDA-family name asked: the child's trace opens */
    void *fn = lookup(r, h, &v);
    if (fn && strcmp(mode, "call") == 0)
        call(r, h, fn);
    printf("child %s %s %s %d\n", routes[r], h->name, mode, (int)getpid());
}

/* Twice: a cuDNN function's first call dlopen()s its sub-library and reads
 * dlerror() (cudnn_dispatch.c), whose errno is the loader routes' matter; the
 * second is the hooked call alone. */
static void errno_child(int r, const struct hook *h, const char *mode)
{
    (void)mode;
    int v;
    void *fn = lookup(r, h, &v);
    for (int k = 1; k <= 2; k++) {
        errno = ERRNO_MARK;
        long rc = call(r, h, fn);
        int e = errno;
        if (e == ERRNO_MARK)
            printf("%s %s call%d rc=%ld errno=same\n", routes[r], h->name, k, rc);
        else
            printf("%s %s call%d rc=%ld errno=changed(%d)\n", routes[r], h->name, k, rc, e);
    }
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    setup();
    if (strcmp(cmd, "list") == 0) {
        for (size_t i = 0; i < n_hooks; i++)
            printf("%s %s\n", hooks[i].name, hooks[i].family);
        return 0;
    }
    for (int a = 2; a < argc || (strcmp(cmd, "routes") == 0 && a - 2 < (int)N_ROUTES); a++) {
        int r = a < argc ? route_index(argv[a]) : a - 2;
        for (size_t i = 0; i < n_hooks; i++) {
            int v;
            void *fn = lookup(r, &hooks[i], &v);
            if (strcmp(cmd, "routes") == 0)
                printf(fn ? "%s %s ok %d\n" : "%s %s unreachable\n", routes[r], hooks[i].name, v);
            else if (fn && strcmp(cmd, "fork") == 0)
                in_child(r, i, "lookup", count_child), in_child(r, i, "call", count_child);
            else if (fn && strcmp(cmd, "errno") == 0)
                in_child(r, i, "errno", errno_child);
        }
    }
    return 0;
}
