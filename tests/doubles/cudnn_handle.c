/* cudnn_handle.c - TEST DOUBLE of cuDNN's handle, version and error calls,
 * built into libcudnn_graph.so.9 (and libcudnn_ops_infer.so.8).  This is NOT
 * NVIDIA's library.
 *
 * As real cuDNN 9.19 does on a GPU-less host (LD_DEBUG=files shows the graph
 * library itself dlopen()ing libcuda.so.1, RTLD_NOW, once per process):
 *  - cudnnCreate dlopen()s "libcuda.so.1" by bare name; when that fails it
 *    returns NOT_INITIALIZED with reason
 *    "cudaGetDeviceCount(&count) != cudaSuccess" (cuDNN links cudart
 *    statically; that is the call that fails first), and leaves no pending
 *    dlerror() behind;
 *  - like the static cudart inside it (seen with gdb): dlsym(cuDriverGetVersion),
 *    dlsym(cuGetProcAddress_v2), then every other driver function through
 *    the latter, by base name at its introduction version ("cuMemAlloc",
 *    3020); a driver older than its cudart (13.0; 12.2 for the cuDNN 8
 *    double) fails like no driver; the primary context is made current on
 *    the calling thread before any allocation;
 *  - cudnnGetLastErrorString gives the calling thread's last failure reason
 *    and then CLEARS it (a second call gives ""); success does not clear it.
 * Handle scratch: CGTEST_CUDNN_HANDLE_MB (default 8) from the driver;
 * failure -> INTERNAL_ERROR, "cudnnCreate: could not allocate handle workspace".
 * CGTEST_CUDNN_CREATE_STATUS=N: cudnnCreate returns N at once (before the
 * driver is touched), reason "injected by CGTEST_CUDNN_CREATE_STATUS". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudnn_int.h"
#include "cgtest_env.h"

static __thread char last_error[256];

API cudnnStatus_t cgtestCudnnFail(cudnnStatus_t st, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

API size_t cgtestCudnnEnvNum(const char *name, size_t dflt) { return (size_t)cgtest_env_num(name, dflt); }

/* ---- the driver, reached the way cuDNN's static cudart reaches it */
static struct {
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_cur)(CUcontext);
    CUresult (*get_cur)(CUcontext *);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static int drv_ok;

static int get(CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *),
               const char *name, int since, void *slot)
{
    return gpa(name, (void **)slot, since, CU_GET_PROC_ADDRESS_DEFAULT, NULL) == CUDA_SUCCESS;
}

static void drv_load(void)
{
    CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    CUresult (*init)(unsigned int) = NULL, (*version)(int *);
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    int v = 0;

    if (!h) {
        (void)dlerror(); /* the real one leaves none pending */
        return;
    }
    version = (__typeof__(version))dlsym(h, "cuDriverGetVersion");
    gpa = (__typeof__(gpa))dlsym(h, "cuGetProcAddress_v2");
    if (!version || version(&v) || v < CGTEST_CUDART_VERSION || !gpa || !get(gpa, "cuInit", 2000, &init) ||
        !get(gpa, "cuDevicePrimaryCtxRetain", 7000, &drv.retain) || !get(gpa, "cuCtxSetCurrent", 4000, &drv.set_cur) ||
        !get(gpa, "cuCtxGetCurrent", 4000, &drv.get_cur) || !get(gpa, "cuMemAlloc", 3020, &drv.alloc) ||
        !get(gpa, "cuMemFree", 3020, &drv.free))
        return;
    drv_ok = init(0) == CUDA_SUCCESS;
}

static int drv_ready(void)
{
    CUcontext c = NULL;

    pthread_once(&drv_once, drv_load);
    if (!drv_ok || drv.get_cur(&c))
        return 0;
    return c || (!drv.retain(&c, 0) && !drv.set_cur(c));
}

API CUresult cgtestCudnnDevAlloc(CUdeviceptr *p, size_t n)
{
    return drv_ready() ? drv.alloc(p, n) : CUDA_ERROR_NOT_INITIALIZED;
}

