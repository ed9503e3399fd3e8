/* stubpath.c - the hot call of a framework with its own CUDA stubs (bench,
 * not a test): TensorFlow's code calls cuMemGetInfo_v2 through its PLT; the
 * definition is its own stub (here libfwstub.so, a DT_NEEDED of this
 * program, tests/clients/fwstub.c), which forwards to the pointer it got from
 * dlsym on libcuda.so.1.  Under the shim the call passes it twice: the
 * exported entry forwards to the stub untouched, the stub's pointer is the
 * shim's handed-out entry.  Usage: stubpath stub_plt N (libcuda.so.1 found
 * through LD_LIBRARY_PATH).  Prints "stub_plt N T ns/iter". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuda_double.h"

int main(int argc, char **argv)
{
    long n = argc > 2 ? atol(argv[2]) : 1000;
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    size_t fr = 0, tot = 0;
    int bad = cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n && !bad; i++)
        bad += cuMemGetInfo_v2(&fr, &tot) != CUDA_SUCCESS;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%s %ld %.1f ns/iter%s\n", argc > 1 ? argv[1] : "stub_plt", n, n ? ns / (double)n : 0.0,
           bad ? " (FAILURES)" : "");
    return bad != 0;
}
