/* codeload.c - loading GPU code: modules (cuModuleLoad*) and libraries
 * (cuLibraryLoad*).
 *
 * Code needs device memory too.  A framework whose pool took all but a few
 * MiB (JAX's preallocation, a pool sized from cudaMemGetInfo) gets its
 * contexts, handles and buffers, and then fails to load a kernel: JAX says
 * "Failed to load in-memory CUBIN ... CUDA_ERROR_OUT_OF_MEMORY" and no
 * allocation in the trace failed.  These calls are rare (once per binary, not
 * per launch), so a failure writes the memory as it was, the holders and this
 * process's own GPU memory; success costs a counter and a forward.  Kernels
 * loaded lazily at their first launch are not seen (launches are not hooked).
 *
 * The image handed over (cuModuleLoadData/Ex, cuModuleLoadFatBinary,
 * cuLibraryLoadData) is described from its headers (codeimage.c): machine
 * code and PTX per architecture.  A failed load carries that description; a
 * load that worked but holds nothing the GPU can run (lazy loading fails
 * only at the kernel lookup or launch) is remembered, not written: the
 * driver's 209 (drvlog.c) and the exit event name it.  Loads are rare (once
 * per binary), so this is not on a hot path. */
#include <errno.h>

#include "cuda/cuda.h"

/* Images with a bad pointer or garbage in them come back INVALID_VALUE or
 * INVALID_IMAGE: their headers are not read after such an answer. */
static bool readable_after(CUresult r) { return r != CUDA_ERROR_INVALID_VALUE && r != 200; }

static void code_load_failed(int hook, CUresult r, const void *caller, const char *file, const void *image)
{
    int saved = errno;
    bool oom = r == CUDA_ERROR_OUT_OF_MEMORY;
    struct cg_gpu_state s;
    cg_failed(hook, CG_FAIL_REPORTED);
    cg_gpu_state_now(&s, oom); /* a current context exists: memory comes from the driver */
    struct cg_code_desc d;
    cg_code_describe(image && readable_after(r) ? image : NULL, &d);
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin_call(&e, b, sizeof b, "code_load_failed", hook);
    cg_ev_status(&e, r, cg_cu_result_name(r));
    if (file)
        cg_ev_str(&e, "file", file);
    cg_ev_caller(&e, caller);
    if (d.format != CG_CODE_UNKNOWN)
        cg_ev_code_desc(&e, "image", &d, s.cc_major, s.cc_minor);
    cg_ev_gpu_mem(&e, "mem", &s.mem);
    cg_gpumem_exit(&e); /* "gpu_mem": this process's own live bytes and largest allocation */
    cg_ev_gpu_devices(&e, &s);
    if (oom)
        cg_ev_gpu_holders(&e, &s);
    cg_ev_end(&e);
    errno = saved;
}

/* ---- the GPU a successful load is for: the current context's device, else
 * device 0, asked of the real driver that loaded it with calls that succeed
 * once a load has (no log line, no context made); cached per device */
struct drv_fns {
    uintptr_t start, end;
    CUresult (*get_cur)(CUcontext *);
    CUresult (*get_dev)(CUdevice *);
    CUresult (*count)(int *);
    CUresult (*attr)(int *, CUdevice_attribute, CUdevice);
};
static struct drv_fns drv;
static _Atomic int drv_state; /* 0 unknown, 1 being filled, 2 drv holds the driver's functions */
static _Atomic int cc_cache[32]; /* 10 * major + minor + 1; 0: not asked yet */

static bool drv_fns_of(const void *real, struct drv_fns *out)
{
    if (atomic_load_explicit(&drv_state, memory_order_acquire) == 2 && (uintptr_t)real >= drv.start &&
        (uintptr_t)real < drv.end) {
        *out = drv;
        return true;
    }
    struct cg_obj o;
    if (!cg_objsnap_find_obj(real, &o))
        return false;
    out->start = o.start;
    out->end = o.end;
    out->get_cur = (CUresult(*)(CUcontext *))cg_elf_sym(&o, "cuCtxGetCurrent", NULL);
    out->get_dev = (CUresult(*)(CUdevice *))cg_elf_sym(&o, "cuCtxGetDevice", NULL);
    out->count = (CUresult(*)(int *))cg_elf_sym(&o, "cuDeviceGetCount", NULL);
    out->attr = (CUresult(*)(int *, CUdevice_attribute, CUdevice))cg_elf_sym(&o, "cuDeviceGetAttribute", NULL);
    if (!out->get_cur || !out->get_dev || !out->count || !out->attr)
        return false;
    int expected = 0;
    if (atomic_compare_exchange_strong(&drv_state, &expected, 1)) {
        drv = *out;
        atomic_store_explicit(&drv_state, 2, memory_order_release);
    }
    return true;
}

