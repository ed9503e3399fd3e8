/* gpuinfo.h - the resource layer's internal interface: what the GPU looks
 * like at a failure (gpuinfo.c), the process's GPU memory accounting
 * (gpumem.c), and the names of CUDA / cuDNN status codes (status.c, from status.def). */
#ifndef CONVGUARD_GPUINFO_H
#define CONVGUARD_GPUINFO_H

#include "cg.h"

/* ---- gpuinfo.c: GPU memory, devices and holders, read without side effects.
 * Memory comes from the driver only when the calling thread already has a
 * current context; otherwise from NVML, loaded on the first failure that
 * needs it; otherwise it is unknown.  Nothing here creates a context or
 * initialises the driver. */
struct cg_gpu_mem {
    bool known;
    unsigned long long free, total;
    const char *source; /* "driver", "nvml", "unknown" */
};
void cg_gpu_mem_now(struct cg_gpu_mem *m);
/* Appends "key":{"free":..,"total":..,"source":..} (free/total null when unknown). */
void cg_ev_gpu_mem(struct cg_ev *e, const char *key, const struct cg_gpu_mem *m);

#define CG_MAX_HOLDERS 16
struct cg_gpu_holder {
    unsigned pid;
    unsigned long long bytes; /* ~0ull: NVML could not say */
    char name[32];            /* /proc/<pid>/comm, "" when not visible */
};
/* What a failure report needs beyond memory: collected before the event is
 * begun (collecting may load NVML, which writes a `lib` event). */
struct cg_gpu_state {
    struct cg_gpu_mem mem;
    const char *driver;     /* "not_loaded", "not_initialized", "no_device", "loaded" */
    int driver_status;      /* cuDeviceGetCount's CUresult, -1 when not asked */
    int device_count;       /* -1: unknown */
    int cc_major, cc_minor; /* compute capability, -1: unknown */
    char nvml[160];         /* "ok", or why NVML could not answer */
    char nvml_device[80];   /* how NVML's device was chosen: "pci:...", "index:N", "uuid:..." */
    int nholders;           /* -1: unknown (NVML absent) */
    struct cg_gpu_holder holders[CG_MAX_HOLDERS];
    unsigned long long others_bytes; /* held by processes other than this one */
};
/* want_holders: ask NVML for the process list (loads NVML if needed). */
void cg_gpu_state_now(struct cg_gpu_state *s, bool want_holders);
/* device_count, driver, driver_status, compute_capability */
void cg_ev_gpu_devices(struct cg_ev *e, const struct cg_gpu_state *s);
/* holders:[{pid,name,bytes,self?}], nvml, nvml_device */
void cg_ev_gpu_holders(struct cg_ev *e, const struct cg_gpu_state *s);
/* The holder that is not this process and holds the most, NULL if none. */
const struct cg_gpu_holder *cg_gpu_top_other(const struct cg_gpu_state *s);

/* The GPUs NVML lists (index, UUID, MIG instances' UUIDs), to check
 * CUDA_VISIBLE_DEVICES against; collected before the event is begun. */
#define CG_MAX_GPUS 16
#define CG_MAX_MIG 7
struct cg_gpu_entry {
    char uuid[48];
    int nmig;
    char mig[CG_MAX_MIG][48];
};
struct cg_gpu_list {
    int count; /* NVML's device count, -1: unknown */
    int n;     /* entries filled (count, at most CG_MAX_GPUS) */
    char nvml[160];
    struct cg_gpu_entry gpu[CG_MAX_GPUS];
};
void cg_gpu_list_now(struct cg_gpu_list *l);
/* "nvml_gpus":{count, nvml, gpus:[{index, uuid, mig?}]} */
void cg_ev_gpu_list(struct cg_ev *e, const struct cg_gpu_list *l);

/* ---- devnodes.c: "dev_nodes":[{path, exists, type, mode, uid, owner, gid,
 * group, access}], "creds":{euid, egid, groups}: the NVIDIA device files and
 * who this process is, never opening them (devnodes.c says why). */
void cg_ev_dev_nodes(struct cg_ev *e);

/* Status names.  cuDNN 8 and 9 number their statuses differently: the slot
 * says which numbering applies. */
const char *cg_cudnn_status_name(int slot, int status);
const char *cg_cuda_error_name(int err);  /* cudaError_t */
const char *cg_cu_result_name(int res);   /* CUresult */

/* ---- gpumem.c: live bytes, largest allocation and failures on every route */
enum cg_route { CG_ROUTE_PLT, CG_ROUTE_DLSYM, CG_ROUTE_ENTRY_POINT };
/* routes.c tells which hook's entry it handed out, to whom, by which route. */
void cg_gpumem_route_note(int hook, const void *caller, enum cg_route route);
/* The last allocation failure: its alloc_failed seq (has_seq false when the
 * event was not written), what it asked, and whether any allocation has
 * succeeded since. */
struct cg_alloc_failure {
    bool has_seq;
    uint64_t seq;
    const char *fn;
    unsigned long long bytes;
    int status;
    bool success_since;
};
bool cg_gpumem_last_failure(struct cg_alloc_failure *out);
uint64_t cg_gpumem_failures(void); /* allocation failures so far */
/* exit: "gpu_mem":{live, allocs, frees, largest_ok, alloc_failures, ...} */
void cg_gpumem_exit(struct cg_ev *e);
void cg_gpumem_after_fork(void); /* a forked child: its own counts */

#endif
