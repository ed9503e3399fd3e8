/* gpumem.c - GPU memory on all three routes: how much this process holds,
 * the largest allocation that worked, and every failed allocation in bytes.
 *
 * Hot path (an allocation or a free that succeeds): the real call, then one
 * slot of a lock-free open-addressing table that remembers each pointer's
 * size (the free calls do not say it); a free also keeps the largest block
 * freed.  What the events report is worked out from the table when they are
 * written (mem_now).  No syscall, no lock, no formatting.  Failures
 * write an `alloc_failed` event with the GPU's free/total memory at that
 * moment, this process's live bytes, the largest allocation that worked,
 * the holders (NVML) and the caller.
 *
 * Counting once: memory is counted at the driver, where it is obtained;
 * cudaMalloc's own cuMemAlloc_v2 inside libcudart reaches our driver entry
 * (see "the wrappers" below), and the runtime wrappers only report failures,
 * with the driver's status of a failure inside them (driver_status). */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cuda/cuda.h"

/* ---- counters */
/* Every instruction on an allocation's path is paid on every call, so the
 * numbers the trace reports are kept where they cost least: no allocation or
 * free counter (the entries' call counters already count them: count_allocs,
 * count_frees); the live bytes and the largest block from a walk over the
 * table when an event needs them (mem_now); on the hot path only the largest
 * block that LEFT the table (freed, or never in it), which a free reads
 * anyway.  No peak (docs/performance.md: 4 instructions per allocation). */
static _Atomic uint64_t largest_out;
static _Atomic uint64_t failures, failures_unwritten, untracked, unknown_frees, null_frees;
#define MAX_FAILURE_EVENTS 256 /* past this, alloc_failed events are counted, not written */

/* ---- pointer (and VMM handle) -> size.  Open addressing, at most PROBES
 * slots from a key's hash; freed slots become tombstones that later keys
 * reuse, so lookups stay bounded however long the program runs.  A key that
 * finds no slot is counted in `untracked` and left out of live bytes.
 * A slot is free when its key, read as signed, is <= 0: EMPTY (0) or TOMB
 * (all ones); device pointers and handles are positive.  Slot 0 is taken for
 * good at start (key RESERVED): hash(0) is 0, so a free of NULL can never find
 * an EMPTY slot's key equal to it at the first probe, and the hot paths need
 * no test for 0.
 *
 * A free marks its slot (key + the table's mark) BEFORE the real call and
 * empties it after.  Once the driver has the address back it may hand it out
 * at once, to another thread, whose allocation goes to another slot (this one
 * is taken); while this slot still said k, a free of that new block could
 * match this slot instead of its own: it emptied this one and the new
 * block's entry stayed for good (live too high), or this free's tombstone
 * then erased a block that had taken the slot meanwhile (live too low).  A
 * marked slot holds no key and is not free: no lookup matches it, no
 * allocation takes it, the walk still counts its block (the driver frees it
 * during the call).  A failed free takes the mark off (the block is still
 * allocated).  The mark is a plain store, not a compare-and-swap: only the
 * thread freeing a block changes its slot (a program frees a block once).
 * Marks: device pointers are 256-byte aligned, so k + 3 is never one (and
 * one `lea`); handles may be any value, but none reaches 2^62.  Neither mark
 * makes TOMB free or EMPTY (a free of ~0 matches a tombstone). */
#define TABLE_BITS 16
#define TABLE_SIZE (1u << TABLE_BITS)
#define PROBES 32
#define EMPTY ((uintptr_t)0)
#define TOMB (~(uintptr_t)0)
#define RESERVED ((uintptr_t)1)
#define PTR_MARK ((uintptr_t)3)
#define HANDLE_MARK ((uintptr_t)1 << 62)
struct slot {
    _Atomic uintptr_t key;
    _Atomic uint64_t size;
};
/* The two tables, 1 MiB each, mapped when the driver is first wrapped
 * (core/lazytab.c): a wrapper always finds them.  A plain load, which the
 * wrapper's acquire of its entry orders after their making. */
