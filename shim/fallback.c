/* fallback.c - the fallback policy (see fallback.h).  Nothing here runs
 * unless CONVGUARD_FALLBACK=1. */
#include <string.h>

#include "cg.h"
#include "fallback.h"

#define MIB (1024ull * 1024ull)

static _Atomic uint64_t fallbacks;

bool cg_fallback_enabled(void)
{
    return cg_cfg.fallback && atomic_load_explicit(&cg.traced, memory_order_relaxed);
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

void cg_fallback_event(const char *action, const char *fn, unsigned long long asked, unsigned long long given,
                       const char *why, long long outcome)
{
    atomic_fetch_add_explicit(&fallbacks, 1, memory_order_relaxed);
    char b[2048];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "fallback");
    cg_ev_str(&e, "action", action);
    cg_ev_str(&e, "fn", fn);
    cg_ev_u64(&e, "asked", asked);
    cg_ev_u64(&e, "given", given);
    cg_ev_str(&e, "why", why);
    if (outcome == 0)
        cg_ev_str(&e, "outcome", "ok");
    else
        cg_ev_i64(&e, "outcome", outcome);
    cg_ev_end(&e);
}

uint64_t cg_fallback_count(void) { return atomic_load(&fallbacks); }
