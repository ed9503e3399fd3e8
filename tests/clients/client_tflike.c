/* client_tflike.c - TensorFlow-like test client.
 *
 * TensorFlow (xla/tsl/platform/default/dso_loader.cc, cudnn_stub.cc) loads
 * libcudnn.so.N, libcudart.so.N and libcuda.so.1 with
 * dlopen(soname, RTLD_NOW | RTLD_LOCAL) and resolves EVERY function with
 * dlsym(handle, name): nothing reaches cuDNN through a PLT, so symbol
 * interposition alone sees nothing.  A missing symbol becomes a stub that
 * returns an error (here: "missing <name>" and CUDNN_STATUS_INTERNAL_ERROR).
 * The test sets LD_LIBRARY_PATH to the doubles.
 *
 * Sequence: driver init (and, with CGTEST_TF_PREALLOC_MB, a BFC-like
 * up-front cuMemAlloc_v2 of that many MiB, TF's default of grabbing most of
 * the GPU), cudnnCreate (on failure TF's "Failed to get convolution
 * algorithm" text), then the legacy algorithm API: _v7 + workspace with
 * fallback for forward, backward data and backward filter, a too-small
 * workspace (BAD_PARAM), cudnnFindConvolutionForwardAlgorithm and ...Ex with
 * a scratch of CGTEST_TF_WS_MB (default 64, TF_CUDNN_WORKSPACE_LIMIT_IN_MB's
 * role), and a fused cudnnConvolutionBiasActivationForward. */
#include "common.h"

#define DRV_FNS(X) X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetName) \
    X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuMemGetInfo_v2) X(cuMemAlloc_v2) X(cuMemFree_v2)
#define RT_FNS(X) X(cudaRuntimeGetVersion) X(cudaSetDevice) X(cudaGetDeviceCount) X(cudaMalloc) \
    X(cudaFree) X(cudaMemGetInfo) X(cudaGetErrorName)
#define DNN_FNS(X) X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate) \
    X(cudnnDestroy) X(cudnnSetStream) X(cudnnCreateTensorDescriptor) X(cudnnSetTensor4dDescriptor) \
    X(cudnnDestroyTensorDescriptor) X(cudnnCreateFilterDescriptor) X(cudnnSetFilter4dDescriptor) \
    X(cudnnDestroyFilterDescriptor) X(cudnnCreateConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor) \
    X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType) X(cudnnDestroyConvolutionDescriptor) \
    X(cudnnCreateActivationDescriptor) X(cudnnSetActivationDescriptor) X(cudnnDestroyActivationDescriptor) \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionBackwardDataAlgorithm_v7) \
    X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) X(cudnnFindConvolutionForwardAlgorithm) \
    X(cudnnFindConvolutionForwardAlgorithmEx) X(cudnnGetConvolutionForwardWorkspaceSize) \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize) X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
    X(cudnnConvolutionForward) X(cudnnConvolutionBackwardData) X(cudnnConvolutionBackwardFilter) \
    X(cudnnConvolutionBiasActivationForward)

#define DECL(f) static __typeof__(&f) p_##f;
DRV_FNS(DECL)
RT_FNS(DECL)
DNN_FNS(DECL)

/* Through the pointer, or TF's stub behaviour when it is missing. */
#define CALL(f, fail, ...) (p_##f ? p_##f(__VA_ARGS__) : (printf("stub %s\n", #f), (fail)))
#define DNN(f, ...) CALL(f, CUDNN_STATUS_INTERNAL_ERROR, __VA_ARGS__)

static void *open_lib(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);

    printf("dlopen(\"%s\", RTLD_NOW|RTLD_LOCAL) = %s\n", name, h ? "ok" : "NULL");
    printf("dlerror = %s\n", dlerr());
    return h;
}

static void *sym(void *h, const char *name, int *missing)
{
    void *p = h ? dlsym(h, name) : NULL;

    if (h && !p) {
        printf("missing %s: %s\n", name, dlerr());
        ++*missing;
    }
    return p;
}

