/* cudefs_ours.c - the values of cudefs_list.h as shim/cudefs.h defines them */
#include <stddef.h>
#include "cudefs.h"
#define V(x) (long long)(x),
const long long cudefs_ours[] = {
#include "../../tests/unit/cudefs_list.h"
};
#undef V
#define V(x) #x,
const char *const cudefs_names[] = {
#include "../../tests/unit/cudefs_list.h"
};
const size_t cudefs_count = sizeof cudefs_ours / sizeof cudefs_ours[0];
_Static_assert(__builtin_types_compatible_p(CUlogsCallback, void (*)(void *, CUlogLevel, char *, size_t)),
               "CUlogsCallback as in the real header");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuLogsRegisterCallback),
                                            CUresult (*)(CUlogsCallback, void *, CUlogsCallbackHandle *)),
               "cuLogsRegisterCallback as in the real header");
