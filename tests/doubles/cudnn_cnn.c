/* cudnn_cnn.c - TEST DOUBLE of cuDNN's legacy convolution API, built into
 * libcudnn_cnn.so.9 (and libcudnn_cnn_infer.so.8).  This is NOT NVIDIA's
 * library.  Also the convolution descriptor; the tensor, filter and
 * activation descriptors are in cudnn_desc.c.
 *
 * Three algorithms, ids 0, 1, 2, for forward, backward data and backward
 * filter; their workspaces are CGTEST_ALGO_WS_MB (default "0,64,512", MiB).
 * Algorithm 2 is the "fastest", then 1, then 0, so the largest workspace is
 * proposed first, which is what makes a nearly full GPU fail.
 *  - Get*Algorithm_v7: all three, 2 first, status SUCCESS, time -1;
 *  - Find*Algorithm: allocates each workspace through the driver, an
 *    algorithm that cannot get it has status DEVICE_ALLOCATION_FAILED (4004);
 *    all failed -> ALLOC_FAILED (4003);
 *  - Find*AlgorithmEx: the caller's workspace; an algorithm needing more gets
 *    4004 in its perf entry; success if at least one ran;
 *  - Convolution*: workSpaceSizeInBytes below the algorithm's -> BAD_PARAM;
 *    otherwise computed on the CPU (float32, NCHW, groups 1, direct loops,
 *    alpha/beta honoured; beta 0 never reads the output).
 * Device pointers are host memory (see the libcuda.so.1 double).
 *  - cgtestSetConvCallback(fn): the next cudnnConvolutionForward first calls
 *    fn once with its own arguments, on the same thread: a profiler's
 *    callback that re-enters cuDNN (fn may call cudnnConvolutionForward). */
#include <stdlib.h>
#include <string.h>
#include "cudnn_int.h"

#define NALGO 3

/* ---- convolution descriptors (the tensor, filter and activation ones are
 * in cudnn_desc.c) */
CREATE(cudnnCreateConvolutionDescriptor, cudnnConvolutionDescriptor_t, CMAGIC)
DESTROY(cudnnDestroyConvolutionDescriptor, cudnnConvolutionDescriptor_t, CMAGIC)

API cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int ph, int pw, int u, int v,
                                                  int dh, int dw, cudnnConvolutionMode_t mode,
                                                  cudnnDataType_t ctype)
{
    if (!d || d->magic != CMAGIC || ph < 0 || pw < 0 || u <= 0 || v <= 0 || dh <= 0 || dw <= 0 ||
        (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION))
        return BAD("bad convolution descriptor or parameters");
    *d = (struct cudnnConvolutionStruct){ CMAGIC, 1, ph, pw, u, v, dh, dw, mode, ctype, d->groups, d->math };
    return CUDNN_STATUS_SUCCESS;
}

static int conv_ok(const struct cudnnConvolutionStruct *d) { return d && d->magic == CMAGIC; }

