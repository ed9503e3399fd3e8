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

/* fallback events, counted for the exit event */
void cg_fallback_event(const char *action, const char *fn, unsigned long long asked, unsigned long long given,
                       const char *why, long long outcome);
uint64_t cg_fallback_count(void);
#endif
