/* routes.c - the dynamic-loader interposers: dlopen, dlmopen, dlsym, dlvsym,
 * dlclose, dlerror, and the driver entry-point functions (cuGetProcAddress,
 * cudaGetDriverEntryPoint).
 *
 * The rules that keep the program's view unchanged:
 *  - the real function always runs "as" the program's caller (cg_call_as), so
 *    bare names, $ORIGIN, namespaces, RTLD_DEFAULT/RTLD_NEXT and dlerror()
 *    texts are what they would have been;
 *  - dlerror(): when the shim has to read an error text it keeps a copy and
 *    hands exactly that text back on the caller's next dlerror() call;
 *  - a hooked symbol is handed out wrapped only when it comes from the very
 *    library its slot names and the asker is not that library's own family
 *    (cuDNN looking up its own functions gets them untouched);
 *  - a second copy of a library is never wrapped: the shim steps aside. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda/cuda.h"

/* <dlfcn.h> declares these arguments nonnull; programs still pass NULL, and
 * the compiler must not drop our checks on that promise. */
#define LAUNDER(p) __asm__("" : "+r"(p))

/* dlerror: a text the shim had to consume first (loader/dl.c), else the real one */
CG_EXPORT char *dlerror(void)
{
    char *kept = cg_dlerror_take();
    if (kept)
        return kept;
    if (!cg_real_dl_init() && !cg_dl.dlerror)
        return NULL;
    return cg_dl.dlerror();
}

/* ---- dlopen / dlmopen */
static void *open_as(const void *caller, long lmid, bool m, const char *file, int flags)
{
    /* i14 (crash.c): what this thread is loading, for a crash inside ld.so */
    const char *loading_before = cg_loading_enter(file);
    void *h = m ? cg_call_as(caller, (void *)cg_dl.dlmopen, (void *)lmid, (void *)file, (void *)(long)flags)
                : cg_call_as(caller, (void *)cg_dl.dlopen, (void *)file, (void *)(long)flags, NULL);
    cg_loading_leave(loading_before);
    return h;
}

static void *do_open(const void *caller, long lmid, bool m, const char *file, int flags)
{
    cg_dlerror_clear();
    if (!cg_real_dl_init())
        return NULL;
    if (!atomic_load_explicit(&cg.traced, memory_order_relaxed) || !file) {
        void *h = open_as(caller, lmid, m, file, flags);
        if (h && file)
            cg_bind_after_load(); /* what PLT calls reach may have changed (bind.c) */
        return h;
    }
    bool traced = cg_lib_is_traced_name(file);
    void *h = open_as(caller, lmid, m, file, flags);
    int saved = errno; /* what the real call left: the program must see that */
    if (h) {
        /* Loaded before (the shim's copy of the link map has it): nothing was
         * added, and the loader is not asked (a dlopen of a loaded library is
         * cuDNN's way of reaching its parts: frequent).  A handle the copy
         * does not know: the object, and maybe its dependencies, are new. */
        bool added = !cg_objsnap_has_dyn(((struct link_map *)h)->l_ld);
        if (added || (flags & RTLD_GLOBAL))
            cg_bind_after_load(); /* what PLT calls reach may have changed (bind.c) */
        if (added) {
            cg_objsnap_refresh(); /* module names for crash backtraces */
            cg_crash_after_load();
        }
        if (traced || added) {
            cg_libs_after_open(file, flags, caller, h, traced, added);
            /* recording may have called into the library: leave no error behind */
            cg_dl.dlerror();
            cg_dlerror_clear();
        }
    } else if (traced && !(flags & RTLD_NOLOAD)) {
        /* (RTLD_NOLOAD asks "is it loaded?": a NULL answer is no failure.)
         * Reading the reason consumes it: keep it for the caller's dlerror(). */
        int code;
        const char *err = cg_dlerror_read(&code);
        cg_dlerror_set(err ? err : "", code);
        cg_libs_open_failed(file, flags, caller, err);
        if (!err)
            cg_dlerror_clear();
    }
    errno = saved;
    return h;
}

CG_EXPORT void *dlopen(const char *file, int flags)
{
    return do_open(__builtin_return_address(0), 0, false, file, flags);
}