struct mem_tables {
    struct slot ptr[TABLE_SIZE], handle[TABLE_SIZE];
};
static void tables_reserve(void *m);
static bool table_hook(int hook);
static struct cg_lazytab mem_tab = {table_hook, sizeof(struct mem_tables), tables_reserve, NULL};
CG_LAZYTAB(mem_tab);
#define ptr_table (((struct mem_tables *)mem_tab.p)->ptr)
#define handle_table (((struct mem_tables *)mem_tab.p)->handle)

/* A constant in the entries (the compiler folds the comparison of two
 * members of one struct): the cold paths take the table, not the mark,
 * which the entry would keep in a saved register across the call. */
static inline uintptr_t mark_of(const struct slot *t) { return t == handle_table ? HANDLE_MARK : PTR_MARK; }

static inline bool slot_free(uintptr_t key) { return (intptr_t)key <= 0; }

static inline uint32_t hash(uintptr_t k)
{
    return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> (64 - TABLE_BITS));
}

/* Slot 0 of each, before anyone sees them. */
static void tables_reserve(void *m)
{
    atomic_store_explicit(&((struct mem_tables *)m)->ptr[0].key, RESERVED, memory_order_relaxed);
    atomic_store_explicit(&((struct mem_tables *)m)->handle[0].key, RESERVED, memory_order_relaxed);
}

/* the hooks whose wrappers (DRV_ALLOC, DRV_FREE below) read the tables */
static bool table_hook(int hook)
{
    switch (hook) {
    case CG_H_cuMemAlloc_v2: case CG_H_cuMemAllocAsync: case CG_H_cuMemAllocAsync_ptsz:
    case CG_H_cuMemAllocFromPoolAsync: case CG_H_cuMemAllocFromPoolAsync_ptsz: case CG_H_cuMemCreate:
    case CG_H_cuMemFree_v2: case CG_H_cuMemFreeAsync: case CG_H_cuMemFreeAsync_ptsz: case CG_H_cuMemRelease:
        return true;
    default:
        return false;
    }
}

/* NULL, a free slot's value and slot 0's are no block's key. */
static inline bool key_ok(uintptr_t k) { return !slot_free(k) && k != RESERVED; }

/* Claims a slot for k.  One compare-and-swap on the key (two threads may
 * want the same free slot); the size is written after it, by the owner.
 * The first probe is inline (it nearly always claims); the rest here. */
static __attribute__((noinline)) bool table_put_more(struct slot *t, uintptr_t k, uint64_t size, uint32_t i)
{
    if (!key_ok(k))
        return false;
    for (int n = 0; n < PROBES; n++, i = (i + 1) & (TABLE_SIZE - 1)) {
        uintptr_t cur = atomic_load_explicit(&t[i].key, memory_order_relaxed);
        if (slot_free(cur) &&
            atomic_compare_exchange_strong_explicit(&t[i].key, &cur, k, memory_order_relaxed, memory_order_relaxed)) {
            atomic_store_explicit(&t[i].size, size, memory_order_relaxed);
            return true;
        }
    }
    return false;
}

static inline struct slot *slot_of(struct slot *t, uintptr_t k) { return &t[hash(k)]; }

/* A free of k: the slot that holds k, marked; NULL when k is not in the
 * table.  A lookup stops at an EMPTY slot only (slots never become EMPTY
 * again), so a tombstone or a marked slot before k's does not hide it. */
static struct slot *table_take(struct slot *t, uintptr_t k)
{
    if (!key_ok(k))
        return NULL;
    uint32_t i = hash(k);
    for (int n = 0; n < PROBES; n++, i = (i + 1) & (TABLE_SIZE - 1)) {
        uintptr_t cur = atomic_load_explicit(&t[i].key, memory_order_relaxed);
        if (cur == k) {
            atomic_store_explicit(&t[i].key, k + mark_of(t), memory_order_relaxed);
            return &t[i];
        }
        if (cur == EMPTY)
            return NULL;
    }
    return NULL;
}

