/* unbound_lib.c - libunbound.so / libunbound_weak.so (-DUNBOUND_WEAK) of unbound.c:
 * no DT_NEEDED on libcuda.so.1; cuMemAllocAsync comes from whatever defines it. */
typedef unsigned long long CUdeviceptr;
#ifdef UNBOUND_WEAK
int cuMemAllocAsync(CUdeviceptr *ptr, unsigned long size, void *stream) __attribute__((weak));
int call_it(void)
{
    CUdeviceptr p = 0;
    return cuMemAllocAsync ? cuMemAllocAsync(&p, 0, 0) : -1;
}
#else
int cuMemAllocAsync(CUdeviceptr *ptr, unsigned long size, void *stream);
int call_it(void)
{
    CUdeviceptr p = 0;
    return cuMemAllocAsync(&p, 0, 0);
}
#endif
