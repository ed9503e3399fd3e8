/* cuda_double.h - prototypes of the CUDA driver (libcuda.so.1) and runtime
 * (libcudart.so.13) functions that convguard's TEST DOUBLES implement and the
 * test clients call.  Not NVIDIA's header.
 *
 * Types and most constants come from shim/cudefs.h, so nothing here needs a
 * CUDA toolkit.  The few constants cudefs.h lacks are defined below with the
 * value they have in CUDA 13.0's cuda.h / driver_types.h. */
#ifndef CGTEST_CUDA_DOUBLE_H
#define CGTEST_CUDA_DOUBLE_H

#include "cudefs.h"

/* Not in cudefs.h (cuda.h, CUDA 13.0); guarded, cudefs.h may gain them. */
#ifndef CUDA_ERROR_INVALID_DEVICE
#define CUDA_ERROR_INVALID_DEVICE 101
#endif
#ifndef CU_GET_PROC_ADDRESS_DEFAULT
#define CU_GET_PROC_ADDRESS_DEFAULT 0
#endif
#ifndef CU_GET_PROC_ADDRESS_LEGACY_STREAM
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM 1
#endif
#ifndef CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2
#endif
#ifndef CU_GET_PROC_ADDRESS_SUCCESS
#define CU_GET_PROC_ADDRESS_SUCCESS 0
#endif
#ifndef CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
#define CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND 1
#endif
#ifndef CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
#define CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT 2
#endif
#ifndef CUDA_ERROR_INVALID_HANDLE
#define CUDA_ERROR_INVALID_HANDLE 400
#endif
#ifndef CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#endif

/* Not in cudefs.h (driver_types.h, CUDA 13.0); guarded likewise. */
#ifndef cudaErrorInvalidValue
#define cudaErrorInvalidValue 1
#endif
#ifndef cudaErrorInvalidDevice
#define cudaErrorInvalidDevice 101
#endif
#ifndef cudaEnableDefault
#define cudaEnableDefault 0
#endif
#ifndef cudaDriverEntryPointSuccess
#define cudaDriverEntryPointSuccess 0
#endif
#ifndef cudaDriverEntryPointSymbolNotFound
#define cudaDriverEntryPointSymbolNotFound 1
#endif
#ifndef cudaDriverEntryPointVersionNotSufficent
#define cudaDriverEntryPointVersionNotSufficent 2 /* sic, as in the real header */
#endif

/* ---- driver: libcuda.so.1, unversioned symbols */
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *dev, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext *ctx);
CUresult cuCtxGetDevice(CUdevice *dev);
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t size);
CUresult cuMemFree_v2(CUdeviceptr ptr);
CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t size, CUstream s);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *ptr, size_t size, CUstream s);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s);
CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream s);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr ptr, CUstream s);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const struct CUmemAllocationProp_st *prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes);
CUresult cuGetProcAddress(const char *symbol, void **fn, int version, cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status);
CUresult cuModuleLoad(CUmodule *module, const char *fname);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned int flags, CUdevice dev);
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options, void **values);
CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatbin);
CUresult cuModuleUnload(CUmodule module);
CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jit_options, void **jit_values,
                           unsigned int n_jit, CUlibraryOption *lib_options, void **lib_values, unsigned int n_lib);
CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fname, CUjit_option *jit_options, void **jit_values,
                               unsigned int n_jit, CUlibraryOption *lib_options, void **lib_values, unsigned int n_lib);
CUresult cuLibraryUnload(CUlibrary library);
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
CUresult cuModuleGetFunction(CUfunction *f, CUmodule module, const char *name);
CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary library, const char *name);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, CUstream s, void **params, void **extra);
CUresult cuGetErrorName(CUresult err, const char **name);
CUresult cuGetErrorString(CUresult err, const char **str);
/* Test helpers of the double, not CUDA API. */
size_t cgtestGpuLiveBytes(void);
void cgtestGpuHolder(unsigned int *pid, size_t *bytes);

/* ---- runtime: libcudart.so.13, version node libcudart.so.13 */
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int dev);
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t s);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t s);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult *status);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             cudaDriverEntryPointQueryResult *status);
const char *cudaGetErrorString(cudaError_t err);
const char *cudaGetErrorName(cudaError_t err);

#endif
