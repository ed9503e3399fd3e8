/* conv.c - one tiny convolution through this machine's cuDNN itself
 * (`convguard smoke`), forward and both backward passes, each checked
 * against a CPU reference: the one-batch test the seeds recommend before a
 * long run.  Each step is told as it starts and ends through the functions
 * the command hands in, so that a step that hangs shows which one; the
 * first that fails ends the run. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"
#include "host/cudnn_api.h"

#define FN_PTR(name, ret, args) ret(*name) args;
static struct {
    CUDNN_FUNCS(FN_PTR)
    CUDART_FUNCS(FN_PTR)
    void (*cudnnGetLastErrorString)(char *, size_t); /* cuDNN 9 only */
} api;

/* the problem: N=2, C=3, 8x8 input, K=4 filters of 3x3, padding 1, stride 1 */
enum { N = 2, C = 3, H = 8, W = 8, K = 4, R = 3, S = 3, PAD = 1 };
#define XS (N * C * H * W)
#define WS (K * C * R * S)
#define YS (N * K * H * W)

static const struct conv_report *rep; /* how the steps are told (the command's) */

static void step(const char *what) { rep->step(what); }

static void ok(const char *detail) { rep->ok(detail); }

/* a step failed: why, told */
static __attribute__((format(printf, 1, 2))) int failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = NULL;
    if (vasprintf(&why, fmt, ap) < 0)
        why = NULL;
    va_end(ap);
    rep->failed(why ? why : "?");
    free(why);
    return 1;
}

static int fail_cudnn(const char *fn, cudnnStatus_t st)
{
    char last[512] = "";
    if (api.cudnnGetLastErrorString)
        api.cudnnGetLastErrorString(last, sizeof last);
    return failed("%s -> %s (%d)%s%s", fn,
                  fmt_status_name(fn, st) ?: (api.cudnnGetErrorString ? api.cudnnGetErrorString(st) : "?"), st,
                  *last ? "; cuDNN says: " : "", last);
}

static int fail_cuda(const char *fn, cudaError_t st)
{
    return failed("%s -> %s (%d)", fn, fmt_status_name(fn, st) ?: "?", st);
}

#define CK(call, fn)                                       \
    do {                                                   \
        cudnnStatus_t st_ = (call);                        \
        if (st_ != CUDNN_STATUS_SUCCESS)                   \
            return fail_cudnn(fn, st_);                    \
    } while (0)
#define CU(call, fn)                                       \
    do {                                                   \
        cudaError_t st_ = (call);                          \
        if (st_ != cudaSuccess)                            \
            return fail_cuda(fn, st_);                     \
    } while (0)

static void *load_first(const char *const *names, size_t n, char *which, size_t wn)
{
    for (size_t i = 0; i < n; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        struct link_map *lm = NULL;
        if (h) {
            snprintf(which, wn, "%s", dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm ? lm->l_name : names[i]);
            return h;
        }
    }
    snprintf(which, wn, "%s", dlerror() ?: "?");
    return NULL;
}

