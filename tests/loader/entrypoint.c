/* entrypoint.c - driver functions fetched through cudaGetDriverEntryPoint
 * and cudaGetDriverEntryPointByVersion (PyTorch's expandable segments do
 * this), then called: 16 bytes that fit, 2 GiB that do not (the doubles'
 * GPU has 1 GiB).  Run against the cudart double with
 * CGTEST_CUDART_RAW_DLSYM=1, the runtime's own driver functions come from
 * libcuda untouched, so only the shim's wrapper of those two functions can
 * make the calls through them visible.  Prints every status. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*free_fn)(unsigned long long);
typedef int (*ep_fn)(const char *, void **, unsigned long long, int *);
typedef int (*epv_fn)(const char *, void **, unsigned int, unsigned long long, int *);

int main(void)
{
    void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!rt) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    int (*rt_malloc)(void **, size_t) = (int (*)(void **, size_t))dlsym(rt, "cudaMalloc");
    int (*rt_free)(void *) = (int (*)(void *))dlsym(rt, "cudaFree");
    ep_fn ep = (ep_fn)dlsym(rt, "cudaGetDriverEntryPoint");
    epv_fn epv = (epv_fn)dlsym(rt, "cudaGetDriverEntryPointByVersion");
    void *p = NULL;
    printf("cudaMalloc(16) = %d\n", rt_malloc(&p, 16)); /* the runtime makes the context current */
    printf("cudaFree = %d\n", rt_free(p));

    void *a = NULL, *f = NULL;
    int st = -1;
    int r = ep("cuMemAlloc", &a, 0, &st);
    printf("cudaGetDriverEntryPoint(cuMemAlloc) = %d status=%d fn=%s\n", r, st, a ? "set" : "NULL");
    r = epv("cuMemFree", &f, 12000, 0, &st);
    printf("cudaGetDriverEntryPointByVersion(cuMemFree, 12000) = %d status=%d fn=%s\n", r, st, f ? "set" : "NULL");
    if (!a || !f)
        return 1;
    unsigned long long d = 0, big = 0;
    r = ((alloc_fn)a)(&d, 16);
    printf("cuMemAlloc(16) through it = %d\n", r);
    printf("cuMemFree through it = %d\n", ((free_fn)f)(d));
    r = ((alloc_fn)a)(&big, (size_t)2 << 30);
    printf("cuMemAlloc(2 GiB) through it = %d ptr %s\n", r, big ? "changed" : "untouched");
    return 0;
}
