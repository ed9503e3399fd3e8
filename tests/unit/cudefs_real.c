/* cudefs_real.c - the same values from NVIDIA's own headers (test only) */
#include <stddef.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#define V(x) (long long)(x),
const long long cudefs_real[] = {
#include "../../tests/unit/cudefs_list.h"
};
/* The shapes drvlog.c relies on: the callback's parameters and the
 * registration's, as the real header declares them (CUlogLevel is an enum
 * there, an int in cudefs.h: same size, checked above). */
_Static_assert(__builtin_types_compatible_p(CUlogsCallback, void (*)(void *, CUlogLevel, char *, size_t)),
               "CUlogsCallback: (void *data, CUlogLevel, char *message, size_t length)");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuLogsRegisterCallback),
                                            CUresult (*)(CUlogsCallback, void *, CUlogsCallbackHandle *)),
               "cuLogsRegisterCallback(CUlogsCallback, void *, CUlogsCallbackHandle *)");
