/* fwstub_seq.c - the calls a framework makes through its own CUDA stubs
 * (test client; built into libfwstub.so as fwstub_run, into libfwuser.so as
 * fwuser_run, into client_fwstub_linked as main_run).
 *
 * Every function is called by name, through the PLT: the reference binds to
 * libfwstub.so's definition without the shim, and to the shim's export with
 * it, which must forward to that same definition.  Each family of
 * shim/hooks.def: the driver (init, context, memory, code), the entry-point
 * getters (cuGetProcAddress_v2, cudaGetDriverEntryPoint[ByVersion], and a
 * call through what they return), the runtime (memory), cuDNN's legacy API
 * (handle, algorithms, workspace, convolution, the last error's text) and its
 * graph API.  stdout: every return value and out-parameter, as values where
 * they are the same from run to run (statuses, counts, sizes, algorithms,
 * texts) and as set/unset/untouched where they are addresses; a free-memory
 * figure only as "free>0" (a real GPU's changes between runs). */
#include "common.h"

#ifndef SEQ_NAME
#define SEQ_NAME fwuser_run
#endif
#define UNTOUCHED 0x5eedu

typedef CUresult (*mem_alloc_fn)(CUdeviceptr *, size_t);

static const char *set(const void *p) { return p ? "set" : "NULL"; }

static void driver(void)
{
    CUresult r;
    int v = -1;
    CUdevice dev = -1;
    CUcontext ctx = NULL;
    size_t fr = 0, tot = 0;
    CUdeviceptr p = 0, q = UNTOUCHED;
    CUmodule mod = (CUmodule)(uintptr_t)UNTOUCHED;
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;

    /* first a hooked function, as TensorFlow does: the stub loads the library in that call */
    r = cuInit(0);
    printf("cuInit = %d\n", r);
    r = cuDriverGetVersion(&v);
    printf("cuDriverGetVersion = %d version>0=%d\n", r, v > 0);
    r = cuDeviceGet(&dev, 0);
    printf("cuDeviceGet = %d dev=%d\n", r, dev);
    r = cuDevicePrimaryCtxRetain(&ctx, dev);
    printf("cuDevicePrimaryCtxRetain = %d ctx=%s\n", r, set(ctx));
    r = cuCtxSetCurrent(ctx);
    printf("cuCtxSetCurrent = %d\n", r);
    r = cuMemGetInfo_v2(&fr, &tot);
    printf("cuMemGetInfo_v2 = %d free>0=%d total=%zu\n", r, fr > 0, tot);
    r = cuMemAlloc_v2(&p, MIB);
    printf("cuMemAlloc_v2(1 MiB) = %d ptr=%s\n", r, set((void *)p));
    r = cuMemFree_v2(p);
    printf("cuMemFree_v2 = %d\n", r);
    r = cuMemAlloc_v2(&q, (size_t)1 << 50);
    printf("cuMemAlloc_v2(1 PiB) = %d ptr %s\n", r, q == UNTOUCHED ? "untouched" : "changed");
    r = cuModuleLoadData(&mod, NULL);
    printf("cuModuleLoadData(NULL) = %d module %s\n", r, mod == (CUmodule)(uintptr_t)UNTOUCHED ? "untouched" : "changed");

    r = cuGetProcAddress_v2("cuMemAlloc", &fn, 12000, 0, &st);
    printf("cuGetProcAddress_v2(cuMemAlloc) = %d fn=%s status=%d\n", r, set(fn), (int)st);
    if (!r && fn) {
        p = 0;
        r = ((mem_alloc_fn)fn)(&p, MIB);
        printf("  cuMemAlloc through it = %d ptr=%s\n", r, set((void *)p));
        if (!r)
            printf("  cuMemFree_v2 = %d\n", cuMemFree_v2(p));
    }
    fn = (void *)1;
    r = cuGetProcAddress_v2("cuNoSuchFunction", &fn, 12000, 0, &st);
    printf("cuGetProcAddress_v2(cuNoSuchFunction) = %d fn=%s status=%d\n", r, set(fn), (int)st);

    /* the caller's own scope, asked by name: the stub (global or, loaded RTLD_LOCAL, this library's own) */
    dlerror();
    fn = dlsym(RTLD_DEFAULT, "cuMemGetInfo_v2");
    printf("dlsym(RTLD_DEFAULT, cuMemGetInfo_v2) = %s\n", fn ? "found" : dlerr());
    if (fn) {
        fr = tot = 0;
        r = ((CUresult(*)(size_t *, size_t *))fn)(&fr, &tot);
        printf("  through it = %d total=%zu\n", r, tot);
    }
    fn = dlsym(RTLD_DEFAULT, "cuNoSuchFunction");
    printf("dlsym(RTLD_DEFAULT, cuNoSuchFunction) = %s\n", fn ? "found" : (dlerror() ? "NULL, an error text" : "NULL"));
}

