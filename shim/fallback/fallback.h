/* fallback.h - the fallback policy (CONVGUARD_FALLBACK=1): how much workspace
 * a call may have, and which algorithms come first.  Pure functions of their
 * inputs; the wrappers in cudnn.c, cudnn_graph.c and gpumem.c apply them and
 * write the `fallback` events. */
#ifndef CONVGUARD_FALLBACK_H
#define CONVGUARD_FALLBACK_H

#include <stddef.h>
#include <stdint.h>

#include "cg.h"

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
/* the short form (no algorithms, no limit) */
void cg_fallback_event(const char *action, const char *fn, unsigned long long asked, unsigned long long given,
                       const char *why, long long outcome);
uint64_t cg_fallback_count(void); /* fallback events written: the exit event's `fallbacks` */

/* ---- fallback_cudnn.c: applied by the cuDNN wrappers (cudnn.c,
 * cudnn_graph.c) on their rare paths, each a no-op unless enabled.  slot:
 * CG_SLOT_CUDNN9/8; real: the wrapped function; op: enum cg_conv_op.
 * Descriptor arguments in the order of the op's own prototype. */
/* the limit now: CONVGUARD_WORKSPACE_LIMIT_MB, else free memory minus the
 * margin; *source names which (NULL, and SIZE_MAX returned: neither known) */
size_t cg_fallback_limit_now(const char **source);
void cg_fb_v7(int hook, int slot, const void *real, cudnnHandle_t h, void *a1, void *a2,
              cudnnConvolutionDescriptor_t conv, void *a3, int requested, int *returned,
              cudnnConvolutionFwdAlgoPerf_t *perf);
cudnnStatus_t cg_fb_find(int hook, int op, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *a1,
                         void *a2, cudnnConvolutionDescriptor_t conv, void *a3, int requested, int *returned,
                         cudnnConvolutionFwdAlgoPerf_t *perf);
/* *ws_bytes becomes the size of the last try */
cudnnStatus_t cg_fb_findex(int hook, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *d1,
                           const void *p1, void *d2, const void *p2, cudnnConvolutionDescriptor_t conv, void *d3,
                           void *p3, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf, void *ws,
                           size_t *ws_bytes);
int cg_fb_exec_algo(int op, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *d1, void *d2,
                    cudnnConvolutionDescriptor_t conv, void *d3, int algo, const void *ws, size_t ws_bytes,
                    size_t *need);
void cg_fb_exec_done(int hook, int slot, int algo_asked, size_t need, int algo_given, size_t ws_bytes,
                     cudnnStatus_t r_first, cudnnStatus_t r);
/* true: the program gets NOT_SUPPORTED from this (successful) Finalize */
bool cg_fb_plan_refused(int slot, const void *real, cudnnBackendDescriptor_t plan);

/* ---- gpumem.c / cudnn.c: CONVGUARD_RESERVE_MB */
/* a memory query's free and total bytes (total may be NULL), under-reported
 * by the reserve (writes the first reserve_headroom event; later ones are counted) */
void cg_fb_reserve_report(const char *fn, size_t *free_bytes, size_t *total_bytes);
uint64_t cg_fb_reserve_reports(void);
/* a cuDNN handle or a cuDNN allocation failed for memory although the reserve was kept */
void cg_fb_reserve_exhausted(const char *fn, unsigned long long bytes, long long status, const char *status_name);
#endif