CG_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int flags)
{
    return do_open(__builtin_return_address(0), (long)lmid, true, file, flags);
}

/* Did the dlclose unmap the object?  Most do not (another reference keeps it
 * loaded): mincore on its dynamic section's page answers without the
 * loader's lock (ENOMEM: nothing is mapped there any more). */
static bool unmapped(const void *dyn)
{
    if (!dyn)
        return true;
    long page = sysconf(_SC_PAGESIZE);
    unsigned char v;
    void *p = (void *)((uintptr_t)dyn & ~(uintptr_t)(page - 1));
    return mincore(p, 1, &v) != 0 && errno == ENOMEM;
}

CG_EXPORT int dlclose(void *handle)
{
    cg_dlerror_clear();
    if (!cg_real_dl_init())
        return -1;
    LAUNDER(handle);
    struct link_map *lm = handle;
    uintptr_t base = lm ? lm->l_addr : 0;
    const void *dyn = lm ? lm->l_ld : NULL;
    int r = cg_dl.dlclose(handle);
    int saved = errno;
    bool gone = r == 0 && handle && unmapped(dyn);
    if (gone)
        cg_bind_reset(); /* a PLT call's target may have gone (bind.c) */
    if (gone && atomic_load_explicit(&cg.traced, memory_order_relaxed)) {
        cg_libs_after_close(base);
        cg_objsnap_refresh();
    }
    errno = saved;
    return r;
}

/* ---- dlsym / dlvsym */
/* Hook ids by name: an open-addressing table filled on first use.  dlsym of
 * a "cu*" name that is not hooked (most of cuDNN's API) costs a hash and
 * one or two compares. */
#define NAME_SLOTS 256 /* power of two, well above CG_NHOOKS */
static _Atomic(short) by_name[NAME_SLOTS]; /* hook id + 1, 0: empty */
static atomic_bool by_name_ready;

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int hook_by_name(const char *name)
{
    if (CG_UNLIKELY(!atomic_load_explicit(&by_name_ready, memory_order_acquire))) {
        /* racing fillers write the same values: harmless */
        for (int h = 0; h < CG_NHOOKS; h++) {
            unsigned i = name_hash(cg_hooks[h].name) & (NAME_SLOTS - 1);
            while (atomic_load(&by_name[i]) && atomic_load(&by_name[i]) != h + 1)
                i = (i + 1) & (NAME_SLOTS - 1);
            atomic_store(&by_name[i], (short)(h + 1));
        }
        atomic_store_explicit(&by_name_ready, true, memory_order_release);
    }
    for (unsigned i = name_hash(name) & (NAME_SLOTS - 1);; i = (i + 1) & (NAME_SLOTS - 1)) {
        int v = atomic_load_explicit(&by_name[i], memory_order_relaxed);
        if (!v)
            return -1;
        if (strcmp(cg_hooks[v - 1].name, name) == 0)
            return v - 1;
    }
}

/* Two filters in front of the hash, both filled from cg_hooks[] on first use.
 *
 * The first runs inside dlsym itself, before the real call, so that a "cu*"
 * name that is not hooked (most of cuDNN's and cudart's API) costs a few byte
 * compares and leaves the real call a tail call: the pairs (name[5],
 * name[8] & 63) of the hooked names.  Reaching name[8] at all is the cost:
 * cudnnGetVersion shares its first eight bytes with cudnnGetLastErrorString.
 * Bytes are read one at a time, each only after the one before it proved not
 * to be the end, so nothing past the terminating NUL is read; a name that ends
 * before name[8] passes, to the second filter.  A set bit says "no hooked name
 * has this pair", so the table is all-pass until filled.  A name that does not
 * start with "cu" never passes: every hooked name does, and
 * tests/preload/t_dlsym_filter.sh checks that each one is still wrapped. */
static _Atomic uint64_t pair_absent[256]; /* [name[5]] bit (name[8] & 63) */

/* The second, out of line, for what the first let through (a name with a
 * hooked name's pair: cudnnCreateTensorDescriptor, cudaMallocHost): the
 * (length, last character) pairs of the hooked names, a strlen and a bit
 * test. */
