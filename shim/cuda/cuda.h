/* cuda.h - the cuda layer (cuda/README.md): the CUDA driver and runtime.
 * What the GPU looks like at a failure (gpuinfo.c, devnodes.c), the process's
 * GPU memory on every route (gpumem.c), what a code image holds and its loads
 * (codeimage.c, codeload.c), the driver's own log (drvlog.c).  Includes only
 * the headers of the layers below: loader/, fallback/ (and core/). */
#ifndef CONVGUARD_CUDA_H
#define CONVGUARD_CUDA_H

#include "fallback/fallback.h"
#include "loader/loader.h"

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

/* ---- codeimage.c: what a GPU code image holds, for the load calls (codeload.c)
 * and the driver's log (drvlog.c) */
enum cg_code_format { CG_CODE_UNKNOWN, CG_CODE_FATBIN, CG_CODE_CUBIN, CG_CODE_PTX_TEXT };
enum { CG_CODE_SASS = 1, CG_CODE_PTX = 2 };
#define CG_CODE_ENTRIES 16
struct cg_code_entry {
    unsigned char kind;             /* CG_CODE_SASS or CG_CODE_PTX */
    unsigned short arch;            /* 80: sm_80 / compute_80; 0 unknown */
    unsigned char isa_major, isa_minor; /* PTX ISA version (PTX only) */
};
struct cg_code_desc {
    int format;                     /* enum cg_code_format */
    int n, more;                    /* distinct entries kept, and beyond CG_CODE_ENTRIES */
    struct cg_code_entry e[CG_CODE_ENTRIES];
};
/* Reads the image's headers (fatbinary, its cudart wrapper, cubin, PTX text). */
void cg_code_describe(const void *image, struct cg_code_desc *d);
/* 1: something in it runs on a GPU of this compute capability, 0: nothing
 * does, -1: unknown (capability or contents not known). */
int cg_code_fits(const struct cg_code_desc *d, int cc_major, int cc_minor);
/* "key":{"format","sass":["sm_80"],"ptx":[{"arch","isa"}],"device":"9.0","fits_device"} */
void cg_ev_code_desc(struct cg_ev *e, const char *key, const struct cg_code_desc *d, int cc_major, int cc_minor);

/* ---- codeload.c: module and library loads.  Images that loaded but hold nothing this GPU can run (lazy
 * loading fails later, at a kernel lookup or launch): "code_no_fit":[...]
 * into an event (the driver's 209), without calling the driver. */
void cg_codeload_ev_no_fit(struct cg_ev *e);
void cg_codeload_exit(struct cg_ev *e);     /* exit: "code_images":{...} when any was loaded */
void cg_codeload_after_fork(void);

/* ---- cuda/gpuinfo.c: > 0 while the shim itself calls the driver on this thread:
 * the messages those calls cause are counted, not written (drvlog.c) */
extern __thread int cg_drvlog_mute;
/* ---- cuda/drvlog.c: the CUDA driver's own error messages (cuLogsRegisterCallback) */
/* When a libcuda.so.1 is recorded (libs.c calls it through the pointer the
 * lifecycle hands cg_libs_init): registers the callback with that copy;
 * returns its lib event's "driver_log" ("registered", "unavailable", ...) */
const char *cg_drvlog_on_load(const struct cg_obj *o);
void cg_drvlog_exit(struct cg_ev *e); /* exit: "driver_log":{messages, written, not_written, own} */
void cg_drvlog_after_fork(void);
#endif
