/* gpuinfo.c - what the GPU looks like when something failed: free and total
 * memory, device count, driver state, compute capability, the processes
 * holding memory (status names: status.c).
 *
 * The program's view must not change, so:
 *  - the driver is asked only through the REAL functions of the libcuda.so.1
 *    already mapped (its own symbol table, never our entries, never dlsym),
 *    and asked for memory only when cuCtxGetCurrent says the calling thread
 *    already has a current context: no context is created, the driver is
 *    never initialised by us;
 *  - otherwise NVML answers: libnvidia-ml.so.1 is loaded on the first
 *    failure that needs it (never on a success path), with the dlerror()
 *    state the program had kept for it;
 *  - otherwise memory is "unknown".
 * Everything here runs on failure paths or rare events only. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda.h"

#ifndef CUDA_ERROR_DEINITIALIZED
#define CUDA_ERROR_DEINITIALIZED 4
#endif

/* ---- the driver, when libcuda.so.1 is mapped */
struct drv {
    CUresult (*get_cur)(CUcontext *);
    CUresult (*get_dev)(CUdevice *);
    CUresult (*mem_info)(size_t *, size_t *);
    CUresult (*count)(int *);
    CUresult (*attr)(int *, CUdevice_attribute, CUdevice);
    CUresult (*pci)(char *, int, CUdevice);
};

struct find_so {
    const char *soname;
    const void *inside; /* prefer the copy that holds this address */
    struct cg_obj obj;
    int found;
};

static int find_so_cb(const struct cg_obj *o, void *p)
{
    struct find_so *f = p;
    const char *so = o->dyn ? cg_elf_soname(o) : NULL;
    if (!so || strcmp(so, f->soname) != 0)
        return 0;
    if (!f->found || ((uintptr_t)f->inside >= o->start && (uintptr_t)f->inside < o->end))
        f->obj = *o;
    f->found++;
    return 0;
}

/* The real driver functions of the libcuda.so.1 the driver slot wraps. */
static bool drv_find(struct drv *d)
{
    memset(d, 0, sizeof *d);
    void *mem_info = atomic_load_explicit(&cg_real[CG_SLOT_DRV][CG_H_cuMemGetInfo_v2], memory_order_acquire);
    struct find_so f = {.soname = "libcuda.so.1", .inside = mem_info};
    cg_elf_each_obj(find_so_cb, &f);
    if (!f.found)
        return false;
    d->get_cur = (CUresult(*)(CUcontext *))cg_elf_sym(&f.obj, "cuCtxGetCurrent", NULL);
    d->get_dev = (CUresult(*)(CUdevice *))cg_elf_sym(&f.obj, "cuCtxGetDevice", NULL);
    d->mem_info = mem_info ? (CUresult(*)(size_t *, size_t *))mem_info
                           : (CUresult(*)(size_t *, size_t *))cg_elf_sym(&f.obj, "cuMemGetInfo_v2", NULL);
    d->count = (CUresult(*)(int *))cg_elf_sym(&f.obj, "cuDeviceGetCount", NULL);
    d->attr = (CUresult(*)(int *, CUdevice_attribute, CUdevice))cg_elf_sym(&f.obj, "cuDeviceGetAttribute", NULL);
    d->pci = (CUresult(*)(char *, int, CUdevice))cg_elf_sym(&f.obj, "cuDeviceGetPCIBusId", NULL);
    return true;
}

/* The device of the calling thread's current context, -1 when there is none. */
static int drv_current_device(const struct drv *d)
{
    CUcontext c = NULL;
    CUdevice dev = -1;
    if (!d->get_cur || d->get_cur(&c) != CUDA_SUCCESS || !c)
        return -1;
    if (!d->get_dev || d->get_dev(&dev) != CUDA_SUCCESS)
        return -1;
    return dev;
}

static bool drv_mem(const struct drv *d, struct cg_gpu_mem *m)
{
    CUcontext c = NULL;
    size_t f = 0, t = 0;
    if (!d->get_cur || !d->mem_info || d->get_cur(&c) != CUDA_SUCCESS || !c)
        return false;
    if (d->mem_info(&f, &t) != CUDA_SUCCESS)
        return false;
    m->known = true;
    m->free = f;
    m->total = t;
    m->source = "driver";
    return true;
}