#define FILTER_LEN 64
static uint64_t len_last[FILTER_LEN][4]; /* bit (last char) per length */
static atomic_bool filter_ready;

static bool ends_before(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!s[i])
            return true;
    return false;
}

static __attribute__((noinline, cold)) void filter_fill(void)
{
    uint64_t present[256] = {0};
    for (int h = 0; h < CG_NHOOKS; h++) {
        const char *name = cg_hooks[h].name;
        size_t n = strlen(name);
        unsigned char c = (unsigned char)name[n - 1];
        __atomic_fetch_or(&len_last[n < FILTER_LEN ? n : 0][c >> 6], 1ull << (c & 63), __ATOMIC_RELAXED);
        if (!ends_before(name, 8))
            present[(unsigned char)name[5]] |= 1ull << ((unsigned char)name[8] & 63);
    }
    /* each word goes from 0 (pass) to its final value in one store */
    for (int i = 0; i < 256; i++)
        atomic_store_explicit(&pair_absent[i], ~present[i], memory_order_relaxed);
    atomic_store_explicit(&filter_ready, true, memory_order_release);
}

/* The first filter; name[0] is 'c'.  Written out byte by byte, it compiles
 * to a compare and a branch per byte in scratch registers: no frame. */
static inline bool cu_maybe_hooked(const char *name)
{
    if (name[1] != 'u')
        return false;
    if (!name[2] || !name[3] || !name[4] || !name[5] || !name[6] || !name[7])
        return true;
    uint64_t absent = atomic_load_explicit(&pair_absent[(unsigned char)name[5]], memory_order_relaxed);
    return !(absent >> ((unsigned char)name[8] & 63) & 1);
}

static inline bool maybe_hooked(const char *name)
{
    if (CG_UNLIKELY(!atomic_load_explicit(&filter_ready, memory_order_acquire)))
        filter_fill();
    size_t n = strlen(name);
    unsigned char c = (unsigned char)name[n - 1];
    return n < FILTER_LEN && (len_last[n][c >> 6] >> (c & 63) & 1);
}

static int slot_of_soname(const char *soname)
{
    for (int s = 0; soname && s < CG_NSLOTS; s++)
        if (strcmp(cg_slots[s].soname, soname) == 0)
            return s;
    return -1;
}

static bool in_self(const void *p)
{
    static char anchor;
    struct cg_obj self;
    return cg_objsnap_find_obj(&anchor, &self) && (uintptr_t)p >= self.start && (uintptr_t)p < self.end;
}

/* What glibc would have said for a failed RTLD_DEFAULT/RTLD_NEXT lookup:
 * "<caller's file name>: undefined symbol: <name>". */
static void undefined_symbol_error(const void *caller, const char *name, const char *version)
{
    extern char *program_invocation_name;
    struct cg_obj o;
    const char *who = (cg_objsnap_find_obj(caller, &o) && o.name[0]) ? o.name : program_invocation_name;
    char msg[1024];
    size_t n = cg_strlcpy(msg, who, sizeof msg);
    n = cg_append(msg, sizeof msg, n, ": undefined symbol: ");
    n = cg_append(msg, sizeof msg, n, name);
    if (version) {
        n = cg_append(msg, sizeof msg, n, ", version ");
        cg_append(msg, sizeof msg, n, version);
    }
    cg_dlerror_set(msg, 0); /* glibc's lookup failure has no errno code */
}

/* Maps a real function address of a traced library to our entry (*hook: its
 * hook) or returns it. */
static void *wrap(const char *name, void *real, const void *caller, const char *route, int *hook)
{
    int h = *hook = hook_by_name(name);
    if (h < 0 || (int)cg_hooks[h].family == cg_caller_family(caller))
        return real;
    struct cg_obj o;
    if (!cg_objsnap_find_obj(real, &o) || !o.dyn)
        return real;
    int s = slot_of_soname(cg_elf_soname(&o));
    if (s < 0 || cg_slots[s].family != cg_hooks[h].family || !cg_lazytab_for(h))
        return real;
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&cg_real[s][h], &expected, real)) {
        if (expected != real) {
            cg_libs_step_aside(name, real, expected, route);
            return real;
        }
    } else {
        atomic_fetch_add(&cg_real_gen, 1);
    }
    return cg_entry[s][h];
}

