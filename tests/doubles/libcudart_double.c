/* libcudart_double.c - TEST DOUBLE of the CUDA runtime, libcudart.so.13.
 * This is NOT NVIDIA's library.
 *
 * What it copies from the real libcudart.so.13 (checked on a GPU-less host):
 *  - soname libcudart.so.13, every symbol in version node libcudart.so.13;
 *  - no DT_NEEDED on libcuda: at first use it dlopen()s "libcuda.so.1" by
 *    bare name (RTLD_NOW), once, dlsym()s cuGetProcAddress_v2 and gets every
 *    other driver function through it (the "driver entry point" route), by
 *    base name at the CUDA version that introduced it ("cuMemAlloc", 3020),
 *    flags 0, as the real one does (seen with gdb: it asks for ~450);
 *  - a needed entry point missing: cudaErrorCallRequiresNewerDriver (36);
 *  - no driver: every call returns cudaErrorInsufficientDriver (35) and
 *    leaves its out-parameters alone, except cudaRuntimeGetVersion (13000)
 *    and cudaDriverGetVersion (0, cudaSuccess).  The dlopen error is left
 *    pending: the caller's next dlerror() shows it, as with the real one;
 *  - a driver older than 13.0 (CGTEST_DRIVER_VERSION) is also 35;
 *  - no device: cudaErrorNoDevice (100), cudaGetDeviceCount sets 0;
 *  - first use on a thread makes the primary context current
 *    (cuDevicePrimaryCtxRetain + cuCtxSetCurrent).
 * CGTEST_CUDART_RAW_DLSYM=1 (read once): cuGetProcAddress_v2 is looked up
 * with libc's own dlsym (found by version), past any interposer, so that the
 * driver functions it hands out through cudaGetDriverEntryPoint come straight
 * from libcuda (tests/preload/t_loader_edges.sh: that route on its own).
 * Streams are ignored. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_double.h"
#include "cgtest_env.h"

#define API __attribute__((visibility("default")))
#define RT_VERSION 13000

static struct {
    CUresult (*init)(unsigned int);
    CUresult (*drv_version)(int *);
    CUresult (*dev_count)(int *);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_cur)(CUcontext);
    CUresult (*get_cur)(CUcontext *);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
    CUresult (*free_async)(CUdeviceptr, CUstream);
    CUresult (*mem_info)(size_t *, size_t *);
    CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
} drv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cudaError_t init_err; /* sticky, as the real runtime's */

#define cudaErrorCallRequiresNewerDriver 36 /* not in cudefs.h; driver_types.h */

static int get(const char *name, int since, void *slot)
{
    return drv.gpa(name, (void **)slot, since, CU_GET_PROC_ADDRESS_DEFAULT, NULL) == CUDA_SUCCESS;
}

static void *driver_sym(void *h, const char *name)
{
    void *(*libc_dlsym)(void *, const char *) = NULL;
    if (cgtest_env_num("CGTEST_CUDART_RAW_DLSYM", 0)) {
        libc_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
        if (!libc_dlsym) /* glibc < 2.34: libdl's */
            libc_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
    }
    return libc_dlsym ? libc_dlsym(h, name) : dlsym(h, name);
}

static void load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    int v = 0;
    CUresult r;

    if (!h || !(drv.gpa = (__typeof__(drv.gpa))driver_sym(h, "cuGetProcAddress_v2"))) {
        init_err = cudaErrorInsufficientDriver;
        return;
    }
    /* the version first: a driver older than the runtime is 35 even though
     * it also lacks newer entry points (cudaDriverGetVersion still works) */
    if (!get("cuDriverGetVersion", 2020, &drv.drv_version) || drv.drv_version(&v) || v < RT_VERSION) {
        init_err = cudaErrorInsufficientDriver;
        return;
    }
    if (!get("cuInit", 2000, &drv.init) || !get("cuDeviceGetCount", 2000, &drv.dev_count) ||
        !get("cuDevicePrimaryCtxRetain", 7000, &drv.retain) || !get("cuCtxSetCurrent", 4000, &drv.set_cur) ||
        !get("cuCtxGetCurrent", 4000, &drv.get_cur) || !get("cuMemGetInfo", 3020, &drv.mem_info) ||
        !get("cuMemAlloc", 3020, &drv.alloc) || !get("cuMemFree", 3020, &drv.free) ||
        !get("cuMemAllocAsync", 11020, &drv.alloc_async) || !get("cuMemFreeAsync", 11020, &drv.free_async)) {
        init_err = cudaErrorCallRequiresNewerDriver;
        return;
    }
    r = drv.init(0);
    init_err = r == CUDA_SUCCESS ? cudaSuccess
             : r == CUDA_ERROR_NO_DEVICE ? cudaErrorNoDevice : cudaErrorInitializationError;
}

static cudaError_t lazy_init(void)
{
    pthread_once(&once, load);
    return init_err;
}

static cudaError_t map(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    default: return cudaErrorUnknown;
    }
}

/* The runtime's implicit per-thread context setup. */
static cudaError_t with_ctx(void)
{
    CUcontext c = NULL;
    cudaError_t e = lazy_init();

    if (e || (e = map(drv.get_cur(&c))) || c)
        return e;
    if ((e = map(drv.retain(&c, 0))))
        return e;
    return map(drv.set_cur(c));
}

