/* check_status.c - every line of shim/status.def against NVIDIA's own headers:
 * the name exists there (or this does not compile) and has the value the
 * table gives it.  cuDNN 8 lines are checked only against a cuDNN 8 header
 * (CUDNN_MAJOR 8); with cuDNN 9's the program says they were not checked. */
#include <stdio.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

int main(void)
{
    int checked = 0, bad = 0, skipped = 0;
#define CMP(lib, value, name)                                                                                 \
    do {                                                                                                      \
        checked++;                                                                                            \
        if ((long long)(name) != (long long)(value)) {                                                       \
            printf("MISMATCH %s %s: status.def %lld, header %lld\n", #lib, #name, (long long)(value),        \
                   (long long)(name));                                                                        \
            bad++;                                                                                            \
        }                                                                                                     \
    } while (0);
#define CHECK_CU CMP
#define CHECK_RT CMP
#if CUDNN_MAJOR == 9
#define CHECK_DNN9 CMP
#define CHECK_DNN8(lib, value, name) skipped++;
#else
#define CHECK_DNN9(lib, value, name) skipped++;
#define CHECK_DNN8 CMP
#endif
#define CG_STATUS(lib, value, name) CHECK_##lib(lib, value, name)
#include "status.def"
    printf("%d lines checked against the headers, %d mismatches, %d not checked (cuDNN %d headers)\n", checked,
           bad, skipped, CUDNN_MAJOR);
    return bad != 0;
}
