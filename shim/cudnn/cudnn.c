/* cudnn.c - cuDNN's handle and legacy convolution API: why it failed, in bytes.
 *
 *  - cudnnCreate / cudnnDestroy: a `cudnn_handle` event each (rare calls).
 *    A failed create also says cuDNN's own reason, the driver's state, free
 *    and total memory, the compute capability, who holds the memory (NVML),
 *    the allocation that failed during or just before it, the failed load
 *    of libcuda.so.1: facts; the cause is the CLI's (tools/analysis/).
 *  - algorithm lookups (Get..._v7, Find..., Find...Ex): a `conv_algos` event
 *    for the first lookup of each distinct shape, for every failing one, and
 *    for every one showing the seeds' signature (every algorithm needs more
 *    workspace than is free, or every returned algorithm failed).
 *  - executions: only failures (`conv_exec_failed`), with the algorithm and
 *    the workspace passed.
 * Lookups are rare (frameworks cache their choice per shape), so decoding the
 * descriptors there is affordable; executions and successes do nothing but
 * the counter and the call. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "cudnn/cudnn.h"
#include "thresholds.h"

/* ---- the handle */
/* A failed create writes facts: cuDNN's status and reason, the driver's
 * state, memory free and total, who holds it, the allocation that failed
 * during or just before the create, the failed load of the driver.  Why it
 * failed is said by the CLI, in one place (tools/analysis/diagnose.c), so
 * that report, inspect, doctor and check() say the same. */

/* The allocation failure the create may be down to: one during the create,
 * or the last before it when none worked since. */
static bool alloc_failure_of(uint64_t failures_before, struct cg_alloc_failure *af, bool *during)
{
    if (!cg_gpumem_last_failure(af))
        return false;
    *during = cg_gpumem_failures() > failures_before;
    return *during || !af->success_since;
}

static void ev_alloc_failure(struct cg_ev *e, uint64_t failures_before)
{
    struct cg_alloc_failure af;
    bool during;
    if (!alloc_failure_of(failures_before, &af, &during))
        return;
    cg_ev_open(e, "alloc_failure", '{');
    cg_ev_str(e, "fn", af.fn);
    cg_ev_u64(e, "bytes", af.bytes);
    cg_ev_i64(e, "status", af.status);
    if (af.has_seq)
        cg_ev_u64(e, "seq", af.seq);
    else
        cg_ev_raw(e, "seq", "null");
    cg_ev_bool(e, "during", during);
    cg_ev_close(e, '}');
}

/* The fallback's own question (CONVGUARD_FALLBACK=1 with a reserve): was the
 * create short of memory?  A policy's trigger, never written; the same test
 * as the diagnosis's memory causes (tools/analysis/diagnose.c create_cause),
 * with the same threshold (thresholds.h). */
static bool create_short_of_memory(int slot, cudnnStatus_t r, const struct cg_gpu_state *st,
                                   uint64_t failures_before)
{
    struct cg_alloc_failure af;
    bool during;
    if (cg_fallback_mem_status(slot, r))
        return true;
    if ((slot == CG_SLOT_CUDNN9 &&
         (r == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED || r == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)) ||
        strcmp(st->driver, "not_loaded") == 0 || strcmp(st->driver, "no_device") == 0 ||
        strcmp(st->driver, "not_initialized") == 0)
        return false;
    if (alloc_failure_of(failures_before, &af, &during))
        return true;
    return st->mem.known && st->mem.free < (unsigned long long)CG_LOW_FREE_BYTES &&
           !(slot == CG_SLOT_CUDNN9 && (r / 1000 == 2 || r / 1000 == 3)) &&
           !(slot == CG_SLOT_CUDNN8 && (r == CUDNN8_STATUS_BAD_PARAM || r == CUDNN8_STATUS_NOT_SUPPORTED));
}