static inline void max_into(_Atomic uint64_t *m, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);
    while (CG_UNLIKELY(v > cur) &&
           !atomic_compare_exchange_weak_explicit(m, &cur, v, memory_order_relaxed, memory_order_relaxed))
        ;
}

static __attribute__((noinline, cold)) void grow(_Atomic uint64_t *m, uint64_t v)
{
    max_into(m, v);
}

/* The table's first probe was taken: the rest of the run.  A block that
 * finds no slot still counts for the largest allocation that worked. */
static __attribute__((noinline, cold)) void on_alloc_more(struct slot *t, uintptr_t k, uint64_t size)
{
    if (!table_put_more(t, k, size, hash(k))) {
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
        grow(&largest_out, size);
    }
}

/* A successful allocation of `size` bytes at k: the table's first probe
 * with its compare-and-swap.  Inline in the entries; the rest out of line. */
static inline __attribute__((always_inline)) void on_alloc(struct slot *t, uintptr_t k, uint64_t size)
{
    struct slot *s = slot_of(t, k);
    uintptr_t cur = atomic_load_explicit(&s->key, memory_order_relaxed);
    if (CG_UNLIKELY(!slot_free(cur)) ||
        CG_UNLIKELY(!atomic_compare_exchange_strong_explicit(&s->key, &cur, k, memory_order_relaxed,
                                                             memory_order_relaxed))) {
        on_alloc_more(t, k, size);
        return;
    }
    atomic_store_explicit(&s->size, size, memory_order_relaxed);
}

/* A successful free of the block in slot s (marked): out of the table, and
 * into the largest block that left it. */
static inline __attribute__((always_inline)) void on_freed(struct slot *s)
{
    uint64_t size = atomic_load_explicit(&s->size, memory_order_relaxed);
    atomic_store_explicit(&s->key, TOMB, memory_order_relaxed);
    max_into(&largest_out, size);
}

/* Allocations that succeeded: the driver's allocation entries' calls less
 * their failures.  The driver's, not the runtime's: cudaMalloc's allocation
 * is its cuMemAlloc_v2 inside libcudart (see "the wrappers"). */
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))
static const int ptr_alloc_hooks[] = {CG_H_cuMemAlloc_v2, CG_H_cuMemAllocAsync, CG_H_cuMemAllocAsync_ptsz,
                                      CG_H_cuMemAllocFromPoolAsync, CG_H_cuMemAllocFromPoolAsync_ptsz};
static const int handle_alloc_hooks[] = {CG_H_cuMemCreate};
static const int free_hooks[] = {CG_H_cuMemFree_v2, CG_H_cuMemFreeAsync, CG_H_cuMemFreeAsync_ptsz,
                                 CG_H_cuMemRelease};

static uint64_t count_ok(const int *hooks, size_t n)
{
    uint64_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += atomic_load_explicit(&cg_count[hooks[i]].calls, memory_order_relaxed) -
              atomic_load_explicit(&cg_count[hooks[i]].fails, memory_order_relaxed);
    return ok;
}

static uint64_t count_allocs(void)
{
    return count_ok(ptr_alloc_hooks, NELEMS(ptr_alloc_hooks)) + count_ok(handle_alloc_hooks, NELEMS(handle_alloc_hooks));
}

/* Frees of blocks the table knew: the unknown ones and NULL left out. */
static uint64_t count_frees(void)
{
    uint64_t ok = count_ok(free_hooks, NELEMS(free_hooks));
    uint64_t other = atomic_load(&unknown_frees) + atomic_load(&null_frees);
    return ok > other ? ok - other : 0;
}

