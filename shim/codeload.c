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
 * loaded lazily at their first launch are not seen (launches are not hooked). */
#include <errno.h>

#include "cg.h"
#include "gpuinfo.h"

static void code_load_failed(int hook, CUresult r, const void *caller, const char *file)
{
    int saved = errno;
    bool oom = r == CUDA_ERROR_OUT_OF_MEMORY;
    struct cg_gpu_state s;
    atomic_fetch_add_explicit(&cg_count[hook].fails, 1, memory_order_relaxed);
    cg_note_failure();
    cg_gpu_state_now(&s, oom); /* a current context exists: memory comes from the driver */
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "code_load_failed");
    cg_ev_str(&e, "fn", cg_hooks[hook].name);
    cg_ev_i64(&e, "status", r);
    cg_ev_str(&e, "status_name", cg_cu_result_name(r));
    if (file)
        cg_ev_str(&e, "file", file);
    cg_ev_caller(&e, caller);
    cg_ev_gpu_mem(&e, "mem", &s.mem);
    cg_gpumem_exit(&e); /* "gpu_mem": this process's own live bytes and largest allocation */
    cg_ev_gpu_devices(&e, &s);
    if (oom)
        cg_ev_gpu_holders(&e, &s);
    cg_ev_end(&e);
    errno = saved;
}

#define CODE_LOAD(name, file, call)                                                                              \
    {                                                                                                            \
        CUresult r = call;                                                                                       \
        if (CG_UNLIKELY(r != CUDA_SUCCESS))                                                                      \
            code_load_failed(CG_H_##name, r, caller, file);                                                      \
        return r;                                                                                                \
    }

CUresult cg_w_cuModuleLoad(cg_t_cuModuleLoad real, CG_CALLER, CUmodule *module, const char *fname)
    CODE_LOAD(cuModuleLoad, fname, real(module, fname))

CUresult cg_w_cuModuleLoadData(cg_t_cuModuleLoadData real, CG_CALLER, CUmodule *module, const void *image)
    CODE_LOAD(cuModuleLoadData, NULL, real(module, image))

CUresult cg_w_cuModuleLoadDataEx(cg_t_cuModuleLoadDataEx real, CG_CALLER, CUmodule *module, const void *image,
                                 unsigned int n, CUjit_option *options, void **values)
    CODE_LOAD(cuModuleLoadDataEx, NULL, real(module, image, n, options, values))

CUresult cg_w_cuModuleLoadFatBinary(cg_t_cuModuleLoadFatBinary real, CG_CALLER, CUmodule *module, const void *fatbin)
    CODE_LOAD(cuModuleLoadFatBinary, NULL, real(module, fatbin))

CUresult cg_w_cuLibraryLoadData(cg_t_cuLibraryLoadData real, CG_CALLER, CUlibrary *library, const void *code,
                                CUjit_option *jit_options, void **jit_values, unsigned int n_jit,
                                CUlibraryOption *lib_options, void **lib_values, unsigned int n_lib)
    CODE_LOAD(cuLibraryLoadData, NULL, real(library, code, jit_options, jit_values, n_jit, lib_options, lib_values, n_lib))

CUresult cg_w_cuLibraryLoadFromFile(cg_t_cuLibraryLoadFromFile real, CG_CALLER, CUlibrary *library, const char *fname,
                                    CUjit_option *jit_options, void **jit_values, unsigned int n_jit,
                                    CUlibraryOption *lib_options, void **lib_values, unsigned int n_lib)
    CODE_LOAD(cuLibraryLoadFromFile, fname, real(library, fname, jit_options, jit_values, n_jit, lib_options, lib_values,
                                                n_lib))