API cudaError_t cudaRuntimeGetVersion(int *version)
{
    if (!version)
        return cudaErrorInvalidValue;
    *version = RT_VERSION;
    return cudaSuccess;
}

API cudaError_t cudaDriverGetVersion(int *version)
{
    if (!version)
        return cudaErrorInvalidValue;
    lazy_init();
    *version = 0;
    return drv.drv_version ? map(drv.drv_version(version)) : cudaSuccess;
}

API cudaError_t cudaGetDeviceCount(int *count)
{
    cudaError_t e = lazy_init();

    if (!count)
        return cudaErrorInvalidValue;
    if (e == cudaErrorNoDevice)
        *count = 0;
    return e ? e : map(drv.dev_count(count));
}

API cudaError_t cudaSetDevice(int dev)
{
    cudaError_t e = lazy_init();
    CUcontext c;

    if (e)
        return e;
    if (dev != 0)
        return cudaErrorInvalidDevice;
    if ((e = map(drv.retain(&c, 0))))
        return e;
    return map(drv.set_cur(c));
}

API cudaError_t cudaMalloc(void **ptr, size_t size)
{
    cudaError_t e = with_ctx();
    CUdeviceptr p;

    if (e)
        return e;
    if (!ptr)
        return cudaErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    if ((e = map(drv.alloc(&p, size))) == cudaSuccess)
        *ptr = (void *)(uintptr_t)p;
    return e;
}

API cudaError_t cudaFree(void *ptr)
{
    cudaError_t e = with_ctx();

    return e ? e : ptr ? map(drv.free((CUdeviceptr)(uintptr_t)ptr)) : cudaSuccess;
}

/* Device memory of the doubles is host memory: every direction is a memcpy.
 * (kind: 1 host->device, 2 device->host, 3 device->device, 4 default) */
API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind)
{
    cudaError_t e = with_ctx();
    if (e)
        return e;
    if (kind < 0 || kind > 4 || (count && (!dst || !src)))
        return 1; /* cudaErrorInvalidValue */
    memmove(dst, src, count);
    return cudaSuccess;
}

API cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t s)
{
    cudaError_t e = with_ctx();
    CUdeviceptr p;

    if (e)
        return e;
    if (!ptr)
        return cudaErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    if ((e = map(drv.alloc_async(&p, size, (CUstream)s))) == cudaSuccess)
        *ptr = (void *)(uintptr_t)p;
    return e;
}

API cudaError_t cudaFreeAsync(void *ptr, cudaStream_t s)
{
    cudaError_t e = with_ctx();

    return e ? e : ptr ? map(drv.free_async((CUdeviceptr)(uintptr_t)ptr, (CUstream)s)) : cudaSuccess;
}

API cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    cudaError_t e = with_ctx();

    return e ? e : map(drv.mem_info(free_bytes, total_bytes));
}

/* Documented: a symbol the driver lacks is cudaSuccess with *fn = NULL. */
static cudaError_t entry_point(const char *symbol, void **fn, unsigned int version, unsigned long long flags,
                               cudaDriverEntryPointQueryResult *status)
{
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    cudaError_t e = lazy_init();
    CUresult r;

    if (e)
        return e;
    if (!symbol || !fn)
        return cudaErrorInvalidValue;
    r = drv.gpa(symbol, fn, (int)version, flags, &st);
    if (r == CUDA_ERROR_INVALID_VALUE)
        return cudaErrorInvalidValue;
    if (r != CUDA_SUCCESS)
        *fn = NULL;
    if (status) /* the runtime's enum has the driver's values */
        *status = r == CUDA_SUCCESS ? cudaDriverEntryPointSuccess : st;
    return cudaSuccess;
}

API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                                 unsigned long long flags,
                                                 cudaDriverEntryPointQueryResult *status)
{
    return entry_point(symbol, fn, version, flags, status);
}

/* Deprecated form: the runtime's own version is the one asked for. */
API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                        cudaDriverEntryPointQueryResult *status)
{
    return entry_point(symbol, fn, RT_VERSION, flags, status);
}

static const struct { cudaError_t e; const char *name, *str; } errs[] = {
    { cudaSuccess, "cudaSuccess", "no error" },
    { cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
    { cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
    { cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error" },
    { cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
      "CUDA driver version is insufficient for CUDA runtime version" },
    { cudaErrorCallRequiresNewerDriver, "cudaErrorCallRequiresNewerDriver",
      "API call is not supported in the installed CUDA driver" },
    { cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
    { cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
    { cudaErrorUnknown, "cudaErrorUnknown", "unknown error" },
};

static const char *err_text(cudaError_t e, int name)
{
    size_t i;

    for (i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (errs[i].e == e)
            return name ? errs[i].name : errs[i].str;
    return name ? "cudaErrorUnknown" : "unrecognized error code";
}

API const char *cudaGetErrorString(cudaError_t err) { return err_text(err, 0); }
API const char *cudaGetErrorName(cudaError_t err) { return err_text(err, 1); }
