/* client_cudnn8.c - a cuDNN 8 user (test client), TensorFlow-2.x style:
 * dlopen("libcudnn.so.8") by soname (LD_LIBRARY_PATH names the double's
 * folder: build/doubles/cudnn8 or build/doubles/cudnn8-broken), dlsym for
 * every function, buffers from the driver (libcuda.so.1, also by dlsym).
 * cuDNN 8 numbers its statuses 0..9 (NOT_INITIALIZED 1, BAD_PARAM 3, ...).
 * With cudnn8-broken, libcudnn_cnn_infer.so.8 is missing: the first
 * convolution call prints "Could not load library libcudnn_cnn_infer.so.8"
 * on stderr and fails with CUDNN_STATUS_NOT_INITIALIZED (1). */
#include <stdint.h>
#include "common.h"

#define DNN_FNS(X) X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnCreate) X(cudnnDestroy) \
    X(cudnnCreateTensorDescriptor) X(cudnnSetTensor4dDescriptor) X(cudnnDestroyTensorDescriptor) \
    X(cudnnCreateFilterDescriptor) X(cudnnSetFilter4dDescriptor) X(cudnnDestroyFilterDescriptor) \
    X(cudnnCreateConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor) \
    X(cudnnDestroyConvolutionDescriptor) X(cudnnGetConvolutionForwardAlgorithm_v7) \
    X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)
#define DRV_FNS(X) X(cuInit) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuMemAlloc_v2) X(cuMemFree_v2)
#define DECL(f) static __typeof__(&f) p_##f;
DNN_FNS(DECL)
DRV_FNS(DECL)

static void *dev(size_t n)
{
    CUdeviceptr p = 0;
    CUresult r = p_cuMemAlloc_v2(&p, n);

    printf("cuMemAlloc_v2(%zu) = %d\n", n, r);
    return r ? NULL : (void *)(uintptr_t)p;
}

static void conv(cudnnHandle_t h)
{
    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnFilterDescriptor_t wd = NULL;
    cudnnConvolutionDescriptor_t cd = NULL;
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    float *x = dev(sizeof(float) * XLEN), *w = dev(sizeof(float) * WLEN), *y = dev(sizeof(float) * YLEN);
    float ref[YLEN], one = 1.0f, zero = 0.0f;
    int got = 0;
    size_t need = 0;
    void *ws = NULL;
    cudnnStatus_t st;

    if (!x || !w || !y) {
        printf("conv skipped: no device memory\n");
        return;
    }
    fill(x, XLEN, 5);
    fill(w, WLEN, 7);
    printf("cudnnCreateTensorDescriptor(x) = %d\n", p_cudnnCreateTensorDescriptor(&xd));
    printf("cudnnCreateTensorDescriptor(y) = %d\n", p_cudnnCreateTensorDescriptor(&yd));
    printf("cudnnCreateFilterDescriptor = %d\n", p_cudnnCreateFilterDescriptor(&wd));
    printf("cudnnSetTensor4dDescriptor(x) = %d\n",
           p_cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    printf("cudnnSetTensor4dDescriptor(y) = %d\n",
           p_cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, P, Q));
    printf("cudnnSetFilter4dDescriptor = %d\n",
           p_cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
    st = p_cudnnCreateConvolutionDescriptor(&cd);
    printf("cudnnCreateConvolutionDescriptor = %d %s\n", st, p_cudnnGetErrorString(st));
    if (!st) {
        st = p_cudnnSetConvolution2dDescriptor(cd, PAD, PAD, STR, STR, DIL, DIL, CUDNN_CROSS_CORRELATION,
                                               CUDNN_DATA_FLOAT);
        printf("cudnnSetConvolution2dDescriptor = %d\n", st);
    }
    st = p_cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &got, perf);
    printf("cudnnGetConvolutionForwardAlgorithm_v7 = %d %s returned=%d\n", st, p_cudnnGetErrorString(st), got);
    if (!st && got > 0) {
        /* the smallest workspace, to keep this one simple: the last proposed */
        int algo = perf[got - 1].algo;
        st = p_cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &need);
        printf("cudnnGetConvolutionForwardWorkspaceSize(algo=%d) = %d bytes=%zu\n", algo, st, need);
        if (need)
            ws = dev(need);
        st = p_cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, ws, need, &zero, yd, y);
        printf("cudnnConvolutionForward(algo=%d) = %d\n", algo, st);
        ref_fwd(x, w, ref, 1.0f, 0.0f);
        printf("conv %s\n", st ? "not run" : same(y, ref, YLEN));
        if (ws)
            printf("cuMemFree_v2(workspace) = %d\n", p_cuMemFree_v2((CUdeviceptr)(uintptr_t)ws));
    } else {
        printf("conv not run\n");
    }
    if (cd)
        printf("cudnnDestroyConvolutionDescriptor = %d\n", p_cudnnDestroyConvolutionDescriptor(cd));
    printf("cudnnDestroyFilterDescriptor = %d\n", p_cudnnDestroyFilterDescriptor(wd));
    printf("cudnnDestroyTensorDescriptor(y) = %d\n", p_cudnnDestroyTensorDescriptor(yd));
    printf("cudnnDestroyTensorDescriptor(x) = %d\n", p_cudnnDestroyTensorDescriptor(xd));
    printf("cuMemFree_v2(y) = %d\n", p_cuMemFree_v2((CUdeviceptr)(uintptr_t)y));
    printf("cuMemFree_v2(w) = %d\n", p_cuMemFree_v2((CUdeviceptr)(uintptr_t)w));
    printf("cuMemFree_v2(x) = %d\n", p_cuMemFree_v2((CUdeviceptr)(uintptr_t)x));
}

