/* client_memroutes.c - GPU memory on each of the three routes (test client
 * of convguard's resource layer, tests/preload/t_resource_mem.sh).
 *
 *   client_memroutes plt     cudaMalloc / cudaFree / cudaMallocAsync through
 *                            the PLT (linked against libcudart.so.13), whose
 *                            cuMemAlloc_v2 inside cudart is itself wrapped
 *   client_memroutes dlsym   cuMemAlloc_v2 / cuMemFree_v2 / cuMemCreate /
 *                            cuMemRelease from dlsym on libcuda.so.1
 *   client_memroutes entry   the same functions from cuGetProcAddress_v2
 *                            (itself from dlsym), as cudart and cuDNN get them
 *   client_memroutes churn   60000 cuMemAlloc_v2/cuMemFree_v2 (dlsym), 4096
 *                            alive at a time; prints the bytes left allocated
 *   client_memroutes churn_mt  8 threads share one ring of 1024 blocks
 *                            (cuMemAlloc_v2/cuMemFree_v2, dlsym): a block
 *                            allocated by one thread is freed by another,
 *                            and its address handed out again at once; prints
 *                            the bytes the driver says are still allocated
 *   client_memroutes churn_hot the same with a ring of 16 blocks of one size
 *                            and 100000 iterations per thread: every freed
 *                            address is the next one handed out, and the
 *                            blocks of one address follow each other across
 *                            threads as fast as they can.  Both: a free that
 *                            fails is tried again; prints the failures
 *   client_memroutes pool    as XLA starts (entry points): preallocates
 *                            CG_POOL_FRACTION (default 0.75) of the total
 *                            memory cuMemGetInfo_v2 reports, backing off by
 *                            0.9 while that fails (XLA's BFC allocator), then
 *                            loads a kernel with cuModuleLoadData; exit 1
 *                            with XLA's message when that fails
 * Each mode: a few allocations that work, one of 2 GiB that fails (the
 * doubles' GPU has 1 GiB), frees, and leaves 1 MiB allocated at exit.  It
 * prints every status and what happened to every out-parameter (set /
 * untouched, never an address), so runs with and without the shim diff
 * equal. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_double.h"

#define MIB ((size_t)1 << 20)
static const char *dlerr(void)
{
    const char *e = dlerror();
    return e ? e : "(null)";
}

#define BIG ((size_t)2 << 30)
#define SENTINEL 0x5e5e5e5eull

static const char *dptr(CUdeviceptr p) { return p == SENTINEL ? "untouched" : p ? "set" : "zero"; }

static int plt(void)
{
    void *p = (void *)(uintptr_t)SENTINEL, *keep = (void *)(uintptr_t)SENTINEL, *q = (void *)(uintptr_t)SENTINEL;
    cudaError_t e = cudaMalloc(&p, 4 * MIB);
    printf("cudaMalloc(4 MiB) = %d %s ptr %s\n", e, cudaGetErrorName(e), dptr((uintptr_t)p));
    e = cudaMalloc(&keep, MIB);
    printf("cudaMalloc(1 MiB) = %d %s ptr %s\n", e, cudaGetErrorName(e), dptr((uintptr_t)keep));
    e = cudaMalloc(&q, BIG);
    printf("cudaMalloc(2 GiB) = %d %s ptr %s\n", e, cudaGetErrorName(e), dptr((uintptr_t)q));
    e = cudaFree(p);
    printf("cudaFree = %d\n", e);
    q = (void *)(uintptr_t)SENTINEL;
    e = cudaMallocAsync(&q, BIG, NULL);
    printf("cudaMallocAsync(2 GiB) = %d %s ptr %s\n", e, cudaGetErrorName(e), dptr((uintptr_t)q));
    q = (void *)(uintptr_t)SENTINEL;
    e = cudaMallocAsync(&q, 2 * MIB, NULL);
    printf("cudaMallocAsync(2 MiB) = %d ptr %s\n", e, dptr((uintptr_t)q));
    e = cudaFreeAsync(q, NULL);
    printf("cudaFreeAsync = %d\n", e);
    e = cudaFree(NULL);
    printf("cudaFree(NULL) = %d\n", e);
    size_t fr = SENTINEL, tot = SENTINEL;
    e = cudaMemGetInfo(&fr, &tot);
    printf("cudaMemGetInfo = %d free %zu total %zu\n", e, fr, tot);
    return 0;
}

struct drv {
    CUresult (*init)(unsigned);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_cur)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const struct CUmemAllocationProp_st *,
                       unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*info)(size_t *, size_t *);
    CUresult (*load)(CUmodule *, const void *);
};

static int driver(struct drv *d)
{
    CUcontext c = NULL;
    CUresult r = d->init(0);
    printf("cuInit = %d\n", r);
    r = d->retain(&c, 0);
    printf("cuDevicePrimaryCtxRetain = %d ctx %s\n", r, c ? "set" : "null");
    r = d->set_cur(c);
    printf("cuCtxSetCurrent = %d\n", r);
    CUdeviceptr p = SENTINEL, keep = SENTINEL, q = SENTINEL;
    r = d->alloc(&p, 4 * MIB);
    printf("cuMemAlloc_v2(4 MiB) = %d ptr %s\n", r, dptr(p));
    r = d->alloc(&keep, MIB);
    printf("cuMemAlloc_v2(1 MiB) = %d ptr %s\n", r, dptr(keep));
    r = d->alloc(&q, BIG);
    printf("cuMemAlloc_v2(2 GiB) = %d ptr %s\n", r, dptr(q));
    r = d->free(p);
    printf("cuMemFree_v2 = %d\n", r);
    unsigned char prop[64] = {0}; /* only passed through: the double checks it is non-null */
    CUmemGenericAllocationHandle h = SENTINEL;
    r = d->create(&h, BIG, (const struct CUmemAllocationProp_st *)prop, 0);
    printf("cuMemCreate(2 GiB) = %d handle %s\n", r, dptr(h));
    h = SENTINEL;
    r = d->create(&h, 2 * MIB, (const struct CUmemAllocationProp_st *)prop, 0);
    printf("cuMemCreate(2 MiB) = %d handle %s\n", r, dptr(h));
    r = d->release(h);
    printf("cuMemRelease = %d\n", r);
    r = d->free((CUdeviceptr)SENTINEL);
    printf("cuMemFree_v2(never allocated) = %d\n", r);
    r = d->free(0);
    printf("cuMemFree_v2(0) = %d\n", r);
    size_t fr = SENTINEL, tot = SENTINEL;
    r = d->info(&fr, &tot);
    printf("cuMemGetInfo_v2 = %d free %zu total %zu\n", r, fr, tot);
    return 0;
}

