/* fwstub.c - libfwstub.so, a framework's own CUDA stubs (test client).
 *
 * TensorFlow's libtensorflow_framework.so.2 DEFINES the CUDA entry points
 * itself (xla/tsl/cuda/ *_stub.cc: nm -D lists cuInit, cudaMalloc,
 * cudnnCreate, ... unversioned) and loads the real library on the first
 * call: dlopen(soname, RTLD_NOW | RTLD_LOCAL), then dlsym per function; when
 * that fails the stub returns an error of its own: CUDA_ERROR_SHARED_OBJECT_
 * INIT_FAILED (303) for the driver (TF 2.21 logs "failed call to cuInit:
 * UNKNOWN ERROR (303)"), cudaErrorSharedObjectSymbolNotFound (302) for the
 * runtime, CUDNN_STATUS_INTERNAL_ERROR (4000) for cuDNN.  This library does
 * the same for every function of shim/hooks.def (every family: driver,
 * runtime, cuDNN legacy and graph, the entry-point getters) and for the few
 * others the sequence needs.  Its own calls to them (fwstub_seq.c, built in
 * as fwstub_run) go through its PLT, as TensorFlow's do; libfwuser.so calls
 * them from another library.  CGTEST_STUB_SKIP=soname:soname... : those are
 * not installed, as far as the stubs know (a machine whose ld.so.cache has
 * NVIDIA's cudart and cuDNN can still test their absence).
 * CGTEST_STUB_TRACE=1 prints each first load on stderr (not compared). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudefs.h"

#define LIB_DRV "libcuda.so.1"
#define LIB_CUDART "libcudart.so.13"
#define LIB_CUDNN "libcudnn.so.9"
#ifndef MISS_DRV
#define MISS_DRV 303 /* CUDA_ERROR_SHARED_OBJECT_INIT_FAILED; libfwstub2.so: 999, to tell the copies apart */
#endif
#define MISS_CUDART cudaErrorSharedObjectSymbolNotFound
#define MISS_CUDNN 4000 /* CUDNN_STATUS_INTERNAL_ERROR */

/* one handle per library, tried once (as TensorFlow's static handles) */
static void *lib(const char *soname)
{
    static struct {
        const char *name;
        void *h;
        int tried;
    } libs[] = {{LIB_DRV, NULL, 0}, {LIB_CUDART, NULL, 0}, {LIB_CUDNN, NULL, 0}};
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++)
        if (libs[i].name == soname) {
            if (!libs[i].tried) {
                const char *skip = getenv("CGTEST_STUB_SKIP");
                libs[i].tried = 1;
                if (!skip || !strstr(skip, soname))
                    libs[i].h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
                if (getenv("CGTEST_STUB_TRACE"))
                    fprintf(stderr, "fwstub: dlopen(%s) %s\n", soname, libs[i].h ? "ok" : dlerror());
            }
            return libs[i].h;
        }
    return NULL;
}

static void *load(const char *soname, const char *name)
{
    void *h = lib(soname);
    return h ? dlsym(h, name) : NULL;
}

#define VIS __attribute__((visibility("default")))
#define STUB(libname, miss, ret, name, params, args)                                                           \
    VIS ret name params                                                                                        \
    {                                                                                                          \
        static ret(*p) params;                                                                                 \
        if (!p && !(p = (ret(*) params)load(libname, #name)))                                                  \
            return (ret)(miss);                                                                                \
        return p args;                                                                                         \
    }
#define STUB_DRV(ret, name, params, args) STUB(LIB_DRV, MISS_DRV, ret, name, params, args)
#define STUB_CUDART(ret, name, params, args) STUB(LIB_CUDART, MISS_CUDART, ret, name, params, args)
#define STUB_CUDNN(ret, name, params, args) STUB(LIB_CUDNN, MISS_CUDNN, ret, name, params, args)

/* every hooked function */
#define CG_HOOK(fam, ret, name, params, args) STUB_##fam(ret, name, params, args)
#define CG_HOOK_PLAIN CG_HOOK
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN

/* and the ones the sequence needs beside them */
STUB_DRV(CUresult, cuDriverGetVersion, (int *v), (v))
STUB_DRV(CUresult, cuDeviceGet, (CUdevice *d, int ordinal), (d, ordinal))
STUB_DRV(CUresult, cuCtxSetCurrent, (CUcontext c), (c))
STUB_CUDART(cudaError_t, cudaRuntimeGetVersion, (int *v), (v))
STUB_CUDART(cudaError_t, cudaGetDeviceCount, (int *n), (n))
STUB_CUDNN(size_t, cudnnGetVersion, (void), ())
STUB_CUDNN(cudnnStatus_t, cudnnCreateTensorDescriptor, (cudnnTensorDescriptor_t * d), (d))
STUB_CUDNN(cudnnStatus_t, cudnnSetTensor4dDescriptor,
           (cudnnTensorDescriptor_t d, int format, int type, int n, int c, int h, int w), (d, format, type, n, c, h, w))
STUB_CUDNN(cudnnStatus_t, cudnnDestroyTensorDescriptor, (cudnnTensorDescriptor_t d), (d))
STUB_CUDNN(cudnnStatus_t, cudnnCreateFilterDescriptor, (cudnnFilterDescriptor_t * d), (d))
STUB_CUDNN(cudnnStatus_t, cudnnSetFilter4dDescriptor,
           (cudnnFilterDescriptor_t d, int type, int format, int k, int c, int h, int w), (d, type, format, k, c, h, w))
STUB_CUDNN(cudnnStatus_t, cudnnDestroyFilterDescriptor, (cudnnFilterDescriptor_t d), (d))
STUB_CUDNN(cudnnStatus_t, cudnnCreateConvolutionDescriptor, (cudnnConvolutionDescriptor_t * d), (d))
STUB_CUDNN(cudnnStatus_t, cudnnSetConvolution2dDescriptor,
           (cudnnConvolutionDescriptor_t d, int ph, int pw, int u, int v, int dh, int dw, int mode, int type),
           (d, ph, pw, u, v, dh, dw, mode, type))
STUB_CUDNN(cudnnStatus_t, cudnnDestroyConvolutionDescriptor, (cudnnConvolutionDescriptor_t d), (d))