int main(void)
{
    void *hdnn, *hdrv;
    int missing = 0;
    CUcontext ctx = NULL;
    cudnnHandle_t h = NULL;
    cudnnStatus_t st;
    CUresult r;

    setvbuf(stdout, NULL, _IOLBF, 0);
    hdnn = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(\"libcudnn.so.8\", RTLD_NOW|RTLD_LOCAL) = %s\ndlerror = %s\n", hdnn ? "ok" : "NULL", dlerr());
    hdrv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(\"libcuda.so.1\", RTLD_NOW|RTLD_LOCAL) = %s\ndlerror = %s\n", hdrv ? "ok" : "NULL", dlerr());
    if (!hdnn || !hdrv) {
        print_maps();
        return 0;
    }
#define LOAD_DNN(f) if (!(p_##f = (__typeof__(&f))dlsym(hdnn, #f))) { printf("missing %s: %s\n", #f, dlerr()); missing++; }
#define LOAD_DRV(f) if (!(p_##f = (__typeof__(&f))dlsym(hdrv, #f))) { printf("missing %s: %s\n", #f, dlerr()); missing++; }
    DNN_FNS(LOAD_DNN)
    DRV_FNS(LOAD_DRV)
    printf("dlsym: %d missing\n", missing);
    if (missing) {
        print_maps();
        return 0;
    }
    r = p_cuInit(0);
    printf("cuInit = %d\n", r);
    r = p_cuDevicePrimaryCtxRetain(&ctx, 0);
    printf("cuDevicePrimaryCtxRetain = %d\n", r);
    r = p_cuCtxSetCurrent(ctx);
    printf("cuCtxSetCurrent = %d\n", r);
    printf("cudnnGetVersion = %zu\n", p_cudnnGetVersion());
    st = p_cudnnCreate(&h);
    printf("cudnnCreate = %d %s\n", st, p_cudnnGetErrorString(st));
    if (!st) {
        conv(h);
        printf("cudnnDestroy = %d\n", p_cudnnDestroy(h));
    }
    print_maps();
    return 0;
}