cudnnStatus_t cg_w_cudnnCreate(cg_t_cudnnCreate real, CG_CALLER, cudnnHandle_t *handle)
{
    uint64_t failures_before = cg_gpumem_failures();
    cudnnStatus_t r = real(handle);
    int saved = errno;
    int slot = cg_cudnn_slot_of(CG_H_cudnnCreate, (const void *)real);
    char b[CG_EV_BUF];
    struct cg_ev e;
    if (r == CUDNN_STATUS_SUCCESS) {
        cg_ev_begin_call(&e, b, sizeof b, "cudnn_handle", CG_H_cudnnCreate);
        cg_ev_status(&e, r, cg_cudnn_status_name(slot, r));
        cg_ev_bool(&e, "ok", true);
        cg_ev_end(&e);
        errno = saved;
        return r;
    }
    cg_failed(CG_H_cudnnCreate, CG_FAIL_REPORTED);
    struct cg_cudnn_fns f;
    cg_cudnn_fns(slot, (const void *)real, &f);
    char reason[1024];
    cg_cudnn_reason_take(&f, reason, sizeof reason);
    struct cg_gpu_state st;
    cg_gpu_state_now(&st, true); /* before the event: loading NVML may write a `lib` event */
    cg_ev_begin_call(&e, b, sizeof b, "cudnn_handle", CG_H_cudnnCreate);
    cg_ev_status(&e, r, cg_cudnn_status_name(slot, r));
    cg_ev_bool(&e, "ok", false);
    if (f.last_error)
        cg_ev_str(&e, "reason", reason);
    else
        cg_ev_raw(&e, "reason", "null");
    cg_ev_gpu_devices(&e, &st);
    cg_ev_gpu_mem(&e, "mem", &st.mem);
    cg_ev_gpu_holders(&e, &st);
    if (st.nholders >= 0)
        cg_ev_u64(&e, "others_bytes", st.others_bytes);
    ev_alloc_failure(&e, failures_before);
    char err[256];
    uint64_t seq;
    if (strcmp(st.driver, "not_loaded") == 0 && cg_libs_load_failure("libcuda.so", &seq, err, sizeof err))
        cg_ev_u64(&e, "driver_load_seq", seq);
    cg_ev_end(&e);
    if (CG_UNLIKELY(cg_cfg.fallback) && cg_cfg.reserve_mb > 0 && create_short_of_memory(slot, r, &st, failures_before)) {
        struct cg_alloc_failure af;
        bool during = cg_gpumem_failures() > failures_before && cg_gpumem_last_failure(&af);
        cg_fallback_reserve_exhausted("cudnnCreate", during ? af.bytes : 0, r, cg_cudnn_status_name(slot, r));
    }
    errno = saved;
    return r;
}

cudnnStatus_t cg_w_cudnnDestroy(cg_t_cudnnDestroy real, CG_CALLER, cudnnHandle_t handle)
{
    cudnnStatus_t r = real(handle);
    int saved = errno;
    int slot = cg_cudnn_slot_of(CG_H_cudnnDestroy, (const void *)real);
    if (r != CUDNN_STATUS_SUCCESS)
        cg_failed(CG_H_cudnnDestroy, CG_FAIL_REPORTED);
    char b[1024];
    struct cg_ev e;
    cg_ev_begin_call(&e, b, sizeof b, "cudnn_handle", CG_H_cudnnDestroy);
    cg_ev_status(&e, r, cg_cudnn_status_name(slot, r));
    cg_ev_bool(&e, "ok", r == CUDNN_STATUS_SUCCESS);
    cg_ev_end(&e);
    errno = saved;
    return r;
}

/* ---- algorithm lookups */
enum api { API_GET_V7, API_FIND, API_FIND_EX };
static const char *const api_names[] = {"get_v7", "find", "find_ex"};
static const char *const op_names[] = {"forward", "backward_data", "backward_filter"};

struct lookup {
    int hook, op, api;
    const void *real;
    /* x, w, y of the forward convolution: for backward data x is dx and y is
     * dy; for backward filter w is dw and y is dy */
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    int requested;
    const int *returned;
    const cudnnConvolutionFwdAlgoPerf_t *perf;
    size_t limit; /* find_ex: the workspace passed */
};

/* Shapes already written (first lookup per distinct shape). */
#define SEEN_SIZE 1024
static _Atomic uint64_t seen[SEEN_SIZE];

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* true the first time this key is seen (and when the set is full: say it). */
static bool first_time(uint64_t key)
{
    if (key <= 1)
        key += 2;
    uint32_t i = (uint32_t)(key % SEEN_SIZE);
    for (int n = 0; n < SEEN_SIZE; n++, i = (i + 1) % SEEN_SIZE) {
        uint64_t cur = atomic_load_explicit(&seen[i], memory_order_relaxed);
        if (cur == key)
            return false;
        if (cur == 0 &&
            atomic_compare_exchange_strong_explicit(&seen[i], &cur, key, memory_order_relaxed, memory_order_relaxed))
            return true;
        if (cur == key)
            return false;
    }
    return true;
}

static void ms_str(float ms, char *out)
{
    if (!(ms >= 0.0f) || ms > 1e9f) { /* cuDNN's -1 (not measured), NaN, absurd */
        cg_strlcpy(out, ms < 0.0f ? "-1" : "null", 8);
        return;
    }
    unsigned long long us = (unsigned long long)((double)ms * 1000.0 + 0.5);
    size_t n = cg_utoa(out, us / 1000);
    out[n++] = '.';
    out[n++] = (char)('0' + (us / 100) % 10);
    out[n++] = (char)('0' + (us / 10) % 10);
    out[n++] = (char)('0' + us % 10);
    out[n] = 0;
}

