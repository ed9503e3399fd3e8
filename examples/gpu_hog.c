/* gpu_hog.c - holds all but N MiB of a GPU's memory, then sleeps: the
 * "leftover process" of the seeds, to put another job under pressure.
 *
 *   gpu_hog LEAVE_MIB [SECONDS] [DEVICE]     (defaults: 300 MiB left, 600 s, device 0)
 *
 * It allocates with the CUDA runtime's cudaMalloc when libcudart (13 or 12)
 * can be loaded, else with the driver's cuMemAlloc_v2 (libcuda.so.1 is there
 * wherever a GPU is): big blocks first, then smaller ones, until no more than
 * LEAVE_MIB is free.  When done it prints one line
 *   holding <bytes> bytes, free <bytes> of <bytes>, pid <pid>
 * and sleeps (a killed or finished hog gives everything back).
 * No CUDA headers needed: the prototypes are declared here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

/* runtime */
static int (*rt_set_device)(int);
static int (*rt_malloc)(void **, size_t);
static int (*rt_mem_info)(size_t *, size_t *);
/* driver */
static int (*cu_init)(unsigned);
static int (*cu_device_get)(int *, int);
static int (*cu_retain)(void **, int);
static int (*cu_set_current)(void *);
static int (*cu_alloc)(unsigned long long *, size_t);
static int (*cu_mem_info)(size_t *, size_t *);

static int mem_info(size_t *fr, size_t *tot) { return rt_malloc ? rt_mem_info(fr, tot) : cu_mem_info(fr, tot); }

static int alloc(size_t n)
{
    if (rt_malloc) {
        void *p;
        return rt_malloc(&p, n);
    }
    unsigned long long d;
    return cu_alloc(&d, n);
}

static int use_runtime(int dev)
{
    static const char *const names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
            continue;
        *(void **)&rt_set_device = dlsym(h, "cudaSetDevice");
        *(void **)&rt_malloc = dlsym(h, "cudaMalloc");
        *(void **)&rt_mem_info = dlsym(h, "cudaMemGetInfo");
        if (rt_set_device && rt_malloc && rt_mem_info && rt_set_device(dev) == 0) {
            printf("using %s (cudaMalloc)\n", names[i]);
            return 1;
        }
        rt_malloc = NULL;
    }
    return 0;
}

static int use_driver(int dev)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *ctx = NULL;
    int d = 0;
    if (!h) {
        fprintf(stderr, "gpu_hog: neither libcudart nor libcuda.so.1 can be loaded: %s\n", dlerror());
        return 0;
    }
    *(void **)&cu_init = dlsym(h, "cuInit");
    *(void **)&cu_device_get = dlsym(h, "cuDeviceGet");
    *(void **)&cu_retain = dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&cu_set_current = dlsym(h, "cuCtxSetCurrent");
    *(void **)&cu_alloc = dlsym(h, "cuMemAlloc_v2");
    *(void **)&cu_mem_info = dlsym(h, "cuMemGetInfo_v2");
    if (!cu_init || !cu_device_get || !cu_retain || !cu_set_current || !cu_alloc || !cu_mem_info ||
        cu_init(0) || cu_device_get(&d, dev) || cu_retain(&ctx, d) || cu_set_current(ctx)) {
        fprintf(stderr, "gpu_hog: the driver would not start a context on device %d\n", dev);
        return 0;
    }
    printf("using libcuda.so.1 (cuMemAlloc_v2)\n");
    return 1;
}

int main(int argc, char **argv)
{
    size_t leave = (argc > 1 ? strtoull(argv[1], NULL, 10) : 300) * MIB;
    unsigned seconds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 600;
    int dev = argc > 3 ? atoi(argv[3]) : 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!use_runtime(dev) && !use_driver(dev))
        return 1;
    size_t fr = 0, tot = 0, held = 0;
    if (mem_info(&fr, &tot)) {
        fprintf(stderr, "gpu_hog: cannot read free memory\n");
        return 1;
    }
    /* 1 GiB blocks, then halving down to 2 MiB, while more than `leave` is free */
    for (size_t block = 1024 * MIB; block >= 2 * MIB && fr > leave;) {
        if (fr - leave < block || alloc(block)) {
            block /= 2;
        } else {
            held += block;
        }
        mem_info(&fr, &tot);
    }
    printf("holding %zu bytes, free %zu of %zu, pid %d\n", held, fr, tot, (int)getpid());
    sleep(seconds);
    return 0;
}
