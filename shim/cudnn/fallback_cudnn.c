/* fallback_cudnn.c - the fallback (CONVGUARD_FALLBACK=1) applied to cuDNN's
 * legacy convolution API and to execution plans of the graph API.
 *
 * Entered only from the wrappers' rare paths (a lookup, a failure, a plan's
 * Finalize) and only when cg_cfg.fallback is set; the wrappers' success
 * paths test that one flag and nothing else.  Every change made for the
 * program is a `fallback` event (fallback.c).
 *
 * The calls the fallback makes itself (a wider Get*_v7, the workspace size
 * of another algorithm, a plan's workspace) go to the function in cuDNN's
 * sub-library that implements it (cudnn_desc.c), never to the dispatcher,
 * whose first call of a function would dlopen() on the program's behalf. */
#include <errno.h>
#include <string.h>

#include "cudnn/cudnn.h"

#define MIB (1024ull * 1024ull)
#define WIDE 16 /* more than any cuDNN op has algorithms (8, 6, 7) */

/* the three ops' prototypes differ only in descriptor types (all pointers) */
typedef cudnnStatus_t (*v7_fn)(cudnnHandle_t, void *, void *, cudnnConvolutionDescriptor_t, void *, int, int *,
                               cudnnConvolutionFwdAlgoPerf_t *);
typedef cudnnStatus_t (*ws_fn)(cudnnHandle_t, void *, void *, cudnnConvolutionDescriptor_t, void *, int, size_t *);
typedef cudnnStatus_t (*findex_fn)(cudnnHandle_t, void *, const void *, void *, const void *,
                                   cudnnConvolutionDescriptor_t, void *, void *, int, int *,
                                   cudnnConvolutionFwdAlgoPerf_t *, void *, size_t);
static const int algo_count[3] = {8, 6, 7}; /* CUDNN_CONVOLUTION_{FWD,BWD_DATA,BWD_FILTER}_ALGO_COUNT */

/* the limit now: CONVGUARD_WORKSPACE_LIMIT_MB, else free memory minus the
 * margin; *source names which (NULL, and SIZE_MAX returned: neither known) */
static size_t limit_now(const char **source)
{
    if (cg_cfg.workspace_limit_mb >= 0) {
        *source = "CONVGUARD_WORKSPACE_LIMIT_MB";
        return cg_fallback_limit(false, 0);
    }
    struct cg_gpu_mem m;
    cg_gpu_mem_now(&m); /* the driver if this thread has a context, never creating one */
    *source = m.known ? "free_memory" : NULL;
    return cg_fallback_limit(m.known, m.known ? (size_t)m.free : 0);
}

static void why_limit(char *out, size_t cap, const char *head, size_t limit, const char *source)
{
    size_t n = cg_append_u(out, cap, cg_strlcpy(out, head, cap), limit);
    n = cg_append(out, cap, n, " bytes (");
    n = cg_append(out, cap, n,
                  source && strcmp(source, "free_memory") == 0 ? "free memory minus a margin"
                                                                : "CONVGUARD_WORKSPACE_LIMIT_MB");
    cg_append(out, cap, n, ")");
}

/* ---- Get*Algorithm_v7 succeeded: those over the limit go behind those that fit */
void cg_fb_v7(int hook, int slot, const void *real, cudnnHandle_t h, void *a1, void *a2,
              cudnnConvolutionDescriptor_t conv, void *a3, int requested, int *returned,
              cudnnConvolutionFwdAlgoPerf_t *perf)
{
    if (!cg_fallback_enabled() || !returned || !perf || requested < 1)
        return;
    int saved = errno;
    const char *src;
    size_t limit = limit_now(&src);
    int n = *returned < requested ? *returned : requested;
    if (limit == SIZE_MAX || n < 1) {
        errno = saved;
        return;
    }
    cudnnConvolutionFwdAlgoPerf_t first = perf[0];
    int retries = 0;
    if (requested < WIDE && cg_fallback_all_unusable(perf, n, limit)) {
        /* the program asked for fewer than cuDNN has and none of them fits:
         * ask for all of them, so an algorithm needing no workspace is
         * reachable (same function, same arguments, a wider list) */
        cudnnConvolutionFwdAlgoPerf_t wide[WIDE];
        int m = 0;
        memset(wide, 0, sizeof wide);
        retries = 1;
        if (((v7_fn)(void *)real)(h, a1, a2, conv, a3, WIDE, &m, wide) == CUDNN_STATUS_SUCCESS && m > n) {
            if (m > WIDE)
                m = WIDE;
            cg_fallback_order_algos(wide, m, limit);
            memcpy(perf, wide, (size_t)n * sizeof *perf);
        }
    } else {
        cg_fallback_order_algos(perf, n, limit);
    }
    if (perf[0].algo == first.algo && perf[0].memory == first.memory) {
        errno = saved;
        return;
    }
    char why[256];
    why_limit(why, sizeof why, "cuDNN's first choice needs more workspace than the limit of ", limit, src);
    struct cg_fallback_ev f = {"reorder_algos", cg_hooks[hook].name, first.memory, perf[0].memory, first.algo,
                               perf[0].algo, limit, src, retries, why, 0, NULL};
    (void)slot;
    cg_fallback_write(&f);
    errno = saved;
}