/* How many of the algorithms cuDNN returned are read: at most requested, and 32. */
static int algos_returned(const struct lookup *l)
{
    int n = 0;
    if (l->returned && l->perf) {
        n = *l->returned;
        if (n < 0)
            n = 0;
        if (n > l->requested)
            n = l->requested;
        if (n > 32)
            n = 32;
    }
    return n;
}

/* The returned algorithms against free memory and FindEx's workspace limit,
 * and the lookup's signature when none is usable. */
struct algo_tally {
    int ok, over_free, over_limit;
    const char *signature;
};
static struct algo_tally tally_algos(const struct lookup *l, int n, const struct cg_gpu_mem *mem)
{
    struct algo_tally t = {0, 0, 0, NULL};
    for (int i = 0; i < n; i++) {
        if (l->perf[i].status == CUDNN_STATUS_SUCCESS) {
            t.ok++;
            t.over_free += mem->known && l->perf[i].memory > mem->free;
        }
        t.over_limit += l->api == API_FIND_EX && l->perf[i].memory > l->limit;
    }
    if (n > 0 && t.ok == 0)
        t.signature = "all_algos_failed";
    else if (mem->known && t.ok > 0 && t.over_free == t.ok)
        t.signature = "all_algos_exceed_free_memory";
    return t;
}

/* conv_algos' "algos": [{algo, algo_name, status, ...}] */
static void ev_algos(struct cg_ev *e, const struct lookup *l, int slot, int n)
{
    cg_ev_open(e, "algos", '[');
    for (int i = 0; i < n; i++) {
        const cudnnConvolutionFwdAlgoPerf_t *p = &l->perf[i];
        char ms[32];
        ms_str(p->time, ms);
        cg_ev_open(e, NULL, '{');
        cg_ev_i64(e, "algo", p->algo);
        cg_ev_str(e, "algo_name", cg_cudnn_algo_name(l->op, p->algo));
        cg_ev_i64(e, "status", p->status);
        cg_ev_str(e, "status_name", cg_cudnn_status_name(slot, p->status));
        cg_ev_raw(e, "time_ms", ms);
        cg_ev_u64(e, "workspace", p->memory);
        cg_ev_str(e, "determinism", p->determinism == 1 ? "deterministic" : "non_deterministic");
        cg_ev_str(e, "math_type", cg_cudnn_math_name(p->mathType));
        cg_ev_close(e, '}');
    }
    cg_ev_close(e, ']');
}

/* What makes two lookups the same for first_time(): the call and its shapes. */
static uint64_t lookup_key(int hook, int slot, const struct cg_tensor *x, const struct cg_tensor *w,
                           const struct cg_tensor *y, const struct cg_conv *cv)
{
    uint64_t key = fnv(0xcbf29ce484222325ull, &hook, sizeof hook);
    key = fnv(key, &slot, sizeof slot);
    key = fnv(key, x, sizeof *x);
    key = fnv(key, w, sizeof *w);
    key = fnv(key, y, sizeof *y);
    return fnv(key, cv, sizeof *cv);
}

