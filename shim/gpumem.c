/* gpumem.c - GPU memory on all three routes: how much this process holds,
 * its peak, and every failed allocation in bytes.
 *
 * Hot path (an allocation or a free that succeeds): the real call, then a
 * few relaxed atomics: live/peak/largest counters and one slot of a
 * lock-free open-addressing table that remembers each pointer's size (the
 * free calls do not say it).  No syscall, no lock, no formatting.  Failures
 * write an `alloc_failed` event with the GPU's free/total memory at that
 * moment, this process's live bytes, the largest allocation that worked,
 * the holders (NVML) and the caller.
 *
 * Counting once: cudaMalloc (reached by the PLT or dlsym) calls
 * cuMemAlloc_v2 inside libcudart through an entry point that is ours too.
 * A thread-local depth, raised around every runtime-level call, makes the
 * driver wrappers forward untouched while it is non-zero: the allocation is
 * counted once, at the level the program called.  Chosen over matching
 * pointers because it costs two thread-local increments and no lookups,
 * and it stays right when cudart pools or splits allocations.  A nested
 * driver failure is kept (driver_status) for the runtime-level event. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "fallback.h"
#include "gpuinfo.h"

/* ---- counters */
static _Atomic uint64_t live, peak, allocs, frees, largest_ok;
static _Atomic uint64_t failures, failures_unwritten, untracked, unknown_frees;
#define MAX_FAILURE_EVENTS 256 /* past this, alloc_failed events are counted, not written */

/* ---- pointer (and VMM handle) -> size.  Open addressing, at most PROBES
 * slots from a key's hash; freed slots become tombstones that later keys
 * reuse, so lookups stay bounded however long the program runs.  A key that
 * finds no slot is counted in `untracked` and left out of live bytes. */
#define TABLE_BITS 16
#define TABLE_SIZE (1u << TABLE_BITS)
#define PROBES 32
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)
struct slot {
    _Atomic uintptr_t key;
    _Atomic uint64_t size;
};
static struct slot ptr_table[TABLE_SIZE], handle_table[TABLE_SIZE];

static inline uint32_t hash(uintptr_t k)
{
    return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> (64 - TABLE_BITS));
}

/* Claims a slot for k.  One compare-and-swap on the key (two threads may
 * want the same empty slot); the size is written after it, by the owner.
 * The first probe inline (it nearly always claims), the rest out of line. */
static __attribute__((noinline)) bool table_put_more(struct slot *t, uintptr_t k, uint64_t size, uint32_t i)
{
    for (int n = 0; n < PROBES; n++, i = (i + 1) & (TABLE_SIZE - 1)) {
        uintptr_t cur = atomic_load_explicit(&t[i].key, memory_order_relaxed);
        if (cur <= TOMB &&
            atomic_compare_exchange_strong_explicit(&t[i].key, &cur, k, memory_order_relaxed, memory_order_relaxed)) {
            atomic_store_explicit(&t[i].size, size, memory_order_relaxed);
            return true;
        }
    }
    return false;
}

static inline bool table_put(struct slot *t, uintptr_t k, uint64_t size)
{
    uint32_t i = hash(k);
    uintptr_t cur = atomic_load_explicit(&t[i].key, memory_order_relaxed);
    if (CG_LIKELY(cur <= TOMB) &&
        atomic_compare_exchange_strong_explicit(&t[i].key, &cur, k, memory_order_relaxed, memory_order_relaxed)) {
        atomic_store_explicit(&t[i].size, size, memory_order_relaxed);
        return true;
    }
    return table_put_more(t, k, size, i);
}

/* Removes k and returns its size, NOT_KNOWN when k is not in the table.
 * Called BEFORE the real free: once the driver has the address back it may
 * hand it out again at once, and the new owner's entry must not be confused
 * with this one.  A plain store, no compare-and-swap: while a slot holds k no
 * other key can take it, and only the thread freeing k looks for k.  The
 * first probe inline, the rest out of line. */
