/* libcuda_double.c - TEST DOUBLE of the CUDA driver, libcuda.so.1.
 * This is NOT NVIDIA's library.  It simulates one GPU in host memory so that
 * convguard's tests can run on machines with no GPU.
 *
 * Like the real driver: soname libcuda.so.1, UNVERSIONED symbols, nothing
 * works before cuInit, memory calls need a current context on the calling
 * thread, cuGetProcAddress maps base names to the versioned functions.
 * "Device" memory is calloc'ed host memory, so device pointers can be read
 * and written on the CPU.
 *
 * Environment (see tests/doubles/README.md):
 *   CGTEST_NO_DEVICE=1       cuInit returns CUDA_ERROR_NO_DEVICE (100); every
 *                            call that needs cuInit then returns
 *                            CUDA_ERROR_NOT_INITIALIZED (3).  Read at cuInit.
 *   CGTEST_GPU_TOTAL_MB      device memory in MiB (default 1024).
 *   CGTEST_GPU_HELD_MB       MiB held by "another process" (default 0).
 *   CGTEST_MEMCREATE_DENY    the first N cuMemCreate calls return CUDA_ERROR_NOT_PERMITTED (800).
 *   CGTEST_FREE_FAIL         the first N frees of a live block return CUDA_ERROR_LAUNCH_FAILED
 *                            (719, the sticky error after a kernel fault) and leave it allocated.
 *   CGTEST_CTX_MB            MiB the primary context needs (default 0); less free:
 *                            cuDevicePrimaryCtxRetain fails CUDA_ERROR_OUT_OF_MEMORY.
 *   CGTEST_HOLDER_PID        that process's pid (default 4242), for
 *                            cgtestGpuHolder() only.
 *                            free = total - held - live allocations of this
 *                            process; the three are read at every call.
 *   CGTEST_DRIVER_VERSION    what cuDriverGetVersion says (default 13000).
 *   CGTEST_CODE_MB           MiB of free device memory loading a module or
 *                            library needs (default 1); less free: the load
 *                            fails CUDA_ERROR_OUT_OF_MEMORY, as the real one
 *                            does when a pool took the GPU.  Not kept.
 *   CUDA_MODULE_LOADING      EAGER: code with nothing for this GPU fails at
 *                            load (209); otherwise (LAZY, the default) the
 *                            load works and the kernel lookup fails.
 *   CUDA_LOG_FILE            stdout, stderr or a file: each message of the
 *                            driver's log as a line "[time][tid][CUDA][E] ...".
 *   CGTEST_LOG_PREFIX        1: callbacks get the line with that prefix, as
 *                            the file does; default the words alone.
 *
 * Error Log Management (CUDA 12.9+): cuLogsRegisterCallback; every failing
 * call logs "Returning N (NAME) from fn", some an explanation before it.
 * Built with -DCGTEST_NO_LOGS_API (build/doubles/cuda-nolog/) it has no
 * cuLogs* functions, as drivers before 12.9.
 *
 * Code images: a fatbinary (entries: kind 1 PTX / 2 ELF, SM architecture),
 * a cubin, or PTX text (.version, .target).  The simulated GPU is 9.0 and
 * takes PTX up to ISA 9.0 (CUDA 13.0).
 *
 * Linked with -Bsymbolic-functions (as all the doubles): the addresses in
 * the cuGetProcAddress table are this library's own, the same that
 * dlsym(handle, name) returns, and calls between its own functions never
 * go through a PLT, even when a preloaded library defines the same names. */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_double.h"
#include "cgtest_env.h"
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define MiB ((size_t)1 << 20)

/* ---- the driver's log */
static const char *err_name(CUresult e);
#ifndef CGTEST_NO_LOGS_API
struct CUlogsCallbackEntry_st { CUlogsCallback fn; void *data; int used; };
static struct CUlogsCallbackEntry_st log_cbs[8];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

