/* conv_tflike.c - a convolution the way TensorFlow's stream executor does it.
 *
 * TensorFlow (xla/tsl/platform/default/dso_loader.cc, cudnn_stub.cc) never
 * links cuDNN: it dlopen()s libcudnn.so.9 and libcudart, RTLD_NOW|RTLD_LOCAL,
 * and resolves every function with dlsym (a missing one becomes a stub that
 * fails).  Like TF this program allocates its tensors first (TF's allocator
 * grabs memory before the first convolution), then creates the cuDNN handle,
 * then, for forward, backward data and backward filter: asks
 * cudnnGet*Algorithm_v7 for candidates, gets a workspace with cudaMalloc
 * (the largest candidate's, capped by TF_CUDNN_WORKSPACE_LIMIT_IN_MB, halved
 * while the allocation fails), benchmarks with cudnnFind*AlgorithmEx in that
 * workspace, and runs the first algorithm that worked.  When cuDNN cannot be
 * had it prints TensorFlow's words.
 *
 * It needs no CUDA headers: the few types and prototypes are declared here.
 * Output: one fact per line, no addresses, so runs can be compared.
 *
 *   conv_tflike                      shape N,C,H,W,K,R,S from CG_CONV_SHAPE
 *   CG_CONV_SHAPE=64,256,56,56,256,3,3 TF_CUDNN_WORKSPACE_LIMIT_IN_MB=4096 conv_tflike
 *   CG_CUDNN=libcudnn.so.8 conv_tflike   cuDNN 8, as TensorFlow 2.x before 2.15 loaded it
 *   CG_CONV_STEPS=3 conv_tflike          the three directions three times
 * Exit status: 0 all three convolutions ran; 2 no cuDNN handle; 3 no
 * algorithm for some direction; 4 libraries missing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- our own declarations (values as in cuDNN 9 / CUDA 13 headers) */
typedef int cudnnStatus_t;
typedef int cudaError_t;
typedef void *cudnnHandle_t, *cudnnTensorDescriptor_t, *cudnnFilterDescriptor_t, *cudnnConvolutionDescriptor_t;
typedef struct {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    int determinism;
    int mathType;
    int reserved[3];
} cudnnConvolutionPerf_t; /* the Fwd, BwdData and BwdFilter perf structs share this layout */
#define CUDNN_TENSOR_NCHW 0
#define CUDNN_DATA_FLOAT 0
#define CUDNN_CROSS_CORRELATION 1
#define MIB ((size_t)1 << 20)