static void *after_sym(void *handle, const char *name, const char *version, void *r, const void *caller)
{
    bool special = handle == RTLD_DEFAULT || handle == RTLD_NEXT;
    if (r && special && in_self(r)) {
        /* Only our unversioned driver exports (and a dlvsym of our versions)
         * can be found this way: answer as if the shim were not loaded, by
         * the same search without it: RTLD_DEFAULT the caller's scope (the
         * global one, then its own libraries), RTLD_NEXT what follows us. */
        if (handle == RTLD_DEFAULT)
            r = cg_bind_lookup(caller, name, version);
        else
            r = version ? cg_dl.dlvsym(RTLD_NEXT, name, version) : cg_dl.dlsym(RTLD_NEXT, name);
        if (!r) {
            if (cg_dl.dlerror) /* discard the text naming the shim */
                cg_dl.dlerror();
            undefined_symbol_error(caller, name, version);
            return NULL;
        }
    }
    if (!r || !atomic_load_explicit(&cg.traced, memory_order_relaxed))
        return r;
    int h;
    void *w = wrap(name, r, caller, "dlsym", &h);
    if (w != r)
        cg_gpumem_route_note(h, caller, CG_ROUTE_DLSYM); /* for alloc_failed's route */
    return w;
}

/* A "cu*" name that dlsym found: is it one we hand out an entry for? */
static __attribute__((noinline)) void *dlsym_hooked(void *handle, const char *name, void *r, const void *caller)
{
    int saved = errno;
    r = after_sym(handle, name, NULL, r, caller);
    errno = saved;
    return r;
}

/* A handle from dlopen and a name that passed cu_maybe_hooked.  The second
 * filter also comes before the real call: what it rejects is a tail call
 * again, and it fills both filters even in a process whose "cu*" names are
 * all missing (a missing name costs the filters, where it used to cost none). */
static __attribute__((noinline)) void *dlsym_cu(void *handle, const char *name, const void *caller)
{
    if (!cg_real_dl_init())
        return NULL;
    if (!maybe_hooked(name))
        return cg_dl.dlsym(handle, name);
    void *r = cg_dl.dlsym(handle, name);
    if (!r)
        return r;
    return dlsym_hooked(handle, name, r, caller);
}

/* RTLD_DEFAULT / RTLD_NEXT, answered as the caller. */
static __attribute__((noinline)) void *dlsym_special(void *handle, const char *name, const void *caller)
{
    if (!cg_real_dl_init())
        return NULL;
    void *r = cg_call_as(caller, (void *)cg_dl.dlsym, handle, (void *)name, NULL);
    if (!r || !name || name[0] != 'c' || !cu_maybe_hooked(name) || !maybe_hooked(name))
        return r;
    return dlsym_hooked(handle, name, r, caller);
}

/* What dlsym's fast path calls: this first-call step until glibc's dlsym is
 * known, then glibc's dlsym itself, so the fast path tests nothing for it. */
static void *dlsym_first(void *handle, const char *name);
static void *(*_Atomic dlsym_next)(void *, const char *) = dlsym_first;

static void *dlsym_first(void *handle, const char *name)
{
    if (!cg_real_dl_init())
        return NULL;
    atomic_store_explicit(&dlsym_next, cg_dl.dlsym, memory_order_relaxed);
    return cg_dl.dlsym(handle, name);
}

/* The fast path (a handle from dlopen, a name that no hooked name could be:
 * most lookups) decides before the real call, so that the real call is a
 * tail call and dlsym keeps no frame; the caller is read from the stack only
 * by the paths that need it.  Every hooked name starts with "cu". */
CG_EXPORT void *dlsym(void *handle, const char *name)
{
    LAUNDER(name);
    cg_dlerror_clear();
    if (CG_UNLIKELY(handle == RTLD_DEFAULT || handle == RTLD_NEXT))
        return dlsym_special(handle, name, __builtin_return_address(0));
    if (name && name[0] == 'c' && cu_maybe_hooked(name))
        return dlsym_cu(handle, name, __builtin_return_address(0));
    return atomic_load_explicit(&dlsym_next, memory_order_relaxed)(handle, name);
}