static bool device_cc(const void *real, int *major, int *minor)
{
    struct drv_fns d;
    if (!drv_fns_of(real, &d))
        return false;
    CUcontext c = NULL;
    CUdevice dev = 0;
    int n = 0;
    bool ok = false;
    cg_drvlog_mute++;
    if (d.get_cur(&c) == CUDA_SUCCESS && (c ? d.get_dev(&dev) == CUDA_SUCCESS : d.count(&n) == CUDA_SUCCESS && n > 0)) {
        int v = dev >= 0 && dev < 32 ? atomic_load(&cc_cache[dev]) : 0;
        int a = -1, b = -1;
        if (v) {
            *major = (v - 1) / 10, *minor = (v - 1) % 10, ok = true;
        } else if (d.attr(&a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
                   d.attr(&b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS && a >= 0 &&
                   b >= 0 && b < 10) {
            *major = a, *minor = b, ok = true;
            if (dev >= 0 && dev < 32)
                atomic_store(&cc_cache[dev], a * 10 + b + 1);
        }
    }
    cg_drvlog_mute--;
    return ok;
}

/* ---- images that loaded and hold nothing this GPU runs */
#define NO_FIT_KEPT 8
static struct no_fit {
    _Atomic int ready;
    int hook, cc_major, cc_minor;
    char caller[256];
    struct cg_code_desc d;
} no_fit[NO_FIT_KEPT];
static _Atomic int no_fit_used;
static _Atomic uint64_t images_described, images_no_fit;

static void code_loaded(int hook, const void *caller, const void *image, const void *real)
{
    int saved = errno;
    struct cg_code_desc d;
    cg_code_describe(image, &d);
    if (d.format != CG_CODE_UNKNOWN)
        atomic_fetch_add_explicit(&images_described, 1, memory_order_relaxed);
    int ma = -1, mi = -1;
    if (d.format != CG_CODE_UNKNOWN && device_cc(real, &ma, &mi) &&
        cg_code_fits(&d, ma, mi) == 0) {
        atomic_fetch_add_explicit(&images_no_fit, 1, memory_order_relaxed);
        int k = atomic_fetch_add(&no_fit_used, 1);
        if (k < NO_FIT_KEPT) {
            struct no_fit *f = &no_fit[k];
            struct cg_obj o;
            f->hook = hook, f->cc_major = ma, f->cc_minor = mi, f->d = d;
            cg_strlcpy(f->caller, caller && cg_objsnap_find_obj(caller, &o) ? (o.name[0] ? o.name : "(main program)") : "",
                       sizeof f->caller);
            atomic_store_explicit(&f->ready, 1, memory_order_release);
        }
    }
    errno = saved;
}

static void ev_no_fit_list(struct cg_ev *e, const char *key)
{
    cg_ev_open(e, key, '[');
    for (int k = 0; k < NO_FIT_KEPT; k++) {
        struct no_fit *f = &no_fit[k];
        if (!atomic_load_explicit(&f->ready, memory_order_acquire))
            continue;
        cg_ev_open(e, NULL, '{');
        cg_ev_str(e, "fn", cg_hooks[f->hook].name);
        cg_ev_str(e, "caller", f->caller[0] ? f->caller : NULL);
        cg_ev_code_desc(e, "image", &f->d, f->cc_major, f->cc_minor);
        cg_ev_close(e, '}');
    }
    cg_ev_close(e, ']');
}

void cg_codeload_ev_no_fit(struct cg_ev *e)
{
    if (atomic_load(&images_no_fit))
        ev_no_fit_list(e, "code_no_fit");
}

void cg_codeload_exit(struct cg_ev *e)
{
    uint64_t n = atomic_load(&images_described);
    if (!n)
        return;
    cg_ev_open(e, "code_images", '{');
    cg_ev_u64(e, "described", n);
    uint64_t bad = atomic_load(&images_no_fit);
    cg_ev_u64(e, "no_fit", bad);
    if (bad)
        ev_no_fit_list(e, "no_fit_images");
    cg_ev_close(e, '}');
}

void cg_codeload_after_fork(void)
{
    atomic_store(&images_described, 0);
    atomic_store(&images_no_fit, 0);
}

#define CODE_LOAD(name, file, image, call)                                                                       \
    {                                                                                                            \
        CUresult r = call;                                                                                       \
        if (CG_UNLIKELY(r != CUDA_SUCCESS))                                                                      \
            code_load_failed(CG_H_##name, r, caller, file, image);                                               \
        else if (image)                                                                                          \
            code_loaded(CG_H_##name, caller, image, (const void *)real);                                         \
        return r;                                                                                                \
    }

CUresult cg_w_cuModuleLoad(cg_t_cuModuleLoad real, CG_CALLER, CUmodule *module, const char *fname)
    CODE_LOAD(cuModuleLoad, fname, (const void *)NULL, real(module, fname))

CUresult cg_w_cuModuleLoadData(cg_t_cuModuleLoadData real, CG_CALLER, CUmodule *module, const void *image)
    CODE_LOAD(cuModuleLoadData, NULL, image, real(module, image))

CUresult cg_w_cuModuleLoadDataEx(cg_t_cuModuleLoadDataEx real, CG_CALLER, CUmodule *module, const void *image,
                                 unsigned int n, CUjit_option *options, void **values)
    CODE_LOAD(cuModuleLoadDataEx, NULL, image, real(module, image, n, options, values))

CUresult cg_w_cuModuleLoadFatBinary(cg_t_cuModuleLoadFatBinary real, CG_CALLER, CUmodule *module, const void *fatbin)
    CODE_LOAD(cuModuleLoadFatBinary, NULL, fatbin, real(module, fatbin))

CUresult cg_w_cuLibraryLoadData(cg_t_cuLibraryLoadData real, CG_CALLER, CUlibrary *library, const void *code,
                                CUjit_option *jit_options, void **jit_values, unsigned int n_jit,
                                CUlibraryOption *lib_options, void **lib_values, unsigned int n_lib)
    CODE_LOAD(cuLibraryLoadData, NULL, code,
              real(library, code, jit_options, jit_values, n_jit, lib_options, lib_values, n_lib))

CUresult cg_w_cuLibraryLoadFromFile(cg_t_cuLibraryLoadFromFile real, CG_CALLER, CUlibrary *library, const char *fname,
                                    CUjit_option *jit_options, void **jit_values, unsigned int n_jit,
                                    CUlibraryOption *lib_options, void **lib_values, unsigned int n_lib)
    CODE_LOAD(cuLibraryLoadFromFile, fname, (const void *)NULL,
              real(library, fname, jit_options, jit_values, n_jit, lib_options, lib_values, n_lib))