/* What this process holds now, and the largest allocation that worked: every
 * block is either in the table (live) or has left it (largest_out).  A walk
 * over both tables, 2 x 65,536 slots (about 0.2 ms): only for an event.
 * Exact when no other thread allocates or frees during the walk.  Otherwise
 * a block allocated or freed meanwhile may or may not be counted, and a slot
 * read between an allocation's key and its size (the size is written after
 * the compare-and-swap that claims the slot) counts the previous block's
 * size: off by at most those blocks (docs/trace-format.md, gpu_mem).  Making
 * that exact too would cost the allocation two instructions (claim with a
 * mark, write the size, then the key). */
struct mem_now {
    uint64_t live, largest;
};

static void mem_now(struct mem_now *m)
{
    m->live = 0;
    m->largest = atomic_load_explicit(&largest_out, memory_order_relaxed);
    /* A table no allocation went into is not walked (a process that never
     * allocated pays nothing at exit). */
    bool made = __atomic_load_n(&mem_tab.p, __ATOMIC_ACQUIRE) != NULL; /* the driver was wrapped */
    bool used[2] = {made && count_ok(ptr_alloc_hooks, NELEMS(ptr_alloc_hooks)) != 0,
                    made && count_ok(handle_alloc_hooks, NELEMS(handle_alloc_hooks)) != 0};
    for (int t = 0; t < 2; t++) {
        const struct slot *tab = t ? handle_table : ptr_table;
        for (uint32_t i = 0; used[t] && i < TABLE_SIZE; i++) {
            uintptr_t k = atomic_load_explicit(&tab[i].key, memory_order_relaxed);
            if (slot_free(k) || k == RESERVED) /* a marked slot counts: freed when its call returns */
                continue;
            uint64_t size = atomic_load_explicit(&tab[i].size, memory_order_relaxed);
            m->live += size;
            if (size > m->largest)
                m->largest = size;
        }
    }
}

/* A forked child counts its own calls (shim.c resets the call counters). */
void cg_gpumem_after_fork(void)
{
    atomic_store(&unknown_frees, 0);
    atomic_store(&null_frees, 0);
}

/* ---- routes: which entry routes.c handed to which module, by which route */
static const int mem_hooks[] = {
    CG_H_cudaMalloc, CG_H_cudaFree, CG_H_cudaMallocAsync, CG_H_cudaFreeAsync, CG_H_cuMemAlloc_v2,
    CG_H_cuMemFree_v2, CG_H_cuMemAllocAsync, CG_H_cuMemAllocAsync_ptsz, CG_H_cuMemAllocFromPoolAsync,
    CG_H_cuMemAllocFromPoolAsync_ptsz, CG_H_cuMemFreeAsync, CG_H_cuMemFreeAsync_ptsz, CG_H_cuMemCreate,
    CG_H_cuMemRelease,
};
#define NMEM NELEMS(mem_hooks)
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
    const void *caller;
    int hook, route;
} last_note = {NULL, -1, 0};

