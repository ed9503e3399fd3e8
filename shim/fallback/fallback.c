/* fallback.c - the fallback policy (see fallback.h).  Nothing here runs
 * unless CONVGUARD_FALLBACK=1. */
#include <errno.h>
#include <string.h>

#include "fallback/fallback.h"

#define MIB (1024ull * 1024ull)

static _Atomic uint64_t fallbacks;

bool cg_fallback_enabled(void)
{
    /* no trace folder, no fallback: what it does must be on record */
    return cg_cfg.fallback && atomic_load_explicit(&cg.traced, memory_order_relaxed) && !cg_trace_refused();
}

size_t cg_fallback_limit(bool free_known, size_t free_bytes)
{
    if (cg_cfg.workspace_limit_mb >= 0)
        return (size_t)cg_cfg.workspace_limit_mb * MIB;
    if (!free_known)
        return SIZE_MAX;
    size_t margin = free_bytes / 16 > 64 * MIB ? free_bytes / 16 : 64 * MIB;
    return free_bytes > margin ? free_bytes - margin : 0;
}

static bool usable(const cudnnConvolutionFwdAlgoPerf_t *p, size_t limit)
{
    return p->status == CUDNN_STATUS_SUCCESS && p->memory <= limit;
}

int cg_fallback_order_algos(cudnnConvolutionFwdAlgoPerf_t *perf, int n, size_t limit)
{
    if (n <= 1)
        return 0;
    cudnnConvolutionFwdAlgoPerf_t tmp[64];
    if (n > 64)
        n = 64;
    int k = 0, moved = 0;
    for (int i = 0; i < n; i++)
        if (usable(&perf[i], limit))
            tmp[k++] = perf[i];
    for (int i = 0; i < n; i++)
        if (!usable(&perf[i], limit))
            tmp[k++] = perf[i];
    for (int i = 0; i < n; i++)
        moved += tmp[i].algo != perf[i].algo || tmp[i].memory != perf[i].memory;
    memcpy(perf, tmp, (size_t)n * sizeof *perf);
    return moved;
}

bool cg_fallback_all_unusable(const cudnnConvolutionFwdAlgoPerf_t *perf, int n, size_t limit)
{
    for (int i = 0; i < n; i++)
        if (usable(&perf[i], limit))
            return false;
    return true;
}

size_t cg_fallback_reserved_free(size_t free_bytes)
{
    size_t r = (size_t)cg_cfg.reserve_mb * MIB;
    return free_bytes > r ? free_bytes - r : 0;
}

bool cg_fallback_mem_status(int slot, int status)
{
    return slot == CG_SLOT_CUDNN8 ? status == 2 : status == 4003 || status == 4004;
}

bool cg_fallback_bad_param(int slot, int status)
{
    return slot == CG_SLOT_CUDNN8 ? status == 3 : status / 1000 == 2;
}

bool cg_fallback_all_failed_for_memory(const cudnnConvolutionFwdAlgoPerf_t *perf, int n, int slot)
{
    if (n < 1)
        return false;
    for (int i = 0; i < n; i++)
        if (!cg_fallback_mem_status(slot, perf[i].status))
            return false;
    return true;
}

void cg_fallback_write(const struct cg_fallback_ev *f)
{
    int saved = errno;
    atomic_fetch_add_explicit(&fallbacks, 1, memory_order_relaxed);
    char b[2048];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "fallback");
    cg_ev_str(&e, "action", f->action);
    cg_ev_str(&e, "fn", f->fn);
    cg_ev_u64(&e, "asked", f->asked);
    cg_ev_u64(&e, "given", f->given);
    if (f->algo_asked >= 0 || f->algo_given >= 0) {
        cg_ev_i64(&e, "algo_asked", f->algo_asked);
        cg_ev_i64(&e, "algo_given", f->algo_given);
    }
    if (f->limit != SIZE_MAX)
        cg_ev_u64(&e, "limit", f->limit);
    else
        cg_ev_raw(&e, "limit", "null");
    cg_ev_str(&e, "limit_source", f->limit_source);
    cg_ev_i64(&e, "retries", f->retries);
    cg_ev_str(&e, "why", f->why);
    if (f->outcome == 0) {
        cg_ev_str(&e, "outcome", "ok");
    } else {
        cg_ev_i64(&e, "outcome", f->outcome);
        cg_ev_str(&e, "outcome_name", f->outcome_name);
    }
    cg_ev_end(&e);
    errno = saved;
}

