/* fallback.h - the fallback layer (fallback/README.md): the fallback policy
 * (CONVGUARD_FALLBACK=1), how much workspace a call may have, which
 * algorithms come first, the reserve, and the `fallback` events.  Pure
 * functions of their inputs; the wrappers of cuda/gpumem.c,
 * cudnn/fallback_cudnn.c and graph/cudnn_graph.c apply them.  Includes only
 * the core's header. */
#ifndef CONVGUARD_FALLBACK_H
#define CONVGUARD_FALLBACK_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* CONVGUARD_FALLBACK=1 was given (and the shim is tracing) */
bool cg_fallback_enabled(void);

/* The workspace limit for a call, in bytes: CONVGUARD_WORKSPACE_LIMIT_MB when
 * set; else, when free GPU memory is known (free_known), free memory minus a
 * margin (max(64 MiB, 1/16 of free)) so the workspace leaves room for others;
 * else SIZE_MAX (no limit can be justified). */
size_t cg_fallback_limit(bool free_known, size_t free_bytes);

/* Stable partition of cuDNN's perf results: entries that succeeded and need
 * at most `limit` bytes first, in cuDNN's order, then the rest in theirs.
 * Returns how many entries changed position (0: order untouched). */
int cg_fallback_order_algos(cudnnConvolutionFwdAlgoPerf_t *perf, int n, size_t limit);

/* true when every entry failed, or every successful one needs more than
 * `limit` bytes (the seeds' signature) */
bool cg_fallback_all_unusable(const cudnnConvolutionFwdAlgoPerf_t *perf, int n, size_t limit);

/* Free memory reported to the program under CONVGUARD_RESERVE_MB. */
size_t cg_fallback_reserved_free(size_t free_bytes);

/* true when every one of n entries failed for memory (mem_status) */
bool cg_fallback_all_failed_for_memory(const cudnnConvolutionFwdAlgoPerf_t *perf, int n, int slot);
/* cuDNN statuses that mean "no memory": cuDNN 9 INTERNAL_ERROR_HOST_ALLOCATION_FAILED (4003, the old
 * ALLOC_FAILED) and _DEVICE_ALLOCATION_FAILED (4004); cuDNN 8 ALLOC_FAILED (2).  slot: CG_SLOT_CUDNN8 or 9. */
bool cg_fallback_mem_status(int slot, int status);
/* BAD_PARAM of either numbering (cuDNN 9: 2000..2999; cuDNN 8: 3) */
bool cg_fallback_bad_param(int slot, int status);

/* One `fallback` event.  asked/given are bytes (a workspace, or free
 * memory); the algorithm fields are -1 when no algorithm changed; limit is
 * SIZE_MAX when none applied (written as null). */
struct cg_fallback_ev {
    const char *action;       /* reorder_algos, smaller_workspace, heuristics_instead_of_find,
                                 other_algorithm, plan_refused, reserve_headroom, reserve_exhausted */
    const char *fn;           /* the program's call */
    unsigned long long asked, given;
    long long algo_asked, algo_given;
    size_t limit;
    const char *limit_source; /* CONVGUARD_WORKSPACE_LIMIT_MB, free_memory, CONVGUARD_RESERVE_MB, NULL */
    int retries;              /* extra calls the fallback made (0: none) */
    const char *why;
    long long outcome;        /* 0: ok, else the status the program got */
    const char *outcome_name; /* the status's name, NULL when 0 */
};
void cg_fallback_write(const struct cg_fallback_ev *f);
uint64_t cg_fallback_count(void); /* fallback events written: the exit event's `fallbacks` */

/* ---- gpumem.c / cudnn.c: CONVGUARD_RESERVE_MB */
/* a memory query's free and total bytes (total may be NULL), under-reported
 * by the reserve (writes the first reserve_headroom event; later ones are counted) */
void cg_fallback_reserve_report(const char *fn, size_t *free_bytes, size_t *total_bytes);
uint64_t cg_fallback_reserve_reports(void);
/* a cuDNN handle or a cuDNN allocation failed for memory although the reserve was kept */
void cg_fallback_reserve_exhausted(const char *fn, unsigned long long bytes, long long status, const char *status_name);
#endif