/* Every function, resolved by dlsym (TF's stubs). */
#define FUNCS(X)                                                                                                \
    X(rt, cudaError_t, cudaRuntimeGetVersion, (int *))                                                          \
    X(rt, cudaError_t, cudaSetDevice, (int))                                                                    \
    X(rt, cudaError_t, cudaMalloc, (void **, size_t))                                                           \
    X(rt, cudaError_t, cudaFree, (void *))                                                                      \
    X(rt, cudaError_t, cudaMemGetInfo, (size_t *, size_t *))                                                    \
    X(rt, cudaError_t, cudaMemcpy, (void *, const void *, size_t, int))                                         \
    X(rt, const char *, cudaGetErrorName, (cudaError_t))                                                        \
    X(dnn, size_t, cudnnGetVersion, (void))                                                                     \
    X(dnn, const char *, cudnnGetErrorString, (cudnnStatus_t))                                                  \
    X(dnn, void, cudnnGetLastErrorString, (char *, size_t))                                                     \
    X(dnn, cudnnStatus_t, cudnnCreate, (cudnnHandle_t *))                                                       \
    X(dnn, cudnnStatus_t, cudnnDestroy, (cudnnHandle_t))                                                        \
    X(dnn, cudnnStatus_t, cudnnCreateTensorDescriptor, (cudnnTensorDescriptor_t *))                             \
    X(dnn, cudnnStatus_t, cudnnSetTensor4dDescriptor, (cudnnTensorDescriptor_t, int, int, int, int, int, int))  \
    X(dnn, cudnnStatus_t, cudnnDestroyTensorDescriptor, (cudnnTensorDescriptor_t))                              \
    X(dnn, cudnnStatus_t, cudnnCreateFilterDescriptor, (cudnnFilterDescriptor_t *))                             \
    X(dnn, cudnnStatus_t, cudnnSetFilter4dDescriptor, (cudnnFilterDescriptor_t, int, int, int, int, int, int))  \
    X(dnn, cudnnStatus_t, cudnnDestroyFilterDescriptor, (cudnnFilterDescriptor_t))                              \
    X(dnn, cudnnStatus_t, cudnnCreateConvolutionDescriptor, (cudnnConvolutionDescriptor_t *))                   \
    X(dnn, cudnnStatus_t, cudnnSetConvolution2dDescriptor,                                                      \
      (cudnnConvolutionDescriptor_t, int, int, int, int, int, int, int, int))                                   \
    X(dnn, cudnnStatus_t, cudnnDestroyConvolutionDescriptor, (cudnnConvolutionDescriptor_t))                    \
    X(dnn, cudnnStatus_t, cudnnGetConvolution2dForwardOutputDim,                                                \
      (cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, int *, int *, int *,     \
       int *))                                                                                                  \
    X(dnn, cudnnStatus_t, cudnnGetConvolutionForwardAlgorithm_v7,                                               \
      (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, cudnnConvolutionDescriptor_t,           \
       cudnnTensorDescriptor_t, int, int *, cudnnConvolutionPerf_t *))                                          \
    X(dnn, cudnnStatus_t, cudnnGetConvolutionBackwardDataAlgorithm_v7,                                          \
      (cudnnHandle_t, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,           \
       cudnnTensorDescriptor_t, int, int *, cudnnConvolutionPerf_t *))                                          \
    X(dnn, cudnnStatus_t, cudnnGetConvolutionBackwardFilterAlgorithm_v7,                                        \
      (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,           \
       cudnnFilterDescriptor_t, int, int *, cudnnConvolutionPerf_t *))                                          \
    X(dnn, cudnnStatus_t, cudnnFindConvolutionForwardAlgorithmEx,                                               \
      (cudnnHandle_t, cudnnTensorDescriptor_t, const void *, cudnnFilterDescriptor_t, const void *,             \
       cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, void *, int, int *, cudnnConvolutionPerf_t *,     \
       void *, size_t))                                                                                         \
    X(dnn, cudnnStatus_t, cudnnFindConvolutionBackwardDataAlgorithmEx,                                          \
      (cudnnHandle_t, cudnnFilterDescriptor_t, const void *, cudnnTensorDescriptor_t, const void *,             \
       cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, void *, int, int *, cudnnConvolutionPerf_t *,     \
       void *, size_t))                                                                                         \
    X(dnn, cudnnStatus_t, cudnnFindConvolutionBackwardFilterAlgorithmEx,                                        \
      (cudnnHandle_t, cudnnTensorDescriptor_t, const void *, cudnnTensorDescriptor_t, const void *,             \
       cudnnConvolutionDescriptor_t, cudnnFilterDescriptor_t, void *, int, int *, cudnnConvolutionPerf_t *,     \
       void *, size_t))                                                                                         \
    X(dnn, cudnnStatus_t, cudnnGetConvolutionForwardWorkspaceSize,                                              \
      (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, cudnnConvolutionDescriptor_t,           \
       cudnnTensorDescriptor_t, int, size_t *))                                                                 \
    X(dnn, cudnnStatus_t, cudnnGetConvolutionBackwardDataWorkspaceSize,                                         \
      (cudnnHandle_t, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,           \
       cudnnTensorDescriptor_t, int, size_t *))                                                                 \
    X(dnn, cudnnStatus_t, cudnnGetConvolutionBackwardFilterWorkspaceSize,                                       \
      (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,           \
       cudnnFilterDescriptor_t, int, size_t *))                                                                 \
    X(dnn, cudnnStatus_t, cudnnConvolutionForward,                                                              \
      (cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *, cudnnFilterDescriptor_t,             \
       const void *, cudnnConvolutionDescriptor_t, int, void *, size_t, const void *, cudnnTensorDescriptor_t,  \
       void *))                                                                                                 \
    X(dnn, cudnnStatus_t, cudnnConvolutionBackwardData,                                                         \
      (cudnnHandle_t, const void *, cudnnFilterDescriptor_t, const void *, cudnnTensorDescriptor_t,             \
       const void *, cudnnConvolutionDescriptor_t, int, void *, size_t, const void *, cudnnTensorDescriptor_t,  \
       void *))                                                                                                 \
    X(dnn, cudnnStatus_t, cudnnConvolutionBackwardFilter,                                                       \
      (cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *, cudnnTensorDescriptor_t,             \
       const void *, cudnnConvolutionDescriptor_t, int, void *, size_t, const void *, cudnnFilterDescriptor_t,  \
       void *))