#define NOT_KNOWN UINT64_MAX /* no block has this size */
static __attribute__((noinline)) uint64_t table_take_more(struct slot *t, uintptr_t k, uint32_t i)
{
    for (int n = 1; n < PROBES; n++) {
        i = (i + 1) & (TABLE_SIZE - 1);
        uintptr_t cur = atomic_load_explicit(&t[i].key, memory_order_relaxed);
        if (cur == k) {
            uint64_t size = atomic_load_explicit(&t[i].size, memory_order_relaxed);
            atomic_store_explicit(&t[i].key, TOMB, memory_order_relaxed);
            return size;
        }
        if (cur == EMPTY)
            return NOT_KNOWN;
    }
    return NOT_KNOWN;
}

static inline uint64_t table_take(struct slot *t, uintptr_t k)
{
    if (CG_UNLIKELY(k <= TOMB))
        return NOT_KNOWN;
    uint32_t i = hash(k);
    uintptr_t cur = atomic_load_explicit(&t[i].key, memory_order_relaxed);
    if (CG_LIKELY(cur == k)) {
        uint64_t size = atomic_load_explicit(&t[i].size, memory_order_relaxed);
        atomic_store_explicit(&t[i].key, TOMB, memory_order_relaxed);
        return size;
    }
    if (cur == EMPTY)
        return NOT_KNOWN;
    return table_take_more(t, k, i);
}

static inline void max_into(_Atomic uint64_t *m, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);
    while (CG_UNLIKELY(v > cur) &&
           !atomic_compare_exchange_weak_explicit(m, &cur, v, memory_order_relaxed, memory_order_relaxed))
        ;
}

static __attribute__((noinline, cold)) void on_untracked(void)
{
    atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
}

static __attribute__((noinline, cold)) void grow(_Atomic uint64_t *m, uint64_t v)
{
    max_into(m, v);
}

/* A successful allocation: two read-modify-writes besides the slot's
 * (the count and the live bytes; peak and largest only when they grow).
 * A leaf of its own that returns success (0), so the wrappers reach it by a
 * tail call once the real call is done: none of its work needs their frame. */
static __attribute__((noinline)) int on_alloc(struct slot *t, uintptr_t k, uint64_t size)
{
    atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
    if (CG_UNLIKELY(size > atomic_load_explicit(&largest_ok, memory_order_relaxed)))
        grow(&largest_ok, size);
    if (CG_UNLIKELY(k <= TOMB || !table_put(t, k, size))) {
        on_untracked();
        return 0;
    }
    uint64_t now = atomic_fetch_add_explicit(&live, size, memory_order_relaxed) + size;
    if (CG_UNLIKELY(now > atomic_load_explicit(&peak, memory_order_relaxed)))
        grow(&peak, now);
    return 0;
}

static __attribute__((noinline, cold)) void on_unknown_free(void)
{
    atomic_fetch_add_explicit(&unknown_frees, 1, memory_order_relaxed);
}

/* A successful free of a known block: a leaf that returns success (0). */
static __attribute__((noinline)) int on_freed(uint64_t size)
{
    atomic_fetch_sub_explicit(&live, size, memory_order_relaxed);
    atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
    return 0;
}

/* ---- nesting: runtime calls that reach our driver entries.  One
 * thread-local struct, so one address computation serves both fields. */
static __thread struct {
    unsigned depth;
    int inner_status; /* a nested driver failure inside the runtime call */
    /* A driver call of the program's own (depth 0): what the work after the
     * real call needs, stored by the entry (where this struct's address is
     * at hand for the depth test) instead of kept in callee-saved registers
     * across the call.  The real driver function does not call our entries
     * on this thread, so nothing else writes them meanwhile. */
    const void *caller;            /* for a failure */
    const unsigned long long *a_out; /* allocation: where the pointer or handle went */
    uint64_t a_size;                 /* allocation: its size */
    unsigned long long f_key;        /* free: the pointer or handle, for a failure */
    void *const *r_out;              /* runtime allocation: where the pointer went */
    uint64_t f_size;                 /* runtime free: the block's size, NOT_KNOWN */
} rt;