API CUresult cuLogsRegisterCallback(CUlogsCallback fn, void *data, CUlogsCallbackHandle *out)
{
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < 8; i++)
        if (!log_cbs[i].used) {
            log_cbs[i] = (struct CUlogsCallbackEntry_st){fn, data, 1};
            pthread_mutex_unlock(&log_lock);
            if (out)
                *out = &log_cbs[i];
            return CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&log_lock);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle h)
{
    if (!h || h < log_cbs || h >= log_cbs + 8 || !h->used)
        return CUDA_ERROR_INVALID_VALUE;
    h->used = 0;
    return CUDA_SUCCESS;
}
#endif

/* One message: to CUDA_LOG_FILE, then to every registered callback (outside
 * the lock, on the calling thread, as the real driver does). */
static void drv_log(const char *fmt, ...)
{
    char words[1024], line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(words, sizeof words, fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    snprintf(line, sizeof line, "[%02d:%02d:%02d.%03ld][%ld][CUDA][E] %s", tm.tm_hour, tm.tm_min, tm.tm_sec,
             ts.tv_nsec / 1000000, (long)syscall(SYS_gettid), words);
    const char *file = getenv("CUDA_LOG_FILE");
    if (file && *file) {
        FILE *f = strcmp(file, "stdout") == 0 ? stdout : strcmp(file, "stderr") == 0 ? stderr : fopen(file, "a");
        if (f) {
            fprintf(f, "%s\n", line);
            if (f != stdout && f != stderr)
                fclose(f);
            else
                fflush(f);
        }
    }
#ifndef CGTEST_NO_LOGS_API
    const char *msg = cgtest_env_num("CGTEST_LOG_PREFIX", 0) ? line : words;
    struct CUlogsCallbackEntry_st cbs[8];
    pthread_mutex_lock(&log_lock);
    memcpy(cbs, log_cbs, sizeof cbs);
    pthread_mutex_unlock(&log_lock);
    for (int i = 0; i < 8; i++)
        if (cbs[i].used) {
            char copy[1200];
            snprintf(copy, sizeof copy, "%s", msg);
            cbs[i].fn(cbs[i].data, CU_LOG_LEVEL_ERROR, copy, strlen(copy));
        }
#endif
}

/* Every failing call says so last, as the real driver does. */
static CUresult drv_ret(const char *fn, CUresult r)
{
    if (r != CUDA_SUCCESS)
        drv_log("Returning %d (%s) from %s", r, err_name(r), fn);
    return r;
}

/* ---- initialisation and context */
enum { UNINIT, READY, FAILED };
static int state = UNINIT;
struct CUctx_st { int dev; int refs; };
static struct CUctx_st primary;
static __thread CUcontext current; /* per thread, as in the real driver */

#define NEED_INIT() do { if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READY) return drv_ret(__func__, CUDA_ERROR_NOT_INITIALIZED); } while (0)
#define NEED_CTX() do { NEED_INIT(); if (!current) { drv_log("No CUDA context is current to the calling thread"); return drv_ret(__func__, CUDA_ERROR_INVALID_CONTEXT); } } while (0)

API CUresult cuInit(unsigned int flags)
{
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READY)
        __atomic_store_n(&state, cgtest_env_num("CGTEST_NO_DEVICE", 0) ? FAILED : READY, __ATOMIC_RELEASE);
    return drv_ret(__func__, __atomic_load_n(&state, __ATOMIC_ACQUIRE) == READY ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE);
}

/* The real driver answers this without cuInit. */
API CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = (int)cgtest_env_num("CGTEST_DRIVER_VERSION", 13000);
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *count)
{
    NEED_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    NEED_INIT();
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    NEED_INIT();
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", "convguard test double GPU");
    return CUDA_SUCCESS;
}

/* Compute capability 9.0 (Hopper); other attributes read as 0. */
API CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev)
{
    NEED_INIT();
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    *value = attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9
           : attrib == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 132 : 0;
    return CUDA_SUCCESS;
}

static size_t sim_free_bytes(void);

API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    NEED_INIT();
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    /* CGTEST_CTX_MB: what creating the context needs (the real one takes a
     * few hundred MiB); with less free, creation fails as on a full GPU */
    if (!__atomic_load_n(&primary.refs, __ATOMIC_RELAXED) && cgtest_env_num("CGTEST_CTX_MB", 0) * MiB > sim_free_bytes())
        return CUDA_ERROR_OUT_OF_MEMORY;
    __atomic_add_fetch(&primary.refs, 1, __ATOMIC_RELAXED);
    *ctx = &primary;
    return CUDA_SUCCESS;
}