uint64_t cg_fallback_count(void) { return atomic_load(&fallbacks); }

/* ---- CONVGUARD_RESERVE_MB.  Frameworks that take "all" GPU memory size
 * their pool from what the driver tells them: XLA (JAX) preallocates
 * XLA_PYTHON_CLIENT_MEM_FRACTION of the TOTAL memory in current versions
 * (xla/pjrt/gpu/gpu_helpers.cc: allocator_memory = total_memory *
 * memory_fraction) and of the FREE memory in older ones; TensorFlow's BFC
 * allocator sizes itself from free memory, or from total with
 * per_process_gpu_memory_fraction.  Reporting both free and total N MiB
 * lower (used = total - free unchanged) keeps at least N * fraction MiB
 * outside their pool, for cuDNN's handle and workspaces, which come from
 * the driver.  Chosen over holding a reserve allocation ourselves and
 * releasing it when cuDNN fails for memory: that needs a context the shim
 * would have to create or borrow (the shim never creates one), a failure
 * seen before it is returned (cuDNN often fails inside, with no allocation
 * routed through us), and a retry of a call that may have side effects;
 * under-reporting changes two numbers the program reads and nothing else. */
static _Atomic uint64_t reserve_reports;

void cg_fallback_reserve_report(const char *fn, size_t *free_bytes, size_t *total_bytes)
{
    if (!cg_fallback_enabled() || cg_cfg.reserve_mb <= 0 || !free_bytes)
        return;
    size_t real_free = *free_bytes;
    *free_bytes = cg_fallback_reserved_free(real_free);
    if (total_bytes) /* never below what is reported free */
        *total_bytes = cg_fallback_reserved_free(*total_bytes) > *free_bytes ? cg_fallback_reserved_free(*total_bytes)
                                                                             : *free_bytes;
    if (atomic_fetch_add_explicit(&reserve_reports, 1, memory_order_relaxed) != 0)
        return; /* one event; every later query is counted (exit: fallback_reserve_reports) */
    char why[256];
    size_t k = cg_strlcpy(why, "CONVGUARD_RESERVE_MB=", sizeof why);
    k = cg_append_u(why, sizeof why, k, (unsigned long long)cg_cfg.reserve_mb);
    cg_append(why, sizeof why, k,
              ": free and total memory reported less the reserve, so allocators that size "
              "themselves from them leave room for cuDNN");
    struct cg_fallback_ev f = {"reserve_headroom", fn, real_free, *free_bytes, -1, -1,
                               (size_t)cg_cfg.reserve_mb * MIB, "CONVGUARD_RESERVE_MB", 0, why, 0, NULL};
    cg_fallback_write(&f);
}

uint64_t cg_fallback_reserve_reports(void) { return atomic_load(&reserve_reports); }

void cg_fallback_reserve_exhausted(const char *fn, unsigned long long bytes, long long status, const char *status_name)
{
    if (!cg_fallback_enabled() || cg_cfg.reserve_mb <= 0)
        return;
    struct cg_fallback_ev f = {"reserve_exhausted", fn, bytes, 0, -1, -1, (size_t)cg_cfg.reserve_mb * MIB,
                               "CONVGUARD_RESERVE_MB", 0,
                               atomic_load(&reserve_reports)
                                   ? "failed for memory although free memory was under-reported by the reserve: "
                                     "the reserve was too small, or memory was taken by something that does not "
                                     "size itself from free memory"
                                   : "failed for memory; the reserve never acted (no memory query was made "
                                     "before): the memory was not taken by a framework sizing itself from free "
                                     "memory",
                               status, status_name};
    cg_fallback_write(&f);
}