static void after_lookup(const struct lookup *l, cudnnStatus_t r)
{
    int saved = errno;
    int slot = cg_cudnn_slot_of(l->hook, l->real);
    struct cg_cudnn_fns f;
    cg_cudnn_fns(slot, l->real, &f);
    /* take cuDNN's reason before our getters run: they must not change it */
    char reason[1024];
    cg_cudnn_reason_take(&f, reason, sizeof reason);
    struct cg_tensor x, w, y;
    struct cg_conv cv;
    cg_cudnn_tensor(&f, l->x, &x);
    cg_cudnn_filter(&f, l->w, &w);
    cg_cudnn_tensor(&f, l->y, &y);
    cg_cudnn_conv(&f, l->conv, &cv);
    cg_cudnn_reason_drop(&f);

    int n = algos_returned(l);
    struct cg_gpu_mem mem;
    cg_gpu_mem_now(&mem);
    struct algo_tally t = tally_algos(l, n, &mem);
    int over_free = t.over_free, over_limit = t.over_limit;
    const char *signature = t.signature;

    uint64_t key = lookup_key(l->hook, slot, &x, &w, &y, &cv);
    bool failed = r != CUDNN_STATUS_SUCCESS;
    if (failed)
        cg_failed(l->hook, CG_FAIL_REPORTED);
    if (!first_time(key) && !failed && !signature) {
        errno = saved;
        return;
    }
    struct cg_gpu_state st;
    bool bad = failed || signature;
    if (bad) {
        cg_gpu_state_now(&st, true); /* holders, and memory if the driver could not say */
        if (!mem.known)
            mem = st.mem;
    }
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin_call(&e, b, sizeof b, "conv_algos", l->hook);
    cg_ev_str(&e, "op", op_names[l->op]);
    cg_ev_str(&e, "api", api_names[l->api]);
    cg_ev_status(&e, r, cg_cudnn_status_name(slot, r));
    if (failed)
        cg_ev_str(&e, "reason", f.last_error ? reason : NULL);
    cg_ev_str(&e, "signature", signature);
    cg_ev_tensor(&e, "x", &x);
    cg_ev_tensor(&e, "w", &w);
    cg_ev_tensor(&e, "y", &y);
    cg_ev_conv(&e, "conv", &cv);
    cg_ev_i64(&e, "requested", l->requested);
    if (l->returned)
        cg_ev_i64(&e, "returned", *l->returned);
    else
        cg_ev_raw(&e, "returned", "null");
    if (l->api == API_FIND_EX) {
        cg_ev_u64(&e, "workspace_limit", l->limit);
        cg_ev_i64(&e, "algos_over_limit", over_limit);
    }
    cg_ev_gpu_mem(&e, "mem", &mem);
    if (mem.known)
        cg_ev_i64(&e, "algos_over_free", over_free);
    ev_algos(&e, l, slot, n);
    if (bad)
        cg_ev_gpu_holders(&e, &st);
    cg_ev_end(&e);
    errno = saved;
}

/* CONVGUARD_FALLBACK=1 (fallback_cudnn.c): v7 results over the workspace limit go behind those that fit;
 * a Find that failed for memory is answered from the heuristics. */
static cudnnStatus_t fb_lookup(int hook, int op, int api, const void *real, cudnnStatus_t r, cudnnHandle_t h,
                               void *a1, void *a2, cudnnConvolutionDescriptor_t conv, void *a3, int requested,
                               int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    int slot = cg_cudnn_slot_of(hook, real);
    if (api == API_GET_V7 && r == CUDNN_STATUS_SUCCESS)
        cg_fb_v7(hook, slot, real, h, a1, a2, conv, a3, requested, returned, perf);
    else if (api == API_FIND && r != CUDNN_STATUS_SUCCESS)
        r = cg_fb_find(hook, op, slot, real, r, h, a1, a2, conv, a3, requested, returned, perf);
    return r;
}

#define LOOKUP_V7(name, op, api, xd, wd, yd)                                                                     \
    {                                                                                                            \
        cudnnStatus_t r = real(h, a1, a2, conv, a3, requested, returned, perf);                                  \
        if (CG_UNLIKELY(cg_cfg.fallback))                                                                        \
            r = fb_lookup(CG_H_##name, op, api, (const void *)real, r, h, (void *)a1, (void *)a2, conv,          \
                          (void *)a3, requested, returned, perf);                                                \
        struct lookup l = {CG_H_##name, op, api, (const void *)real, xd, yd, wd, conv, requested, returned,      \
                           perf, 0};                                                                             \
        after_lookup(&l, r);                                                                                     \
        return r;                                                                                                \
    }

cudnnStatus_t cg_w_cudnnGetConvolutionForwardAlgorithm_v7(cg_t_cudnnGetConvolutionForwardAlgorithm_v7 real, CG_CALLER,
                                                          cudnnHandle_t h, cudnnTensorDescriptor_t a1,
                                                          cudnnFilterDescriptor_t a2,
                                                          cudnnConvolutionDescriptor_t conv,
                                                          cudnnTensorDescriptor_t a3, int requested, int *returned,
                                                          cudnnConvolutionFwdAlgoPerf_t *perf)
    LOOKUP_V7(cudnnGetConvolutionForwardAlgorithm_v7, CG_OP_FWD, API_GET_V7, a1, a2, a3)

cudnnStatus_t cg_w_cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cg_t_cudnnGetConvolutionBackwardDataAlgorithm_v7 real, CG_CALLER, cudnnHandle_t h, cudnnFilterDescriptor_t a1,
    cudnnTensorDescriptor_t a2, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t a3, int requested,
    int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf)
    LOOKUP_V7(cudnnGetConvolutionBackwardDataAlgorithm_v7, CG_OP_BWD_DATA, API_GET_V7, a3, a1, a2)