/* cuCtxCreate (the _v2 of CUDA 3.2, the _v4 with CUctxCreateParams of 12.5):
 * one context is modelled, so the new one is the primary, retained and made
 * current; CGTEST_CTX_MB applies as to the primary's creation. */
static CUresult ctx_create(CUcontext *ctx, CUdevice dev)
{
    CUresult r = cuDevicePrimaryCtxRetain(ctx, dev);
    if (r == CUDA_SUCCESS)
        current = *ctx;
    return r;
}

API CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
    (void)flags;
    return ctx_create(ctx, dev);
}

API CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned int flags, CUdevice dev)
{
    (void)params, (void)flags;
    return ctx_create(ctx, dev);
}

API CUresult cuCtxSetCurrent(CUcontext ctx)
{
    NEED_INIT();
    if (ctx && ctx != &primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    current = ctx;
    return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    NEED_INIT();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = current;
    return CUDA_SUCCESS;
}

API CUresult cuCtxGetDevice(CUdevice *dev)
{
    NEED_CTX();
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = current->dev;
    return CUDA_SUCCESS;
}

/* ---- memory: a list of live blocks, so frees are checked and counted */
struct blk { struct blk *next; void *p; size_t n; };
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
/* Added for the fork tests (tests/preload/t_threads.sh): a child forked while
 * another thread held the lock starts with it free.  (The real driver is not
 * usable in a forked child at all; the double only needs not to hang.) */
static void mem_lock_child(void) { pthread_mutex_init(&mem_lock, NULL); }
__attribute__((constructor)) static void mem_lock_atfork(void) { pthread_atfork(NULL, NULL, mem_lock_child); }
static struct blk *blocks;
static size_t live;

static size_t total_bytes(void) { return cgtest_env_num("CGTEST_GPU_TOTAL_MB", 1024) * MiB; }

static size_t free_bytes_locked(void)
{
    size_t used = cgtest_env_num("CGTEST_GPU_HELD_MB", 0) * MiB + live;
    size_t total = total_bytes();
    return used >= total ? 0 : total - used;
}

static size_t sim_free_bytes(void)
{
    pthread_mutex_lock(&mem_lock);
    size_t f = free_bytes_locked();
    pthread_mutex_unlock(&mem_lock);
    return f;
}

static CUresult mem_alloc(void **out, size_t n)
{
    struct blk *b;
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;

    if (!out || n == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mem_lock);
    if (n <= free_bytes_locked() && (b = malloc(sizeof *b))) {
        /* calloc: large blocks are lazily zeroed pages, cheap even at 512 MiB */
        if ((b->p = calloc(1, n))) {
            b->n = n;
            b->next = blocks;
            blocks = b;
            live += n;
            *out = b->p; /* only on success: *ptr untouched otherwise */
            r = CUDA_SUCCESS;
        } else {
            free(b);
        }
    }
    pthread_mutex_unlock(&mem_lock);
    return r;
}

static CUresult mem_free(void *p)
{
    struct blk **pp, *b;

    static int failed;
    static _Atomic int fail_limit = -1, yield = -1; /* racing first readers store the same value */
    if (atomic_load_explicit(&fail_limit, memory_order_relaxed) < 0) { /* read once: frees are in the benchmarks' baseline */
        atomic_store_explicit(&yield, (int)cgtest_env_num("CGTEST_FREE_YIELD", 0), memory_order_relaxed);
        atomic_store_explicit(&fail_limit, (int)cgtest_env_num("CGTEST_FREE_FAIL", 0), memory_order_relaxed);
    }
    if (!p)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&mem_lock);
    for (pp = &blocks; (b = *pp); pp = &b->next)
        if (b->p == p)
            break;
    if (b && failed < fail_limit) {
        failed++;
        pthread_mutex_unlock(&mem_lock);
        return 719; /* CUDA_ERROR_LAUNCH_FAILED */
    }
    if (b) {
        *pp = b->next;
        live -= b->n;
    }
    pthread_mutex_unlock(&mem_lock);
    if (!b)
        return CUDA_ERROR_INVALID_VALUE;
    free(b->p);
    free(b);
    /* CGTEST_FREE_YIELD=1: the CPU given up once the address can be handed
     * out again, as a driver that still has work to do after releasing it
     * (the shim's pointer-table tests: another thread's allocation and free
     * of the same address run before this free returns) */
    if (atomic_load_explicit(&yield, memory_order_relaxed) > 0)
        sched_yield();
    return CUDA_SUCCESS;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t size)
{
    NEED_CTX();
    return mem_alloc((void **)ptr, size);
}

