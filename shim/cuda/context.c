/* context.c - driver initialisation and context creation.
 *
 * With another process holding nearly all of the GPU, PyTorch fails at its
 * first .cuda() ("CUDA error: out of memory") and JAX at backend start ("no
 * supported devices found"): the primary context cannot be created, before
 * any allocation or cuDNN call the other layers see.  Only failures are
 * written; success costs a counter and a forward. */
#include <errno.h>

#include "cg.h"
#include "cuda/gpuinfo.h"

static void context_failed(int hook, CUresult r, int dev)
{
    int saved = errno;
    struct cg_gpu_state s;
    cg_failed(hook, CG_FAIL_REPORTED);
    /* no context exists on this thread: memory comes from NVML, if any */
    cg_gpu_state_now(&s, r == CUDA_ERROR_OUT_OF_MEMORY);
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "context_failed");
    cg_ev_str(&e, "fn", cg_hooks[hook].name);
    cg_ev_i64(&e, "status", r);
    cg_ev_str(&e, "status_name", cg_cu_result_name(r));
    if (dev >= 0)
        cg_ev_i64(&e, "device", dev);
    cg_ev_gpu_mem(&e, "mem", &s.mem);
    cg_ev_gpu_devices(&e, &s);
    /* who holds the memory: a fact; whether that is the cause is the CLI's */
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        cg_ev_gpu_holders(&e, &s);
    cg_ev_end(&e);
    errno = saved;
}

CUresult cg_w_cuInit(cg_t_cuInit real, CG_CALLER, unsigned int flags)
{
    CUresult r = real(flags);
    if (CG_UNLIKELY(r != CUDA_SUCCESS)) {
        context_failed(CG_H_cuInit, r, -1);
    }
    return r;
}

CUresult cg_w_cuDevicePrimaryCtxRetain(cg_t_cuDevicePrimaryCtxRetain real, CG_CALLER, CUcontext *ctx, CUdevice dev)
{
    CUresult r = real(ctx, dev);
    if (CG_UNLIKELY(r != CUDA_SUCCESS)) {
        context_failed(CG_H_cuDevicePrimaryCtxRetain, r, dev);
    }
    return r;
}

CUresult cg_w_cuCtxCreate_v2(cg_t_cuCtxCreate_v2 real, CG_CALLER, CUcontext *ctx, unsigned int flags, CUdevice dev)
{
    CUresult r = real(ctx, flags, dev);
    if (CG_UNLIKELY(r != CUDA_SUCCESS)) {
        context_failed(CG_H_cuCtxCreate_v2, r, dev);
    }
    return r;
}

CUresult cg_w_cuCtxCreate_v4(cg_t_cuCtxCreate_v4 real, CG_CALLER, CUcontext *ctx, void *params, unsigned int flags,
                             CUdevice dev)
{
    CUresult r = real(ctx, params, flags, dev);
    if (CG_UNLIKELY(r != CUDA_SUCCESS)) {
        context_failed(CG_H_cuCtxCreate_v4, r, dev);
    }
    return r;
}
