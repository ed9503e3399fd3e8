/* plugin_jaxlike.c - a JAX-like PJRT plugin (test client).
 *
 * JAX's xla_cuda_plugin.so has NO DT_NEEDED on any CUDA library (observed):
 * it dlopen()s libcuda.so.1, takes cuGetProcAddress_v2 by dlsym and every
 * other driver function through it (base names, here version 12000), then
 * dlopen()s libcudnn.so.9 and reaches cuDNN only by dlsym, using the graph
 * (backend) API the way cudnn-frontend does: the caller creates the engine
 * config descriptors that the heuristics fill in.  client_jaxlike dlopen()s
 * this plugin RTLD_LOCAL and calls run(). */
#include <stdint.h>
#include "common.h"

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static __typeof__(&cuInit) d_init;
static __typeof__(&cuDevicePrimaryCtxRetain) d_retain;
static __typeof__(&cuCtxSetCurrent) d_set_cur;
static __typeof__(&cuCtxGetCurrent) d_get_cur;
static __typeof__(&cuMemAlloc_v2) d_alloc;
static __typeof__(&cuMemFree_v2) d_free;
static __typeof__(&cuMemGetInfo_v2) d_info;

#define DNN_FNS(X) X(cudnnGetVersion) X(cudnnCreate) X(cudnnDestroy) X(cudnnGetLastErrorString) \
    X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor) X(cudnnBackendSetAttribute) \
    X(cudnnBackendGetAttribute) X(cudnnBackendFinalize) X(cudnnBackendExecute)
#define DECL(f) static __typeof__(&f) p_##f;
DNN_FNS(DECL)

static void last_error(void)
{
    char msg[512] = "";

    p_cudnnGetLastErrorString(msg, sizeof msg);
    printf("cudnnGetLastErrorString = \"%s\"\n", msg);
}

/* One driver function by base name; also: is it what dlsym gives for the
 * versioned name (so the plugin sees the same functions either way)? */
static void *drv_fn(void *h, gpa_t gpa, const char *base, const char *real, cuuint64_t flags)
{
    void *fn = NULL, *direct;
    CUdriverProcAddressQueryResult st = -1;
    CUresult r = gpa(base, &fn, 12000, flags, &st);

    direct = dlsym(h, real);
    printf("cuGetProcAddress_v2(\"%s\", 12000, %llu) = %d status=%d %s; same as dlsym(\"%s\"): %s\n", base,
           (unsigned long long)flags, r, st, fn ? "found" : "NULL", real, fn && fn == direct ? "yes" : "no");
    return fn;
}

static cudnnBackendDescriptor_t make(int type, const char *what)
{
    cudnnBackendDescriptor_t d = NULL;
    cudnnStatus_t st = p_cudnnBackendCreateDescriptor(type, &d);

    if (st)
        printf("cudnnBackendCreateDescriptor(%s) = %d\n", what, st);
    return d;
}

static cudnnStatus_t finalize(cudnnBackendDescriptor_t d, const char *what)
{
    cudnnStatus_t st = p_cudnnBackendFinalize(d);

    printf("cudnnBackendFinalize(%s) = %d\n", what, st);
    if (st)
        last_error();
    return st;
}

#define SET(d, name, type, n, v) p_cudnnBackendSetAttribute(d, name, type, n, v)