/* Many allocations, 4096 alive at a time: the shim's pointer table must
 * neither fill up nor drift.  Prints the bytes still allocated at the end. */
static int churn(struct drv *d)
{
    static CUdeviceptr ring[4096];
    static size_t sizes[4096];
    CUcontext c = NULL;
    d->init(0);
    d->retain(&c, 0);
    d->set_cur(c);
    int bad = 0;
    for (unsigned i = 0; i < 60000; i++) {
        unsigned k = (i * 2654435761u) % 4096;
        if (ring[k] && d->free(ring[k]))
            bad++;
        sizes[k] = (size_t)(i % 7 + 1) * 4096;
        if (d->alloc(&ring[k], sizes[k]))
            bad++, ring[k] = 0;
    }
    size_t left = 0, blocks = 0;
    for (unsigned k = 0; k < 4096; k++) {
        if (ring[k] && k % 2 && d->free(ring[k]) == 0)
            ring[k] = 0;
        if (ring[k])
            left += sizes[k], blocks++;
    }
    printf("churn: %d failures, %zu blocks of %zu bytes still allocated\n", bad, blocks, left);
    return 0;
}

/* Threads sharing one ring: each slot is swapped out atomically, freed by
 * whichever thread took it, and refilled, so blocks cross threads and the
 * double's malloc hands freed addresses out again at once. */
#define MT_THREADS 8
#define MT_RING_MAX 1024
static struct drv *mt_d;
static CUcontext mt_ctx;
static _Atomic CUdeviceptr mt_ring[MT_RING_MAX];
static _Atomic int mt_bad;
static unsigned mt_iters, mt_ring_len, mt_sizes; /* sizes: 1..mt_sizes pages */

/* A free that fails (CGTEST_FREE_FAIL) leaves the block allocated: tried
 * again, as a program that keeps the block would (a few times at most). */
static void mt_free(CUdeviceptr p)
{
    for (int tries = 0; tries < 100 && mt_d->free(p); tries++)
        mt_bad++;
}

static void *churn_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    mt_d->set_cur(mt_ctx); /* the current context is per thread */
    for (unsigned i = 0; i < mt_iters; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % mt_ring_len;
        CUdeviceptr old = atomic_exchange(&mt_ring[k], 0);
        if (old)
            mt_free(old);
        CUdeviceptr p = 0;
        if (mt_d->alloc(&p, (size_t)(seed % mt_sizes + 1) * 4096)) {
            mt_bad++;
            continue;
        }
        old = atomic_exchange(&mt_ring[k], p);
        if (old)
            mt_free(old);
    }
    return NULL;
}

