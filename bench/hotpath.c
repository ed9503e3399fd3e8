/* hotpath.c - calls one hooked function in a loop, for measuring what the
 * shim adds per call (bench/run.sh runs it with and without LD_PRELOAD, under
 * callgrind for instruction counts and natively for nanoseconds).
 * Linked against the TEST DOUBLES (DT_NEEDED: the PLT route); the entry-point
 * route goes through cuGetProcAddress_v2, the dlsym route through dlsym.
 *
 *   hotpath MODE N     MODE: cudaMalloc cuMemAlloc_plt cuMemAlloc_ep cuMemAlloc_dlsym
 *                            create execute convfwd dlsym_cu dlsym_other
 *                            setattr getattr procaddr
 *                            dlsym_hooked dlsym_default dlopen_loaded
 * setattr/getattr: one cudnnBackendSetAttribute (a tensor's dimensions) /
 * GetAttribute (a plan's workspace size): JAX makes ~50,000 descriptor calls
 * for one small convolution.  procaddr: one cuGetProcAddress_v2 of a name
 * that is not hooked, alternating with one that is (cudart asks ~450 names
 * at start).  dlsym_hooked: dlsym of a hooked name (handed out wrapped);
 * dlsym_default: dlsym(RTLD_DEFAULT, "printf") (answered as the caller);
 * dlopen_loaded: dlopen + dlclose of a library already loaded (cuDNN's
 * dispatcher opens its parts at every first call of a kind). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_double.h"
#include "cudnn_double.h"

#define SET(d, name, type, n, v) cudnnBackendSetAttribute(d, name, type, n, v)

static cudnnBackendDescriptor_t make(int type)
{
    cudnnBackendDescriptor_t d = NULL;
    if (cudnnBackendCreateDescriptor(type, &d))
        exit(3);
    return d;
}

static cudnnBackendDescriptor_t tensor(int64_t uid, const int64_t dims[4])
{
    cudnnBackendDescriptor_t d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t strides[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1}, align = 4;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    SET(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    SET(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    SET(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    SET(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (cudnnBackendFinalize(d))
        exit(4);
    return d;
}

/* A finalized plan (engine 3 of the double's default rules: workspace 0) and its variant pack. */
static void build_plan(cudnnHandle_t h, cudnnBackendDescriptor_t *plan, cudnnBackendDescriptor_t *vp, void *bufs[3])
{
    static const int64_t xdim[4] = {1, 1, 1, 1}, wdim[4] = {1, 1, 1, 1}, ydim[4] = {1, 1, 1, 1};
    cudnnBackendDescriptor_t xd = tensor('x', xdim), wd = tensor('w', wdim), yd = tensor('y', ydim);
    int64_t two = 2, zero2[2] = {0, 0}, one2[2] = {1, 1}, n = 0, uids[3] = {'x', 'w', 'y'};
    cudnnDataType_t ct = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_INSTANT;
    float alpha = 1, beta = 0;
    void *ws = NULL;
    cudnnBackendDescriptor_t cv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    SET(cv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &two);
    SET(cv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
    SET(cv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    SET(cv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, zero2);
    SET(cv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, zero2);
    SET(cv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2);
    SET(cv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2);
    cudnnBackendFinalize(cv);
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cv);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    cudnnBackendFinalize(op);
    cudnnBackendDescriptor_t og = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    SET(og, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    SET(og, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    cudnnBackendFinalize(og);
    cudnnBackendDescriptor_t heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), cfg[4];
    SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &og);
    SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
    cudnnBackendFinalize(heur);
    for (int i = 0; i < 4; i++)
        cfg[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 4, &n, cfg);
    *plan = NULL;
    for (int i = 0; i < n && !*plan; i++) {
        cudnnBackendDescriptor_t p = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        SET(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
        SET(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
        int64_t wsb = -1, got;
        if (cudnnBackendFinalize(p) == 0 &&
            cudnnBackendGetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &wsb) == 0 &&
            wsb == 0)
            *plan = p;
    }
    if (!*plan)
        exit(5);
    *vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    SET(*vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    SET(*vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, bufs);
    SET(*vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    cudnnBackendFinalize(*vp);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    long n = atol(argv[2]);
    CUcontext ctx;
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    CUresult (*ep_alloc)(CUdeviceptr *, size_t) = NULL;
    CUresult (*ep_free)(CUdeviceptr) = NULL;
    cuGetProcAddress_v2("cuMemAlloc", (void **)&ep_alloc, 12000, 0, NULL);
    cuGetProcAddress_v2("cuMemFree", (void **)&ep_free, 12000, 0, NULL);
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CUresult (*ds_alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))dlsym(drv, "cuMemAlloc_v2");
    CUresult (*ds_free)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))dlsym(drv, "cuMemFree_v2");
    void *dnn = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cudnnHandle_t h = NULL;
    cudnnBackendDescriptor_t plan = NULL, vp = NULL;
    float x = 1, w = 2, y = 0;
    void *bufs[3] = {&x, &w, &y};
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    if (!strcmp(mode, "execute") || !strcmp(mode, "convfwd") || !strcmp(mode, "getattr")) {
        if (cudnnCreate(&h))
            return 6;
    }
    if (!strcmp(mode, "execute") || !strcmp(mode, "getattr"))
        build_plan(h, &plan, &vp, bufs);
    cudnnBackendDescriptor_t td = NULL;
    static const int64_t dims4[4] = {8, 3, 32, 32};
    if (!strcmp(mode, "setattr"))
        td = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (!strcmp(mode, "convfwd")) {
        cudnnCreateTensorDescriptor(&xd);
        cudnnCreateTensorDescriptor(&yd);
        cudnnCreateFilterDescriptor(&wd);
        cudnnCreateConvolutionDescriptor(&cd);
        cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 1);
        cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 1);
        cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 1, 1);
        cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    }
    float alpha = 1, beta = 0;
    struct timespec t0, t1;
    long bad = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        if (!strcmp(mode, "cudaMalloc")) {
            void *p;
            bad += cudaMalloc(&p, 256) != 0;
            bad += cudaFree(p) != 0;
        } else if (!strcmp(mode, "cuMemAlloc_plt") || !strcmp(mode, "cuMemAlloc_ep") || !strcmp(mode, "cuMemAlloc_dlsym")) {
            CUresult (*a)(CUdeviceptr *, size_t) = mode[11] == 'p' ? cuMemAlloc_v2 : mode[11] == 'e' ? ep_alloc : ds_alloc;
            CUresult (*f)(CUdeviceptr) = mode[11] == 'p' ? cuMemFree_v2 : mode[11] == 'e' ? ep_free : ds_free;
            CUdeviceptr p;
            bad += a(&p, 256) != 0;
            bad += f(p) != 0;
        } else if (!strcmp(mode, "create")) {
            cudnnBackendDescriptor_t d;
            bad += cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &d) != 0;
            bad += cudnnBackendDestroyDescriptor(d) != 0;
        } else if (!strcmp(mode, "execute")) {
            bad += cudnnBackendExecute(h, plan, vp) != 0;
        } else if (!strcmp(mode, "convfwd")) {
            bad += cudnnConvolutionForward(h, &alpha, xd, &x, wd, &w, cd, 0, NULL, 0, &beta, yd, &y) != 0;
        } else if (!strcmp(mode, "setattr")) {
            bad += SET(td, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims4) != 0;
        } else if (!strcmp(mode, "getattr")) {
            int64_t ws = -1, got = 0;
            bad += cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got,
                                            &ws) != 0;
        } else if (!strcmp(mode, "procaddr")) {
            void *fn = NULL;
            bad += cuGetProcAddress_v2(i & 1 ? "cuMemAlloc" : "cuCtxGetCurrent", &fn, 12000, 0, NULL) != 0 || !fn;
        } else if (!strcmp(mode, "dlsym_cu")) {
            bad += dlsym(dnn, "cudnnGetVersion") == NULL;
        } else if (!strcmp(mode, "dlsym_other")) {
            bad += dlsym(libc, "printf") == NULL;
        } else if (!strcmp(mode, "dlsym_hooked")) {
            bad += dlsym(dnn, "cudnnCreate") == NULL;
        } else if (!strcmp(mode, "dlsym_default")) {
            bad += dlsym(RTLD_DEFAULT, "printf") == NULL;
        } else if (!strcmp(mode, "dlopen_loaded")) {
            void *again = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
            bad += again == NULL;
            if (again)
                dlclose(again);
        } else {
            return 2;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%s %ld %.1f ns/iter%s\n", mode, n, n ? ns / (double)n : 0.0, bad ? " (FAILURES)" : "");
    return bad != 0;
}