static cudnnBackendDescriptor_t tensor(const char *what, int64_t uid, const int64_t dims[4], int with_dims)
{
    cudnnBackendDescriptor_t d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
    int64_t strides[4] = { dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1 }, align = 16;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    cudnnStatus_t st = SET(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);

    st = st ? st : SET(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    st = st ? st : SET(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (with_dims) {
        st = st ? st : SET(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
        st = st ? st : SET(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    }
    printf("cudnnBackendSetAttribute(%s, ...) = %d\n", what, st);
    finalize(d, what);
    return d;
}

static void *dev(const char *what, size_t n)
{
    CUdeviceptr p = 0;
    CUresult r = d_alloc(&p, n);

    printf("cuMemAlloc(%s, %zu) = %d\n", what, n, r);
    return r ? NULL : (void *)(uintptr_t)p;
}

static void graph(cudnnHandle_t h, void *x, void *w, void *y)
{
    static const int64_t xdim[4] = { 1, 3, 8, 8 }, wdim[4] = { 4, 3, 3, 3 }, ydim[4] = { 1, 4, 8, 8 };
    cudnnBackendDescriptor_t xd, wd, yd, cv, op, og, heur, cfg[16], plan = NULL, vp;
    int64_t two = 2, pad[2] = { 1, 1 }, one2[2] = { 1, 1 }, count = -1, n = 0, ws = 0;
    int64_t uids[3] = { 'x', 'w', 'y' };
    void *ptrs[3] = { x, w, y }, *wsp = NULL, *null_ws = NULL;
    cudnnDataType_t ct = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_INSTANT;
    float alpha = 1.0f, beta = 0.0f;
    cudnnStatus_t st;
    int good = -1;

    xd = tensor("x", 'x', xdim, 1);
    wd = tensor("w", 'w', wdim, 1);
    yd = tensor("y", 'y', ydim, 1);

    cv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "conv");
    st = SET(cv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &two);
    st = st ? st : SET(cv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
    st = st ? st : SET(cv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    st = st ? st : SET(cv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    st = st ? st : SET(cv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    st = st ? st : SET(cv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2);
    st = st ? st : SET(cv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2);
    printf("cudnnBackendSetAttribute(conv, ...) = %d\n", st);
    finalize(cv, "conv");

    op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "op");
    st = SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
    st = st ? st : SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd);
    st = st ? st : SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
    st = st ? st : SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cv);
    st = st ? st : SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    st = st ? st : SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    printf("cudnnBackendSetAttribute(op, ...) = %d\n", st);
    finalize(op, "op");

    og = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "graph");
    st = SET(og, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    st = st ? st : SET(og, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    printf("cudnnBackendSetAttribute(graph, ...) = %d\n", st);
    finalize(og, "graph");

    heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics");
    st = SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &og);
    st = st ? st : SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
    printf("cudnnBackendSetAttribute(heuristics, ...) = %d\n", st);
    finalize(heur, "heuristics");
    st = p_cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                    NULL);
    printf("cudnnBackendGetAttribute(heuristics, RESULTS, 0) = %d count=%lld\n", st, (long long)count);
    if (st || count < 0)
        count = 0;
    if (count > 16)
        count = 16;
    for (int i = 0; i < count; i++)
        cfg[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config");
    st = p_cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &n,
                                    cfg);
    printf("cudnnBackendGetAttribute(heuristics, RESULTS, %lld) = %d returned=%lld\n", (long long)count, st,
           (long long)n);

    /* one plan per engine config, as cudnn-frontend's plan building does */
    for (int i = 0; !st && i < n; i++) {
        cudnnBackendDescriptor_t eng = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine"), p;
        int64_t idx = -1, got = 0;
        cudnnStatus_t s2 = p_cudnnBackendGetAttribute(cfg[i], CUDNN_ATTR_ENGINECFG_ENGINE,
                                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng);
        s2 = s2 ? s2 : p_cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got,
                                                  &idx);
        printf("engine config %d: global index = %d %lld\n", i, s2, (long long)idx);
        p_cudnnBackendDestroyDescriptor(eng);
        p = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "plan");
        s2 = SET(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
        s2 = s2 ? s2 : SET(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
        printf("cudnnBackendSetAttribute(plan %d, ...) = %d\n", i, s2);
        if (!finalize(p, "plan")) {
            int64_t bytes = -1;
            s2 = p_cudnnBackendGetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got,
                                            &bytes);
            printf("plan %d workspace = %d bytes=%lld\n", i, s2, (long long)bytes);
            if (good < 0 && !s2) {
                good = i, plan = p, ws = bytes;
                continue;
            }
        }
        p_cudnnBackendDestroyDescriptor(p);
    }

    if (plan) {
        printf("executing plan %d\n", good);
        if (ws > 0 && !(wsp = dev("workspace", (size_t)ws)))
            printf("no workspace: executing anyway\n");
        vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
        st = SET(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
        st = st ? st : SET(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
        st = st ? st : SET(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &wsp);
        printf("cudnnBackendSetAttribute(variant pack, ...) = %d\n", st);
        finalize(vp, "variant pack");
        st = p_cudnnBackendExecute(h, plan, vp);
        printf("cudnnBackendExecute = %d\n", st);
        if (st)
            last_error();
        p_cudnnBackendDestroyDescriptor(vp);

        /* the same without a workspace */
        vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
        st = SET(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
        st = st ? st : SET(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
        st = st ? st : SET(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &null_ws);
        finalize(vp, "variant pack without workspace");
        st = p_cudnnBackendExecute(h, plan, vp);
        printf("cudnnBackendExecute(no workspace) = %d\n", st);
        if (st)
            last_error();
        p_cudnnBackendDestroyDescriptor(vp);
        if (wsp)
            printf("cuMemFree(workspace) = %d\n", d_free((CUdeviceptr)(uintptr_t)wsp));
        p_cudnnBackendDestroyDescriptor(plan);
    } else {
        printf("no plan could be built\n");
    }
    for (int i = 0; i < count; i++)
        p_cudnnBackendDestroyDescriptor(cfg[i]);
    p_cudnnBackendDestroyDescriptor(heur);
    p_cudnnBackendDestroyDescriptor(og);
    p_cudnnBackendDestroyDescriptor(op);
    p_cudnnBackendDestroyDescriptor(cv);
    p_cudnnBackendDestroyDescriptor(yd);
    p_cudnnBackendDestroyDescriptor(wd);
    p_cudnnBackendDestroyDescriptor(xd);
}

__attribute__((visibility("default"))) int run(void)
{
    void *hdrv, *hdnn, *x = NULL, *w = NULL, *y = NULL, *buf;
    gpa_t gpa;
    CUcontext ctx = NULL;
    cudnnHandle_t h = NULL;
    size_t fr = 0, tot = 0;
    cudnnStatus_t st;
    int missing = 0;
    CUresult r;

    hdrv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(\"libcuda.so.1\") = %s\ndlerror = %s\n", hdrv ? "ok" : "NULL", dlerr());
    if (!hdrv)
        return 1;
    gpa = (gpa_t)dlsym(hdrv, "cuGetProcAddress_v2");
    printf("dlsym(libcuda, \"cuGetProcAddress_v2\") = %s\ndlerror = %s\n", gpa ? "ok" : "NULL", dlerr());
    if (!gpa)
        return 1;
    d_init = drv_fn(hdrv, gpa, "cuInit", "cuInit", 0);
    d_retain = drv_fn(hdrv, gpa, "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", 0);
    d_set_cur = drv_fn(hdrv, gpa, "cuCtxSetCurrent", "cuCtxSetCurrent", 0);
    d_get_cur = drv_fn(hdrv, gpa, "cuCtxGetCurrent", "cuCtxGetCurrent", 0);
    d_alloc = drv_fn(hdrv, gpa, "cuMemAlloc", "cuMemAlloc_v2", 0);
    d_free = drv_fn(hdrv, gpa, "cuMemFree", "cuMemFree_v2", 0);
    d_info = drv_fn(hdrv, gpa, "cuMemGetInfo", "cuMemGetInfo_v2", 0);
    drv_fn(hdrv, gpa, "cuMemAllocAsync", "cuMemAllocAsync_ptsz", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    drv_fn(hdrv, gpa, "cuMemAlloc_v2", "cuMemAlloc_v2", 0); /* not a base name */
    drv_fn(hdrv, gpa, "cuNoSuchFunction", "cuNoSuchFunction", 0);
    printf("dlerror = %s\n", dlerr());
    if (!d_init || !d_retain || !d_set_cur || !d_get_cur || !d_alloc || !d_free || !d_info)
        return 1;

    /* one call per statement: printf's arguments are evaluated in no set order */
    r = d_get_cur(&ctx);
    printf("cuCtxGetCurrent before cuInit = %d\n", r);
    r = d_init(0);
    printf("cuInit = %d\n", r);
    r = d_get_cur(&ctx);
    printf("cuCtxGetCurrent = %d context=%s\n", r, ctx ? "set" : "NULL");
    r = d_retain(&ctx, 0);
    printf("cuDevicePrimaryCtxRetain = %d\n", r);
    r = d_set_cur(ctx);
    printf("cuCtxSetCurrent = %d\n", r);
    ctx = NULL;
    r = d_get_cur(&ctx);
    printf("cuCtxGetCurrent = %d context=%s\n", r, ctx ? "set" : "NULL");
    r = d_info(&fr, &tot);
    printf("cuMemGetInfo = %d free=%zu total=%zu\n", r, fr, tot);
    if ((buf = dev("16 MiB", 16 * MIB)))
        printf("cuMemFree = %d\n", d_free((CUdeviceptr)(uintptr_t)buf));

    hdnn = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(\"libcudnn.so.9\") = %s\ndlerror = %s\n", hdnn ? "ok" : "NULL", dlerr());
    if (!hdnn)
        return 1;
#define LOAD(f) if (!(p_##f = (__typeof__(&f))dlsym(hdnn, #f))) { printf("missing %s: %s\n", #f, dlerr()); missing++; }
    DNN_FNS(LOAD)
    printf("dlsym: %d missing\n", missing);
    if (missing)
        return 1;
    printf("cudnnGetVersion = %zu\n", p_cudnnGetVersion());
    st = p_cudnnCreate(&h);
    printf("cudnnCreate = %d\n", st);
    if (st)
        last_error();

    /* a tensor without dimensions, then the graph (needs a handle) */
    p_cudnnBackendDestroyDescriptor(tensor("no-dims", 'z', (const int64_t[4]){ 1, 1, 1, 1 }, 0));
    if (!st) {
        x = dev("x", sizeof(float) * 1 * 3 * 8 * 8);
        w = dev("w", sizeof(float) * 4 * 3 * 3 * 3);
        y = dev("y", sizeof(float) * 1 * 4 * 8 * 8);
        graph(h, x, w, y);
        if (y)
            printf("cuMemFree(y) = %d\n", d_free((CUdeviceptr)(uintptr_t)y));
        if (w)
            printf("cuMemFree(w) = %d\n", d_free((CUdeviceptr)(uintptr_t)w));
        if (x)
            printf("cuMemFree(x) = %d\n", d_free((CUdeviceptr)(uintptr_t)x));
        printf("cudnnDestroy = %d\n", p_cudnnDestroy(h));
    }
    return 0;
}