static int churn_mt(struct drv *d, const char *name, unsigned iters, unsigned ring, unsigned sizes)
{
    CUcontext c = NULL;
    d->init(0);
    d->retain(&c, 0);
    d->set_cur(c);
    mt_d = d;
    mt_ctx = c;
    mt_iters = iters, mt_ring_len = ring, mt_sizes = sizes;
    pthread_t t[MT_THREADS];
    for (uintptr_t i = 0; i < MT_THREADS; i++)
        pthread_create(&t[i], NULL, churn_thread, (void *)i);
    for (int i = 0; i < MT_THREADS; i++)
        pthread_join(t[i], NULL);
    size_t fr = 0, tot = 0, blocks = 0;
    CUresult r = d->info(&fr, &tot);
    for (unsigned k = 0; k < ring; k++)
        blocks += mt_ring[k] != 0;
    printf("%s: %d failures, info %d, %zu blocks of %zu bytes still allocated\n", name, (int)mt_bad, r, blocks,
           tot - fr);
    return 0;
}

static int pool(struct drv *d)
{
    CUcontext c = NULL;
    CUresult r = d->init(0);
    printf("cuInit = %d\n", r);
    r = d->retain(&c, 0);
    printf("cuDevicePrimaryCtxRetain = %d\n", r);
    r = d->set_cur(c);
    printf("cuCtxSetCurrent = %d\n", r);
    size_t fr = 0, tot = 0;
    r = d->info(&fr, &tot);
    printf("cuMemGetInfo_v2 = %d free %zu total %zu\n", r, fr, tot);
    const char *f = getenv("CG_POOL_FRACTION");
    size_t want = (size_t)((f ? atof(f) : 0.75) * (double)tot);
    CUdeviceptr p = 0;
    while (want >= MIB && (r = d->alloc(&p, want)) != CUDA_SUCCESS) {
        printf("pool of %zu bytes: %d, backing off\n", want, r);
        want = (size_t)(want * 0.9);
    }
    printf("pool of %zu bytes = %d\n", want, r);
    CUmodule m = NULL;
    r = d->load(&m, "kernel image");
    printf("cuModuleLoadData = %d module %s\n", r, m ? "set" : "null");
    if (r) {
        printf("RESOURCE_EXHAUSTED: Failed to load in-memory CUBIN: CUDA_ERROR_OUT_OF_MEMORY\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "plt"))
        return plt();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(libcuda.so.1) = %s\n", lib ? "ok" : dlerr());
    if (!lib)
        return 1;
    struct drv d;
    if (!strcmp(mode, "dlsym") || !strcmp(mode, "churn") || !strcmp(mode, "churn_mt") ||
        !strcmp(mode, "churn_hot")) {
        *(void **)&d.init = dlsym(lib, "cuInit");
        *(void **)&d.retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
        *(void **)&d.set_cur = dlsym(lib, "cuCtxSetCurrent");
        *(void **)&d.alloc = dlsym(lib, "cuMemAlloc_v2");
        *(void **)&d.free = dlsym(lib, "cuMemFree_v2");
        *(void **)&d.create = dlsym(lib, "cuMemCreate");
        *(void **)&d.release = dlsym(lib, "cuMemRelease");
        *(void **)&d.info = dlsym(lib, "cuMemGetInfo_v2");
    } else if (!strcmp(mode, "entry") || !strcmp(mode, "pool")) {
        CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
        *(void **)&gpa = dlsym(lib, "cuGetProcAddress_v2");
        static const char *const names[] = {"cuInit", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc",
                                            "cuMemFree", "cuMemCreate", "cuMemRelease", "cuMemGetInfo",
                                            "cuModuleLoadData"};
        void **slots[] = {(void **)&d.init, (void **)&d.retain, (void **)&d.set_cur, (void **)&d.alloc,
                          (void **)&d.free, (void **)&d.create, (void **)&d.release, (void **)&d.info,
                          (void **)&d.load};
        for (int i = 0; i < (!strcmp(mode, "pool") ? 9 : 8); i++) {
            CUdriverProcAddressQueryResult st = -1;
            CUresult r = gpa(names[i], slots[i], 13000, 0, &st);
            printf("cuGetProcAddress_v2(%s) = %d status %d\n", names[i], r, st);
        }
    } else {
        fprintf(stderr, "usage: client_memroutes plt|dlsym|entry|churn|churn_mt|churn_hot|pool\n");
        return 2;
    }
    return !strcmp(mode, "churn")      ? churn(&d)
           : !strcmp(mode, "churn_mt") ? churn_mt(&d, mode, 20000, 1024, 7)
           : !strcmp(mode, "churn_hot") ? churn_mt(&d, mode, 100000, 16, 1)
           : !strcmp(mode, "pool")     ? pool(&d)
                                       : driver(&d);
}