cudnnStatus_t cg_w_cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cg_t_cudnnGetConvolutionBackwardFilterAlgorithm_v7 real, CG_CALLER, cudnnHandle_t h, cudnnTensorDescriptor_t a1,
    cudnnTensorDescriptor_t a2, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t a3, int requested,
    int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
    LOOKUP_V7(cudnnGetConvolutionBackwardFilterAlgorithm_v7, CG_OP_BWD_FILTER, API_GET_V7, a1, a3, a2)

cudnnStatus_t cg_w_cudnnFindConvolutionForwardAlgorithm(cg_t_cudnnFindConvolutionForwardAlgorithm real, CG_CALLER,
                                                        cudnnHandle_t h, cudnnTensorDescriptor_t a1,
                                                        cudnnFilterDescriptor_t a2, cudnnConvolutionDescriptor_t conv,
                                                        cudnnTensorDescriptor_t a3, int requested, int *returned,
                                                        cudnnConvolutionFwdAlgoPerf_t *perf)
    LOOKUP_V7(cudnnFindConvolutionForwardAlgorithm, CG_OP_FWD, API_FIND, a1, a2, a3)

cudnnStatus_t cg_w_cudnnFindConvolutionBackwardDataAlgorithm(cg_t_cudnnFindConvolutionBackwardDataAlgorithm real, CG_CALLER,
                                                             cudnnHandle_t h, cudnnFilterDescriptor_t a1,
                                                             cudnnTensorDescriptor_t a2,
                                                             cudnnConvolutionDescriptor_t conv,
                                                             cudnnTensorDescriptor_t a3, int requested, int *returned,
                                                             cudnnConvolutionBwdDataAlgoPerf_t *perf)
    LOOKUP_V7(cudnnFindConvolutionBackwardDataAlgorithm, CG_OP_BWD_DATA, API_FIND, a3, a1, a2)

cudnnStatus_t cg_w_cudnnFindConvolutionBackwardFilterAlgorithm(
    cg_t_cudnnFindConvolutionBackwardFilterAlgorithm real, CG_CALLER, cudnnHandle_t h, cudnnTensorDescriptor_t a1,
    cudnnTensorDescriptor_t a2, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t a3, int requested,
    int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
    LOOKUP_V7(cudnnFindConvolutionBackwardFilterAlgorithm, CG_OP_BWD_FILTER, API_FIND, a1, a3, a2)

#define LOOKUP_EX(name, op, xd, wd, yd)                                                                          \
    {                                                                                                            \
        cudnnStatus_t r = real(h, d1, p1, d2, p2, conv, d3, p3, requested, returned, perf, ws, ws_bytes);        \
        if (CG_UNLIKELY(cg_cfg.fallback))                                                                        \
            r = cg_fb_findex(CG_H_##name, cg_cudnn_slot_of(CG_H_##name, (const void *)real), (const void *)real, \
                             r, h, (void *)d1, p1, (void *)d2, p2, conv, (void *)d3, p3, requested, returned,    \
                             perf, ws, &ws_bytes);                                                               \
        struct lookup l = {CG_H_##name, op, API_FIND_EX, (const void *)real, xd, yd, wd, conv, requested,        \
                           returned, perf, ws_bytes};                                                            \
        after_lookup(&l, r);                                                                                     \
        return r;                                                                                                \
    }

cudnnStatus_t cg_w_cudnnFindConvolutionForwardAlgorithmEx(cg_t_cudnnFindConvolutionForwardAlgorithmEx real, CG_CALLER,
                                                          cudnnHandle_t h, cudnnTensorDescriptor_t d1, const void *p1,
                                                          cudnnFilterDescriptor_t d2, const void *p2,
                                                          cudnnConvolutionDescriptor_t conv,
                                                          cudnnTensorDescriptor_t d3, void *p3, int requested,
                                                          int *returned, cudnnConvolutionFwdAlgoPerf_t *perf,
                                                          void *ws, size_t ws_bytes)
    LOOKUP_EX(cudnnFindConvolutionForwardAlgorithmEx, CG_OP_FWD, d1, d2, d3)

cudnnStatus_t cg_w_cudnnFindConvolutionBackwardDataAlgorithmEx(
    cg_t_cudnnFindConvolutionBackwardDataAlgorithmEx real, CG_CALLER, cudnnHandle_t h, cudnnFilterDescriptor_t d1,
    const void *p1, cudnnTensorDescriptor_t d2, const void *p2, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t d3, void *p3, int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf,
    void *ws, size_t ws_bytes)
    LOOKUP_EX(cudnnFindConvolutionBackwardDataAlgorithmEx, CG_OP_BWD_DATA, d3, d1, d2)

cudnnStatus_t cg_w_cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cg_t_cudnnFindConvolutionBackwardFilterAlgorithmEx real, CG_CALLER, cudnnHandle_t h, cudnnTensorDescriptor_t d1,
    const void *p1, cudnnTensorDescriptor_t d2, const void *p2, cudnnConvolutionDescriptor_t conv,
    cudnnFilterDescriptor_t d3, void *p3, int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf,
    void *ws, size_t ws_bytes)
    LOOKUP_EX(cudnnFindConvolutionBackwardFilterAlgorithmEx, CG_OP_BWD_FILTER, d1, d3, d2)