CG_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
    const void *caller = __builtin_return_address(0);
    LAUNDER(name);
    cg_dlerror_clear();
    if (!cg_real_dl_init())
        return NULL;
    void *r;
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
        r = cg_call_as(caller, (void *)cg_dl.dlvsym, handle, (void *)name, (void *)version);
    else
        r = cg_dl.dlvsym(handle, name, version);
    if (!r || !name || name[0] != 'c' || name[1] != 'u' || !maybe_hooked(name))
        return r;
    int saved = errno;
    r = after_sym(handle, name, version, r, caller);
    errno = saved;
    return r;
}

/* ---- driver entry points: hand out wrapped driver functions.
 * The driver answers base names ("cuMemAlloc") with the versioned function
 * (cuMemAlloc_v2); we recognise the answer by its address, which is the
 * address of an exported symbol of libcuda.so.1. */
static atomic_bool drv_resolved; /* every driver hook's real function looked up once */

/* Real driver address -> hook, so that an answer is recognised in a probe or
 * two instead of a walk over every driver hook (cudart asks ~450 names at
 * start, nearly all of them not hooked).  Rebuilt from cg_real whenever
 * cg_real_gen says it changed.  Readers use it like a seqlock: an odd seq
 * (a rebuild in progress) or a seq that moved during the lookup sends them to
 * the walk, which is always right. */
#define DRV_IDX_BITS 7 /* 128 slots for the ~20 driver hooks: chains stay short */
#define DRV_IDX_SIZE (1u << DRV_IDX_BITS)
static struct {
    _Atomic(void *) real;
    _Atomic int hook;
} drv_idx[DRV_IDX_SIZE];
static _Atomic uint32_t drv_idx_seq;  /* odd while being rebuilt */
static _Atomic uint32_t drv_idx_from; /* cg_real_gen + 1 it was built from; 0: never built */
/* A flag, not pthread_mutex_trylock (libpthread's before glibc 2.34: see
 * cg_atfork).  A child forked during a rebuild keeps it set, as it keeps an
 * odd seq: its lookups take the walk. */
static atomic_flag drv_idx_busy = ATOMIC_FLAG_INIT;

static inline uint32_t drv_idx_slot(const void *p)
{
    return (uint32_t)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >> (64 - DRV_IDX_BITS));
}

/* Rebuilt by one thread at a time; a thread that finds the lock taken walks instead. */
static void drv_idx_rebuild(void)
{
    if (atomic_flag_test_and_set_explicit(&drv_idx_busy, memory_order_acquire))
        return;
    uint32_t gen = atomic_load(&cg_real_gen);
    uint32_t seq = atomic_load_explicit(&drv_idx_seq, memory_order_relaxed);
    atomic_store(&drv_idx_seq, seq + 1);
    for (uint32_t i = 0; i < DRV_IDX_SIZE; i++)
        atomic_store_explicit(&drv_idx[i].real, NULL, memory_order_relaxed);
    for (int h = 0; h < CG_NHOOKS; h++) {
        void *real = cg_hooks[h].family == CG_FAM_DRV
                         ? atomic_load_explicit(&cg_real[CG_SLOT_DRV][h], memory_order_acquire)
                         : NULL;
        if (!real)
            continue;
        uint32_t i = drv_idx_slot(real);
        while (atomic_load_explicit(&drv_idx[i].real, memory_order_relaxed))
            i = (i + 1) & (DRV_IDX_SIZE - 1);
        atomic_store_explicit(&drv_idx[i].hook, h, memory_order_relaxed);
        atomic_store_explicit(&drv_idx[i].real, real, memory_order_relaxed);
    }
    atomic_store(&drv_idx_from, gen + 1);
    atomic_store(&drv_idx_seq, seq + 2);
    atomic_flag_clear_explicit(&drv_idx_busy, memory_order_release);
}