/* ---- NVML, loaded on the first failure that needs it */
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ull)
static struct {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *);
    nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
    nvmlReturn_t (*cc)(nvmlDevice_t, int *, int *);
    const char *(*err)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned *);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*mig_max)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*mig_by_index)(nvmlDevice_t, unsigned, nvmlDevice_t *);
} nv;
static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;
CG_FORK_REINIT(nvml_lock);
static int nvml_state; /* 0 not tried, 1 ready, -1 unusable (nvml_why says why) */
/* > 0 while the shim itself calls the driver on this thread (drvlog.c counts,
 * and does not write, what the driver logs meanwhile).  Here, with the lowest
 * of the files that raise it, so that the driver's log depends on them and
 * not they on it. */
__thread int cg_drvlog_mute;

static char nvml_why[160];

static void nvml_fail(const char *what, const char *detail)
{
    size_t n = cg_strlcpy(nvml_why, what, sizeof nvml_why);
    if (detail)
        cg_append(nvml_why, sizeof nvml_why, n, detail);
    nvml_state = -1;
}

static void nvml_load_locked(void)
{
    /* A dlopen from here would drop (on failure: replace) an error text the
     * program has not read yet: take it first and hand it back after. */
    char kept[1024];
    int kept_code, code;
    const char *prev = cg_dlerror_read(&kept_code);
    if (prev)
        cg_strlcpy(kept, prev, sizeof kept);
    void *h = cg_dl.dlopen ? cg_dl.dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        const char *err = cg_dlerror_read(&code);
        nvml_fail("libnvidia-ml.so.1 not loadable: ", err ? err : "dlopen failed");
    }
    if (prev)
        cg_dlerror_keep(kept, kept_code); /* the program's next dlerror() gets it back */
    if (!h)
        return;
    cg_objsnap_refresh();
    cg_libs_scan_opened("(convguard: NVML, for a failure report)", ((struct link_map *)h)->l_ld);
    struct cg_obj o;
    if (!cg_objsnap_find_obj(((struct link_map *)h)->l_ld, &o)) {
        nvml_fail("libnvidia-ml.so.1 loaded but not found in the link map", NULL);
        return;
    }
#define NVSYM(field, name) nv.field = (__typeof__(nv.field))cg_elf_sym(&o, name, NULL)
    NVSYM(init, "nvmlInit_v2");
    NVSYM(by_index, "nvmlDeviceGetHandleByIndex_v2");
    NVSYM(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    NVSYM(by_uuid, "nvmlDeviceGetHandleByUUID");
    NVSYM(mem, "nvmlDeviceGetMemoryInfo");
    NVSYM(procs, "nvmlDeviceGetComputeRunningProcesses_v3");
    NVSYM(cc, "nvmlDeviceGetCudaComputeCapability");
    NVSYM(err, "nvmlErrorString");
    NVSYM(count, "nvmlDeviceGetCount_v2");
    NVSYM(uuid, "nvmlDeviceGetUUID");
    NVSYM(mig_max, "nvmlDeviceGetMaxMigDeviceCount");
    NVSYM(mig_by_index, "nvmlDeviceGetMigDeviceHandleByIndex");
#undef NVSYM
    if (!nv.init || !nv.by_index || !nv.mem) {
        nvml_fail("libnvidia-ml.so.1 lacks nvmlInit_v2 / nvmlDeviceGetHandleByIndex_v2 / nvmlDeviceGetMemoryInfo", NULL);
        return;
    }
    /* Initialised once and left so: NVML counts its users, and shutting it
     * down after each failure would make every report pay its start. */
    nvmlReturn_t r = nv.init();
    if (r != NVML_SUCCESS) {
        char num[24];
        num[cg_utoa(num, (unsigned)r)] = 0;
        nvml_fail("nvmlInit_v2 failed: ", nv.err ? nv.err(r) : num);
        return;
    }
    nvml_state = 1;
}

/* NVML ready?  may_load: this is a failure that may load it. */
static bool nvml_ready(bool may_load)
{
    if (nvml_state == 0 && may_load)
        nvml_load_locked();
    if (nvml_state == 0)
        cg_strlcpy(nvml_why, "not loaded (no failure needed it yet)", sizeof nvml_why);
    return nvml_state == 1;
}

/* NVML's handle of the device this thread works on.  NVML numbers devices
 * in PCI order and ignores CUDA_VISIBLE_DEVICES: the PCI bus id of the
 * current context's device is exact; without a context the first entry of
 * CUDA_VISIBLE_DEVICES (an index or a UUID) is the best guess; else 0. */