/* ---- workspace sizes: only failures, as the generic event */
#define WS_SIZE(name, call)                                                                                      \
    {                                                                                                            \
        cudnnStatus_t r = call;                                                                                  \
        if (CG_UNLIKELY(r != CUDNN_STATUS_SUCCESS))                                                              \
            cg_failed_call(CG_H_##name, r);                                                                     \
        return r;                                                                                                \
    }

cudnnStatus_t cg_w_cudnnGetConvolutionForwardWorkspaceSize(cg_t_cudnnGetConvolutionForwardWorkspaceSize real, CG_CALLER,
                                                           cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                           cudnnFilterDescriptor_t w,
                                                           cudnnConvolutionDescriptor_t conv,
                                                           cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
                                                           size_t *bytes)
    WS_SIZE(cudnnGetConvolutionForwardWorkspaceSize, real(h, x, w, conv, y, algo, bytes))

cudnnStatus_t cg_w_cudnnGetConvolutionBackwardDataWorkspaceSize(
    cg_t_cudnnGetConvolutionBackwardDataWorkspaceSize real, CG_CALLER, cudnnHandle_t h, cudnnFilterDescriptor_t w,
    cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dx,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes)
    WS_SIZE(cudnnGetConvolutionBackwardDataWorkspaceSize, real(h, w, dy, conv, dx, algo, bytes))

cudnnStatus_t cg_w_cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cg_t_cudnnGetConvolutionBackwardFilterWorkspaceSize real, CG_CALLER, cudnnHandle_t h, cudnnTensorDescriptor_t x,
    cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dw,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes)
    WS_SIZE(cudnnGetConvolutionBackwardFilterWorkspaceSize, real(h, x, dy, conv, dw, algo, bytes))

/* ---- executions: only failures */
static void exec_failed(int hook, const void *real, int op, int algo, size_t ws, cudnnStatus_t r)
{
    int saved = errno;
    cg_failed(hook, CG_FAIL_REPORTED);
    int slot = cg_cudnn_slot_of(hook, real);
    struct cg_cudnn_fns f;
    cg_cudnn_fns(slot, real, &f);
    char reason[1024];
    cg_cudnn_reason_take(&f, reason, sizeof reason);
    struct cg_gpu_state st;
    cg_gpu_state_now(&st, false);
    char b[4096];
    struct cg_ev e;
    cg_ev_begin_call(&e, b, sizeof b, "conv_exec_failed", hook);
    cg_ev_str(&e, "op", op_names[op]);
    cg_ev_i64(&e, "algo", algo);
    cg_ev_str(&e, "algo_name", cg_cudnn_algo_name(op, algo));
    cg_ev_u64(&e, "workspace", ws);
    cg_ev_status(&e, r, cg_cudnn_status_name(slot, r));
    cg_ev_str(&e, "reason", f.last_error ? reason : NULL);
    cg_ev_gpu_mem(&e, "mem", &st.mem);
    /* the compute capability: EXECUTION_FAILED on a GPU newer than the build */
    cg_ev_gpu_devices(&e, &st);
    cg_ev_end(&e);
    errno = saved;
}

/* CONVGUARD_FALLBACK=1: an execution that failed for workspace is retried
 * once with an algorithm needing none (the same call, another algo). */