API CUresult cuMemFree_v2(CUdeviceptr ptr)
{
    NEED_CTX();
    return mem_free((void *)(uintptr_t)ptr);
}

/* Streams and pools are not simulated: async calls complete at once. */
API CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t size, CUstream s)
{
    (void)s;
    NEED_CTX();
    return mem_alloc((void **)ptr, size);
}

API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *ptr, size_t size, CUstream s)
{
    (void)s;
    NEED_CTX();
    return mem_alloc((void **)ptr, size);
}

API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s)
{
    (void)pool, (void)s;
    NEED_CTX();
    return mem_alloc((void **)ptr, size);
}

API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s)
{
    (void)pool, (void)s;
    NEED_CTX();
    return mem_alloc((void **)ptr, size);
}

API CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream s)
{
    (void)s;
    NEED_CTX();
    return mem_free((void *)(uintptr_t)ptr);
}

API CUresult cuMemFreeAsync_ptsz(CUdeviceptr ptr, CUstream s)
{
    (void)s;
    NEED_CTX();
    return mem_free((void *)(uintptr_t)ptr);
}

/* VMM: the handle is the block's address; no context needed (as for real). */
API CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                         const struct CUmemAllocationProp_st *prop, unsigned long long flags)
{
    void *p = NULL;
    CUresult r;

    NEED_INIT();
    if (!handle || !prop || flags)
        return CUDA_ERROR_INVALID_VALUE;
    /* CGTEST_MEMCREATE_DENY=N: the first N calls are refused the way a driver
     * refuses a shareable handle type PyTorch's expandable segments ask for */
    static int denied;
    if (__atomic_fetch_add(&denied, 1, __ATOMIC_RELAXED) < (int)cgtest_env_num("CGTEST_MEMCREATE_DENY", 0))
        return 800; /* CUDA_ERROR_NOT_PERMITTED */
    if ((r = mem_alloc(&p, size)) == CUDA_SUCCESS)
        *handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return r;
}

API CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    NEED_INIT();
    return handle ? mem_free((void *)(uintptr_t)handle) : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
    NEED_CTX();
    if (!free_b || !total_b)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mem_lock);
    *free_b = free_bytes_locked();
    pthread_mutex_unlock(&mem_lock);
    *total_b = total_bytes();
    return CUDA_SUCCESS;
}

/* ---- loading GPU code: a handle that knows whether the code has anything
 * for this (9.0) GPU, or CUDA_ERROR_OUT_OF_MEMORY when less than
 * CGTEST_CODE_MB MiB is free (a NULL image is invalid) */
struct CUmod_st { int fits; };
struct CUlib_st { int fits; };
struct CUfunc_st { int unused; };
static struct CUfunc_st the_function;

enum { IMG_FITS, IMG_NO_CODE, IMG_PTX_TOO_NEW, IMG_FITS_DUPLICATE };
/* What the real driver says (measured on the H200, driver 580.159) */
#define JIT_LOG_HINT ", to get more information when using CUDA Driver APIs use the CU_JIT_ERROR_LOG_BUFFER and " \
                     "CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES parameters"
