/* gpuinfo.h - INTERIM SUBSET of branch `res`'s shim/gpuinfo.h (same names,
 * same meaning), so that the graph layer is written against the resource
 * layer's interface before that branch is merged.  When merging `res`: take
 * res's gpuinfo.h and gpuinfo.c whole (they are a superset: NVML, holders,
 * devices, CUDA error names) and drop these. */
#ifndef CONVGUARD_GPUINFO_H
#define CONVGUARD_GPUINFO_H

#include "cg.h"

/* GPU memory at a failure, read without side effects: from the driver only
 * when the calling thread already has a current context (the interim has no
 * NVML fallback); never creates a context or initialises the driver. */
struct cg_gpu_mem {
    bool known;
    unsigned long long free, total;
    const char *source; /* "driver", "nvml", "unknown" */
};
void cg_gpu_mem_now(struct cg_gpu_mem *m);
/* Appends "key":{"free":..,"total":..,"source":..} (free/total null when unknown). */
void cg_ev_gpu_mem(struct cg_ev *e, const char *key, const struct cg_gpu_mem *m);

/* Status names.  cuDNN 8 and 9 number their statuses differently: the slot
 * says which numbering applies. */
const char *cg_cudnn_status_name(int slot, int status);
#endif
