/* libnvml_double.c - TEST DOUBLE of NVML, libnvidia-ml.so.1.
 * This is NOT NVIDIA's library.  It describes the one simulated GPU of the
 * libcuda.so.1 double, as seen from outside the process, so that convguard
 * can name the process holding its memory on a machine with no GPU.
 *
 * Like the real one: soname libnvidia-ml.so.1, unversioned symbols, every
 * call but nvmlInit_v2 / nvmlErrorString needs nvmlInit_v2 first.
 *
 * Environment (the same as the libcuda.so.1 double's):
 *   CGTEST_GPU_TOTAL_MB   memory of the device in MiB (default 1024)
 *   CGTEST_GPU_HELD_MB    MiB held by another process (default 0); NVML's
 *                         free = total - held (this process's own
 *                         allocations are not seen: NVML answers from outside)
 *   CGTEST_HOLDER_PID     that process's pid (default 4242); listed by
 *                         nvmlDeviceGetComputeRunningProcesses_v3 when held > 0
 *   CGTEST_NVML_FAIL=1    nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED (9)
 *   CGTEST_NVML_GPUS      devices NVML lists (default 1, at most 8), UUIDs
 *                         GPU-cgtest-0000, GPU-cgtest-0001, ... (nvmlDeviceGetUUID)
 * Device 0 answers for memory, processes, any PCI bus id or UUID; compute capability 9.0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudefs.h"
#include "cgtest_env.h"

#define API __attribute__((visibility("default")))
#define MiB (1ull << 20)
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9

static int inited;
struct nvmlDevice_st { int index; };
/* CGTEST_NVML_GPUS (default 1) devices, UUIDs GPU-cgtest-000N; memory, processes
 * and compute capability are device 0's alone */
#define MAX_GPUS 8
static struct nvmlDevice_st devs[MAX_GPUS] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
#define dev0 devs[0]
static unsigned ngpus(void)
{
    unsigned long long n = cgtest_env_num("CGTEST_NVML_GPUS", 1);
    return n > MAX_GPUS ? MAX_GPUS : (unsigned)n;
}

#define NEED_INIT() do { if (!inited) return NVML_ERROR_UNINITIALIZED; } while (0)

API nvmlReturn_t nvmlInit_v2(void)
{
    if (cgtest_env_num("CGTEST_NVML_FAIL", 0))
        return NVML_ERROR_DRIVER_NOT_LOADED;
    inited++;
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlShutdown(void)
{
    NEED_INIT();
    inited--;
    return NVML_SUCCESS;
}

API const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count)
{
    NEED_INIT();
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = ngpus();
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev)
{
    NEED_INIT();
    if (index >= ngpus() || !dev)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = &devs[index];
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned len)
{
    NEED_INIT();
    if (!dev || dev < devs || dev >= devs + MAX_GPUS || !uuid || len < 20)
        return NVML_ERROR_INVALID_ARGUMENT;
    snprintf(uuid, len, "GPU-cgtest-%04d", dev->index);
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *dev)
{
    NEED_INIT();
    if (!bus || !dev)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = &dev0;
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *dev)
{
    NEED_INIT();
    if (!uuid || !dev)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = &dev0;
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m)
{
    unsigned long long total = cgtest_env_num("CGTEST_GPU_TOTAL_MB", 1024) * MiB;
    unsigned long long held = cgtest_env_num("CGTEST_GPU_HELD_MB", 0) * MiB;

    NEED_INIT();
    if (dev != &dev0 || !m)
        return NVML_ERROR_INVALID_ARGUMENT;
    m->total = total;
    m->used = held < total ? held : total;
    m->free = total - m->used;
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned *count,
                                                         nvmlProcessInfo_t *infos)
{
    unsigned long long held = cgtest_env_num("CGTEST_GPU_HELD_MB", 0) * MiB;
    unsigned need = held ? 1 : 0;

    NEED_INIT();
    if (dev != &dev0 || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (*count < need) {
        *count = need;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = need;
    if (need) {
        if (!infos)
            return NVML_ERROR_INVALID_ARGUMENT;
        memset(&infos[0], 0, sizeof infos[0]);
        infos[0].pid = (unsigned)cgtest_env_num("CGTEST_HOLDER_PID", 4242);
        infos[0].usedGpuMemory = held;
        infos[0].gpuInstanceId = 0xFFFFFFFFu;
        infos[0].computeInstanceId = 0xFFFFFFFFu;
    }
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor)
{
    NEED_INIT();
    if (dev != &dev0 || !major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = 9;
    *minor = 0;
    return NVML_SUCCESS;
}