#define DECL(lib, ret, name, params) static ret(*name) params;
FUNCS(DECL)

static int missing;

static void *open_lib(const char *const *names)
{
    for (; *names; names++) {
        void *h = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
        printf("dlopen(%s) = %s\n", *names, h ? "ok" : "failed");
        if (h)
            return h;
        const char *e = dlerror();
        printf("  dlerror: %s\n", e ? e : "(null)");
    }
    return NULL;
}

static const char *rt_err(cudaError_t e) { return cudaGetErrorName ? cudaGetErrorName(e) : "?"; }
static const char *dnn_err(cudnnStatus_t s) { return cudnnGetErrorString ? cudnnGetErrorString(s) : "?"; }

static void last_error(void)
{
    char msg[1024] = "";
    if (cudnnGetLastErrorString)
        cudnnGetLastErrorString(msg, sizeof msg);
    printf("  cudnnGetLastErrorString: \"%s\"\n", msg);
}

static void *dev_alloc(const char *what, size_t n)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc ? cudaMalloc(&p, n) : 35;
    printf("cudaMalloc(%s, %zu) = %d %s\n", what, n, e, rt_err(e));
    return e ? NULL : p;
}

static void dev_free(void *p)
{
    if (p && cudaFree)
        cudaFree(p);
}

/* ---- inputs and checksums (with cudaMemcpy only: results of runs can then be compared) */
#define CUDA_MEMCPY_H2D 1
#define CUDA_MEMCPY_D2H 2
static size_t xs, wsz, ys; /* bytes of x/dx, w/dw, y/dy */
static void fill(void *dev, size_t bytes, int seed)
{
    size_t n = bytes / 4;
    float *h = cudaMemcpy && dev ? malloc(bytes) : NULL;
    if (!h)
        return;
    for (size_t i = 0; i < n; i++)
        h[i] = (float)((i * 2654435761u + (unsigned)seed) % 1001) / 500.0f - 1.0f;
    cudaMemcpy(dev, h, bytes, CUDA_MEMCPY_H2D);
    free(h);
}
static void checksum(const char *what, const void *dev, size_t bytes)
{
    float *h = cudaMemcpy && dev ? malloc(bytes) : NULL;
    if (!h)
        return;
    double s = 0, a = 0;
    if (cudaMemcpy(h, dev, bytes, CUDA_MEMCPY_D2H) == 0) {
        for (size_t i = 0; i < bytes / 4; i++)
            s += h[i], a += h[i] < 0 ? -h[i] : h[i];
        printf("  result %s sum %.9e abs %.9e\n", what, s, a);
    }
    free(h);
}

/* ---- one direction: Get_v7, a workspace, FindEx, run */
enum { FWD, BWD_DATA, BWD_FILTER };
static const char *const dir_names[] = {"forward", "backward_data", "backward_filter"};
static cudnnHandle_t handle;
static cudnnTensorDescriptor_t xd, yd;
static cudnnFilterDescriptor_t wd;
static cudnnConvolutionDescriptor_t cd;
static void *x, *w, *y, *dx, *dw, *dy;
static size_t limit;

