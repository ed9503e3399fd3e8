/* ext_torchlike.c - a PyTorch-like extension module (test client).
 *
 * Built twice: ext_torchlike.so against the doubles and ext_torchlike_real.so
 * against NVIDIA's libraries; both have DT_NEEDED libcudnn.so.9 and
 * libcudart.so.13 found through an RPATH, and call them DIRECTLY (PLT), as
 * libtorch_cuda.so does.  client_torchlike dlopen()s it RTLD_LOCAL, as
 * Python loads an extension, and calls run().
 * The convolution follows PyTorch's legacy path (TORCH_CUDNN_V8_API_DISABLED,
 * benchmark off): cudnnGetConvolutionForwardAlgorithm_v7, then for each
 * proposed algorithm its workspace from cudaMalloc, moving on to the next
 * algorithm when that allocation fails. */
#include "common.h"

static cudnnHandle_t h;

static void last_error(void)
{
    char msg[512];

    cudnnGetLastErrorString(msg, sizeof msg);
    printf("cudnnGetLastErrorString = \"%s\"\n", msg);
}

static void *dev_alloc(const char *what, size_t n)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, n);

    printf("cudaMalloc(%s, %zu) = %d %s\n", what, n, e, cudaGetErrorName(e));
    return e ? NULL : p;
}

static void dev_free(const char *what, void *p)
{
    if (p) {
        cudaError_t e = cudaFree(p);
        printf("cudaFree(%s) = %d\n", what, e);
    }
}

#define CALL(expr) do { cudnnStatus_t st_ = (expr); printf("%s = %d\n", #expr, st_); } while (0)

static void conv_forward(void)
{
    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnFilterDescriptor_t wd = NULL;
    cudnnConvolutionDescriptor_t cd = NULL;
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    float *x, *w, *y, ref[YLEN], one = 1.0f, zero = 0.0f;
    int n = -1, c = -1, hh = -1, ww = -1, got = 0, done = 0;
    cudnnStatus_t st;

    CALL(cudnnCreateTensorDescriptor(&xd));
    CALL(cudnnCreateTensorDescriptor(&yd));
    CALL(cudnnCreateFilterDescriptor(&wd));
    CALL(cudnnCreateConvolutionDescriptor(&cd));
    CALL(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    CALL(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
    CALL(cudnnSetConvolution2dDescriptor(cd, PAD, PAD, STR, STR, DIL, DIL, CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT));
    CALL(cudnnSetConvolutionGroupCount(cd, 1));
    CALL(cudnnSetConvolutionMathType(cd, CUDNN_DEFAULT_MATH));
    st = cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &n, &c, &hh, &ww);
    printf("cudnnGetConvolution2dForwardOutputDim = %d -> %dx%dx%dx%d\n", st, n, c, hh, ww);
    CALL(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, P, Q));

    x = dev_alloc("x", sizeof(float) * XLEN);
    w = dev_alloc("w", sizeof(float) * WLEN);
    y = dev_alloc("y", sizeof(float) * YLEN);
    if (x && w && y) {
        fill(x, XLEN, 5);
        fill(w, WLEN, 7);
        st = cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &got, perf);
        printf("cudnnGetConvolutionForwardAlgorithm_v7 = %d returned=%d\n", st, got);
        for (int i = 0; i < got; i++)
            printf("  perf[%d] algo=%d status=%d memory=%zu\n", i, perf[i].algo, perf[i].status, perf[i].memory);
        for (int i = 0; !st && i < got && !done; i++) {
            size_t need = 0;
            void *ws = NULL;
            if (perf[i].status != CUDNN_STATUS_SUCCESS)
                continue;
            st = cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, perf[i].algo, &need);
            printf("cudnnGetConvolutionForwardWorkspaceSize(algo=%d) = %d bytes=%zu\n", perf[i].algo, st, need);
            if (st || (need && !(ws = dev_alloc("workspace", need)))) {
                printf("-> next algorithm\n");
                st = CUDNN_STATUS_SUCCESS;
                continue;
            }
            st = cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, perf[i].algo, ws, need, &zero, yd, y);
            printf("cudnnConvolutionForward(algo=%d) = %d\n", perf[i].algo, st);
            if (st)
                last_error();
            dev_free("workspace", ws);
            done = !st;
        }
        if (done) {
            ref_fwd(x, w, ref, 1.0f, 0.0f);
            printf("conv %s\n", same(y, ref, YLEN));
        } else {
            printf("conv not run\n");
        }
    } else {
        printf("conv skipped: no device memory\n");
    }
    dev_free("y", y);
    dev_free("w", w);
    dev_free("x", x);
    CALL(cudnnDestroyConvolutionDescriptor(cd));
    CALL(cudnnDestroyFilterDescriptor(wd));
    CALL(cudnnDestroyTensorDescriptor(yd));
    CALL(cudnnDestroyTensorDescriptor(xd));
}

__attribute__((visibility("default"))) int run(void)
{
    int v = -1, count = -1;
    size_t fr = 0, tot = 0;
    cudaError_t e;
    cudnnStatus_t st;
    void *p;

    printf("cudnnGetVersion = %zu\n", cudnnGetVersion());
    printf("cudnnGetCudartVersion = %zu\n", cudnnGetCudartVersion());
    e = cudaRuntimeGetVersion(&v);
    printf("cudaRuntimeGetVersion = %d version=%d\n", e, v);
    v = -1;
    e = cudaDriverGetVersion(&v);
    printf("cudaDriverGetVersion = %d version=%d\n", e, v);
    e = cudaGetDeviceCount(&count);
    printf("cudaGetDeviceCount = %d %s count=%d\n", e, cudaGetErrorName(e), count);
    p = dev_alloc("1 MiB", MIB);
    dev_free("1 MiB", p);
    e = cudaMemGetInfo(&fr, &tot);
    printf("cudaMemGetInfo = %d free=%zu total=%zu\n", e, fr, tot);
    st = cudnnCreate(&h);
    printf("cudnnCreate = %d %s\n", st, cudnnGetErrorString(st));
    if (st) {
        last_error();
        return 1;
    }
    conv_forward();
    CALL(cudnnDestroy(h));
    return 0;
}