/* The hook whose real function is fn; -1 when none; -2 when the index cannot answer now. */
static int drv_idx_find(const void *fn)
{
    uint32_t seq = atomic_load(&drv_idx_seq);
    if ((seq & 1) || atomic_load(&drv_idx_from) != atomic_load(&cg_real_gen) + 1)
        return -2;
    int hook = -1;
    for (uint32_t i = drv_idx_slot(fn);; i = (i + 1) & (DRV_IDX_SIZE - 1)) {
        void *real = atomic_load_explicit(&drv_idx[i].real, memory_order_relaxed);
        if (!real)
            break;
        if (real == fn) {
            hook = atomic_load_explicit(&drv_idx[i].hook, memory_order_relaxed);
            break;
        }
    }
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&drv_idx_seq, memory_order_relaxed) != seq)
        return -2;
    /* the table is only a hint: the hook's real function is checked against fn itself */
    if (hook >= 0 && atomic_load_explicit(&cg_real[CG_SLOT_DRV][hook], memory_order_acquire) != fn)
        return -2;
    return hook;
}

/* The hook whose driver function fn is, -1: none (or not tracing). */
static int entry_point_hook(void *fn)
{
    if (!fn || !atomic_load_explicit(&cg.traced, memory_order_relaxed))
        return -1;
    bool resolved = atomic_load_explicit(&drv_resolved, memory_order_acquire);
    if (resolved) {
        int h = drv_idx_find(fn);
        if (h >= 0)
            return h;
        if (h == -1)
            return -1;
    }
    for (int h = 0; h < CG_NHOOKS; h++) {
        if (cg_hooks[h].family != CG_FAM_DRV)
            continue;
        void *real = atomic_load_explicit(&cg_real[CG_SLOT_DRV][h], memory_order_acquire);
        /* a name libcuda lacks is looked up once, not at every query (cudart asks ~450) */
        if (!real && !resolved)
            real = cg_real_in_lib(CG_SLOT_DRV, h);
        if (real == fn)
            return h;
    }
    /* libcuda was loaded (it answered): its names are all known now */
    if (!resolved)
        atomic_store_explicit(&drv_resolved, true, memory_order_release);
    drv_idx_rebuild();
    return -1;
}

/* What the four entry-point functions share: a driver function they found
 * that is hooked is handed out as our entry (and noted for alloc_failed's route). */
static inline void hand_out_entry_point(void **fn, const void *caller)
{
    int h = entry_point_hook(*fn);
    if (h >= 0) {
        *fn = cg_entry[CG_SLOT_DRV][h];
        cg_gpumem_route_note(h, caller, CG_ROUTE_ENTRY_POINT);
    }
}

CUresult cg_w_cuGetProcAddress(cg_t_cuGetProcAddress real, CG_CALLER, const char *symbol, void **fn, int version,
                               cuuint64_t flags)
{
    CUresult r = real(symbol, fn, version, flags);
    if (r == CUDA_SUCCESS && fn) {
        hand_out_entry_point(fn, caller);
    }
    return r;
}

CUresult cg_w_cuGetProcAddress_v2(cg_t_cuGetProcAddress_v2 real, CG_CALLER, const char *symbol, void **fn, int version,
                                  cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    CUresult r = real(symbol, fn, version, flags, status);
    if (r == CUDA_SUCCESS && fn) {
        hand_out_entry_point(fn, caller);
    }
    return r;
}

cudaError_t cg_w_cudaGetDriverEntryPoint(cg_t_cudaGetDriverEntryPoint real, CG_CALLER, const char *symbol, void **fn,
                                         unsigned long long flags, cudaDriverEntryPointQueryResult *status)
{
    cudaError_t r = real(symbol, fn, flags, status);
    if (r == cudaSuccess && fn) {
        hand_out_entry_point(fn, caller);
    }
    return r;
}

cudaError_t cg_w_cudaGetDriverEntryPointByVersion(cg_t_cudaGetDriverEntryPointByVersion real, CG_CALLER, const char *symbol,
                                                  void **fn, unsigned int version, unsigned long long flags,
                                                  cudaDriverEntryPointQueryResult *status)
{
    cudaError_t r = real(symbol, fn, version, flags, status);
    if (r == cudaSuccess && fn) {
        hand_out_entry_point(fn, caller);
    }
    return r;
}