static const char *rt_name(cudaError_t e) { return p_cudaGetErrorName ? p_cudaGetErrorName(e) : "?"; }

static void last_error(void)
{
    char msg[512] = "";

    if (p_cudnnGetLastErrorString)
        p_cudnnGetLastErrorString(msg, sizeof msg);
    printf("cudnnGetLastErrorString = \"%s\"\n", msg);
}

static void *dev_alloc(const char *what, size_t n)
{
    void *p = NULL;
    cudaError_t e = CALL(cudaMalloc, cudaErrorUnknown, &p, n);

    printf("cudaMalloc(%s, %zu) = %d %s\n", what, n, e, rt_name(e));
    return e ? NULL : p;
}

static void dev_free(const char *what, void *p)
{
    if (p)
        printf("cudaFree(%s) = %d\n", what, CALL(cudaFree, cudaErrorUnknown, p));
}

static cudnnHandle_t h;
static cudnnTensorDescriptor_t xd, yd, bd;
static cudnnFilterDescriptor_t wd;
static cudnnConvolutionDescriptor_t cd;
static cudnnActivationDescriptor_t ad;
static float *x, *w, *y, *dx, *dw, *bias;

enum { FWD, BWD_DATA, BWD_FILTER, FUSED };
static const char *dir_name[] = { "forward", "backward data", "backward filter", "fused" };

/* _v7, then the proposed algorithms in order, each with its workspace from
 * cudaMalloc, the next one when that fails; returns the algorithm run or -1. */
static int run_dir(int dir, float alpha, float beta)
{
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int got = 0;
    cudnnStatus_t st;

    st = dir == BWD_DATA ? DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7, h, wd, yd, cd, xd, 8, &got, perf)
       : dir == BWD_FILTER ? DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7, h, xd, yd, cd, wd, 8, &got, perf)
       : DNN(cudnnGetConvolutionForwardAlgorithm_v7, h, xd, wd, cd, yd, 8, &got, perf);
    printf("%s: Get*Algorithm_v7 = %d returned=%d\n", dir_name[dir], st, got);
    for (int i = 0; !st && i < got; i++) {
        size_t need = 0;
        void *ws = NULL;
        int algo = perf[i].algo;

        printf("  perf[%d] algo=%d status=%d memory=%zu\n", i, algo, perf[i].status, perf[i].memory);
        st = dir == BWD_DATA ? DNN(cudnnGetConvolutionBackwardDataWorkspaceSize, h, wd, yd, cd, xd, algo, &need)
           : dir == BWD_FILTER ? DNN(cudnnGetConvolutionBackwardFilterWorkspaceSize, h, xd, yd, cd, wd, algo, &need)
           : DNN(cudnnGetConvolutionForwardWorkspaceSize, h, xd, wd, cd, yd, algo, &need);
        printf("  workspace size = %d bytes=%zu\n", st, need);
        if (st || (need && !(ws = dev_alloc("workspace", need)))) {
            printf("  -> next algorithm\n");
            st = CUDNN_STATUS_SUCCESS;
            continue;
        }
        switch (dir) {
        case FWD:
            st = DNN(cudnnConvolutionForward, h, &alpha, xd, x, wd, w, cd, algo, ws, need, &beta, yd, y);
            break;
        case BWD_DATA:
            st = DNN(cudnnConvolutionBackwardData, h, &alpha, wd, w, yd, y, cd, algo, ws, need, &beta, xd, dx);
            break;
        case BWD_FILTER:
            st = DNN(cudnnConvolutionBackwardFilter, h, &alpha, xd, x, yd, y, cd, algo, ws, need, &beta, wd, dw);
            break;
        default: /* y = relu(conv + 1 * y + bias), z aliasing y as TF's side input does */
            st = DNN(cudnnConvolutionBiasActivationForward, h, &alpha, xd, x, wd, w, cd, algo, ws, need, &beta,
                     yd, y, bd, bias, ad, yd, y);
        }
        printf("  %s(algo=%d) = %d\n", dir_name[dir], algo, st);
        if (st)
            last_error();
        dev_free("workspace", ws);
        if (!st)
            return algo;
        st = CUDNN_STATUS_SUCCESS;
    }
    return -1;
}

