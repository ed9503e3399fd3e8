/* gpumem.c - GPU memory wrappers (runtime and driver). */
#include "cg.h"

cudaError_t cg_w_cudaMalloc(cg_t_cudaMalloc real, void **ptr, size_t size)
{
    cudaError_t r = real(ptr, size);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudaMalloc, (long long)r);
    return r;
}
cudaError_t cg_w_cudaFree(cg_t_cudaFree real, void *ptr)
{
    cudaError_t r = real(ptr);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudaFree, (long long)r);
    return r;
}
cudaError_t cg_w_cudaMallocAsync(cg_t_cudaMallocAsync real, void **ptr, size_t size, cudaStream_t s)
{
    cudaError_t r = real(ptr, size, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudaMallocAsync, (long long)r);
    return r;
}
cudaError_t cg_w_cudaFreeAsync(cg_t_cudaFreeAsync real, void *ptr, cudaStream_t s)
{
    cudaError_t r = real(ptr, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudaFreeAsync, (long long)r);
    return r;
}
cudaError_t cg_w_cudaMemGetInfo(cg_t_cudaMemGetInfo real, size_t *free_bytes, size_t *total_bytes)
{
    cudaError_t r = real(free_bytes, total_bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudaMemGetInfo, (long long)r);
    return r;
}
CUresult cg_w_cuMemAlloc_v2(cg_t_cuMemAlloc_v2 real, CUdeviceptr *ptr, size_t size)
{
    CUresult r = real(ptr, size);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemAlloc_v2, (long long)r);
    return r;
}
CUresult cg_w_cuMemFree_v2(cg_t_cuMemFree_v2 real, CUdeviceptr ptr)
{
    CUresult r = real(ptr);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemFree_v2, (long long)r);
    return r;
}
CUresult cg_w_cuMemAllocAsync(cg_t_cuMemAllocAsync real, CUdeviceptr *ptr, size_t size, CUstream s)
{
    CUresult r = real(ptr, size, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemAllocAsync, (long long)r);
    return r;
}
CUresult cg_w_cuMemAllocAsync_ptsz(cg_t_cuMemAllocAsync_ptsz real, CUdeviceptr *ptr, size_t size, CUstream s)
{
    CUresult r = real(ptr, size, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemAllocAsync_ptsz, (long long)r);
    return r;
}
CUresult cg_w_cuMemAllocFromPoolAsync(cg_t_cuMemAllocFromPoolAsync real, CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s)
{
    CUresult r = real(ptr, size, pool, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemAllocFromPoolAsync, (long long)r);
    return r;
}
CUresult cg_w_cuMemAllocFromPoolAsync_ptsz(cg_t_cuMemAllocFromPoolAsync_ptsz real, CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s)
{
    CUresult r = real(ptr, size, pool, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemAllocFromPoolAsync_ptsz, (long long)r);
    return r;
}
CUresult cg_w_cuMemFreeAsync(cg_t_cuMemFreeAsync real, CUdeviceptr ptr, CUstream s)
{
    CUresult r = real(ptr, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemFreeAsync, (long long)r);
    return r;
}
CUresult cg_w_cuMemFreeAsync_ptsz(cg_t_cuMemFreeAsync_ptsz real, CUdeviceptr ptr, CUstream s)
{
    CUresult r = real(ptr, s);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemFreeAsync_ptsz, (long long)r);
    return r;
}
CUresult cg_w_cuMemCreate(cg_t_cuMemCreate real, CUmemGenericAllocationHandle *handle, size_t size, const struct CUmemAllocationProp_st *prop, unsigned long long flags)
{
    CUresult r = real(handle, size, prop, flags);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemCreate, (long long)r);
    return r;
}
CUresult cg_w_cuMemRelease(cg_t_cuMemRelease real, CUmemGenericAllocationHandle handle)
{
    CUresult r = real(handle);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemRelease, (long long)r);
    return r;
}
CUresult cg_w_cuMemGetInfo_v2(cg_t_cuMemGetInfo_v2 real, size_t *free_bytes, size_t *total_bytes)
{
    CUresult r = real(free_bytes, total_bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cuMemGetInfo_v2, (long long)r);
    return r;
}