static void print_perf(const char *api, cudnnStatus_t s, int n, const cudnnConvolutionPerf_t *p)
{
    printf("  %s = %d %s, returned %d\n", api, s, dnn_err(s), n);
    for (int i = 0; i < n && i < 16; i++)
        printf("    algo %d status %d time %s workspace %zu determinism %d math %d\n", p[i].algo, p[i].status,
               p[i].time < 0 ? "-1" : "measured", p[i].memory, p[i].determinism, p[i].mathType);
}

/* CG_TF_FIRST_ALGO=1: what older TensorFlow did with the heuristics: take
 * cuDNN's first successful _v7 choice, allocate exactly its workspace, and
 * give up ("No algorithm worked") when that allocation fails. */
static int run_algo(int dir, int algo, void *ws, size_t bytes);

static int first_algo(int dir, cudnnStatus_t s, int n, cudnnConvolutionPerf_t *perf)
{
    int k = -1;
    for (int i = 0; !s && i < n && i < 16 && k < 0; i++)
        if (perf[i].status == 0)
            k = i;
    if (k < 0) {
        printf("  No algorithm worked!\n");
        return 3;
    }
    size_t want = perf[k].memory;
    void *ws = want ? dev_alloc("workspace", want) : NULL;
    printf("  first algorithm %d, workspace %zu bytes: %s\n", perf[k].algo, want, want && !ws ? "allocation failed" : "ok");
    if (want && !ws) {
        printf("  No algorithm worked! (Failed to get convolution algorithm)\n");
        return 3;
    }
    int rc = run_algo(dir, perf[k].algo, ws, want);
    dev_free(ws);
    return rc;
}

static int run_algo(int dir, int algo, void *ws, size_t want)
{
    float one = 1.0f, zero = 0.0f;
    cudnnStatus_t s;
    if (dir == FWD)
        s = cudnnConvolutionForward(handle, &one, xd, x, wd, w, cd, algo, ws, want, &zero, yd, y);
    else if (dir == BWD_DATA)
        s = cudnnConvolutionBackwardData(handle, &one, wd, w, yd, dy, cd, algo, ws, want, &zero, xd, dx);
    else
        s = cudnnConvolutionBackwardFilter(handle, &one, xd, x, yd, dy, cd, algo, ws, want, &zero, wd, dw);
    printf("  run algo %d = %d %s\n", algo, s, dnn_err(s));
    if (!s)
        checksum(dir_names[dir], dir == FWD ? y : dir == BWD_DATA ? dx : dw, dir == FWD ? ys : dir == BWD_DATA ? xs : wsz);
    else
        last_error();
    return s ? 3 : 0;
}