static void find_algos(void)
{
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    size_t ws_bytes = (size_t)atoi(getenv("CGTEST_TF_WS_MB") ? getenv("CGTEST_TF_WS_MB") : "64") * MIB;
    void *ws;
    int got = 0;
    cudnnStatus_t st;

    st = DNN(cudnnFindConvolutionForwardAlgorithm, h, xd, wd, cd, yd, 8, &got, perf);
    printf("cudnnFindConvolutionForwardAlgorithm = %d returned=%d\n", st, got);
    for (int i = 0; i < got; i++)
        printf("  perf[%d] algo=%d status=%d time=%.1f memory=%zu\n", i, perf[i].algo, perf[i].status,
               (double)perf[i].time, perf[i].memory);
    if (st)
        last_error();
    if (!(ws = dev_alloc("scratch", ws_bytes)))
        ws_bytes = 0; /* TF then autotunes with no scratch at all */
    got = 0;
    st = DNN(cudnnFindConvolutionForwardAlgorithmEx, h, xd, x, wd, w, cd, yd, y, 8, &got, perf, ws, ws_bytes);
    printf("cudnnFindConvolutionForwardAlgorithmEx(workspace=%zu) = %d returned=%d\n", ws_bytes, st, got);
    for (int i = 0; i < got; i++)
        printf("  perf[%d] algo=%d status=%d time=%.1f memory=%zu\n", i, perf[i].algo, perf[i].status,
               (double)perf[i].time, perf[i].memory);
    if (st)
        last_error();
    dev_free("scratch", ws);
}

