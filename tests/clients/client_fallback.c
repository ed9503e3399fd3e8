/* client_fallback.c - a test client for convguard's fallback
 * (CONVGUARD_FALLBACK=1): one forward convolution reached the way a
 * framework on a nearly full GPU reaches it, failing the way it fails.
 * Linked against the test doubles (PLT route, RPATH, like PyTorch).
 *
 *   client_fallback v7       Get*_v7 asking CLIENT_REQ (default 1) results; the
 *                            first one's workspace from cudaMalloc; failure: exit 3
 *   client_fallback find     cudnnFindConvolutionForwardAlgorithm; failure: exit 3
 *   client_fallback findex   a CLIENT_WS_MB (default 256) MiB workspace, FindEx in it,
 *                            the first algorithm that worked run in it
 *   client_fallback exec     algorithm CLIENT_ALGO (default 2) run with a CLIENT_WS_MB
 *                            (default 64) MiB workspace (too small for it)
 *   client_fallback reserve  a framework that takes all memory: reads free memory
 *                            (cudaMemGetInfo, or cuMemGetInfo_v2 by dlsym with
 *                            CLIENT_MEMINFO=drv), preallocates CLIENT_MEM_FRACTION
 *                            (default 0.99) of it, then cudnnCreate (failure: exit 2),
 *                            then algorithm 0, which needs no workspace
 * Every mode ends with the convolution's output checksum (`y sum ...`), so a
 * constrained run can be compared with an unconstrained one.  stdout holds no
 * addresses; the algorithm chosen is printed (it may differ under fallback). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_double.h"
#include "cudnn_double.h"

#define MIB ((size_t)1 << 20)
#define N_ 2
#define C_ 4
#define H_ 8
#define W_ 8
#define K_ 4
#define R_ 3

static cudnnHandle_t h;
static cudnnTensorDescriptor_t xd, yd;
static cudnnFilterDescriptor_t wd;
static cudnnConvolutionDescriptor_t cd;
static float *x, *w, *y;

static long env_long(const char *n, long dflt) { return getenv(n) ? atol(getenv(n)) : dflt; }

static void *dev(size_t n, const char *what)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, n);
    printf("cudaMalloc(%s, %zu) = %d\n", what, n, e);
    return e ? NULL : p;
}

static void last_error(void)
{
    char m[512] = "";
    cudnnGetLastErrorString(m, sizeof m);
    printf("  reason: %s\n", m);
}

static void print_perf(const char *what, cudnnStatus_t s, int n, const cudnnConvolutionFwdAlgoPerf_t *p)
{
    printf("%s = %d, returned %d\n", what, s, n);
    for (int i = 0; i < n && i < 8; i++)
        printf("  algo %d status %d workspace %zu\n", p[i].algo, p[i].status, p[i].memory);
}

/* CLIENT_REENTER=1: called by the cuDNN double from inside the next cudnnConvolutionForward */
static cudnnStatus_t reenter_cb(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x,
                                cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t cd,
                                cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wsb, const void *beta,
                                cudnnTensorDescriptor_t yd, void *y)
{
    cudnnStatus_t st = cudnnConvolutionForward(h, alpha, xd, x, wd, w, cd, algo, ws, wsb, beta, yd, y);
    printf("re-entered cudnnConvolutionForward = %d\n", st);
    return st;
}

static int run(int algo, void *ws, size_t ws_bytes)
{
    float one = 1.0f, zero = 0.0f;
    cudnnStatus_t s = cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, ws, ws_bytes, &zero, yd, y);
    printf("cudnnConvolutionForward(algo %d, workspace %zu) = %d\n", algo, ws_bytes, s);
    if (s) {
        last_error();
        printf("exit 3\n");
        return 3;
    }
    double sum = 0, wsum = 0;
    for (int i = 0; i < N_ * K_ * H_ * W_; i++) {
        sum += y[i];
        wsum += y[i] * (double)(i % 7 + 1);
    }
    printf("y sum %.4f weighted %.4f y[0] %.4f y[77] %.4f\n", sum, wsum, y[0], y[77]);
    printf("exit 0\n");
    return 0;
}

