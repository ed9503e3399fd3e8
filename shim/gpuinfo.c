/* gpuinfo.c - INTERIM SUBSET of branch `res`'s shim/gpuinfo.c (see
 * gpuinfo.h): free/total GPU memory from the driver, and cuDNN's status
 * names.  When merging `res`, take its gpuinfo.c whole. */
#include <errno.h>
#include <string.h>

#include "gpuinfo.h"

struct find_so {
    struct cg_obj obj;
    bool found;
};

static int find_libcuda(const struct cg_obj *o, void *arg)
{
    struct find_so *f = arg;
    const char *so = o->dyn ? cg_elf_soname(o) : NULL;
    if (so && strcmp(so, "libcuda.so.1") == 0) {
        f->obj = *o;
        f->found = true;
        return 1;
    }
    return 0;
}

void cg_gpu_mem_now(struct cg_gpu_mem *m)
{
    int saved = errno;
    memset(m, 0, sizeof *m);
    m->source = "unknown";
    struct find_so f = {.found = false};
    cg_elf_each_obj(find_libcuda, &f);
    if (f.found) {
        CUresult (*get_cur)(CUcontext *) = (CUresult(*)(CUcontext *))cg_elf_sym(&f.obj, "cuCtxGetCurrent", NULL);
        CUresult (*info)(size_t *, size_t *) =
            (CUresult(*)(size_t *, size_t *))cg_elf_sym(&f.obj, "cuMemGetInfo_v2", NULL);
        CUcontext c = NULL;
        size_t fr = 0, to = 0;
        if (get_cur && info && get_cur(&c) == CUDA_SUCCESS && c && info(&fr, &to) == CUDA_SUCCESS) {
            m->known = true;
            m->free = fr;
            m->total = to;
            m->source = "driver";
        }
    }
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

/* ---- cuDNN's names for its statuses (cudnn_graph_v9.h; cuDNN 8: cudnn_ops_infer_v8.h) */
struct code_name {
    int code;
    const char *name;
};

static const char *lookup(const struct code_name *t, size_t n, int code)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].code == code)
            return t[i].name;
    return NULL;
}
#define LOOKUP(t, c) lookup(t, sizeof t / sizeof t[0], c)

static const struct code_name cudnn9[] = {
    {0, "CUDNN_STATUS_SUCCESS"},
    {1001, "CUDNN_STATUS_NOT_INITIALIZED"},
    {1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"},
    {1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"},
    {1004, "CUDNN_STATUS_DEPRECATED"},
    {1005, "CUDNN_STATUS_LICENSE_ERROR"},
    {1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS"},
    {1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"},
    {1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"},
    {2000, "CUDNN_STATUS_BAD_PARAM"},
    {2001, "CUDNN_STATUS_INVALID_VALUE"},
    {2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER"},
    {2003, "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER"},
    {2004, "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED"},
    {2005, "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND"},
    {2006, "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"},
    {2007, "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH"},
    {2008, "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH"},
    {2009, "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES"},
    {2010, "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE"},
    {2011, "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH"},
    {2012, "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE"},
    {3000, "CUDNN_STATUS_NOT_SUPPORTED"},
    {3001, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN"},
    {3002, "CUDNN_STATUS_NOT_SUPPORTED_SHAPE"},
    {3003, "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE"},
    {3004, "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT"},
    {3005, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"},
    {3006, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART"},
    {3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"},
    {3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING"},
    {3009, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"},
    {3010, "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT"},
    {3011, "CUDNN_STATUS_NOT_SUPPORTED_PADDING"},
    {3012, "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM"},
    {3013, "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API"},
    {3014, "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE"},
    {4000, "CUDNN_STATUS_INTERNAL_ERROR"},
    {4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED"},
    {4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE"},
    {4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"},
    {4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"},
    {4005, "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM"},
    {4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED"},
    {5000, "CUDNN_STATUS_EXECUTION_FAILED"},
    {5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER"},
    {5002, "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS"},
    {5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDART"},
    {5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND"},
};

static const struct code_name cudnn8[] = {
    {0, "CUDNN_STATUS_SUCCESS"},          {1, "CUDNN_STATUS_NOT_INITIALIZED"},
    {2, "CUDNN_STATUS_ALLOC_FAILED"},     {3, "CUDNN_STATUS_BAD_PARAM"},
    {4, "CUDNN_STATUS_INTERNAL_ERROR"},   {5, "CUDNN_STATUS_INVALID_VALUE"},
    {6, "CUDNN_STATUS_ARCH_MISMATCH"},    {7, "CUDNN_STATUS_MAPPING_ERROR"},
    {8, "CUDNN_STATUS_EXECUTION_FAILED"}, {9, "CUDNN_STATUS_NOT_SUPPORTED"},
    {10, "CUDNN_STATUS_LICENSE_ERROR"},   {11, "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING"},
    {12, "CUDNN_STATUS_RUNTIME_IN_PROGRESS"}, {13, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"},
    {14, "CUDNN_STATUS_VERSION_MISMATCH"},
};

const char *cg_cudnn_status_name(int slot, int status)
{
    if (slot == CG_SLOT_CUDNN8) {
        const char *n = LOOKUP(cudnn8, status);
        return n ? n : "CUDNN_STATUS_UNKNOWN";
    }
    const char *n = LOOKUP(cudnn9, status);
    if (n)
        return n;
    /* cuDNN 9 codes are category * 1000 + detail: name the category */
    return status > 0 && LOOKUP(cudnn9, status / 1000 * 1000) ? LOOKUP(cudnn9, status / 1000 * 1000)
                                                               : "CUDNN_STATUS_UNKNOWN";
}