/* ---- routes: which entry loader.c handed to which module, by which route */
static const int mem_hooks[] = {
    CG_H_cudaMalloc, CG_H_cudaFree, CG_H_cudaMallocAsync, CG_H_cudaFreeAsync, CG_H_cuMemAlloc_v2,
    CG_H_cuMemFree_v2, CG_H_cuMemAllocAsync, CG_H_cuMemAllocAsync_ptsz, CG_H_cuMemAllocFromPoolAsync,
    CG_H_cuMemAllocFromPoolAsync_ptsz, CG_H_cuMemFreeAsync, CG_H_cuMemFreeAsync_ptsz, CG_H_cuMemCreate,
    CG_H_cuMemRelease,
};
#define NMEM (sizeof mem_hooks / sizeof mem_hooks[0])
#define MAX_NOTES 128
static struct note {
    int hook;
    int route;
    uintptr_t base;
} notes[MAX_NOTES];
static _Atomic int nnotes;
static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
CG_FORK_REINIT(notes_lock);

/* The last note of this thread: cudart and the frameworks ask the same name
 * from the same place again and again (~450 queries at start), and a repeat
 * adds nothing, so it skips the table walk, the caller's object lookup and
 * the lock.  Per thread, so that no other thread can half-update it. */
static __thread struct {
    const void *entry, *caller;
    int route;
} last_note;