static int direction(int dir)
{
    cudnnConvolutionPerf_t perf[16];
    int n = 0;
    cudnnStatus_t s;
    printf("%s:\n", dir_names[dir]);
    memset(perf, 0, sizeof perf);
    if (dir == FWD)
        s = cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 16, &n, perf);
    else if (dir == BWD_DATA)
        s = cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, wd, yd, cd, xd, 16, &n, perf);
    else
        s = cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, xd, yd, cd, wd, 16, &n, perf);
    print_perf("Get_v7", s, s ? 0 : n, perf);
    if (s)
        last_error();
    if (getenv("CG_TF_FIRST_ALGO") && atoi(getenv("CG_TF_FIRST_ALGO")))
        return first_algo(dir, s, n, perf);
    /* the workspace: the largest candidate's, at most the limit, halved while cudaMalloc fails */
    size_t want = 0;
    for (int i = 0; !s && i < n && i < 16; i++)
        if (perf[i].status == 0 && perf[i].memory > want && perf[i].memory <= limit)
            want = perf[i].memory;
    void *ws = NULL;
    while (want) {
        if ((ws = dev_alloc("workspace", want)))
            break;
        want = want / 2 >= MIB ? want / 2 : 0;
    }
    printf("  workspace %zu bytes\n", want);
    memset(perf, 0, sizeof perf);
    n = 0;
    if (dir == FWD)
        s = cudnnFindConvolutionForwardAlgorithmEx(handle, xd, x, wd, w, cd, yd, y, 16, &n, perf, ws, want);
    else if (dir == BWD_DATA)
        s = cudnnFindConvolutionBackwardDataAlgorithmEx(handle, wd, w, yd, dy, cd, xd, dx, 16, &n, perf, ws, want);
    else
        s = cudnnFindConvolutionBackwardFilterAlgorithmEx(handle, xd, x, yd, dy, cd, wd, dw, 16, &n, perf, ws, want);
    print_perf("FindEx", s, n, perf);
    if (s)
        last_error();
    int algo = -1;
    for (int i = 0; i < n && i < 16 && algo < 0; i++)
        if (perf[i].status == 0)
            algo = perf[i].algo;
    int rc = 0;
    if (algo < 0) {
        printf("  Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so "
               "try looking to see if a warning log message was printed above.\n");
        rc = 3;
    } else {
        size_t need = 0;
        if (dir == FWD)
            s = cudnnGetConvolutionForwardWorkspaceSize(handle, xd, wd, cd, yd, algo, &need);
        else if (dir == BWD_DATA)
            s = cudnnGetConvolutionBackwardDataWorkspaceSize(handle, wd, yd, cd, xd, algo, &need);
        else
            s = cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, xd, yd, cd, wd, algo, &need);
        printf("  WorkspaceSize(algo %d) = %d, %zu bytes\n", algo, s, need);
        rc = run_algo(dir, algo, ws, want);
    }
    dev_free(ws);
    return rc;
}

static int preallocate(void **grab)
{
    int ngrab = 0;
    if (!getenv("CG_TF_LEAVE_MB"))
        return 0;
    size_t leave = (size_t)atoll(getenv("CG_TF_LEAVE_MB")) * MIB, fr = 0, tot = 0;
    for (size_t chunk = 1024 * MIB; chunk >= MIB && ngrab < 4096; chunk /= 2)
        while (ngrab < 4096 && cudaMemGetInfo(&fr, &tot) == 0 && fr > leave + chunk && cudaMalloc(&grab[ngrab], chunk) == 0)
            ngrab++;
    cudaMemGetInfo(&fr, &tot);
    printf("preallocated like TensorFlow: %d blocks, %zu MiB reported free\n", ngrab, fr / MIB);
    return ngrab;
}

