/* cudefs_real.c - the same values from NVIDIA's own headers (test only) */
#include <stddef.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#define V(x) (long long)(x),
const long long cudefs_real[] = {
#include "../../tests/unit/cudefs_list.h"
};