static void runtime(void)
{
    cudaError_t e;
    int v = -1, n = -1;
    void *p = NULL, *q = (void *)(uintptr_t)UNTOUCHED, *fn = NULL;
    size_t fr = 0, tot = 0;
    cudaDriverEntryPointQueryResult st = (cudaDriverEntryPointQueryResult)-1;

    e = cudaMalloc(&p, MIB);
    printf("cudaMalloc(1 MiB) = %d ptr=%s\n", e, set(p));
    e = cudaRuntimeGetVersion(&v);
    printf("cudaRuntimeGetVersion = %d version>0=%d\n", e, v > 0);
    e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount = %d count=%d\n", e, n);
    e = cudaFree(p);
    printf("cudaFree = %d\n", e);
    e = cudaMalloc(&q, (size_t)1 << 50);
    printf("cudaMalloc(1 PiB) = %d ptr %s\n", e, q == (void *)(uintptr_t)UNTOUCHED ? "untouched" : "changed");
    e = cudaMemGetInfo(&fr, &tot);
    printf("cudaMemGetInfo = %d free>0=%d total=%zu\n", e, fr > 0, tot);

    e = cudaGetDriverEntryPoint("cuMemAlloc", &fn, 0, &st);
    printf("cudaGetDriverEntryPoint(cuMemAlloc) = %d fn=%s status=%d\n", e, set(fn), (int)st);
    if (!e && fn) {
        CUdeviceptr d = 0;
        CUresult r = ((mem_alloc_fn)fn)(&d, MIB);
        printf("  cuMemAlloc through it = %d ptr=%s\n", r, set((void *)d));
        if (!r)
            printf("  cuMemFree_v2 = %d\n", cuMemFree_v2(d));
    }
    fn = NULL;
    e = cudaGetDriverEntryPointByVersion("cuMemFree", &fn, 12000, 0, &st);
    printf("cudaGetDriverEntryPointByVersion(cuMemFree) = %d fn=%s status=%d\n", e, set(fn), (int)st);
}

static void last_error(void)
{
    char msg[512] = "(untouched)";
    cudnnGetLastErrorString(msg, sizeof msg);
    printf("  cudnnGetLastErrorString = \"%s\"\n", msg);
}

static void legacy(cudnnHandle_t h)
{
    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnFilterDescriptor_t wd = NULL;
    cudnnConvolutionDescriptor_t cd = NULL;
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int got = -1;
    size_t need = (size_t)-1;
    void *x = NULL, *w = NULL, *y = NULL, *ws = NULL;
    float one = 1.0f, zero = 0.0f;
    cudnnStatus_t st;

    printf("descriptors = %d %d %d %d\n", cudnnCreateTensorDescriptor(&xd), cudnnCreateTensorDescriptor(&yd),
           cudnnCreateFilterDescriptor(&wd), cudnnCreateConvolutionDescriptor(&cd));
    printf("set = %d %d %d %d\n", cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 8, 8),
           cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 2, 3, 3),
           cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
           cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 4, 8, 8));
    st = cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &got, perf);
    printf("cudnnGetConvolutionForwardAlgorithm_v7 = %d returned=%d\n", st, got);
    for (int i = 0; !st && i < got && i < 8; i++)
        printf("  perf[%d] algo=%d status=%d memory=%zu\n", i, perf[i].algo, perf[i].status, perf[i].memory);
    int algo = !st && got > 0 ? (int)perf[0].algo : 0;
    st = cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &need);
    printf("cudnnGetConvolutionForwardWorkspaceSize(algo %d) = %d bytes=%zu\n", algo, st, need);
    int ok = !cudaMalloc(&x, 2 * 64 * sizeof(float)) & !cudaMalloc(&w, 4 * 2 * 9 * sizeof(float)) &
             !cudaMalloc(&y, 4 * 64 * sizeof(float));
    printf("buffers %s\n", ok ? "allocated" : "not allocated");
    if (ok && !st && need > 0) {
        /* a workspace too small: cuDNN says why */
        st = cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, NULL, 0, &zero, yd, y);
        printf("cudnnConvolutionForward(no workspace) = %d\n", st);
        if (st)
            last_error();
    }
    if (ok && (!need || !cudaMalloc(&ws, need))) {
        st = cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, ws, need, &zero, yd, y);
        printf("cudnnConvolutionForward = %d\n", st);
    }
    cudaFree(ws);
    cudaFree(y);
    cudaFree(w);
    cudaFree(x);
    printf("destroyed = %d %d %d %d\n", cudnnDestroyConvolutionDescriptor(cd), cudnnDestroyFilterDescriptor(wd),
           cudnnDestroyTensorDescriptor(yd), cudnnDestroyTensorDescriptor(xd));
}

static void graph(cudnnHandle_t h)
{
    cudnnBackendDescriptor_t d = NULL;
    int64_t dims[4] = {1, 2, 8, 8}, back[4] = {0, 0, 0, 0}, count = -1;
    cudnnStatus_t st;

    st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &d);
    printf("cudnnBackendCreateDescriptor(tensor) = %d desc=%s\n", st, set(d));
    if (!st) {
        printf("cudnnBackendSetAttribute(dims) = %d\n",
               cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
        st = cudnnBackendGetAttribute(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, &count, back);
        printf("cudnnBackendGetAttribute(before finalize) = %d count=%lld\n", st, (long long)count);
        if (st)
            last_error();
        st = cudnnBackendFinalize(d);
        printf("cudnnBackendFinalize(no strides) = %d\n", st);
        if (st)
            last_error();
        printf("cudnnBackendDestroyDescriptor = %d\n", cudnnBackendDestroyDescriptor(d));
    }
    st = cudnnBackendExecute(h, NULL, NULL);
    printf("cudnnBackendExecute(no plan) = %d\n", st);
}

static void dnn(void)
{
    cudnnHandle_t h = NULL;
    cudnnStatus_t st;

    st = cudnnCreate(&h);
    printf("cudnnCreate = %d handle=%s\n", st, set(h));
    printf("cudnnGetVersion>0 = %d\n", cudnnGetVersion() > 0);
    if (st)
        last_error();
    else
        legacy(h);
    graph(h);
    if (!st)
        printf("cudnnDestroy = %d\n", cudnnDestroy(h));
}

__attribute__((visibility("default"))) int SEQ_NAME(void)
{
    printf("-- driver\n");
    driver();
    printf("-- runtime\n");
    runtime();
    printf("-- cudnn\n");
    dnn();
    fflush(stdout);
    return 0;
}