void cg_gpumem_route_note(int hook, const void *caller, enum cg_route route)
{
    if (hook == last_note.hook && caller == last_note.caller && (int)route == last_note.route)
        return;
    bool mem = false;
    for (size_t i = 0; i < NMEM && !mem; i++)
        mem = hook == mem_hooks[i];
    if (!mem)
        return;
    int saved = errno;
    struct cg_obj o;
    uintptr_t base = caller && cg_objsnap_find_obj(caller, &o) ? o.base : 0;
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
        last_note.hook = hook, last_note.caller = caller, last_note.route = (int)route;
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
    bool have = caller && cg_objsnap_find_obj(caller, &o);
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
        out->success_since = count_allocs() != last.allocs_then;
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
    bool probe = capability_probe(hook, status);
    cg_failed(hook, probe ? CG_FAIL_QUIET : CG_FAIL_REPORTED);
    uint64_t nth = atomic_fetch_add(&failures, 1);
    uint64_t allocs_then = count_allocs();
    bool write = nth < MAX_FAILURE_EVENTS;
    uint64_t seq = 0;
    if (write) {
        struct cg_gpu_state st;
        bool oom = is_oom(hook, status) || (inner && inner == CUDA_ERROR_OUT_OF_MEMORY);
        cg_gpu_state_now(&st, oom); /* before the event: it may write a `lib` event (NVML) */
        char b[CG_EV_BUF];
        struct cg_ev e;
        cg_ev_begin_call(&e, b, sizeof b, "alloc_failed", hook);
        seq = e.seq;
        cg_ev_str(&e, "route", route_of(hook, caller));
        cg_ev_u64(&e, "bytes", bytes);
        cg_ev_status(&e, status, status_name(hook, status));
        if (probe)
            cg_ev_bool(&e, "capability_probe", true);
        if (inner) {
            cg_ev_i64(&e, "driver_status", inner);
            cg_ev_str(&e, "driver_status_name", cg_cu_result_name(inner));
        }
        cg_ev_gpu_mem(&e, "mem", &st.mem);
        if (st.mem.known)
            cg_ev_bool(&e, "exceeds_free", bytes > st.mem.free);
        struct mem_now now;
        mem_now(&now);
        cg_ev_u64(&e, "live", now.live);
        cg_ev_u64(&e, "largest_ok", now.largest);
        cg_ev_caller(&e, caller);
        cg_ev_gpu_devices(&e, &st);
        if (oom)
            cg_ev_gpu_holders(&e, &st);
        cg_ev_end(&e);
        /* CONVGUARD_RESERVE_MB: cuDNN's own allocation failed all the same */
        if (CG_UNLIKELY(cg_cfg.fallback) && cg_cfg.reserve_mb > 0 && oom && cg_caller_family(caller) == CG_FAM_CUDNN)
            cg_fallback_reserve_exhausted(cg_hooks[hook].name, bytes, status, status_name(hook, status));
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

void cg_gpumem_exit(struct cg_ev *e)
{
    cg_ev_open(e, "gpu_mem", '{');
    struct mem_now now;
    mem_now(&now);
    cg_ev_u64(e, "live", now.live);
    cg_ev_u64(e, "allocs", count_allocs());
    cg_ev_u64(e, "frees", count_frees());
    cg_ev_u64(e, "largest_ok", now.largest);
    cg_ev_u64(e, "alloc_failures", atomic_load(&failures));
    cg_ev_u64(e, "alloc_failed_unwritten", atomic_load(&failures_unwritten));
    cg_ev_u64(e, "untracked", atomic_load(&untracked));
    cg_ev_u64(e, "unknown_frees", atomic_load(&unknown_frees));
    cg_ev_close(e, '}');
}

/* ---- the wrappers.
 *
 * Where memory is counted: at the driver, where it is obtained, whoever
 * called.  cudaMalloc (reached by the PLT or dlsym) calls cuMemAlloc_v2
 * inside libcudart through an entry point that is ours too (cudart asks
 * cuGetProcAddress for every driver function, routes.c answers with our
 * entries), so the driver entries see every allocation once, and the runtime
 * wrappers only forward and report failures.  A thread-local depth, raised
 * around every runtime-level call, tells a driver failure inside one: it is
 * kept (inner_status) for the runtime-level event instead of being reported
 * on its own, so a failed cudaMalloc is one `alloc_failed` with its
 * driver_status.  The depth is read only on failure paths; the driver
 * entries' fast path never looks at it. */
static __thread struct {
    unsigned depth;
    int inner_status; /* a driver allocation that failed inside the runtime call */
    uint64_t r_size;  /* the runtime allocation's size, for its event */
} rt;

/* A failed free or memory query: the generic event; nested ones are only counted. */
static void other_failed(int hook, int status, bool nested)
{
    if (nested)
        cg_failed(hook, CG_FAIL_QUIET);
    else
        cg_failed_call(hook, status);
}

/* A driver allocation failed: inside a runtime call, kept for its event. */
static __attribute__((noinline, cold)) CUresult drv_alloc_failed(int hook, CUresult r, const void *caller, uint64_t size)
{
    if (rt.depth) {
        rt.inner_status = r;
        cg_failed(hook, CG_FAIL_QUIET); /* the runtime call's event reports it */
    } else {
        alloc_failed(hook, caller, size, r, 0);
    }
    return r;
}

/* A driver free failed: the block is still allocated and stays in the table
 * (it leaves the table only after a successful free): its slot's mark is
 * cleared, so that the next free of it finds it. */
static __attribute__((noinline, cold)) CUresult drv_free_failed(int hook, const struct slot *t, struct slot *s,
                                                                 CUresult r)
{
    if (s)
        atomic_store_explicit(&s->key, atomic_load_explicit(&s->key, memory_order_relaxed) - mark_of(t),
                              memory_order_relaxed);
    other_failed(hook, r, rt.depth != 0);
    return r;
}

/* A driver free whose block is not at its first probe: found (and marked)
 * in the whole run before the call.  Unknown blocks (allocated before the
 * shim wrapped the function, or untracked) and NULL end here too. */
static __attribute__((noinline, cold)) CUresult drv_free_done(int hook, const struct slot *t, struct slot *s,
                                                               uintptr_t key, CUresult r)
{
    if (r != CUDA_SUCCESS)
        return drv_free_failed(hook, t, s, r);
    if (s)
        on_freed(s);
    else if (key)
        atomic_fetch_add_explicit(&unknown_frees, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&null_frees, 1, memory_order_relaxed);
    return r;
}

/* The program's return address, on a failure path.  With LTO the wrappers
 * are inlined into the entries (always_inline), where
 * __builtin_return_address(0) is the entry's own and is read from the stack
 * only when the failure happens; the `caller` argument would be loaded before
 * the real call and kept in a register across it on every call.  Without LTO
 * the wrappers are called by the entries, and only `caller` is right. */
#ifdef CG_WRAPPERS_INLINED
#define CALLER_NOW() __builtin_return_address(0)
#else
#define CALLER_NOW() caller
#endif

/* Runtime level: depth raised around the real call, nothing else on the way. */
static __attribute__((noinline, cold)) cudaError_t rt_alloc_failed(int hook, cudaError_t r, const void *caller)
{
    alloc_failed(hook, caller, rt.r_size, r, rt.inner_status);
    return r;
}

static __attribute__((noinline, cold)) cudaError_t rt_free_failed(int hook, cudaError_t r)
{
    other_failed(hook, r, false);
    return r;
}

#define RT_ALLOC(name, size, call)                                                                               \
    {                                                                                                            \
        rt.depth++;                                                                                              \
        rt.inner_status = 0;                                                                                     \
        rt.r_size = size;                                                                                        \
        cudaError_t r = call;                                                                                    \
        rt.depth--;                                                                                              \
        if (CG_UNLIKELY(r != cudaSuccess))                                                                       \
            return rt_alloc_failed(CG_H_##name, r, CALLER_NOW());                                                \
        return r;                                                                                                \
    }

#define RT_FREE(name, call)                                                                                      \
    {                                                                                                            \
        rt.depth++;                                                                                              \
        cudaError_t r = call;                                                                                    \
        rt.depth--;                                                                                              \
        if (CG_UNLIKELY(r != cudaSuccess))                                                                       \
            return rt_free_failed(CG_H_##name, r);                                                               \
        return r;                                                                                                \
    }

/* always_inline: LTO inlines them into the entries (see cudnn.c). */
inline __attribute__((always_inline)) cudaError_t cg_w_cudaMalloc(cg_t_cudaMalloc real, CG_CALLER, void **ptr, size_t size)
    RT_ALLOC(cudaMalloc, size, real(ptr, size))

inline __attribute__((always_inline)) cudaError_t cg_w_cudaMallocAsync(cg_t_cudaMallocAsync real, CG_CALLER, void **ptr, size_t size, cudaStream_t s)
    RT_ALLOC(cudaMallocAsync, size, real(ptr, size, s))

inline __attribute__((always_inline)) cudaError_t cg_w_cudaFree(cg_t_cudaFree real, CG_CALLER, void *ptr) RT_FREE(cudaFree, real(ptr))

inline __attribute__((always_inline)) cudaError_t cg_w_cudaFreeAsync(cg_t_cudaFreeAsync real, CG_CALLER, void *ptr, cudaStream_t s)
    RT_FREE(cudaFreeAsync, real(ptr, s))

cudaError_t cg_w_cudaMemGetInfo(cg_t_cudaMemGetInfo real, CG_CALLER, size_t *free_bytes, size_t *total_bytes)
{
    rt.depth++;
    cudaError_t r = real(free_bytes, total_bytes);
    rt.depth--;
    if (CG_UNLIKELY(r != cudaSuccess))
        other_failed(CG_H_cudaMemGetInfo, r, false);
    else if (CG_UNLIKELY(cg_cfg.reserve_mb > 0))
        cg_fallback_reserve_report("cudaMemGetInfo", free_bytes, total_bytes); /* only with CONVGUARD_FALLBACK=1 */
    return r;
}

/* Driver level.  An allocation: the call, then on_alloc (the out pointer and
 * the size are what stays in registers across the call).  A free: the slot
 * is found and marked before the call (the mark, above: the driver may hand
 * the address out again before the call returns) and emptied after it
 * succeeds.  Not sooner: a failed free leaves the block allocated.  Not by
 * searching again: another thread's allocation of the address finds this
 * slot still taken and goes to another slot, and emptying this slot by its
 * address leaves the new owner's entry alone.  The first probe inline (the
 * pointer's mark: two instructions); a block further on, or unknown, out of
 * line. */
#define DRV_ALLOC(name, table, out, size, params, args)                                                          \
    inline __attribute__((always_inline)) CUresult cg_w_##name(cg_t_##name real, CG_CALLER, CG_UNPAREN params)  \
    {                                                                                                            \
        CUresult r = real args;                                                                                  \
        if (CG_UNLIKELY(r != CUDA_SUCCESS))                                                                      \
            return drv_alloc_failed(CG_H_##name, r, CALLER_NOW(), size);                                         \
        on_alloc(table, (uintptr_t)*(out), size);                                                                \
        return CUDA_SUCCESS;                                                                                     \
    }

#define DRV_FREE(name, table, blk, params, args)                                                                 \
    static __attribute__((noinline, cold)) CUresult free_slow_##name(cg_t_##name real, CG_UNPAREN params)        \
    {                                                                                                            \
        struct slot *s_ = table_take(table, (uintptr_t)(blk));                                                   \
        return drv_free_done(CG_H_##name, table, s_, (uintptr_t)(blk), real args);                               \
    }                                                                                                            \
    static __attribute__((noinline, cold)) CUresult free_failed_##name(struct slot *s, CUresult r)               \
    {                                                                                                            \
        return drv_free_failed(CG_H_##name, table, s, r);                                                        \
    }                                                                                                            \
    inline __attribute__((always_inline)) CUresult cg_w_##name(cg_t_##name real, CG_CALLER, CG_UNPAREN params)  \
    {                                                                                                            \
        struct slot *s_ = slot_of(table, (uintptr_t)(blk));                                                      \
        if (CG_UNLIKELY(atomic_load_explicit(&s_->key, memory_order_relaxed) != (uintptr_t)(blk)))               \
            return free_slow_##name(real, CG_UNPAREN args);                                                      \
        atomic_store_explicit(&s_->key, (uintptr_t)(blk) + mark_of(table), memory_order_relaxed);                \
        CUresult r = real args;                                                                                  \
        if (CG_UNLIKELY(r != CUDA_SUCCESS))                                                                      \
            return free_failed_##name(s_, r); /* the table a constant there, not kept across the call */       \
        on_freed(s_);                                                                                            \
        return CUDA_SUCCESS;                                                                                     \
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
        cg_fallback_reserve_report("cuMemGetInfo_v2", free_bytes, total_bytes);
    return r;
}