static void log_no_code(void)
{
    drv_log("Error handling fatbinary" JIT_LOG_HINT);
    drv_log("No available relocatable PTX entries for GPU");
    drv_log("No device code available for GPU ISA 90");
}
/* What this double's GPU (9.0, PTX up to ISA 9.0) makes of an image. */
static int image_verdict(const void *image)
{
    const unsigned char *p = image;
    uint32_t magic;
    memcpy(&magic, p, 4);
    if (magic == 0xBA55ED50u) {
        uint16_t hsize;
        uint64_t size;
        memcpy(&hsize, p + 6, 2);
        memcpy(&size, p + 8, 8);
        int fits = 0, dup = 0;
        uint32_t seen[16];
        int nseen = 0;
        for (const unsigned char *e = p + hsize; e + 32 <= p + hsize + size;) {
            uint16_t kind, minor, major;
            uint32_t eh, arch;
            uint64_t len;
            memcpy(&kind, e, 2), memcpy(&eh, e + 4, 4), memcpy(&len, e + 8, 8);
            memcpy(&minor, e + 24, 2), memcpy(&major, e + 26, 2), memcpy(&arch, e + 28, 4);
            if (kind == 2 && arch == 90)
                fits = 1;
            for (int i = 0; i < nseen; i++)
                dup |= seen[i] == (kind << 16 | arch);
            if (nseen < 16)
                seen[nseen++] = kind << 16 | arch;
            if (kind == 1 && arch <= 90 && major * 10 + minor <= 90)
                fits = 1;
            if (eh < 32)
                break;
            e += eh + len;
        }
        return fits ? (dup ? IMG_FITS_DUPLICATE : IMG_FITS) : IMG_NO_CODE;
    }
    const char *v = strstr((const char *)image, "\n.version ");
    if (v && (atoi(v + 10) > 9 || (atoi(v + 10) == 9 && atoi(strchr(v + 10, '.') + 1) > 0)))
        return IMG_PTX_TOO_NEW;
    return IMG_FITS; /* anything else: a module of nothing */
}

static CUresult code_load(const char *fn, void **out, const void *what, size_t sz, int is_image)
{
    NEED_CTX();
    if (!out || !what) {
        if (!what)
            drv_log("image cannot be NULL");
        return drv_ret(fn, CUDA_ERROR_INVALID_VALUE);
    }
    if (sim_free_bytes() < cgtest_env_num("CGTEST_CODE_MB", 1) * MiB)
        return drv_ret(fn, CUDA_ERROR_OUT_OF_MEMORY);
    int v = is_image ? image_verdict(what) : IMG_FITS;
    if (v == IMG_PTX_TOO_NEW) {
        drv_log("JIT compilation failed" JIT_LOG_HINT);
        drv_log("No device code available for GPU ISA 90");
        return drv_ret(fn, CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    }
    const char *loading = getenv("CUDA_MODULE_LOADING");
    if (v == IMG_NO_CODE && loading && strcmp(loading, "EAGER") == 0) {
        log_no_code();
        return drv_ret(fn, CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    if (v == IMG_FITS_DUPLICATE) /* a note of a load that works (cuDNN's fatbinaries under JAX) */
        drv_log("Duplicate entry kernels named \"_Z6kernelPf\"");
    int *h = calloc(1, sz);
    if (!h)
        return drv_ret(fn, CUDA_ERROR_OUT_OF_MEMORY);
    *h = v != IMG_NO_CODE; /* lazy loading: code with nothing for this GPU fails at the lookup */
    *out = h;
    return CUDA_SUCCESS;
}

API CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    return code_load(__func__, (void **)module, fname, sizeof(struct CUmod_st), 0);
}

API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return code_load(__func__, (void **)module, image, sizeof(struct CUmod_st), 1);
}

API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options,
                                void **values)
{
    (void)n, (void)options, (void)values;
    return code_load(__func__, (void **)module, image, sizeof(struct CUmod_st), 1);
}

API CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatbin)
{
    return code_load(__func__, (void **)module, fatbin, sizeof(struct CUmod_st), 1);
}