int main(void)
{
    static const char *const cudart_names[] = {"libcudart.so.13", "libcudart.so.12", NULL};
    const char *cudnn_names[] = {getenv("CG_CUDNN") ? getenv("CG_CUDNN") : "libcudnn.so.9", NULL};
    void *rt = open_lib(cudart_names), *dnn = open_lib(cudnn_names);
    /* cudnnGetLastErrorString is cuDNN 9's: optional, as in TF; cudaMemcpy (optional) fills the inputs and
     * reads results back for the checksums (the test doubles have none) */
#define RESOLVE(lib, ret, name, params)                                                                         \
    if (lib && !(name = (ret(*) params)dlsym(lib, #name)) && strcmp(#name, "cudnnGetLastErrorString") &&         \
        strcmp(#name, "cudaMemcpy")) {                                                                          \
        printf("missing %s\n", #name);                                                                          \
        missing++;                                                                                              \
    }
    FUNCS(RESOLVE)
    if (!rt || !dnn || missing) {
        printf("cannot run: %s\n", !rt ? "no libcudart" : !dnn ? "no libcudnn.so.9" : "missing functions");
        return 4;
    }
    int v = 0;
    cudaRuntimeGetVersion(&v);
    printf("cudart %d, cudnn %zu\n", v, cudnnGetVersion());
    cudaError_t e = cudaSetDevice(0);
    printf("cudaSetDevice(0) = %d %s\n", e, rt_err(e));
    size_t fr = 0, tot = 0;
    e = cudaMemGetInfo(&fr, &tot);
    printf("cudaMemGetInfo = %d %s%s\n", e, rt_err(e), e ? "" : " (free/total known)");

    int N = 8, C = 16, H = 32, W = 32, K = 32, R = 3, S = 3;
    const char *shape = getenv("CG_CONV_SHAPE");
    if (shape && sscanf(shape, "%d,%d,%d,%d,%d,%d,%d", &N, &C, &H, &W, &K, &R, &S) != 7)
        printf("CG_CONV_SHAPE: want N,C,H,W,K,R,S; using the default\n");
    const char *lim = getenv("TF_CUDNN_WORKSPACE_LIMIT_IN_MB");
    limit = (size_t)(lim ? strtoull(lim, NULL, 10) : 4096) * MIB;
    int P = H + 2 * (R / 2) - R + 1, Q = W + 2 * (S / 2) - S + 1;
    printf("shape x %dx%dx%dx%d w %dx%dx%dx%d pad %d,%d -> y %dx%dx%dx%d, workspace limit %zu\n", N, C, H, W, K, C,
           R, S, R / 2, S / 2, N, K, P, Q, limit);

    /* TF's allocator gets the tensors before cuDNN is touched */
    xs = (size_t)N * C * H * W * 4, wsz = (size_t)K * C * R * S * 4, ys = (size_t)N * K * P * Q * 4;
    x = dev_alloc("x", xs), dx = dev_alloc("dx", xs), w = dev_alloc("w", wsz), dw = dev_alloc("dw", wsz);
    y = dev_alloc("y", ys), dy = dev_alloc("dy", ys);
    fill(x, xs, 1), fill(w, wsz, 2), fill(dy, ys, 3);
    /* a failed driver load inside cudart leaves its reason for dlerror() */
    const char *de = dlerror();
    printf("dlerror after the allocations: %s\n", de ? de : "(null)");

    /* CG_TF_LEAVE_MB=N: take the GPU's memory as TensorFlow's allocator does,
     * leaving N MiB of what cudaMemGetInfo reports free; CG_TF_PREALLOC_FIRST=1
     * does it before cudnnCreate, as TensorFlow does at start */
    void *grab[4096];
    int ngrab = 0;
    int prealloc_first = getenv("CG_TF_PREALLOC_FIRST") && atoi(getenv("CG_TF_PREALLOC_FIRST"));
    if (prealloc_first)
        ngrab = preallocate(grab);
    cudnnStatus_t s = cudnnCreate(&handle);
    printf("cudnnCreate = %d %s\n", s, dnn_err(s));
    if (!s && !prealloc_first)
        ngrab = preallocate(grab);
    int rc = 0;
    if (s) {
        last_error();
        printf("Could not create cudnn handle: %s\n", dnn_err(s));
        printf("Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try "
               "looking to see if a warning log message was printed above.\n");
        rc = 2;
    } else if (!x || !w || !y || !dx || !dw || !dy) {
        printf("tensors could not be allocated\n");
        rc = 3;
    } else {
        cudnnCreateTensorDescriptor(&xd);
        cudnnCreateTensorDescriptor(&yd);
        cudnnCreateFilterDescriptor(&wd);
        cudnnCreateConvolutionDescriptor(&cd);
        cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W);
        cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S);
        s = cudnnSetConvolution2dDescriptor(cd, R / 2, S / 2, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
        int on, oc, oh, ow;
        cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow);
        cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow);
        /* CG_CONV_STEPS > 1 repeats the lookups, as a framework without an algorithm cache would */
        int steps = getenv("CG_CONV_STEPS") ? atoi(getenv("CG_CONV_STEPS")) : 1;
        for (int step = 0; step < steps; step++)
            for (int d = FWD; d <= BWD_FILTER; d++) {
                int r = direction(d);
                if (r)
                    rc = r;
            }
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(yd);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyConvolutionDescriptor(cd);
        s = cudnnDestroy(handle);
        printf("cudnnDestroy = %d\n", s);
    }
    while (ngrab > 0)
        cudaFree(grab[--ngrab]);
    dev_free(x), dev_free(dx), dev_free(w), dev_free(dw), dev_free(y), dev_free(dy);
    printf("exit %d\n", rc);
    return rc;
}
