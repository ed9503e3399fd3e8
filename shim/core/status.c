/* status.c - the names of CUDA driver, CUDA runtime and cuDNN status codes,
 * from the one table status.def (the CLI compiles the same table).  Looked up
 * on failure paths only. */
#include "core/core.h"

enum lib { CU, RT, DNN9, DNN8 };
static const struct {
    unsigned char lib;
    int code;
    const char *name;
} names[] = {
#define CG_STATUS(lib, value, name) {lib, value, #name},
#include "status.def"
#undef CG_STATUS
};

static const char *lookup(enum lib lib, int code)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].lib == lib && names[i].code == code)
            return names[i].name;
    return NULL;
}

const char *cg_cudnn_status_name(int slot, int status)
{
    if (slot == CG_SLOT_CUDNN8) {
        const char *n = lookup(DNN8, status);
        return n ? n : "CUDNN_STATUS_UNKNOWN";
    }
    const char *n = lookup(DNN9, status);
    if (n)
        return n;
    /* cuDNN 9 codes are category * 1000 + detail: a newer detail is named after its category */
    n = status > 0 ? lookup(DNN9, status / 1000 * 1000) : NULL;
    return n ? n : "CUDNN_STATUS_UNKNOWN";
}

const char *cg_cuda_error_name(int err)
{
    const char *n = lookup(RT, err);
    return n ? n : "cudaErrorUnrecognized";
}

const char *cg_cu_result_name(int res)
{
    const char *n = lookup(CU, res);
    return n ? n : "CUDA_ERROR_UNRECOGNIZED";
}