/* Not hooked by convguard: a failure here is seen only through the log. */
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule module, const char *name)
{
    NEED_INIT();
    if (!module)
        return drv_ret(__func__, CUDA_ERROR_INVALID_HANDLE);
    if (!f || !name)
        return drv_ret(__func__, CUDA_ERROR_INVALID_VALUE);
    if (!module->fits) {
        log_no_code();
        drv_log("Kernel (%s) cannot be found in module due to compilation error" JIT_LOG_HINT, name);
        return drv_ret(__func__, CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    *f = &the_function;
    return CUDA_SUCCESS;
}

API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary library, const char *name)
{
    NEED_INIT();
    if (!library)
        return drv_ret(__func__, CUDA_ERROR_INVALID_HANDLE);
    if (!k || !name)
        return drv_ret(__func__, CUDA_ERROR_INVALID_VALUE);
    if (!library->fits) {
        log_no_code();
        drv_log("Kernel (%s) cannot be found in library due to compilation error" JIT_LOG_HINT, name);
        return drv_ret(__func__, CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    *k = (CUkernel)&the_function;
    return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s, (void)params, (void)extra;
    NEED_CTX();
    if (f != &the_function)
        return drv_ret(__func__, CUDA_ERROR_INVALID_HANDLE);
    return CUDA_SUCCESS;
}

API CUresult cuModuleUnload(CUmodule module)
{
    NEED_INIT();
    free(module);
    return module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jit_options, void **jit_values,
                               unsigned int n_jit, CUlibraryOption *lib_options, void **lib_values, unsigned int n_lib)
{
    (void)jit_options, (void)jit_values, (void)n_jit, (void)lib_options, (void)lib_values, (void)n_lib;
    return code_load(__func__, (void **)library, code, sizeof(struct CUlib_st), 1);
}

API CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fname, CUjit_option *jit_options,
                                   void **jit_values, unsigned int n_jit, CUlibraryOption *lib_options,
                                   void **lib_values, unsigned int n_lib)
{
    (void)jit_options, (void)jit_values, (void)n_jit, (void)lib_options, (void)lib_values, (void)n_lib;
    return code_load(__func__, (void **)library, fname, sizeof(struct CUlib_st), 0);
}

API CUresult cuLibraryUnload(CUlibrary library)
{
    NEED_INIT();
    free(library);
    return library ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API size_t cgtestGpuLiveBytes(void)
{
    size_t n;

    pthread_mutex_lock(&mem_lock);
    n = live;
    pthread_mutex_unlock(&mem_lock);
    return n;
}

API void cgtestGpuHolder(unsigned int *pid, size_t *bytes)
{
    if (pid)
        *pid = (unsigned int)cgtest_env_num("CGTEST_HOLDER_PID", 4242);
    if (bytes)
        *bytes = cgtest_env_num("CGTEST_GPU_HELD_MB", 0) * MiB;
}

/* ---- entry points.  Base name -> function, as the real driver's table:
 * the entry whose `since` is <= the requested version wins (first match),
 * `ptsz` is used when flags ask for per-thread default stream. */
static const struct proc {
    const char *base;
    int since;
    void *fn, *ptsz;
} procs[] = {
    { "cuInit", 2000, (void *)cuInit, NULL },
    { "cuDriverGetVersion", 2020, (void *)cuDriverGetVersion, NULL },
    { "cuDeviceGetCount", 2000, (void *)cuDeviceGetCount, NULL },
    { "cuDeviceGet", 2000, (void *)cuDeviceGet, NULL },
    { "cuDeviceGetName", 2000, (void *)cuDeviceGetName, NULL },
    { "cuDeviceGetAttribute", 2000, (void *)cuDeviceGetAttribute, NULL },
    { "cuDevicePrimaryCtxRetain", 7000, (void *)cuDevicePrimaryCtxRetain, NULL },
    { "cuCtxCreate", 12050, (void *)cuCtxCreate_v4, NULL },
    { "cuCtxCreate", 3020, (void *)cuCtxCreate_v2, NULL },
    { "cuCtxSetCurrent", 4000, (void *)cuCtxSetCurrent, NULL },
    { "cuCtxGetCurrent", 4000, (void *)cuCtxGetCurrent, NULL },
    { "cuCtxGetDevice", 2000, (void *)cuCtxGetDevice, NULL },
    { "cuMemAlloc", 3020, (void *)cuMemAlloc_v2, NULL },
    { "cuMemFree", 3020, (void *)cuMemFree_v2, NULL },
    { "cuMemGetInfo", 3020, (void *)cuMemGetInfo_v2, NULL },
    { "cuMemAllocAsync", 11020, (void *)cuMemAllocAsync, (void *)cuMemAllocAsync_ptsz },
    { "cuMemAllocFromPoolAsync", 11020, (void *)cuMemAllocFromPoolAsync,
      (void *)cuMemAllocFromPoolAsync_ptsz },
    { "cuMemFreeAsync", 11020, (void *)cuMemFreeAsync, (void *)cuMemFreeAsync_ptsz },
    { "cuMemCreate", 10020, (void *)cuMemCreate, NULL },
    { "cuMemRelease", 10020, (void *)cuMemRelease, NULL },
    { "cuModuleLoad", 2000, (void *)cuModuleLoad, NULL },
    { "cuModuleLoadData", 2000, (void *)cuModuleLoadData, NULL },
    { "cuModuleLoadDataEx", 2010, (void *)cuModuleLoadDataEx, NULL },
    { "cuModuleLoadFatBinary", 2000, (void *)cuModuleLoadFatBinary, NULL },
    { "cuModuleUnload", 2000, (void *)cuModuleUnload, NULL },
    { "cuLibraryLoadData", 12000, (void *)cuLibraryLoadData, NULL },
    { "cuLibraryLoadFromFile", 12000, (void *)cuLibraryLoadFromFile, NULL },
    { "cuLibraryUnload", 12000, (void *)cuLibraryUnload, NULL },
    { "cuModuleGetFunction", 2000, (void *)cuModuleGetFunction, NULL },
    { "cuLibraryGetKernel", 12000, (void *)cuLibraryGetKernel, NULL },
    { "cuLaunchKernel", 4000, (void *)cuLaunchKernel, NULL },
#ifndef CGTEST_NO_LOGS_API
    { "cuLogsRegisterCallback", 12090, (void *)cuLogsRegisterCallback, NULL },
    { "cuLogsUnregisterCallback", 12090, (void *)cuLogsUnregisterCallback, NULL },
#endif
    { "cuGetProcAddress", 12000, (void *)cuGetProcAddress_v2, NULL },
    { "cuGetProcAddress", 11030, (void *)cuGetProcAddress, NULL },
    { "cuGetErrorName", 6000, (void *)cuGetErrorName, NULL },
    { "cuGetErrorString", 6000, (void *)cuGetErrorString, NULL },
};

/* Unknown names give CUDA_ERROR_NOT_FOUND like the shipping drivers (the
 * header's comment says CUDA_SUCCESS with NULL); the _v2 names are not keys. */
API CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *status)
{
    int known = 0;
    size_t i;

    if (!symbol || !fn)
        return CUDA_ERROR_INVALID_VALUE;
    if (version > (int)cgtest_env_num("CGTEST_DRIVER_VERSION", 13000))
        return CUDA_ERROR_INVALID_VALUE;
    for (i = 0; i < sizeof procs / sizeof procs[0]; i++) {
        if (strcmp(procs[i].base, symbol))
            continue;
        known = 1;
        if (version < procs[i].since)
            continue;
        *fn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && procs[i].ptsz
                  ? procs[i].ptsz : procs[i].fn;
        if (status)
            *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    *fn = NULL;
    if (status)
        *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}

API CUresult cuGetProcAddress(const char *symbol, void **fn, int version, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, fn, version, flags, NULL);
}

static const struct { CUresult e; const char *name, *str; } errs[] = {
    { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
    { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device" },
    { CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain." },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
};

static const char *err_name(CUresult e)
{
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (errs[i].e == e)
            return errs[i].name;
    return "CUDA_ERROR_UNKNOWN";
}

static CUresult err_lookup(CUresult err, const char **out, int want_name)
{
    size_t i;

    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    for (i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (errs[i].e == err) {
            *out = want_name ? errs[i].name : errs[i].str;
            return CUDA_SUCCESS;
        }
    *out = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorName(CUresult err, const char **name) { return err_lookup(err, name, 1); }
API CUresult cuGetErrorString(CUresult err, const char **str) { return err_lookup(err, str, 0); }
