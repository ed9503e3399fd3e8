/* drvlog_ptx.c - PTX marked with a newer ISA than the driver's, loaded through the driver API
 * (cuModuleLoadData), as JAX/XLA and Triton load what their ptxas could not take
 * (tests/gpu/run.sh driverlog).  Registers its own log callback first and prints what it gets
 * (how the real driver hands messages to callbacks), asks for the device count before cuInit
 * (does the driver log that?), then loads "PTX 9.9" (222 expected) and a PTX of this CUDA (9.0).
 * Exit 1 when the newer PTX loaded. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>

static int own;
static void own_cb(void *data, CUlogLevel level, char *msg, size_t len)
{
    (void)data;
    own++;
    printf("own[%d] level=%d len=%zu strlen=%zu: %.*s\n", own, (int)level, len, strlen(msg), (int)len, msg);
}

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 2;
    }
    CUresult (*reg)(CUlogsCallback, void *, CUlogsCallbackHandle *) = dlsym(h, "cuLogsRegisterCallback");
    CUresult (*init)(unsigned) = dlsym(h, "cuInit");
    CUresult (*count)(int *) = dlsym(h, "cuDeviceGetCount");
    CUresult (*retain)(CUcontext *, CUdevice) = dlsym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*set)(CUcontext) = dlsym(h, "cuCtxSetCurrent");
    CUresult (*load)(CUmodule *, const void *) = dlsym(h, "cuModuleLoadData");
    CUlogsCallbackHandle cb;
    printf("cuLogsRegisterCallback = %d\n", reg ? (int)reg(own_cb, NULL, &cb) : -1);
    int n = -1;
    printf("cuDeviceGetCount before cuInit = %d\n", (int)count(&n));
    printf("cuInit = %d\n", (int)init(0));
    CUcontext c;
    printf("cuDevicePrimaryCtxRetain = %d\n", (int)retain(&c, 0));
    set(c);
    static const char newer[] = "//\n// written by a newer toolkit\n//\n\n.version 9.9\n.target sm_90\n.address_size 64\n\n"
                                ".visible .entry k()\n{\n\tret;\n}\n";
    static const char same[] = "//\n\n.version 9.0\n.target sm_90\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n";
    CUmodule m;
    CUresult r = load(&m, newer);
    printf("cuModuleLoadData(PTX 9.9) = %d\n", (int)r);
    printf("cuModuleLoadData(PTX 9.0) = %d\n", (int)load(&m, same));
    printf("own callback: %d messages\n", own);
    return r == CUDA_SUCCESS;
}