void cg_gpumem_route_note(const void *entry, const void *caller, enum cg_route route)
{
    if (entry == last_note.entry && caller == last_note.caller && (int)route == last_note.route)
        return;
    int hook = -1;
    for (size_t i = 0; i < NMEM && hook < 0; i++)
        for (int s = 0; s < CG_NSLOTS; s++)
            if (entry && cg_entry[s][mem_hooks[i]] == entry) {
                hook = mem_hooks[i];
                break;
            }
    if (hook < 0)
        return;
    int saved = errno;
    struct cg_obj o;
    uintptr_t base = caller && cg_elf_find_obj(caller, &o) ? o.base : 0;
    pthread_mutex_lock(&notes_lock);
    int n = atomic_load_explicit(&nnotes, memory_order_relaxed);
    bool dup = false;
    for (int i = 0; i < n && !dup; i++)
        dup = notes[i].hook == hook && notes[i].base == base && notes[i].route == (int)route;
    if (!dup && n < MAX_NOTES) {
        notes[n] = (struct note){hook, (int)route, base};
        atomic_store_explicit(&nnotes, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&notes_lock);
    if (dup || n < MAX_NOTES) /* noted (now or before): a repeat can be skipped */
        last_note.entry = entry, last_note.caller = caller, last_note.route = (int)route;
    errno = saved;
}

static const char *const route_names[] = {"plt", "dlsym", "entry_point"};

/* How the caller reached this entry: it imports the name (PLT); else it
 * was handed this entry by dlsym or an entry-point function (notes);
 * else any route this entry was handed out by, when there was only one;
 * else a CUDA library calling the driver got it from cuGetProcAddress. */
static const char *route_of(int hook, const void *caller)
{
    struct cg_obj o;
    bool have = caller && cg_elf_find_obj(caller, &o);
    if (have && o.dyn && cg_elf_imports(&o, cg_hooks[hook].name))
        return "plt";
    int n = atomic_load_explicit(&nnotes, memory_order_acquire), only = -1, mine = 0;
    for (int i = 0; i < n; i++) {
        if (notes[i].hook != hook)
            continue;
        if (have && notes[i].base == o.base)
            mine |= 1 << notes[i].route;
        only = only == -1 || only == notes[i].route ? notes[i].route : -2;
    }
    /* one entry function serves both routes: a module that got it both ways is said so */
    if (mine)
        return mine == (1 << CG_ROUTE_DLSYM | 1 << CG_ROUTE_ENTRY_POINT) ? "dlsym|entry_point"
               : route_names[mine & (1 << CG_ROUTE_DLSYM) ? CG_ROUTE_DLSYM : CG_ROUTE_ENTRY_POINT];
    if (only >= 0)
        return route_names[only];
    if (cg_hooks[hook].family == CG_FAM_DRV && cg_caller_family(caller) >= 0)
        return "entry_point";
    return "unknown";
}

/* ---- failures */
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
CG_FORK_REINIT(last_lock);
static struct {
    bool any, has_seq;
    uint64_t seq;
    const char *fn;
    unsigned long long bytes;
    int status;
    uint64_t allocs_then;
} last;

bool cg_gpumem_last_failure(struct cg_alloc_failure *out)
{
    pthread_mutex_lock(&last_lock);
    bool any = last.any;
    if (any) {
        out->has_seq = last.has_seq;
        out->seq = last.seq;
        out->fn = last.fn;
        out->bytes = last.bytes;
        out->status = last.status;
        out->success_since = atomic_load(&allocs) != last.allocs_then;
    }
    pthread_mutex_unlock(&last_lock);
    return any;
}

uint64_t cg_gpumem_failures(void) { return atomic_load(&failures); }

static bool is_oom(int hook, int status)
{
    return cg_hooks[hook].family == CG_FAM_CUDART ? status == cudaErrorMemoryAllocation
                                                  : status == CUDA_ERROR_OUT_OF_MEMORY;
}

static const char *status_name(int hook, int status)
{
    return cg_hooks[hook].family == CG_FAM_CUDART ? cg_cuda_error_name(status) : cg_cu_result_name(status);
}

/* PyTorch's expandable segments ask cuMemCreate for a shareable handle type
 * (fabric, POSIX fd) and fall back when the driver says it is not permitted
 * or not supported (seen on the H200: CUDA_ERROR_NOT_PERMITTED, then success).
 * Such an answer is a probe: written, but not counted as the run's failure. */
static bool capability_probe(int hook, int status)
{
    return hook == CG_H_cuMemCreate && (status == 800 /* NOT_PERMITTED */ || status == 801 /* NOT_SUPPORTED */);
}

static void alloc_failed(int hook, const void *caller, size_t bytes, int status, int inner)
{
    int saved = errno;
    atomic_fetch_add_explicit(&cg_count[hook].fails, 1, memory_order_relaxed);
    bool probe = capability_probe(hook, status);
    if (!probe)
        cg_note_failure();
    uint64_t nth = atomic_fetch_add(&failures, 1);
    uint64_t allocs_then = atomic_load(&allocs);
    bool write = nth < MAX_FAILURE_EVENTS;
    uint64_t seq = 0;
    if (write) {
        struct cg_gpu_state st;
        bool oom = is_oom(hook, status) || (inner && inner == CUDA_ERROR_OUT_OF_MEMORY);
        cg_gpu_state_now(&st, oom); /* before the event: it may write a `lib` event (NVML) */
        char b[CG_EV_BUF];
        struct cg_ev e;
        cg_ev_begin(&e, b, sizeof b, "alloc_failed");
        seq = e.seq;
        cg_ev_str(&e, "fn", cg_hooks[hook].name);
        cg_ev_str(&e, "route", route_of(hook, caller));
        cg_ev_u64(&e, "bytes", bytes);
        cg_ev_i64(&e, "status", status);
        cg_ev_str(&e, "status_name", status_name(hook, status));
        if (probe)
            cg_ev_bool(&e, "capability_probe", true);
        if (inner) {
            cg_ev_i64(&e, "driver_status", inner);
            cg_ev_str(&e, "driver_status_name", cg_cu_result_name(inner));
        }
        cg_ev_gpu_mem(&e, "mem", &st.mem);
        if (st.mem.known)
            cg_ev_bool(&e, "exceeds_free", bytes > st.mem.free);
        cg_ev_u64(&e, "live", atomic_load(&live));
        cg_ev_u64(&e, "peak", atomic_load(&peak));
        cg_ev_u64(&e, "largest_ok", atomic_load(&largest_ok));
        cg_ev_caller(&e, caller);
        cg_ev_gpu_devices(&e, &st);
        if (oom)
            cg_ev_gpu_holders(&e, &st);
        cg_ev_end(&e);
        /* CONVGUARD_RESERVE_MB: cuDNN's own allocation failed all the same */
        if (CG_UNLIKELY(cg_cfg.fallback) && cg_cfg.reserve_mb > 0 && oom && cg_caller_family(caller) == CG_FAM_CUDNN)
            cg_fb_reserve_exhausted(cg_hooks[hook].name, bytes, status, status_name(hook, status));
    } else {
        atomic_fetch_add_explicit(&failures_unwritten, 1, memory_order_relaxed);
    }
    pthread_mutex_lock(&last_lock);
    last.any = true;
    last.has_seq = write;
    last.seq = seq;
    last.fn = cg_hooks[hook].name;
    last.bytes = bytes;
    last.status = status;
    last.allocs_then = allocs_then;
    pthread_mutex_unlock(&last_lock);
    errno = saved;
}

/* A failed free or memory query: the generic event; nested ones are only counted. */
static void other_failed(int hook, int status, bool nested)
{
    if (nested)
        atomic_fetch_add_explicit(&cg_count[hook].fails, 1, memory_order_relaxed);
    else
        cg_hook_failed(hook, status);
}

/* A free that failed, or freed a block the table does not know: out of line.
 * A failed free gives the block back to the table (it is still allocated). */
static __attribute__((noinline, cold)) int free_other(int hook, bool handles, uintptr_t key, uint64_t size, int r)
{
    struct slot *t = handles ? handle_table : ptr_table;
    if (r == 0) {
        if (key)
            on_unknown_free();
        return 0;
    }
    if (size != NOT_KNOWN)
        table_put(t, key, size);
    other_failed(hook, r, false);
    return r;
}

void cg_gpumem_exit(struct cg_ev *e)
{
    cg_ev_open(e, "gpu_mem", '{');
    cg_ev_u64(e, "live", atomic_load(&live));
    cg_ev_u64(e, "peak", atomic_load(&peak));
    cg_ev_u64(e, "allocs", atomic_load(&allocs));
    cg_ev_u64(e, "frees", atomic_load(&frees));
    cg_ev_u64(e, "largest_ok", atomic_load(&largest_ok));
    cg_ev_u64(e, "alloc_failures", atomic_load(&failures));
    cg_ev_u64(e, "alloc_failed_unwritten", atomic_load(&failures_unwritten));
    cg_ev_u64(e, "untracked", atomic_load(&untracked));
    cg_ev_u64(e, "unknown_frees", atomic_load(&unknown_frees));
    cg_ev_close(e, '}');
}

/* ---- the wrappers.  Runtime level: depth raised around the real call. */
/* What the work after the real call needs goes to rt, as at the driver level
 * (the driver wrappers run nested inside, at depth > 0, and leave it alone).
 * always_inline: LTO inlines them into the entries (see cudnn.c). */
#define RT_ALLOC(name, ptr, size, call)                                                                          \
    {                                                                                                            \
        rt.inner_status = 0;                                                                                     \
        rt.caller = caller;                                                                                      \
        rt.r_out = ptr;                                                                                          \
        rt.a_size = size;                                                                                        \
        rt.depth++;                                                                                              \
        cudaError_t r = call;                                                                                    \
        rt.depth--;                                                                                              \
        if (CG_LIKELY(r == cudaSuccess)) {                                                                       \
            void *const *o_ = rt.r_out;                                                                          \
            if (o_ && *o_)                                                                                       \
                return (cudaError_t)on_alloc(ptr_table, (uintptr_t)*o_, rt.a_size);                              \
            return r;                                                                                            \
        }                                                                                                        \
        alloc_failed(CG_H_##name, rt.caller, rt.a_size, r, rt.inner_status);                                     \
        return r;                                                                                                \
    }

#define RT_FREE(name, ptr, call)                                                                                 \
    {                                                                                                            \
        uint64_t size = table_take(ptr_table, (uintptr_t)ptr);                                                   \
        rt.f_key = (uintptr_t)ptr;                                                                               \
        rt.f_size = size;                                                                                        \
        rt.depth++;                                                                                              \
        cudaError_t r = call;                                                                                    \
        rt.depth--;                                                                                              \
        size = rt.f_size;                                                                                        \
        if (CG_LIKELY(r == cudaSuccess && size != NOT_KNOWN))                                                    \
            return (cudaError_t)on_freed(size);                                                                  \
        return (cudaError_t)free_other(CG_H_##name, false, (uintptr_t)rt.f_key, size, r);                        \
    }

inline __attribute__((always_inline)) cudaError_t cg_w_cudaMalloc(cg_t_cudaMalloc real, CG_CALLER, void **ptr, size_t size)
    RT_ALLOC(cudaMalloc, ptr, size, real(ptr, size))

inline __attribute__((always_inline)) cudaError_t cg_w_cudaMallocAsync(cg_t_cudaMallocAsync real, CG_CALLER, void **ptr, size_t size, cudaStream_t s)
    RT_ALLOC(cudaMallocAsync, ptr, size, real(ptr, size, s))

inline __attribute__((always_inline)) cudaError_t cg_w_cudaFree(cg_t_cudaFree real, CG_CALLER, void *ptr) RT_FREE(cudaFree, ptr, real(ptr))

inline __attribute__((always_inline)) cudaError_t cg_w_cudaFreeAsync(cg_t_cudaFreeAsync real, CG_CALLER, void *ptr, cudaStream_t s)
    RT_FREE(cudaFreeAsync, ptr, real(ptr, s))

cudaError_t cg_w_cudaMemGetInfo(cg_t_cudaMemGetInfo real, CG_CALLER, size_t *free_bytes, size_t *total_bytes)
{
    rt.depth++;
    cudaError_t r = real(free_bytes, total_bytes);
    rt.depth--;
    if (CG_UNLIKELY(r != cudaSuccess))
        other_failed(CG_H_cudaMemGetInfo, r, false);
    else if (CG_UNLIKELY(cg_cfg.reserve_mb > 0))
        cg_fb_reserve_report("cudaMemGetInfo", free_bytes, total_bytes); /* only with CONVGUARD_FALLBACK=1 */
    return r;
}

/* Driver level: untouched (but a failure remembered) inside a runtime call.
 * Both paths are functions of their own and cg_w_<name> only picks one by a
 * tail call, so it is small enough for the entries to inline it: the nested
 * path (cudaMalloc reaches cuMemAlloc_v2 this way on every call) then costs
 * no frame of the wrapper's own work (5 saved registers when it was one
 * function: gcc sets the frame up before the depth test). */
static __attribute__((noinline, cold)) void nested_failed(int hook, CUresult r, bool alloc)
{
    if (alloc)
        rt.inner_status = r;
    other_failed(hook, r, true);
}

/* One driver hook: the nested path, the wrapper's own work (out of line,
 * its parameters first and real last, so that the real call finds them in
 * place), and cg_w_<name>, which the entries inline: the depth test and, on
 * the program's own path, the stores into rt that the work after the call
 * reads (see rt). */
#define DRV_NESTED(name, alloc, params, args)                                                                    \
    static __attribute__((noinline)) CUresult nested_##name(cg_t_##name real, CG_UNPAREN params)                 \
    {                                                                                                            \
        CUresult r = real args;                                                                                  \
        if (CG_UNLIKELY(r != CUDA_SUCCESS))                                                                      \
            nested_failed(CG_H_##name, r, alloc);                                                                \
        return r;                                                                                                \
    }

#define DRV_ALLOC(name, table, out, size, params, args)                                                          \
    DRV_NESTED(name, true, params, args)                                                                         \
    static __attribute__((noinline)) CUresult own_##name(CG_UNPAREN params, cg_t_##name real)                    \
    {                                                                                                            \
        CUresult r = real args;                                                                                  \
        if (CG_LIKELY(r == CUDA_SUCCESS)) {                                                                      \
            const unsigned long long *o_ = rt.a_out;                                                               \
            if (o_)                                                                                              \
                return (CUresult)on_alloc(table, (uintptr_t)*o_, rt.a_size);                                       \
            return r;                                                                                            \
        }                                                                                                        \
        alloc_failed(CG_H_##name, rt.caller, rt.a_size, r, 0);                                                     \
        return r;                                                                                                \
    }                                                                                                            \
    CUresult cg_w_##name(cg_t_##name real, CG_CALLER, CG_UNPAREN params)                                         \
    {                                                                                                            \
        if (rt.depth)                                                                                            \
            return nested_##name(real, CG_UNPAREN args);                                                         \
        rt.caller = caller;                                                                                      \
        rt.a_out = out;                                                                                          \
        rt.a_size = size;                                                                                        \
        return own_##name(CG_UNPAREN args, real);                                                                \
    }

#define DRV_FREE(name, table, key, params, args)                                                                 \
    DRV_NESTED(name, false, params, args)                                                                        \
    static __attribute__((noinline)) CUresult own_##name(CG_UNPAREN params, cg_t_##name real)                    \
    {                                                                                                            \
        uint64_t size = table_take(table, (uintptr_t)key);                                                       \
        CUresult r = real args;                                                                                  \
        if (CG_LIKELY(r == CUDA_SUCCESS && size != NOT_KNOWN))                                                   \
            return (CUresult)on_freed(size);                                                                     \
        return (CUresult)free_other(CG_H_##name, &table[0] == &handle_table[0], (uintptr_t)rt.f_key, size, r);   \
    }                                                                                                            \
    CUresult cg_w_##name(cg_t_##name real, CG_CALLER, CG_UNPAREN params)                                         \
    {                                                                                                            \
        if (rt.depth)                                                                                            \
            return nested_##name(real, CG_UNPAREN args);                                                         \
        rt.f_key = key;                                                                                          \
        return own_##name(CG_UNPAREN args, real);                                                                \
    }

DRV_ALLOC(cuMemAlloc_v2, ptr_table, ptr, size, (CUdeviceptr *ptr, size_t size), (ptr, size))
DRV_ALLOC(cuMemAllocAsync, ptr_table, ptr, size, (CUdeviceptr *ptr, size_t size, CUstream s), (ptr, size, s))
DRV_ALLOC(cuMemAllocAsync_ptsz, ptr_table, ptr, size, (CUdeviceptr *ptr, size_t size, CUstream s), (ptr, size, s))
DRV_ALLOC(cuMemAllocFromPoolAsync, ptr_table, ptr, size,
          (CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s), (ptr, size, pool, s))
DRV_ALLOC(cuMemAllocFromPoolAsync_ptsz, ptr_table, ptr, size,
          (CUdeviceptr *ptr, size_t size, CUmemoryPool pool, CUstream s), (ptr, size, pool, s))
DRV_ALLOC(cuMemCreate, handle_table, handle, size,
          (CUmemGenericAllocationHandle *handle, size_t size, const struct CUmemAllocationProp_st *prop,
           unsigned long long flags),
          (handle, size, prop, flags))
DRV_FREE(cuMemFree_v2, ptr_table, ptr, (CUdeviceptr ptr), (ptr))
DRV_FREE(cuMemFreeAsync, ptr_table, ptr, (CUdeviceptr ptr, CUstream s), (ptr, s))
DRV_FREE(cuMemFreeAsync_ptsz, ptr_table, ptr, (CUdeviceptr ptr, CUstream s), (ptr, s))
DRV_FREE(cuMemRelease, handle_table, handle, (CUmemGenericAllocationHandle handle), (handle))

CUresult cg_w_cuMemGetInfo_v2(cg_t_cuMemGetInfo_v2 real, CG_CALLER, size_t *free_bytes, size_t *total_bytes)
{
    CUresult r = real(free_bytes, total_bytes);
    if (CG_UNLIKELY(r != CUDA_SUCCESS))
        other_failed(CG_H_cuMemGetInfo_v2, r, rt.depth != 0);
    else if (CG_UNLIKELY(cg_cfg.reserve_mb > 0) && !rt.depth) /* inside cudaMemGetInfo: reduced there, once */
        cg_fb_reserve_report("cuMemGetInfo_v2", free_bytes, total_bytes);
    return r;
}