static int load(const char *want)
{
    char path[PATH_MAX], d[PATH_MAX], v[32], msg[PATH_MAX + 200];
    step("load cuDNN");
    const char *const names[] = {want ? want : "libcudnn.so.9", "libcudnn.so.8", "/usr/local/cuda/lib64/libcudnn.so.9",
                                 "/usr/local/cuda/lib/libcudnn.so.9"};
    void *h = load_first(names, want ? 1 : 4, path, sizeof path);
    if (!h)
        return failed("%s", path);
#define RESOLVE(lib, name)                                           \
    if (!(*(void **)&api.name = dlsym(lib, #name))) {                \
        return failed("%s: no %s in it", path, #name);               \
    }
#define FN_CUDNN(name, ret, args) RESOLVE(h, name)
    CUDNN_FUNCS(FN_CUDNN)
    *(void **)&api.cudnnGetLastErrorString = dlsym(h, "cudnnGetLastErrorString");
    size_t ver = api.cudnnGetVersion(), rt = api.cudnnGetCudartVersion();
    snprintf(msg, sizeof msg, "%s (%s, for CUDA %zu)", path, fmt_cudnn_ver((long long)ver, v, sizeof v), rt / 1000);
    ok(msg);

    /* the CUDA runtime cuDNN was built for: next to it first, as wheels and toolkits lay them out */
    step("load the CUDA runtime");
    char soname[64], beside[PATH_MAX + 64];
    snprintf(soname, sizeof soname, "libcudart.so.%zu", rt / 1000);
    snprintf(beside, sizeof beside, "%s/%s", dir_name(path, d, sizeof d), soname);
    char *wheel = xasprintf("%s/../../cuda_runtime/lib/%s", d, soname);
    const char *const rts[] = {beside, wheel, soname, "/usr/local/cuda/lib64/libcudart.so"};
    void *r = load_first(rts, 4, path, sizeof path);
    free(wheel);
    if (!r)
        return failed("%s", path);
#define FN_CUDART(name, ret, args) RESOLVE(r, name)
    CUDART_FUNCS(FN_CUDART)
    ok(path);
    return 0;
}

/* y = conv(x, w); dx = conv^T(dy, w); dw = corr(x, dy) - plain loops */
static void reference(const float *x, const float *w, const float *dy, float *y, float *dx, float *dw)
{
    memset(y, 0, YS * sizeof *y), memset(dx, 0, XS * sizeof *dx), memset(dw, 0, WS * sizeof *dw);
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int oh = 0; oh < H; oh++)
                for (int ow = 0; ow < W; ow++)
                    for (int c = 0; c < C; c++)
                        for (int r = 0; r < R; r++)
                            for (int s = 0; s < S; s++) {
                                int ih = oh - PAD + r, iw = ow - PAD + s;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                int xi = ((n * C + c) * H + ih) * W + iw, wi = ((k * C + c) * R + r) * S + s;
                                int yi = ((n * K + k) * H + oh) * W + ow;
                                y[yi] += x[xi] * w[wi];
                                dx[xi] += dy[yi] * w[wi];
                                dw[wi] += dy[yi] * x[xi];
                            }
}

static double max_err(const float *a, const float *b, int n)
{
    double e = 0;
    for (int i = 0; i < n; i++)
        e = fmax(e, fabs((double)a[i] - b[i]) / (1 + fabs((double)b[i])));
    return e;
}

static int compare(const char *what, const float *got, const float *want, int n, double *worst)
{
    double e = max_err(got, want, n);
    *worst = fmax(*worst, e);
    char msg[96];
    snprintf(msg, sizeof msg, "matches the CPU (max relative error %.1e)", e);
    if (e > 1e-3)
        return failed("%s differs from the CPU reference: max relative error %.3g", what, e);
    ok(msg);
    return 0;
}

/* the convolution the steps run: its handle, descriptors and algorithms */
struct conv {
    cudnnHandle_t h;
    TD xd, yd;
    FD wd;
    CD cd;
    cudnnConvolutionFwdAlgoPerf_t fp[8], bdp[8], bfp[8];
};

/* its data: the host's inputs and CPU reference, the GPU's buffers */
struct conv_data {
    float hx[XS], hw[WS], hdy[YS], ry[YS], rdx[XS], rdw[WS];
    void *dx_, *dw_, *dy_, *dgx, *dgw, *ws;
    size_t wsz;
};

static int describe(struct conv *cv)
{
    int on, oc, oh, ow;
    step("describe a 2x3x8x8 input, 4 filters of 3x3");
    CK(api.cudnnCreateTensorDescriptor(&cv->xd), "cudnnCreateTensorDescriptor");
    CK(api.cudnnCreateTensorDescriptor(&cv->yd), "cudnnCreateTensorDescriptor");
    CK(api.cudnnCreateFilterDescriptor(&cv->wd), "cudnnCreateFilterDescriptor");
    CK(api.cudnnCreateConvolutionDescriptor(&cv->cd), "cudnnCreateConvolutionDescriptor");
    CK(api.cudnnSetTensor4dDescriptor(cv->xd, CG_CUDNN_TENSOR_NCHW, CG_CUDNN_DATA_FLOAT, N, C, H, W), "cudnnSetTensor4dDescriptor");
    CK(api.cudnnSetFilter4dDescriptor(cv->wd, CG_CUDNN_DATA_FLOAT, CG_CUDNN_TENSOR_NCHW, K, C, R, S), "cudnnSetFilter4dDescriptor");
    CK(api.cudnnSetConvolution2dDescriptor(cv->cd, PAD, PAD, 1, 1, 1, 1, CG_CUDNN_CROSS_CORRELATION, CG_CUDNN_DATA_FLOAT),
       "cudnnSetConvolution2dDescriptor");
    CK(api.cudnnSetConvolutionMathType(cv->cd, CG_CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
    CK(api.cudnnGetConvolution2dForwardOutputDim(cv->cd, cv->xd, cv->wd, &on, &oc, &oh, &ow),
       "cudnnGetConvolution2dForwardOutputDim");
    if (on != N || oc != K || oh != H || ow != W)
        return failed("output %dx%dx%dx%d, expected %dx%dx%dx%d", on, oc, oh, ow, N, K, H, W);
    CK(api.cudnnSetTensor4dDescriptor(cv->yd, CG_CUDNN_TENSOR_NCHW, CG_CUDNN_DATA_FLOAT, N, K, H, W), "cudnnSetTensor4dDescriptor");
    ok("");
    return 0;
}

static int lookup_algos(struct conv *cv)
{
    int nf = 0, nbd = 0, nbf = 0;
    step("algorithm lookup (..._v7: fwd, bwd data, bwd filter)");
    CK(api.cudnnGetConvolutionForwardAlgorithm_v7(cv->h, cv->xd, cv->wd, cv->cd, cv->yd, 8, &nf, cv->fp),
       "cudnnGetConvolutionForwardAlgorithm_v7");
    CK(api.cudnnGetConvolutionBackwardDataAlgorithm_v7(cv->h, cv->wd, cv->yd, cv->cd, cv->xd, 8, &nbd, cv->bdp),
       "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    CK(api.cudnnGetConvolutionBackwardFilterAlgorithm_v7(cv->h, cv->xd, cv->yd, cv->cd, cv->wd, 8, &nbf, cv->bfp),
       "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    if (!nf || !nbd || !nbf || cv->fp[0].status || cv->bdp[0].status || cv->bfp[0].status)
        return failed("no usable algorithm (forward %d, backward data %d, backward filter %d)", nf, nbd, nbf);
    char msg[160];
    snprintf(msg, sizeof msg, "algorithms %d, %d, %d", cv->fp[0].algo, cv->bdp[0].algo, cv->bfp[0].algo);
    ok(msg);
    return 0;
}

/* the same small numbers each run, and what the CPU makes of them */
static void fill_host(struct conv_data *d)
{
    srand(7);
    for (int i = 0; i < XS; i++)
        d->hx[i] = (float)(rand() % 17 - 8) / 8;
    for (int i = 0; i < WS; i++)
        d->hw[i] = (float)(rand() % 13 - 6) / 6;
    for (int i = 0; i < YS; i++)
        d->hdy[i] = (float)(rand() % 11 - 5) / 5;
    reference(d->hx, d->hw, d->hdy, d->ry, d->rdx, d->rdw);
}

static int allocate(struct conv *cv, struct conv_data *d)
{
    size_t w1 = 0, w2 = 0, w3 = 0;
    step("workspace sizes and cudaMalloc");
    CK(api.cudnnGetConvolutionForwardWorkspaceSize(cv->h, cv->xd, cv->wd, cv->cd, cv->yd, cv->fp[0].algo, &w1),
       "cudnnGetConvolutionForwardWorkspaceSize");
    CK(api.cudnnGetConvolutionBackwardDataWorkspaceSize(cv->h, cv->wd, cv->yd, cv->cd, cv->xd, cv->bdp[0].algo, &w2),
       "cudnnGetConvolutionBackwardDataWorkspaceSize");
    CK(api.cudnnGetConvolutionBackwardFilterWorkspaceSize(cv->h, cv->xd, cv->yd, cv->cd, cv->wd, cv->bfp[0].algo, &w3),
       "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    d->wsz = w1 > w2 ? w1 : w2;
    d->wsz = d->wsz > w3 ? d->wsz : w3;
    fill_host(d);
    d->ws = NULL;
    CU(api.cudaMalloc(&d->dx_, sizeof d->hx), "cudaMalloc");
    CU(api.cudaMalloc(&d->dw_, sizeof d->hw), "cudaMalloc");
    CU(api.cudaMalloc(&d->dy_, sizeof d->hdy), "cudaMalloc");
    CU(api.cudaMalloc(&d->dgx, sizeof d->hx), "cudaMalloc");
    CU(api.cudaMalloc(&d->dgw, sizeof d->hw), "cudaMalloc");
    if (d->wsz)
        CU(api.cudaMalloc(&d->ws, d->wsz), "cudaMalloc");
    CU(api.cudaMemcpy(d->dx_, d->hx, sizeof d->hx, CG_cudaMemcpyHostToDevice), "cudaMemcpy");
    CU(api.cudaMemcpy(d->dw_, d->hw, sizeof d->hw, CG_cudaMemcpyHostToDevice), "cudaMemcpy");
    char msg[160];
    snprintf(msg, sizeof msg, "workspace %zu bytes", d->wsz);
    ok(msg);
    return 0;
}

/* forward, backward data, backward filter, each against the CPU */
static int run_passes(struct conv *cv, struct conv_data *d, double *worst)
{
    float one = 1, zero = 0;
    float got_y[YS], got_dx[XS], got_dw[WS];
    step("forward (cudnnConvolutionForward)");
    CK(api.cudnnConvolutionForward(cv->h, &one, cv->xd, d->dx_, cv->wd, d->dw_, cv->cd, cv->fp[0].algo, d->ws, d->wsz,
                                   &zero, cv->yd, d->dy_),
       "cudnnConvolutionForward");
    CU(api.cudaMemcpy(got_y, d->dy_, sizeof got_y, CG_cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (compare("forward", got_y, d->ry, YS, worst))
        return 1;
    CU(api.cudaMemcpy(d->dy_, d->hdy, sizeof d->hdy, CG_cudaMemcpyHostToDevice), "cudaMemcpy");
    step("backward data (cudnnConvolutionBackwardData)");
    CK(api.cudnnConvolutionBackwardData(cv->h, &one, cv->wd, d->dw_, cv->yd, d->dy_, cv->cd, cv->bdp[0].algo, d->ws,
                                        d->wsz, &zero, cv->xd, d->dgx),
       "cudnnConvolutionBackwardData");
    CU(api.cudaMemcpy(got_dx, d->dgx, sizeof got_dx, CG_cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (compare("backward data", got_dx, d->rdx, XS, worst))
        return 1;
    step("backward filter (cudnnConvolutionBackwardFilter)");
    CK(api.cudnnConvolutionBackwardFilter(cv->h, &one, cv->xd, d->dx_, cv->yd, d->dy_, cv->cd, cv->bfp[0].algo, d->ws,
                                          d->wsz, &zero, cv->wd, d->dgw),
       "cudnnConvolutionBackwardFilter");
    CU(api.cudaMemcpy(got_dw, d->dgw, sizeof got_dw, CG_cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (compare("backward filter", got_dw, d->rdw, WS, worst))
        return 1;
    return 0;
}

int conv_run(const char *want, const struct conv_report *r, double *worst)
{
    rep = r;
    *worst = 0;
    if (load(want))
        return 1;
    struct conv cv;
    step("create the cuDNN handle (cudnnCreate)");
    CK(api.cudnnCreate(&cv.h), "cudnnCreate");
    ok("");
    struct conv_data d;
    if (describe(&cv) || lookup_algos(&cv) || allocate(&cv, &d) || run_passes(&cv, &d, worst))
        return 1;
    api.cudaFree(d.dx_), api.cudaFree(d.dw_), api.cudaFree(d.dy_), api.cudaFree(d.dgx), api.cudaFree(d.dgw);
    if (d.ws)
        api.cudaFree(d.ws);
    api.cudnnDestroy(cv.h);
    return 0;
}