#define EXEC_FB(name, op, call, d1, d2, d3)                                                                      \
    if (CG_UNLIKELY(cg_cfg.fallback)) {                                                                          \
        int slot_ = cg_cudnn_slot_of(CG_H_##name, (const void *)real);                                           \
        size_t need_ = 0;                                                                                        \
        int alt_ = cg_fb_exec_algo(op, slot_, (const void *)real, r, h, (void *)(d1), (void *)(d2), conv,        \
                                   (void *)(d3), algo, ws, ws_bytes, &need_);                                    \
        if (alt_ >= 0) {                                                                                         \
            int asked_ = algo;                                                                                   \
            cudnnStatus_t first_ = r;                                                                            \
            algo = alt_;                                                                                         \
            r = call;                                                                                            \
            int saved_ = errno;                                                                                  \
            cg_fb_exec_done(CG_H_##name, slot_, asked_, need_, alt_, ws_bytes, first_, r);                       \
            errno = saved_;                                                                                      \
            if (r == CUDNN_STATUS_SUCCESS)                                                                       \
                return r;                                                                                        \
        }                                                                                                        \
    }

/* The PLT, dlsym and entry-point routes reach these hooks through entries
 * that make the real call themselves (CG_HOOK_EXEC, export.c): on a failure
 * they call cg_wf_<name> with the addresses of their stack arguments; the
 * register arguments and real are in cg_exec_call.  cg_w_<name> serves the
 * entries' slow path (first call through a PLT, not tracing).  Everything a
 * failure does (the fallback's retry, the event) is out of line. */
__thread struct cg_exec_call cg_exec_call;
#define EXEC_REG(t, i) ((t)(uintptr_t)c_.reg[i])
#define EXEC_STK(t) (*va_arg(ap_, t *))
#define EXEC_HOOK(name, op, params, args, d1, d2, d3, unpack)                                                    \
    static __attribute__((noinline, cold)) cudnnStatus_t exec_failed_##name(cg_t_##name real, cudnnStatus_t r,   \
                                                                            CG_UNPAREN params)                   \
    {                                                                                                            \
        EXEC_FB(name, op, real args, d1, d2, d3)                                                                 \
        exec_failed(CG_H_##name, (const void *)real, op, algo, ws_bytes, r);                                     \
        return r;                                                                                                \
    }                                                                                                            \
    cudnnStatus_t cg_w_##name(cg_t_##name real, CG_CALLER, CG_UNPAREN params)                                    \
    {                                                                                                            \
        cudnnStatus_t r = real args;                                                                             \
        if (CG_UNLIKELY(r != CUDNN_STATUS_SUCCESS))                                                              \
            return exec_failed_##name(real, r, CG_UNPAREN args);                                                 \
        return r;                                                                                                \
    }                                                                                                            \
    __attribute__((noinline, cold)) cudnnStatus_t cg_wf_##name(cudnnStatus_t r, ...)                             \
    {                                                                                                            \
        struct cg_exec_call c_ = cg_exec_call;                                                                   \
        va_list ap_;                                                                                             \
        va_start(ap_, r);                                                                                        \
        va_list stamp_;                                                                                          \
        va_copy(stamp_, ap_);                                                                                    \
        const void *first_ = va_arg(stamp_, const void *);                                                       \
        va_end(stamp_);                                                                                          \
        if (CG_UNLIKELY(first_ != c_.stk)) { /* re-entered on this thread: step aside */                         \
            va_end(ap_);                                                                                         \
            cg_failed_call(CG_H_##name, r);                                                                     \
            return r;                                                                                            \
        }                                                                                                        \
        CG_UNPAREN unpack                                                                                        \
        va_end(ap_);                                                                                             \
        return exec_failed_##name((cg_t_##name)c_.real, r, CG_UNPAREN args);                                    \
    }

EXEC_HOOK(cudnnConvolutionForward, CG_OP_FWD,
          (cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
           const void *w, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
           const void *beta, cudnnTensorDescriptor_t yd, void *y),
          (h, alpha, xd, x, wd, w, conv, algo, ws, ws_bytes, beta, yd, y), xd, wd, yd,
          (cudnnHandle_t h = EXEC_REG(cudnnHandle_t, 0); const void *alpha = EXEC_REG(const void *, 1);
           cudnnTensorDescriptor_t xd = EXEC_REG(cudnnTensorDescriptor_t, 2); const void *x = EXEC_REG(const void *, 3);
           cudnnFilterDescriptor_t wd = EXEC_REG(cudnnFilterDescriptor_t, 4); const void *w = EXEC_REG(const void *, 5);
           cudnnConvolutionDescriptor_t conv = EXEC_STK(cudnnConvolutionDescriptor_t);
           cudnnConvolutionFwdAlgo_t algo = EXEC_STK(cudnnConvolutionFwdAlgo_t); void *ws = EXEC_STK(void *);
           size_t ws_bytes = EXEC_STK(size_t); const void *beta = EXEC_STK(const void *);
           cudnnTensorDescriptor_t yd = EXEC_STK(cudnnTensorDescriptor_t); void *y = EXEC_STK(void *);))

EXEC_HOOK(cudnnConvolutionBackwardData, CG_OP_BWD_DATA,
          (cudnnHandle_t h, const void *alpha, cudnnFilterDescriptor_t wd, const void *w, cudnnTensorDescriptor_t dyd,
           const void *dy, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdDataAlgo_t algo, void *ws,
           size_t ws_bytes, const void *beta, cudnnTensorDescriptor_t dxd, void *dx),
          (h, alpha, wd, w, dyd, dy, conv, algo, ws, ws_bytes, beta, dxd, dx), wd, dyd, dxd,
          (cudnnHandle_t h = EXEC_REG(cudnnHandle_t, 0); const void *alpha = EXEC_REG(const void *, 1);
           cudnnFilterDescriptor_t wd = EXEC_REG(cudnnFilterDescriptor_t, 2); const void *w = EXEC_REG(const void *, 3);
           cudnnTensorDescriptor_t dyd = EXEC_REG(cudnnTensorDescriptor_t, 4); const void *dy = EXEC_REG(const void *, 5);
           cudnnConvolutionDescriptor_t conv = EXEC_STK(cudnnConvolutionDescriptor_t);
           cudnnConvolutionBwdDataAlgo_t algo = EXEC_STK(cudnnConvolutionBwdDataAlgo_t); void *ws = EXEC_STK(void *);
           size_t ws_bytes = EXEC_STK(size_t); const void *beta = EXEC_STK(const void *);
           cudnnTensorDescriptor_t dxd = EXEC_STK(cudnnTensorDescriptor_t); void *dx = EXEC_STK(void *);))

EXEC_HOOK(cudnnConvolutionBackwardFilter, CG_OP_BWD_FILTER,
          (cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x, cudnnTensorDescriptor_t dyd,
           const void *dy, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
           size_t ws_bytes, const void *beta, cudnnFilterDescriptor_t dwd, void *dw),
          (h, alpha, xd, x, dyd, dy, conv, algo, ws, ws_bytes, beta, dwd, dw), xd, dyd, dwd,
          (cudnnHandle_t h = EXEC_REG(cudnnHandle_t, 0); const void *alpha = EXEC_REG(const void *, 1);
           cudnnTensorDescriptor_t xd = EXEC_REG(cudnnTensorDescriptor_t, 2); const void *x = EXEC_REG(const void *, 3);
           cudnnTensorDescriptor_t dyd = EXEC_REG(cudnnTensorDescriptor_t, 4); const void *dy = EXEC_REG(const void *, 5);
           cudnnConvolutionDescriptor_t conv = EXEC_STK(cudnnConvolutionDescriptor_t);
           cudnnConvolutionBwdFilterAlgo_t algo = EXEC_STK(cudnnConvolutionBwdFilterAlgo_t); void *ws = EXEC_STK(void *);
           size_t ws_bytes = EXEC_STK(size_t); const void *beta = EXEC_STK(const void *);
           cudnnFilterDescriptor_t dwd = EXEC_STK(cudnnFilterDescriptor_t); void *dw = EXEC_STK(void *);))

EXEC_HOOK(cudnnConvolutionBiasActivationForward, CG_OP_FWD,
          (cudnnHandle_t h, const void *alpha1, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
           const void *w, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
           const void *alpha2, cudnnTensorDescriptor_t zd, const void *z, cudnnTensorDescriptor_t biasd,
           const void *bias, cudnnActivationDescriptor_t act, cudnnTensorDescriptor_t yd, void *y),
          (h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, alpha2, zd, z, biasd, bias, act, yd, y), xd, wd, yd,
          (cudnnHandle_t h = EXEC_REG(cudnnHandle_t, 0); const void *alpha1 = EXEC_REG(const void *, 1);
           cudnnTensorDescriptor_t xd = EXEC_REG(cudnnTensorDescriptor_t, 2); const void *x = EXEC_REG(const void *, 3);
           cudnnFilterDescriptor_t wd = EXEC_REG(cudnnFilterDescriptor_t, 4); const void *w = EXEC_REG(const void *, 5);
           cudnnConvolutionDescriptor_t conv = EXEC_STK(cudnnConvolutionDescriptor_t);
           cudnnConvolutionFwdAlgo_t algo = EXEC_STK(cudnnConvolutionFwdAlgo_t); void *ws = EXEC_STK(void *);
           size_t ws_bytes = EXEC_STK(size_t); const void *alpha2 = EXEC_STK(const void *);
           cudnnTensorDescriptor_t zd = EXEC_STK(cudnnTensorDescriptor_t); const void *z = EXEC_STK(const void *);
           cudnnTensorDescriptor_t biasd = EXEC_STK(cudnnTensorDescriptor_t); const void *bias = EXEC_STK(const void *);
           cudnnActivationDescriptor_t act = EXEC_STK(cudnnActivationDescriptor_t);
           cudnnTensorDescriptor_t yd = EXEC_STK(cudnnTensorDescriptor_t); void *y = EXEC_STK(void *);))