static void convolutions(void)
{
    float ref[XLEN > YLEN ? (XLEN > WLEN ? XLEN : WLEN) : (YLEN > WLEN ? YLEN : WLEN)], yold[YLEN];
    float two = 2.0f, half = 0.5f, one = 1.0f, zero = 0.0f;
    cudnnStatus_t st;

    /* one statement each: argument evaluation order is unspecified */
    printf("cudnnCreateTensorDescriptor(x) = %d\n", DNN(cudnnCreateTensorDescriptor, &xd));
    printf("cudnnCreateTensorDescriptor(y) = %d\n", DNN(cudnnCreateTensorDescriptor, &yd));
    printf("cudnnCreateTensorDescriptor(bias) = %d\n", DNN(cudnnCreateTensorDescriptor, &bd));
    printf("cudnnCreateFilterDescriptor = %d\n", DNN(cudnnCreateFilterDescriptor, &wd));
    printf("cudnnCreateConvolutionDescriptor = %d\n", DNN(cudnnCreateConvolutionDescriptor, &cd));
    printf("cudnnCreateActivationDescriptor = %d\n", DNN(cudnnCreateActivationDescriptor, &ad));
    printf("cudnnSetTensor4dDescriptor(x) = %d\n",
           DNN(cudnnSetTensor4dDescriptor, xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    printf("cudnnSetTensor4dDescriptor(y) = %d\n",
           DNN(cudnnSetTensor4dDescriptor, yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, P, Q));
    printf("cudnnSetTensor4dDescriptor(bias) = %d\n",
           DNN(cudnnSetTensor4dDescriptor, bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, K, 1, 1));
    printf("cudnnSetFilter4dDescriptor = %d\n",
           DNN(cudnnSetFilter4dDescriptor, wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
    printf("cudnnSetConvolution2dDescriptor = %d\n",
           DNN(cudnnSetConvolution2dDescriptor, cd, PAD, PAD, STR, STR, DIL, DIL, CUDNN_CROSS_CORRELATION,
               CUDNN_DATA_FLOAT));
    printf("cudnnSetConvolutionGroupCount = %d\n", DNN(cudnnSetConvolutionGroupCount, cd, 1));
    printf("cudnnSetConvolutionMathType = %d\n", DNN(cudnnSetConvolutionMathType, cd, CUDNN_DEFAULT_MATH));
    printf("cudnnSetActivationDescriptor = %d\n",
           DNN(cudnnSetActivationDescriptor, ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    x = dev_alloc("x", sizeof(float) * XLEN);
    w = dev_alloc("w", sizeof(float) * WLEN);
    y = dev_alloc("y", sizeof(float) * YLEN);
    dx = dev_alloc("dx", sizeof(float) * XLEN);
    dw = dev_alloc("dw", sizeof(float) * WLEN);
    bias = dev_alloc("bias", sizeof(float) * K);
    if (!x || !w || !y || !dx || !dw || !bias) {
        printf("convolutions skipped: no device memory\n");
        return;
    }
    fill(x, XLEN, 5);
    fill(w, WLEN, 7);
    fill(y, YLEN, 3);
    fill(bias, K, 11);

    /* forward, alpha 2 and beta 0.5 over a filled y */
    memcpy(ref, y, sizeof(float) * YLEN);
    ref_fwd(x, w, ref, 2.0f, 0.5f);
    if (run_dir(FWD, two, half) >= 0)
        printf("forward %s\n", same(y, ref, YLEN));

    /* a workspace smaller than the algorithm needs */
    st = DNN(cudnnConvolutionForward, h, &one, xd, x, wd, w, cd, 2, NULL, 0, &zero, yd, y);
    printf("cudnnConvolutionForward(algo=2, no workspace) = %d\n", st);
    if (st)
        last_error();

    find_algos();

    fill(y, YLEN, 3); /* dy */
    ref_bwd_data(w, y, ref);
    if (run_dir(BWD_DATA, one, zero) >= 0)
        printf("backward data %s\n", same(dx, ref, XLEN));
    ref_bwd_filter(x, y, ref);
    if (run_dir(BWD_FILTER, one, zero) >= 0)
        printf("backward filter %s\n", same(dw, ref, WLEN));

    /* fused: y = relu(conv(x, w) + y + bias) */
    memcpy(yold, y, sizeof yold);
    ref_fwd(x, w, ref, 1.0f, 0.0f);
    for (int i = 0; i < YLEN; i++) {
        float v = ref[i] + yold[i] + bias[i / (P * Q) % K];
        ref[i] = v < 0 ? 0 : v;
    }
    if (run_dir(FUSED, one, one) >= 0)
        printf("fused %s\n", same(y, ref, YLEN));
}

static void cleanup(void)
{
    dev_free("bias", bias);
    dev_free("dw", dw);
    dev_free("dx", dx);
    dev_free("y", y);
    dev_free("w", w);
    dev_free("x", x);
    printf("cudnnDestroyActivationDescriptor = %d\n", DNN(cudnnDestroyActivationDescriptor, ad));
    printf("cudnnDestroyConvolutionDescriptor = %d\n", DNN(cudnnDestroyConvolutionDescriptor, cd));
    printf("cudnnDestroyFilterDescriptor = %d\n", DNN(cudnnDestroyFilterDescriptor, wd));
    printf("cudnnDestroyTensorDescriptor(bias) = %d\n", DNN(cudnnDestroyTensorDescriptor, bd));
    printf("cudnnDestroyTensorDescriptor(y) = %d\n", DNN(cudnnDestroyTensorDescriptor, yd));
    printf("cudnnDestroyTensorDescriptor(x) = %d\n", DNN(cudnnDestroyTensorDescriptor, xd));
}

int main(void)
{
    void *hdnn, *hrt, *hdrv;
    int missing = 0, v = -1, count = -1, r;
    size_t fr = 0, tot = 0, pre = (size_t)atoi(getenv("CGTEST_TF_PREALLOC_MB") ? getenv("CGTEST_TF_PREALLOC_MB") : "0");
    CUdevice dev = -1;
    CUcontext ctx = NULL;
    CUdeviceptr bfc = 0;
    char name[64] = "";
    cudnnStatus_t st;

    setvbuf(stdout, NULL, _IOLBF, 0);
    hdnn = open_lib("libcudnn.so.9");
    hrt = open_lib("libcudart.so.13");
    hdrv = open_lib("libcuda.so.1");
#define LOAD_DRV(f) p_##f = (__typeof__(&f))sym(hdrv, #f, &missing);
#define LOAD_RT(f) p_##f = (__typeof__(&f))sym(hrt, #f, &missing);
#define LOAD_DNN(f) p_##f = (__typeof__(&f))sym(hdnn, #f, &missing);
    DRV_FNS(LOAD_DRV)
    RT_FNS(LOAD_RT)
    DNN_FNS(LOAD_DNN)
    printf("dlsym: %d missing\n", missing);

    /* stream executor: the driver first (one call per statement: the order
     * in which printf's arguments are evaluated is unspecified) */
    r = CALL(cuInit, CUDA_ERROR_NOT_FOUND, 0);
    printf("cuInit = %d\n", r);
    r = CALL(cuDriverGetVersion, CUDA_ERROR_NOT_FOUND, &v);
    printf("cuDriverGetVersion = %d version=%d\n", r, v);
    r = CALL(cuDeviceGet, CUDA_ERROR_NOT_FOUND, &dev, 0);
    printf("cuDeviceGet = %d dev=%d\n", r, dev);
    r = CALL(cuDeviceGetName, CUDA_ERROR_NOT_FOUND, name, (int)sizeof name, 0);
    printf("cuDeviceGetName = %d name=\"%s\"\n", r, name);
    r = CALL(cuDevicePrimaryCtxRetain, CUDA_ERROR_NOT_FOUND, &ctx, 0);
    printf("cuDevicePrimaryCtxRetain = %d\n", r);
    r = CALL(cuCtxSetCurrent, CUDA_ERROR_NOT_FOUND, ctx);
    printf("cuCtxSetCurrent = %d\n", r);
    r = CALL(cuMemGetInfo_v2, CUDA_ERROR_NOT_FOUND, &fr, &tot);
    printf("cuMemGetInfo_v2 = %d free=%zu total=%zu\n", r, fr, tot);
    if (pre) {
        r = CALL(cuMemAlloc_v2, CUDA_ERROR_NOT_FOUND, &bfc, pre * MIB);
        printf("cuMemAlloc_v2(BFC region, %zu MiB) = %d\n", pre, r);
    }

    v = -1;
    r = CALL(cudaRuntimeGetVersion, cudaErrorUnknown, &v);
    printf("cudaRuntimeGetVersion = %d version=%d\n", r, v);
    r = CALL(cudaSetDevice, cudaErrorUnknown, 0);
    printf("cudaSetDevice = %d %s\n", r, rt_name(r));
    r = CALL(cudaGetDeviceCount, cudaErrorUnknown, &count);
    printf("cudaGetDeviceCount = %d count=%d\n", r, count);

    printf("cudnnGetVersion = %zu\n", p_cudnnGetVersion ? p_cudnnGetVersion() : 0);
    st = DNN(cudnnCreate, &h);
    printf("cudnnCreate = %d %s\n", st, p_cudnnGetErrorString ? p_cudnnGetErrorString(st) : "?");
    if (st) {
        last_error();
        printf("Failed to get convolution algorithm. This is probably because cuDNN failed to initialize\n");
    } else {
        printf("cudnnSetStream = %d\n", DNN(cudnnSetStream, h, NULL));
        convolutions();
        cleanup();
        printf("cudnnDestroy = %d\n", DNN(cudnnDestroy, h));
    }
    if (bfc)
        printf("cuMemFree_v2(BFC region) = %d\n", CALL(cuMemFree_v2, CUDA_ERROR_NOT_FOUND, bfc));
    print_maps();
    return 0;
}