static bool nvml_device(const struct drv *d, bool have_drv, nvmlDevice_t *dev, char *how, size_t cap)
{
    int cdev = have_drv ? drv_current_device(d) : -1;
    char bus[64];
    if (cdev >= 0 && d->pci && nv.by_pci && d->pci(bus, (int)sizeof bus, cdev) == CUDA_SUCCESS) {
        size_t n = cg_strlcpy(how, "pci:", cap);
        cg_append(how, cap, n, bus);
        return nv.by_pci(bus, dev) == NVML_SUCCESS;
    }
    const char *cvd = cg_getenv("CUDA_VISIBLE_DEVICES");
    if (cvd && (cg_starts_with(cvd, "GPU-") || cg_starts_with(cvd, "MIG-")) && nv.by_uuid) {
        char uuid[96];
        size_t k = 0;
        while (cvd[k] && cvd[k] != ',' && k < sizeof uuid - 1) {
            uuid[k] = cvd[k];
            k++;
        }
        uuid[k] = 0;
        size_t n = cg_strlcpy(how, "uuid:", cap);
        cg_append(how, cap, n, uuid);
        return nv.by_uuid(uuid, dev) == NVML_SUCCESS;
    }
    unsigned idx = 0;
    bool from_env = false;
    if (cvd && *cvd >= '0' && *cvd <= '9') {
        for (const char *p = cvd; *p >= '0' && *p <= '9'; p++)
            idx = idx * 10 + (unsigned)(*p - '0');
        from_env = true;
    }
    size_t n = cg_append_u(how, cap, cg_strlcpy(how, "index:", cap), idx);
    if (from_env)
        cg_append(how, cap, n, " (CUDA_VISIBLE_DEVICES)");
    return nv.by_index(idx, dev) == NVML_SUCCESS;
}

/* /proc/<pid>/comm, "" when the process is not visible (another PID namespace). */
static void proc_name(unsigned pid, char *out, size_t cap)
{
    char path[40];
    size_t n = cg_append_u(path, sizeof path, cg_strlcpy(path, "/proc/", sizeof path), (unsigned long long)pid);
    cg_append(path, sizeof path, n, "/comm");
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, out, cap - 1);
    close(fd);
    if (r <= 0)
        return;
    out[r] = 0;
    if (out[r - 1] == '\n')
        out[r - 1] = 0;
}