static int no_algorithm(void)
{
    printf("Failed to get convolution algorithm. This is probably because cuDNN failed to initialize\n");
    printf("exit 3\n");
    return 3;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "v7";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "reserve") == 0) {
        size_t fr = 0, tot = 0;
        int e;
        if (getenv("CLIENT_MEMINFO") && strcmp(getenv("CLIENT_MEMINFO"), "drv") == 0) {
            cudaFree(NULL); /* the runtime makes the primary context current, as a framework's start does */
            void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
            CUresult (*info)(size_t *, size_t *) = cu ? (CUresult(*)(size_t *, size_t *))dlsym(cu, "cuMemGetInfo_v2")
                                                      : NULL;
            e = info ? (int)info(&fr, &tot) : -1;
            printf("cuMemGetInfo_v2 = %d\n", e);
        } else {
            e = cudaMemGetInfo(&fr, &tot);
            printf("cudaMemGetInfo = %d\n", e);
        }
        double frac = getenv("CLIENT_MEM_FRACTION") ? atof(getenv("CLIENT_MEM_FRACTION")) : 0.99;
        size_t want = (size_t)((double)fr * frac) & ~(MIB - 1);
        printf("preallocating %.2f of the free memory: %s\n", frac, want && dev(want, "pool") ? "ok" : "failed");
    }
    cudnnStatus_t s = cudnnCreate(&h);
    printf("cudnnCreate = %d\n", s);
    if (s) {
        last_error();
        printf("Could not create cudnn handle\nexit 2\n");
        return 2;
    }
    x = dev(sizeof(float) * N_ * C_ * H_ * W_, "x");
    w = dev(sizeof(float) * K_ * C_ * R_ * R_, "w");
    y = dev(sizeof(float) * N_ * K_ * H_ * W_, "y");
    if (!x || !w || !y) {
        printf("tensors could not be allocated\nexit 4\n");
        return 4;
    }
    for (int i = 0; i < N_ * C_ * H_ * W_; i++)
        x[i] = (float)((i * 37) % 11) - 5.0f;
    for (int i = 0; i < K_ * C_ * R_ * R_; i++)
        w[i] = (float)((i * 13) % 7) * 0.25f - 0.75f;
    cudnnCreateTensorDescriptor(&xd);
    cudnnCreateTensorDescriptor(&yd);
    cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&cd);
    cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N_, C_, H_, W_);
    cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N_, K_, H_, W_);
    cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K_, C_, R_, R_);
    cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);

    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int n = 0;
    memset(perf, 0, sizeof perf);
    if (strcmp(mode, "reserve") == 0)
        return run(0, NULL, 0); /* the handle was the point; algorithm 0 needs no workspace */
    if (strcmp(mode, "v7") == 0) {
        int req = (int)env_long("CLIENT_REQ", 1);
        s = cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, req, &n, perf);
        print_perf("Get_v7", s, n, perf);
        if (s || n < 1)
            return no_algorithm();
        void *ws = perf[0].memory ? dev(perf[0].memory, "workspace") : NULL;
        if (perf[0].memory && !ws)
            return no_algorithm();
        return run(perf[0].algo, ws, perf[0].memory);
    }
    if (strcmp(mode, "find") == 0) {
        s = cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd, 3, &n, perf);
        print_perf("Find", s, n, perf);
        if (s) {
            last_error();
            return no_algorithm();
        }
        for (int i = 0; i < n; i++)
            if (perf[i].status == 0) {
                void *ws = perf[i].memory ? dev(perf[i].memory, "workspace") : NULL;
                if (perf[i].memory && !ws)
                    continue;
                return run(perf[i].algo, ws, perf[i].memory);
            }
        return no_algorithm();
    }
    size_t wsb = (size_t)env_long("CLIENT_WS_MB", strcmp(mode, "findex") == 0 ? 256 : 64) * MIB;
    void *ws = wsb ? dev(wsb, "workspace") : NULL;
    if (wsb && !ws)
        wsb = 0;
    if (strcmp(mode, "findex") == 0) {
        s = cudnnFindConvolutionForwardAlgorithmEx(h, xd, x, wd, w, cd, yd, y, 3, &n, perf, ws, wsb);
        print_perf("FindEx", s, n, perf);
        if (s)
            last_error();
        for (int i = 0; !s && i < n; i++)
            if (perf[i].status == 0)
                return run(perf[i].algo, ws, wsb);
        return no_algorithm();
    }
    if (strcmp(mode, "exec") == 0) {
        if (env_long("CLIENT_WARM", 0)) {
            /* one execution that needs no workspace first: the next call goes through the shim's
             * fast entry (the first call through a PLT resolves the real function) */
            float one = 1.0f, zero = 0.0f;
            printf("warm-up = %d\n", cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, 0, NULL, 0, &zero, yd, y));
        }
        if (env_long("CLIENT_REENTER", 0)) {
            /* a profiler-like callback that re-enters cudnnConvolutionForward (through our PLT) on
             * this thread while the library is inside the program's own call */
            void *cnn = dlopen("libcudnn_cnn.so.9", RTLD_NOW | RTLD_NOLOAD);
            void (*set)(void *) = cnn ? (void (*)(void *))dlsym(cnn, "cgtestSetConvCallback") : NULL;
            printf("re-entering callback %s\n", set ? "set" : "not available");
            if (set)
                set((void *)reenter_cb);
        }
        return run((int)env_long("CLIENT_ALGO", 2), ws, wsb);
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 64;
}
