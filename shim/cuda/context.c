/* context.c - driver initialisation and context creation.
 *
 * With another process holding nearly all of the GPU, PyTorch fails at its
 * first .cuda() ("CUDA error: out of memory") and JAX at backend start ("no
 * supported devices found"): the primary context cannot be created, before
 * any allocation or cuDNN call the other layers see.  A driver that shows
 * no GPU gets two more facts (issue 27 item 3): the NVIDIA device files and
 * whether this process may open them (devnodes.c), and the GPUs NVML lists,
 * for the CLI to check CUDA_VISIBLE_DEVICES against.  Only failures are
 * written; success costs a counter and a forward. */
#include <errno.h>

#include "cuda/cuda.h"

static void context_failed(int hook, CUresult r, int dev)
{
    int saved = errno;
    struct cg_gpu_state s;
    struct cg_gpu_list l;
    bool oom = r == CUDA_ERROR_OUT_OF_MEMORY;
    /* NOT_INITIALIZED: cuInit failed before, and said so with these facts */
    bool devices = !oom && r != CUDA_ERROR_NOT_INITIALIZED;
    cg_failed(hook, CG_FAIL_REPORTED);
    /* no context exists on this thread: memory comes from NVML, if any */
    cg_gpu_state_now(&s, oom);
    if (devices)
        cg_gpu_list_now(&l); /* before the event: it may load NVML (a `lib` event) */
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin_call(&e, b, sizeof b, "context_failed", hook);
    cg_ev_status(&e, r, cg_cu_result_name(r));
    if (dev >= 0)
        cg_ev_i64(&e, "device", dev);
    cg_ev_gpu_mem(&e, "mem", &s.mem);
    cg_ev_gpu_devices(&e, &s);
    /* who holds the memory: a fact; whether that is the cause is the CLI's */
    if (oom)
        cg_ev_gpu_holders(&e, &s);
    if (devices) {
        cg_ev_gpu_list(&e, &l);
        cg_ev_dev_nodes(&e);
    }
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