static void nvml_holders_locked(nvmlDevice_t dev, struct cg_gpu_state *s)
{
    nvmlProcessInfo_t info[64];
    unsigned count = 64;
    if (!nv.procs) {
        s->nholders = -1;
        cg_strlcpy(s->nvml, "nvmlDeviceGetComputeRunningProcesses_v3 missing", sizeof s->nvml);
        return;
    }
    nvmlReturn_t r = nv.procs(dev, &count, info);
    if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) {
        s->nholders = -1;
        size_t n = cg_strlcpy(s->nvml, "nvmlDeviceGetComputeRunningProcesses_v3: ", sizeof s->nvml);
        cg_strlcpy(s->nvml + n, nv.err ? nv.err(r) : "failed", sizeof s->nvml - n);
        return;
    }
    if (count > 64)
        count = 64;
    /* the largest holders first */
    for (unsigned i = 0; i < count; i++)
        for (unsigned j = i + 1; j < count; j++) {
            unsigned long long a = info[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? 0 : info[i].usedGpuMemory;
            unsigned long long b = info[j].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? 0 : info[j].usedGpuMemory;
            if (b > a) {
                nvmlProcessInfo_t t = info[i];
                info[i] = info[j];
                info[j] = t;
            }
        }
    unsigned self = (unsigned)getpid();
    s->nholders = 0;
    for (unsigned i = 0; i < count; i++) {
        if (info[i].pid != self && info[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
            s->others_bytes += info[i].usedGpuMemory;
        if (s->nholders < CG_MAX_HOLDERS) {
            struct cg_gpu_holder *h = &s->holders[s->nholders++];
            h->pid = info[i].pid;
            h->bytes = info[i].usedGpuMemory;
            proc_name(h->pid, h->name, sizeof h->name);
        }
    }
}

/* Both ask the driver and NVML, which take locks of their own: never across
 * a fork (forkgate.c).  Failure paths only. */
void cg_gpu_state_now(struct cg_gpu_state *s, bool want_holders)
{
    int saved = errno;
    cg_fork_gate_enter();
    cg_drvlog_mute++; /* what our own questions make the driver log is not the program's */
    memset(s, 0, sizeof *s);
    s->mem.source = "unknown";
    s->driver_status = -1;
    s->device_count = -1;
    s->cc_major = s->cc_minor = -1;
    s->nholders = -1;
    struct drv d;
    bool have_drv = drv_find(&d);
    if (!have_drv) {
        s->driver = "not_loaded";
    } else {
        int n = 0;
        CUresult r = d.count ? d.count(&n) : CUDA_ERROR_NOT_INITIALIZED;
        s->driver_status = r;
        if (r == CUDA_SUCCESS)
            s->device_count = n;
        s->driver = r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && n == 0) ? "no_device"
                    : r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_DEINITIALIZED ? "not_initialized"
                                                                                    : "loaded";
        drv_mem(&d, &s->mem);
        int dev = drv_current_device(&d);
        if (dev >= 0 && d.attr) {
            int ma = -1, mi = -1;
            if (d.attr(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
                d.attr(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
                s->cc_major = ma, s->cc_minor = mi;
        }
    }
    pthread_mutex_lock(&nvml_lock);
    bool need_nvml = want_holders || !s->mem.known || s->cc_major < 0;
    if (need_nvml && nvml_ready(true)) {
        nvmlDevice_t dev;
        if (!nvml_device(&d, have_drv, &dev, s->nvml_device, sizeof s->nvml_device)) {
            cg_strlcpy(s->nvml, "NVML does not know the device", sizeof s->nvml);
        } else {
            cg_strlcpy(s->nvml, "ok", sizeof s->nvml);
            nvmlMemory_t m;
            if (!s->mem.known && nv.mem(dev, &m) == NVML_SUCCESS) {
                s->mem.known = true;
                s->mem.free = m.free;
                s->mem.total = m.total;
                s->mem.source = "nvml";
            }
            int ma, mi;
            if (s->cc_major < 0 && nv.cc && nv.cc(dev, &ma, &mi) == NVML_SUCCESS)
                s->cc_major = ma, s->cc_minor = mi;
            if (want_holders)
                nvml_holders_locked(dev, s);
        }
    } else if (need_nvml) {
        cg_strlcpy(s->nvml, nvml_why, sizeof s->nvml);
    } else {
        cg_strlcpy(s->nvml, "not asked", sizeof s->nvml);
    }
    pthread_mutex_unlock(&nvml_lock);
    cg_drvlog_mute--;
    cg_fork_gate_leave();
    errno = saved;
}

void cg_gpu_mem_now(struct cg_gpu_mem *m)
{
    int saved = errno;
    memset(m, 0, sizeof *m);
    m->source = "unknown";
    struct drv d;
    cg_fork_gate_enter();
    cg_drvlog_mute++;
    bool from_driver = drv_find(&d) && drv_mem(&d, m);
    cg_drvlog_mute--;
    if (from_driver) {
        cg_fork_gate_leave();
        errno = saved;
        return;
    }
    /* NVML only when a failure has already loaded it: never on success paths. */
    pthread_mutex_lock(&nvml_lock);
    if (nvml_ready(false)) {
        nvmlDevice_t dev;
        char how[80];
        nvmlMemory_t mm;
        if (nvml_device(&d, false, &dev, how, sizeof how) && nv.mem(dev, &mm) == NVML_SUCCESS) {
            m->known = true;
            m->free = mm.free;
            m->total = mm.total;
            m->source = "nvml";
        }
    }
    pthread_mutex_unlock(&nvml_lock);
    cg_fork_gate_leave();
    errno = saved;
}

void cg_ev_gpu_mem(struct cg_ev *e, const char *key, const struct cg_gpu_mem *m)
{
    cg_ev_open(e, key, '{');
    if (m->known) {
        cg_ev_u64(e, "free", m->free);
        cg_ev_u64(e, "total", m->total);
    } else {
        cg_ev_raw(e, "free", "null");
        cg_ev_raw(e, "total", "null");
    }
    cg_ev_str(e, "source", m->source);
    cg_ev_close(e, '}');
}

void cg_ev_gpu_devices(struct cg_ev *e, const struct cg_gpu_state *s)
{
    if (s->device_count >= 0)
        cg_ev_i64(e, "device_count", s->device_count);
    else
        cg_ev_raw(e, "device_count", "null");
    cg_ev_str(e, "driver", s->driver);
    if (s->driver_status >= 0)
        cg_ev_str(e, "device_count_status", cg_cu_result_name(s->driver_status));
    if (s->cc_major >= 0) {
        char cc[24];
        size_t n = cg_utoa(cc, (unsigned)s->cc_major);
        cc[n++] = '.';
        n += cg_utoa(cc + n, (unsigned)s->cc_minor);
        cc[n] = 0;
        cg_ev_str(e, "compute_capability", cc);
    } else {
        cg_ev_raw(e, "compute_capability", "null");
    }
}

void cg_ev_gpu_holders(struct cg_ev *e, const struct cg_gpu_state *s)
{
    if (s->nholders < 0) {
        cg_ev_raw(e, "holders", "null");
    } else {
        unsigned self = (unsigned)getpid();
        cg_ev_open(e, "holders", '[');
        for (int i = 0; i < s->nholders; i++) {
            const struct cg_gpu_holder *h = &s->holders[i];
            cg_ev_open(e, NULL, '{');
            cg_ev_u64(e, "pid", h->pid);
            cg_ev_str(e, "name", h->name[0] ? h->name : NULL);
            if (h->bytes == NVML_VALUE_NOT_AVAILABLE)
                cg_ev_raw(e, "bytes", "null");
            else
                cg_ev_u64(e, "bytes", h->bytes);
            if (h->pid == self)
                cg_ev_bool(e, "self", true);
            cg_ev_close(e, '}');
        }
        cg_ev_close(e, ']');
    }
    cg_ev_str(e, "nvml", s->nvml[0] ? s->nvml : "not asked");
    if (s->nvml_device[0])
        cg_ev_str(e, "nvml_device", s->nvml_device);
}

/* ---- the GPUs NVML lists, for a CUDA_VISIBLE_DEVICES that names none of
 * them.  NVML numbers them in PCI order, as CUDA does by default
 * (CUDA_DEVICE_ORDER=FASTEST_FIRST may differ: the CLI says so).  Failure
 * paths only: it may load NVML. */
void cg_gpu_list_now(struct cg_gpu_list *l)
{
    int saved = errno;
    memset(l, 0, sizeof *l);
    l->count = -1;
    cg_fork_gate_enter();
    cg_drvlog_mute++;
    pthread_mutex_lock(&nvml_lock);
    unsigned n = 0;
    if (!nvml_ready(true)) {
        cg_strlcpy(l->nvml, nvml_why, sizeof l->nvml);
    } else if (!nv.count || nv.count(&n) != NVML_SUCCESS) {
        cg_strlcpy(l->nvml, "nvmlDeviceGetCount_v2 failed or missing", sizeof l->nvml);
    } else {
        cg_strlcpy(l->nvml, "ok", sizeof l->nvml);
        l->count = (int)n;
        for (unsigned i = 0; i < n && i < CG_MAX_GPUS; i++) {
            struct cg_gpu_entry *g = &l->gpu[l->n++];
            nvmlDevice_t dev;
            g->nmig = 0;
            if (nv.by_index(i, &dev) != NVML_SUCCESS)
                continue;
            if (nv.uuid && nv.uuid(dev, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
                g->uuid[0] = 0;
            unsigned max = 0;
            if (!nv.mig_max || !nv.mig_by_index || nv.mig_max(dev, &max) != NVML_SUCCESS)
                continue;
            for (unsigned m = 0; m < max && g->nmig < CG_MAX_MIG; m++) {
                nvmlDevice_t md;
                if (nv.mig_by_index(dev, m, &md) == NVML_SUCCESS && nv.uuid &&
                    nv.uuid(md, g->mig[g->nmig], sizeof g->mig[0]) == NVML_SUCCESS)
                    g->nmig++;
            }
        }
    }
    pthread_mutex_unlock(&nvml_lock);
    cg_drvlog_mute--;
    cg_fork_gate_leave();
    errno = saved;
}

void cg_ev_gpu_list(struct cg_ev *e, const struct cg_gpu_list *l)
{
    cg_ev_open(e, "nvml_gpus", '{');
    if (l->count >= 0)
        cg_ev_i64(e, "count", l->count);
    else
        cg_ev_raw(e, "count", "null");
    cg_ev_str(e, "nvml", l->nvml);
    cg_ev_open(e, "gpus", '[');
    for (int i = 0; i < l->n; i++) {
        const struct cg_gpu_entry *g = &l->gpu[i];
        cg_ev_open(e, NULL, '{');
        cg_ev_i64(e, "index", i);
        cg_ev_str(e, "uuid", g->uuid[0] ? g->uuid : NULL);
        if (g->nmig) {
            cg_ev_open(e, "mig", '[');
            for (int m = 0; m < g->nmig; m++)
                cg_ev_str(e, NULL, g->mig[m]);
            cg_ev_close(e, ']');
        }
        cg_ev_close(e, '}');
    }
    cg_ev_close(e, ']');
    cg_ev_close(e, '}');
}