/* ---- Find*Algorithm failed for memory: answered from the filtered heuristics */
cudnnStatus_t cg_fb_find(int hook, int op, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *a1,
                         void *a2, cudnnConvolutionDescriptor_t conv, void *a3, int requested, int *returned,
                         cudnnConvolutionFwdAlgoPerf_t *perf)
{
    if (!cg_fallback_enabled() || !cg_fallback_mem_status(slot, r) || !returned || !perf || requested < 1)
        return r;
    int saved = errno;
    struct cg_cudnn_fns fns;
    cg_cudnn_fns(slot, real, &fns);
    char reason[1024];
    cg_cudnn_reason_take(&fns, reason, sizeof reason); /* the program may still read Find's reason */
    const char *src;
    size_t limit = limit_now(&src);
    cudnnConvolutionFwdAlgoPerf_t wide[WIDE];
    int m = 0;
    memset(wide, 0, sizeof wide);
    cudnnStatus_t r2 = fns.get_v7[op] ? ((v7_fn)fns.get_v7[op])(h, a1, a2, conv, a3, WIDE, &m, wide) : r;
    if (r2 != CUDNN_STATUS_SUCCESS || m < 1 || cg_fallback_all_unusable(wide, m > WIDE ? WIDE : m, limit)) {
        cg_cudnn_reason_drop(&fns);
        struct cg_fallback_ev f = {"heuristics_instead_of_find", cg_hooks[hook].name, 0, 0, -1, -1, limit, src,
                                   1, r2 != CUDNN_STATUS_SUCCESS ? "Find failed for memory; the heuristics failed too"
                                                                  : "Find failed for memory; no algorithm of the "
                                                                    "heuristics fits the limit",
                                   r, cg_cudnn_status_name(slot, r)};
        cg_fallback_write(&f);
        errno = saved;
        return r;
    }
    if (m > WIDE)
        m = WIDE;
    cg_fallback_order_algos(wide, m, limit);
    int k = m < requested ? m : requested;
    memcpy(perf, wide, (size_t)k * sizeof *perf);
    *returned = k;
    char why[256];
    why_limit(why, sizeof why, "Find could not get memory for its trials; the heuristics' algorithms, those within ",
              limit, src);
    size_t wl = strlen(why);
    cg_strlcpy(why + wl, " first", sizeof why - wl);
    struct cg_fallback_ev f = {"heuristics_instead_of_find", cg_hooks[hook].name, 0, perf[0].memory, -1,
                               perf[0].algo, limit, src, 1, why, 0, NULL};
    cg_fallback_write(&f);
    (void)reason;
    errno = saved;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- Find*AlgorithmEx failed, or all its results failed for memory: the
 * same buffer with half the size, down to zero */
static bool findex_ok(cudnnStatus_t r, int slot, const int *returned, const cudnnConvolutionFwdAlgoPerf_t *perf,
                      int requested)
{
    if (r != CUDNN_STATUS_SUCCESS)
        return false;
    int n = *returned < requested ? *returned : requested;
    return !cg_fallback_all_failed_for_memory(perf, n, slot);
}

cudnnStatus_t cg_fb_findex(int hook, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *d1,
                           const void *p1, void *d2, const void *p2, cudnnConvolutionDescriptor_t conv, void *d3,
                           void *p3, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf, void *ws,
                           size_t *ws_bytes)
{
    if (!cg_fallback_enabled() || !returned || !perf || requested < 1 || *ws_bytes == 0 ||
        findex_ok(r, slot, returned, perf, requested))
        return r;
    int saved = errno;
    struct cg_cudnn_fns fns;
    cg_cudnn_fns(slot, real, &fns);
    char reason[1024];
    cg_cudnn_reason_take(&fns, reason, sizeof reason);
    size_t asked = *ws_bytes, size = asked;
    cudnnStatus_t r0 = r;
    int retries = 0;
    while (size > 0) {
        size = size / 2 >= MIB ? size / 2 : 0;
        retries++;
        r = ((findex_fn)(void *)real)(h, d1, p1, d2, p2, conv, d3, p3, requested, returned, perf, ws, size);
        if (findex_ok(r, slot, returned, perf, requested))
            break;
    }
    if (!findex_ok(r, slot, returned, perf, requested))
        cg_cudnn_reason_take(&fns, reason, sizeof reason); /* the last retry's reason is the program's now */
    struct cg_fallback_ev f = {"smaller_workspace", cg_hooks[hook].name, asked, size, -1, -1, SIZE_MAX, NULL,
                               retries,
                               r0 != CUDNN_STATUS_SUCCESS ? "FindEx failed; retried with the workspace halved"
                                                          : "every algorithm FindEx tried failed for memory; "
                                                            "retried with the workspace halved",
                               r, r ? cg_cudnn_status_name(slot, r) : NULL};
    cg_fallback_write(&f);
    *ws_bytes = size;
    errno = saved;
    return r;
}

/* ---- an execution failed: for workspace?  Then an algorithm needing none.
 * Returns the algorithm to retry with, or -1. */
int cg_fb_exec_algo(int op, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *d1, void *d2,
                    cudnnConvolutionDescriptor_t conv, void *d3, int algo, const void *ws, size_t ws_bytes,
                    size_t *need)
{
    *need = 0;
    if (!cg_fallback_enabled())
        return -1;
    int saved = errno;
    struct cg_cudnn_fns fns;
    cg_cudnn_fns(slot, real, &fns);
    ws_fn wsz = (ws_fn)fns.ws_size[op];
    if (!wsz) {
        errno = saved;
        return -1;
    }
    char reason[1024];
    cg_cudnn_reason_take(&fns, reason, sizeof reason);
    size_t n = 0;
    bool have_need = wsz(h, d1, d2, conv, d3, algo, &n) == CUDNN_STATUS_SUCCESS;
    *need = have_need ? n : 0;
    bool for_workspace = cg_fallback_mem_status(slot, r) ||
                         (cg_fallback_bad_param(slot, r) && have_need && (n > ws_bytes || (n && !ws)));
    int pick = -1;
    for (int a = 0; for_workspace && a < algo_count[op] && pick < 0; a++) {
        size_t z = 1;
        if (a != algo && wsz(h, d1, d2, conv, d3, a, &z) == CUDNN_STATUS_SUCCESS && z == 0)
            pick = a;
    }
    cg_cudnn_reason_drop(&fns); /* what our own queries of unsupported algorithms left */
    errno = saved;
    return pick;
}

void cg_fb_exec_done(int hook, int slot, int algo_asked, size_t need, int algo_given, size_t ws_bytes,
                     cudnnStatus_t r_first, cudnnStatus_t r)
{
    char why[256];
    size_t k = cg_strlcpy(why, "the execution failed (", sizeof why);
    k = cg_append(why, sizeof why, k, cg_cudnn_status_name(slot, r_first));
    k = cg_append(why, sizeof why, k, ") for workspace: the algorithm needs ");
    k = cg_append_u(why, sizeof why, k, need);
    k = cg_append(why, sizeof why, k, " bytes, ");
    k = cg_append_u(why, sizeof why, k, ws_bytes);
    cg_append(why, sizeof why, k, " were given; retried once with an algorithm needing none");
    struct cg_fallback_ev f = {"other_algorithm", cg_hooks[hook].name, need, 0, algo_asked, algo_given, SIZE_MAX,
                               NULL, 1, why, r, r ? cg_cudnn_status_name(slot, r) : NULL};
    cg_fallback_write(&f);
}

/* ---- graph API: a finalized plan over CONVGUARD_WORKSPACE_LIMIT_MB is refused */
bool cg_fb_plan_refused(int slot, const void *real, cudnnBackendDescriptor_t plan)
{
    if (!cg_fallback_enabled() || cg_cfg.workspace_limit_mb < 0)
        return false;
    int saved = errno;
    struct cg_cudnn_fns fns;
    cg_cudnn_fns(slot, real, &fns);
    typedef cudnnStatus_t (*get_fn)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                    cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
    get_fn get = (get_fn)fns.backend_get;
    int64_t ws = -1, n = 0;
    if (!get || get(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws) != 0 || n < 1 ||
        ws < 0) {
        cg_cudnn_reason_drop(&fns);
        errno = saved;
        return false;
    }
    size_t limit = cg_fallback_limit(false, 0);
    if ((uint64_t)ws <= limit) {
        errno = saved;
        return false;
    }
    cudnnStatus_t ns = slot == CG_SLOT_CUDNN8 ? CUDNN8_STATUS_NOT_SUPPORTED : CUDNN_STATUS_NOT_SUPPORTED;
    char why[256];
    why_limit(why, sizeof why, "the plan's workspace is above the limit of ", limit, "CONVGUARD_WORKSPACE_LIMIT_MB");
    size_t k = strlen(why);
    k = cg_append(why, sizeof why, k, "; Finalize answered ");
    k = cg_append(why, sizeof why, k, cg_cudnn_status_name(slot, ns));
    cg_append(why, sizeof why, k, " so the framework tries its next plan");
    struct cg_fallback_ev f = {"plan_refused", "cudnnBackendFinalize", (unsigned long long)ws, 0, -1, -1, limit,
                               "CONVGUARD_WORKSPACE_LIMIT_MB", 0, why, 0, NULL};
    cg_fallback_write(&f);
    errno = saved;
    return true;
}