API void cgtestCudnnDevFree(CUdeviceptr p)
{
    if (p && drv_ready())
        drv.free(p);
}

API int cgtestCudnnHandleOk(cudnnHandle_t h)
{
    return h && h->magic == HANDLE_MAGIC;
}

/* ---- the public calls */
API size_t cudnnGetVersion(void) { return CGTEST_VERSION; }
API size_t cudnnGetCudartVersion(void) { return CGTEST_CUDART_VERSION; }

API cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return cgtestCudnnFail(ST_BAD_PARAM, "value == nullptr");
    switch (type) {
    case MAJOR_VERSION: *value = CGTEST_VERSION >= 10000 ? CGTEST_VERSION / 10000 : CGTEST_VERSION / 1000; break;
    case MINOR_VERSION: *value = CGTEST_VERSION >= 10000 ? CGTEST_VERSION / 100 % 100 : CGTEST_VERSION / 100 % 10; break;
    case PATCH_LEVEL: *value = CGTEST_VERSION % 100; break;
    default: return cgtestCudnnFail(ST_BAD_PARAM, "type is not a libraryPropertyType");
    }
    return CUDNN_STATUS_SUCCESS;
}

API const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
#ifdef CGTEST_CUDNN8
    case CUDNN8_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN8_STATUS_ALLOC_FAILED: return "CUDNN_STATUS_ALLOC_FAILED";
    case CUDNN8_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN8_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN8_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN8_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
#else
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED: return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED: return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
        return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    case CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED:
        return "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
#endif
    default: return "CUDNN_UNKNOWN_STATUS";
    }
}

#ifndef CGTEST_CUDNN8
API void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (!message || !max_size)
        return;
    snprintf(message, max_size, "%s", last_error);
    last_error[0] = 0;
}
#endif

API cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    size_t bytes = cgtestCudnnEnvNum("CGTEST_CUDNN_HANDLE_MB", 8) * MiB;
    struct cudnnContext *c;

    if (!handle)
        return cgtestCudnnFail(ST_BAD_PARAM, "handle == nullptr");
    /* Added for convguard's resource tests: a failure that is not an allocation's. */
    if (cgtestCudnnEnvNum("CGTEST_CUDNN_CREATE_STATUS", 0))
        return cgtestCudnnFail((cudnnStatus_t)cgtestCudnnEnvNum("CGTEST_CUDNN_CREATE_STATUS", 0),
                               "injected by CGTEST_CUDNN_CREATE_STATUS");
    if (!drv_ready())
        return cgtestCudnnFail(ST_NOT_INITIALIZED, "cudaGetDeviceCount(&count) != cudaSuccess");
    if (!(c = calloc(1, sizeof *c)))
        return cgtestCudnnFail(ST_ALLOC_FAILED, "cudnnCreate: out of host memory");
    if (bytes && drv.alloc(&c->scratch, bytes)) {
        free(c);
        return cgtestCudnnFail(ST_INTERNAL_ERROR, "cudnnCreate: could not allocate handle workspace");
    }
    c->magic = HANDLE_MAGIC;
    *handle = c;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    if (!cgtestCudnnHandleOk(h))
        return cgtestCudnnFail(ST_BAD_PARAM, "handle is not a cudnnHandle_t");
    cgtestCudnnDevFree(h->scratch);
    h->magic = 0;
    free(h);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    if (!cgtestCudnnHandleOk(h))
        return cgtestCudnnFail(ST_BAD_PARAM, "handle is not a cudnnHandle_t");
    h->stream = s;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetStream(cudnnHandle_t h, cudaStream_t *s)
{
    if (!cgtestCudnnHandleOk(h) || !s)
        return cgtestCudnnFail(ST_BAD_PARAM, "bad handle or stream pointer");
    *s = h->stream;
    return CUDNN_STATUS_SUCCESS;
}