API cudnnStatus_t cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t d, int *ph, int *pw, int *u,
                                                  int *v, int *dh, int *dw, cudnnConvolutionMode_t *mode,
                                                  cudnnDataType_t *ctype)
{
    if (!conv_ok(d) || !d->set || !ph || !pw || !u || !v || !dh || !dw || !mode || !ctype)
        return BAD("bad convolution descriptor");
    *ph = d->ph, *pw = d->pw, *u = d->u, *v = d->v, *dh = d->dh, *dw = d->dw;
    *mode = d->mode, *ctype = d->ctype;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t d, int req, int *len,
                                                  int pad[], int str[], int dil[], cudnnConvolutionMode_t *mode,
                                                  cudnnDataType_t *ctype)
{
    if (!conv_ok(d) || !d->set || !len || !mode || !ctype || req < 0 || (req && (!pad || !str || !dil)))
        return BAD("bad convolution descriptor");
    *len = 2;
    *mode = d->mode, *ctype = d->ctype;
    if (req >= 1)
        pad[0] = d->ph, str[0] = d->u, dil[0] = d->dh;
    if (req >= 2)
        pad[1] = d->pw, str[1] = d->v, dil[1] = d->dw;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int g)
{
    if (!conv_ok(d) || g < 1)
        return BAD("bad convolution descriptor or group count");
    d->groups = g;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int *g)
{
    if (!conv_ok(d) || !g)
        return BAD("bad convolution descriptor");
    *g = d->groups ? d->groups : 1;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m)
{
    if (!conv_ok(d) || m < 0 || m > 3)
        return BAD("bad convolution descriptor or math type");
    d->math = m;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t *m)
{
    if (!conv_ok(d) || !m)
        return BAD("bad convolution descriptor");
    *m = d->math;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- geometry: x (n,c,h,w) * w (k,c,r,s) -> y (n,k,p,q) */
struct geo { int n, c, h, w, k, r, s, p, q; const struct cudnnConvolutionStruct *cv; };

static cudnnStatus_t geometry(const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                              const struct cudnnConvolutionStruct *cv, const struct cudnnTensorStruct *y,
                              struct geo *g)
{
    if (!x || x->magic != TMAGIC || !x->set || !w || w->magic != FMAGIC || !w->set || !conv_ok(cv) ||
        !cv->set || (y && (y->magic != TMAGIC || !y->set)))
        return BAD("descriptor not created or not set");
    if (x->dtype != CUDNN_DATA_FLOAT || w->dtype != CUDNN_DATA_FLOAT || x->format != CUDNN_TENSOR_NCHW ||
        w->format != CUDNN_TENSOR_NCHW || (y && (y->dtype != CUDNN_DATA_FLOAT || y->format != CUDNN_TENSOR_NCHW)))
        return cgtestCudnnFail(ST_NOT_SUPPORTED, "the test double computes float32 NCHW only");
    if (cv->groups > 1)
        return cgtestCudnnFail(ST_NOT_SUPPORTED, "the test double computes groupCount 1 only");
    if (x->c != w->c)
        return BAD("xDesc C (%d) != wDesc C (%d)", x->c, w->c);
    *g = (struct geo){ x->n, x->c, x->h, x->w, w->k, w->r, w->s, 0, 0, cv };
    g->p = x->h + 2 * cv->ph - ((w->r - 1) * cv->dh + 1); /* negative: C division would round to 0 */
    g->q = x->w + 2 * cv->pw - ((w->s - 1) * cv->dw + 1);
    if (g->p < 0 || g->q < 0)
        return BAD("filter larger than padded input");
    g->p = g->p / cv->u + 1;
    g->q = g->q / cv->v + 1;
    if (y && (y->n != g->n || y->c != g->k || y->h != g->p || y->w != g->q))
        return BAD("yDesc is %dx%dx%dx%d, expected %dx%dx%dx%d", y->n, y->c, y->h, y->w, g->n, g->k, g->p, g->q);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t cv,
                                                        const cudnnTensorDescriptor_t x,
                                                        const cudnnFilterDescriptor_t w, int *n, int *c, int *h,
                                                        int *wo)
{
    struct geo g;
    cudnnStatus_t st = geometry(x, w, cv, NULL, &g);

    if (st)
        return st;
    if (!n || !c || !h || !wo)
        return BAD("output pointer == nullptr");
    *n = g.n, *c = g.k, *h = g.p, *wo = g.q;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the CPU kernels */
#define X(i, n, c, y, x) (i)[(((size_t)(n) * g->c + (c)) * g->h + (y)) * g->w + (x)]
#define Y(o, n, k, y, x) (o)[(((size_t)(n) * g->k + (k)) * g->p + (y)) * g->q + (x)]
/* filter index; CUDNN_CONVOLUTION flips the kernel, cross-correlation does not */
static size_t widx(const struct geo *g, int k, int c, int r, int s)
{
    if (g->cv->mode == CUDNN_CONVOLUTION)
        r = g->r - 1 - r, s = g->s - 1 - s;
    return (((size_t)k * g->c + c) * g->r + r) * g->s + s;
}

enum { FWD, BWD_DATA, BWD_FILTER };
/* One loop nest for the three directions: out = alpha * result + beta * out. */
static cudnnStatus_t compute(int dir, const struct geo *g, const float *x, const float *w, const float *dy,
                             float *out, float alpha, float beta)
{
    size_t len = dir == FWD ? (size_t)g->n * g->k * g->p * g->q
               : dir == BWD_DATA ? (size_t)g->n * g->c * g->h * g->w : (size_t)g->k * g->c * g->r * g->s;
    float *t = calloc(len ? len : 1, sizeof *t);

    if (!t)
        return cgtestCudnnFail(ST_ALLOC_FAILED, "out of host memory");
    for (int n = 0; n < g->n; n++)
        for (int k = 0; k < g->k; k++)
            for (int p = 0; p < g->p; p++)
                for (int q = 0; q < g->q; q++)
                    for (int c = 0; c < g->c; c++)
                        for (int r = 0; r < g->r; r++)
                            for (int s = 0; s < g->s; s++) {
                                int ih = p * g->cv->u - g->cv->ph + r * g->cv->dh;
                                int iw = q * g->cv->v - g->cv->pw + s * g->cv->dw;
                                if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
                                    continue;
                                if (dir == FWD)
                                    Y(t, n, k, p, q) += X(x, n, c, ih, iw) * w[widx(g, k, c, r, s)];
                                else if (dir == BWD_DATA)
                                    X(t, n, c, ih, iw) += Y(dy, n, k, p, q) * w[widx(g, k, c, r, s)];
                                else
                                    t[widx(g, k, c, r, s)] += X(x, n, c, ih, iw) * Y(dy, n, k, p, q);
                            }
    for (size_t i = 0; i < len; i++)
        out[i] = alpha * t[i] + (beta != 0.0f ? beta * out[i] : 0.0f);
    free(t);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- algorithms */
static size_t algo_ws(int algo)
{
    const char *s = getenv("CGTEST_ALGO_WS_MB");
    size_t mb[NALGO] = { 0, 64, 512 };
    char *end;

    for (int i = 0; s && *s && i < NALGO; i++) {
        mb[i] = strtoull(s, &end, 10);
        s = *end == ',' ? end + 1 : NULL;
    }
    return mb[algo] * MiB;
}

static const float algo_ms[NALGO] = { 2.0f, 1.0f, 0.5f }; /* algo 2 is the "fastest" */

static cudnnStatus_t check_call(cudnnHandle_t h, cudnnStatus_t geo_st)
{
    return !cgtestCudnnHandleOk(h) ? BAD("handle is not a cudnnHandle_t") : geo_st;
}

static cudnnStatus_t v7(cudnnHandle_t h, cudnnStatus_t geo_st, const struct geo *g, int req, int *ret,
                        cudnnConvolutionFwdAlgoPerf_t *perf)
{
    cudnnStatus_t st = check_call(h, geo_st);
    int n = req < NALGO ? req : NALGO;

    if (st)
        return st;
    if (req < 1 || !ret || !perf)
        return BAD("requestedAlgoCount < 1 or a result pointer == nullptr");
    for (int i = 0; i < n; i++)
        perf[i] = (cudnnConvolutionFwdAlgoPerf_t){ .algo = NALGO - 1 - i, .status = CUDNN_STATUS_SUCCESS,
            .time = -1.0f, .memory = algo_ws(NALGO - 1 - i), .determinism = CUDNN_DETERMINISTIC,
            .mathType = g->cv->math };
    *ret = n;
    return CUDNN_STATUS_SUCCESS;
}

/* The three directions take their two inputs in a different order. */
static cudnnStatus_t kernel(int dir, const struct geo *g, const void *a, const void *b, void *out, float alpha,
                            float beta)
{
    if (dir == FWD)
        return compute(dir, g, a, b, NULL, out, alpha, beta);        /* x, w */
    if (dir == BWD_DATA)
        return compute(dir, g, NULL, a, b, out, alpha, beta);        /* w, dy */
    return compute(dir, g, a, NULL, b, out, alpha, beta);            /* x, dy */
}

/* Find (ex == 0: each workspace from the driver) and FindEx (ex == 1: the
 * caller's workspace, and the inputs are really convolved into out). */
static cudnnStatus_t find(int dir, int ex, cudnnHandle_t h, cudnnStatus_t geo_st, const struct geo *g, int req,
                          int *ret, cudnnConvolutionFwdAlgoPerf_t *perf, const void *a, const void *b, void *out,
                          void *ws, size_t ws_bytes)
{
    cudnnConvolutionFwdAlgoPerf_t good[NALGO], bad[NALGO];
    cudnnStatus_t st = check_call(h, geo_st);
    int ok = 0, failed = 0, n = req < NALGO ? req : NALGO;

    if (st)
        return st;
    if (req < 1 || !ret || !perf || (ex && (!a || !b || !out || (ws_bytes && !ws))))
        return BAD("requestedAlgoCount < 1 or a pointer == nullptr");
    /* Injections for the shim's fallback tests (tests/preload/t_fallback_*.sh):
     * CGTEST_FIND_UPFRONT=1: Find first allocates one buffer of the largest
     *   workspace for all its trials; when that cannot be had the whole call
     *   fails with ALLOC_FAILED, though an algorithm needing none exists;
     * CGTEST_FINDEX_MAX_WS_MB=N: FindEx handed a workspace above N MiB fails
     *   with ALLOC_FAILED, every entry 4004 (stands for cuDNN's internal
     *   allocations failing next to a workspace that took the memory). */
    if (!ex && getenv("CGTEST_FIND_UPFRONT") && atoi(getenv("CGTEST_FIND_UPFRONT")) == 1) {
        size_t most = 0;
        CUdeviceptr p = 0;
        for (int algo = 0; algo < NALGO; algo++)
            most = algo_ws(algo) > most ? algo_ws(algo) : most;
        if (most && cgtestCudnnDevAlloc(&p, most)) {
            for (int i = 0; i < n; i++)
                perf[i] = (cudnnConvolutionFwdAlgoPerf_t){ .algo = NALGO - 1 - i, .status = ST_DEVICE_ALLOC_FAILED,
                    .time = -1.0f, .memory = algo_ws(NALGO - 1 - i), .determinism = CUDNN_DETERMINISTIC,
                    .mathType = g->cv->math };
            *ret = n;
            return cgtestCudnnFail(ST_ALLOC_FAILED, "could not allocate %zu bytes for the trials", most);
        }
        cgtestCudnnDevFree(p);
    }
    if (ex && getenv("CGTEST_FINDEX_MAX_WS_MB") &&
        ws_bytes > strtoull(getenv("CGTEST_FINDEX_MAX_WS_MB"), NULL, 10) * MiB) {
        for (int i = 0; i < n; i++)
            perf[i] = (cudnnConvolutionFwdAlgoPerf_t){ .algo = NALGO - 1 - i, .status = ST_DEVICE_ALLOC_FAILED,
                .time = -1.0f, .memory = algo_ws(NALGO - 1 - i), .determinism = CUDNN_DETERMINISTIC,
                .mathType = g->cv->math };
        *ret = n;
        return cgtestCudnnFail(ST_ALLOC_FAILED, "internal allocation failed (CGTEST_FINDEX_MAX_WS_MB)");
    }
    for (int algo = NALGO - 1; algo >= 0; algo--) { /* fastest first */
        size_t need = algo_ws(algo);
        CUdeviceptr p = 0;
        int got = ex ? need <= ws_bytes : !need || !cgtestCudnnDevAlloc(&p, need);
        cudnnConvolutionFwdAlgoPerf_t e = { .algo = algo, .status = CUDNN_STATUS_SUCCESS, .time = algo_ms[algo],
            .memory = need, .determinism = CUDNN_DETERMINISTIC, .mathType = g->cv->math };

        cgtestCudnnDevFree(p);
        if (got && ex && (st = kernel(dir, g, a, b, out, 1.0f, 0.0f)))
            return st;
        if (got) {
            good[ok++] = e;
        } else {
            e.status = ST_DEVICE_ALLOC_FAILED;
            e.time = -1.0f;
            bad[failed++] = e;
        }
    }
    memcpy(good + ok, bad, (size_t)failed * sizeof *bad); /* failures go last */
    memcpy(perf, good, (size_t)n * sizeof *perf);
    *ret = n;
    if (!ok)
        return cgtestCudnnFail(ST_ALLOC_FAILED, "no algorithm could get its workspace (%s)",
                               ex ? "workSpaceSizeInBytes too small" : "device memory");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t ws_size(cudnnHandle_t h, cudnnStatus_t geo_st, int algo, size_t *bytes)
{
    cudnnStatus_t st = check_call(h, geo_st);

    if (st)
        return st;
    if (!bytes)
        return BAD("sizeInBytes == nullptr");
    if (algo < 0 || algo >= NALGO)
        return cgtestCudnnFail(ST_NOT_SUPPORTED, "algo %d is not implemented by the test double", algo);
    *bytes = algo_ws(algo);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t run(int dir, cudnnHandle_t h, cudnnStatus_t geo_st, const struct geo *g, int algo,
                         const void *ws, size_t ws_bytes, const void *alpha, const void *beta, const void *a,
                         const void *b, void *out)
{
    size_t need;
    cudnnStatus_t st = ws_size(h, geo_st, algo, &need);

    if (st)
        return st;
    if (!alpha || !beta || !a || !b || !out)
        return BAD("alpha, beta or a data pointer == nullptr");
    if (ws_bytes < need || (need && !ws))
        return BAD("workSpaceSizeInBytes (%zu) < workspace needed by algo %d (%zu)", ws_bytes, algo, need);
    return kernel(dir, g, a, b, out, *(const float *)alpha, *(const float *)beta);
}

/* ---- the public legacy calls: argument orders differ, the work does not */
#define GEO_FWD geometry(x, w, conv, y, &g)
#define GEO_BWD_DATA geometry(dx, w, conv, dy, &g)
#define GEO_BWD_FILTER geometry(x, dw, conv, dy, &g)

API cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t y, int req, int *ret, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    struct geo g;
    cudnnStatus_t st = GEO_FWD;
    return v7(h, st, &g, req, ret, perf);
}

API cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t dx, int req, int *ret, cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_DATA;
    return v7(h, st, &g, req, ret, perf);
}

API cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnFilterDescriptor_t dw, int req, int *ret, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_FILTER;
    return v7(h, st, &g, req, ret, perf);
}

API cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t y, int req, int *ret, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    struct geo g;
    cudnnStatus_t st = GEO_FWD;
    return find(FWD, 0, h, st, &g, req, ret, perf, NULL, NULL, NULL, NULL, 0);
}

API cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t dx, int req, int *ret, cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_DATA;
    return find(BWD_DATA, 0, h, st, &g, req, ret, perf, NULL, NULL, NULL, NULL, 0);
}

API cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnFilterDescriptor_t dw, int req, int *ret, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_FILTER;
    return find(BWD_FILTER, 0, h, st, &g, req, ret, perf, NULL, NULL, NULL, NULL, 0);
}

API cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, const void *xp, cudnnFilterDescriptor_t w, const void *wp,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, void *yp, int req, int *ret,
    cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    struct geo g;
    cudnnStatus_t st = GEO_FWD;
    return find(FWD, 1, h, st, &g, req, ret, perf, xp, wp, yp, ws, ws_bytes);
}

API cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t h, cudnnFilterDescriptor_t w, const void *wp, cudnnTensorDescriptor_t dy, const void *dyp,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dx, void *dxp, int req, int *ret,
    cudnnConvolutionBwdDataAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_DATA;
    return find(BWD_DATA, 1, h, st, &g, req, ret, perf, wp, dyp, dxp, ws, ws_bytes);
}

API cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, const void *xp, cudnnTensorDescriptor_t dy, const void *dyp,
    cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dw, void *dwp, int req, int *ret,
    cudnnConvolutionBwdFilterAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_FILTER;
    return find(BWD_FILTER, 1, h, st, &g, req, ret, perf, xp, dyp, dwp, ws, ws_bytes);
}

API cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo, size_t *bytes)
{
    struct geo g;
    return ws_size(h, GEO_FWD, algo, bytes);
}

API cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t dx, cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes)
{
    struct geo g;
    return ws_size(h, GEO_BWD_DATA, algo, bytes);
}

API cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnFilterDescriptor_t dw, cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes)
{
    struct geo g;
    return ws_size(h, GEO_BWD_FILTER, algo, bytes);
}

API cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t x, const void *xp, cudnnFilterDescriptor_t w,
    const void *wp, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
    const void *beta, cudnnTensorDescriptor_t y, void *yp);
static __typeof__(&cudnnConvolutionForward) conv_callback;
API void cgtestSetConvCallback(void *fn) { __atomic_store_n((void **)&conv_callback, fn, __ATOMIC_RELEASE); }

API cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t x, const void *xp, cudnnFilterDescriptor_t w,
    const void *wp, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
    const void *beta, cudnnTensorDescriptor_t y, void *yp)
{
    struct geo g;
    cudnnStatus_t st = GEO_FWD;
    /* cgtestSetConvCallback: called once, before the work, with the same arguments */
    __typeof__(&cudnnConvolutionForward) cb = __atomic_exchange_n(&conv_callback, NULL, __ATOMIC_ACQ_REL);
    if (cb)
        cb(h, alpha, x, xp, w, wp, conv, algo, ws, ws_bytes, beta, y, yp);
    return run(FWD, h, st, &g, algo, ws, ws_bytes, alpha, beta, xp, wp, yp);
}

API cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t h, const void *alpha, cudnnFilterDescriptor_t w, const void *wp, cudnnTensorDescriptor_t dy,
    const void *dyp, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdDataAlgo_t algo, void *ws,
    size_t ws_bytes, const void *beta, cudnnTensorDescriptor_t dx, void *dxp)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_DATA;
    return run(BWD_DATA, h, st, &g, algo, ws, ws_bytes, alpha, beta, wp, dyp, dxp);
}

API cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t x, const void *xp, cudnnTensorDescriptor_t dy,
    const void *dyp, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
    size_t ws_bytes, const void *beta, cudnnFilterDescriptor_t dw, void *dwp)
{
    struct geo g;
    cudnnStatus_t st = GEO_BWD_FILTER;
    return run(BWD_FILTER, h, st, &g, algo, ws, ws_bytes, alpha, beta, xp, dyp, dwp);
}

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias); z may be y itself.  As
 * in real cuDNN, CUDNN_ACTIVATION_IDENTITY is only supported with algo 1
 * (IMPLICIT_PRECOMP_GEMM); only RELU and IDENTITY are modelled. */
API cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, cudnnTensorDescriptor_t x, const void *xp, cudnnFilterDescriptor_t w,
    const void *wp, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
    const void *alpha2, cudnnTensorDescriptor_t z, const void *zp, cudnnTensorDescriptor_t bias, const void *bp,
    cudnnActivationDescriptor_t act, cudnnTensorDescriptor_t y, void *yp)
{
    struct geo g;
    cudnnStatus_t st = GEO_FWD;
    const float *zf = zp, *bf = bp;
    float a2, *out = yp, *t;
    size_t len;

    if (!st && (!z || z->magic != TMAGIC || !z->set || z->n != g.n || z->c != g.k || z->h != g.p || z->w != g.q ||
                !bias || bias->magic != TMAGIC || !bias->set || bias->n != 1 || bias->c != g.k || bias->h != 1 ||
                bias->w != 1 || !alpha2 || !zp || !bp || !yp))
        st = BAD("zDesc must match yDesc and biasDesc must be 1xKx1x1");
    if (!st && (!act || act->magic != AMAGIC ||
                (act->mode != CUDNN_ACTIVATION_RELU && act->mode != CUDNN_ACTIVATION_IDENTITY)))
        st = cgtestCudnnFail(ST_NOT_SUPPORTED, "only RELU and IDENTITY activations are supported");
    if (!st && act->mode == CUDNN_ACTIVATION_IDENTITY && algo != 1)
        st = cgtestCudnnFail(ST_NOT_SUPPORTED, "CUDNN_ACTIVATION_IDENTITY requires IMPLICIT_PRECOMP_GEMM");
    len = st ? 1 : (size_t)g.n * g.k * g.p * g.q;
    if (!(t = calloc(len, sizeof *t)))
        return cgtestCudnnFail(ST_ALLOC_FAILED, "out of host memory");
    if (!(st = run(FWD, h, st, &g, algo, ws, ws_bytes, alpha1, &(float){ 0.0f }, xp, wp, t))) {
        a2 = *(const float *)alpha2;
        for (size_t i = 0; i < len; i++) {
            float v = t[i] + (a2 != 0.0f ? a2 * zf[i] : 0.0f) + bf[i / ((size_t)g.p * g.q) % (size_t)g.k];
            out[i] = act->mode == CUDNN_ACTIVATION_RELU && v < 0.0f ? 0.0f : v;
        }
    }
    free(t);
    return st;
}
