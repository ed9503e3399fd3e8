/* bind.c - what a call through the PLT would have reached without the shim.
 *
 * The loader binds a reference to the first definition in the caller's
 * lookup scope: the global scope (the program, its libraries, LD_PRELOAD,
 * then what was dlopen()ed RTLD_GLOBAL, in that order), then the caller's
 * local scope (the tree of libraries loaded with it RTLD_LOCAL: PyTorch's
 * libtorch_cuda.so and its libcudnn.so.9).  Preloaded, the shim is first in
 * the global scope, so it receives those calls; each must go on to the
 * definition the same search finds with the shim left out.  That may be a
 * framework's own stub (TensorFlow's libtensorflow_framework.so.2 defines
 * cuInit, cudaMalloc, cudnnCreate, ... and loads the CUDA library itself on
 * the first call: field notes, route 4), the CUDA library, or nothing yet.
 * The shim never loads a library to find one.
 *
 * The answer is worked out once and kept where every caller gets the same
 * one: a definition of the global scope is found by the loader itself
 * (dlsym(RTLD_NEXT) from the shim: the global scope past the shim); a local
 * one is the same for every caller when the process holds exactly one
 * definition.  Otherwise (two RTLD_LOCAL copies, a stub loaded RTLD_LOCAL
 * beside the library) the answer is kept per call site.  Kept answers found
 * in a local scope are dropped when a library is loaded, all of them when
 * one is unloaded or tracing starts.
 *
 * Only the definition that lives in the slot's own library (libcuda.so.1,
 * libcudnn.so.9, ...) is wrapped; anything else (a stub) gets the call
 * untouched, and the stub's own dlsym of the library hands it our entry
 * (route 2): a call that passes the shim twice is seen once, where it reaches
 * the library. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loader/loader.h"

_Atomic(void *) cg_plt[CG_NSLOTS][CG_NHOOKS];
_Atomic(void *) cg_plt_plain[CG_NSLOTS][CG_NHOOKS];
/* the kept answer came from a local scope: a new library may change it */
static atomic_bool kept_local[CG_NSLOTS][CG_NHOOKS];
/* bumped whenever kept answers are dropped: an answer whose global part was
 * asked before a change is used once, not kept */
static _Atomic uint32_t bind_epoch;

/* Taken after the fork gate, as every lock of the shim whose holder makes
 * gated calls (the link-map walks here): forkgate.c, libs.c. */
static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
CG_FORK_REINIT(bind_lock);

static void bind_enter(void)
{
    cg_fork_gate_enter();
    pthread_mutex_lock(&bind_lock);
}

static void bind_leave(void)
{
    pthread_mutex_unlock(&bind_lock);
    cg_fork_gate_leave();
}

/* ---- the loaded objects, for one resolution (under bind_lock) */
#define MAX_OBJS 4096
static struct cg_obj objs[MAX_OBJS];
static int nobjs;
static uintptr_t self_base;

static int collect_cb(const struct cg_obj *o, void *p)
{
    (void)p;
    if (nobjs < MAX_OBJS)
        objs[nobjs++] = *o;
    return 0;
}

static void collect(void)
{
    static char anchor;
    struct cg_obj self;
    self_base = cg_objsnap_find_obj(&anchor, &self) ? self.base : 0;
    nobjs = 0;
    cg_elf_each_obj(collect_cb, NULL);
}

static int obj_index_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < nobjs; i++) {
        if (a < objs[i].start || a >= objs[i].end)
            continue;
        const ElfW(Phdr) *ph = objs[i].phdr;
        for (int k = 0; k < objs[i].phnum; k++)
            if (ph[k].p_type == PT_LOAD && a >= objs[i].base + ph[k].p_vaddr &&
                a < objs[i].base + ph[k].p_vaddr + ph[k].p_memsz)
                return i;
    }
    return -1;
}

/* A lookup: a reference's (PLT, GOT) or dlsym's, which differ for a
 * version asked of an object that defines none. */
struct want {
    const char *name, *ver; /* ver NULL: no version */
    bool ref;
};

/* The definition o offers, by the loader's rules: the version itself, or,
 * for a reference, in an object that defines no versions, the plain name (a
 * stub's cudnnCreate satisfies a reference to cudnnCreate@libcudnn.so.9;
 * dlvsym does not take it). */
static void *def_in(const struct cg_obj *o, const struct want *w)
{
    if (!o->dyn || o->base == self_base)
        return NULL;
    if (!w->ver)
        return cg_elf_sym(o, w->name, NULL);
    void *p = cg_elf_sym(o, w->name, w->ver);
    return p || !w->ref || cg_elf_defines_versions(o) ? p : cg_elf_sym(o, w->name, NULL);
}

/* The loader's own answer for the global scope past the shim: the first
 * definition unversioned (a) and of the version (v).  Asked before bind_lock
 * is taken: dlsym takes the loader's lock, which a thread inside dlopen holds
 * while a constructor of the library being loaded may be calling cuInit and
 * waiting here.  dlsym resets the thread's dlerror() state: an unread error
 * of the program's is kept for its next dlerror() (dl.c), and our misses
 * leave nothing behind. */
struct global {
    void *a, *v;
};

static struct global global_ask(const struct want *w)
{
    struct global g = {NULL, NULL};
    int code;
    const char *pending = cg_dlerror_read(&code);
    if (pending)
        cg_dlerror_keep(pending, code);
    if (!(g.a = cg_dl.dlsym(RTLD_NEXT, w->name)))
        cg_dlerror_read(&code);
    if (w->ver && !(g.v = cg_dl.dlvsym(RTLD_NEXT, w->name, w->ver)))
        cg_dlerror_read(&code);
    return g;
}

/* Under bind_lock, with the objects collected. */
static void *global_def(const struct want *w, const struct global *g)
{
    if (!w->ver)
        return g->a;
    if (!w->ref)
        return g->v;
    /* dlvsym skips unversioned definitions; a reference does not skip those
     * of an object that defines no versions.  The earlier of the two wins
     * (objects are listed in load order, which is the global scope's). */
    if (g->a && g->a != g->v) {
        int ia = obj_index_of(g->a), iv = g->v ? obj_index_of(g->v) : MAX_OBJS;
        if (ia >= 0 && !cg_elf_defines_versions(&objs[ia]) && ia < iv)
            return g->a;
    }
    return g->v;
}

/* The object a DT_NEEDED name refers to: the first loaded one with that
 * soname (or that path, for a name with a slash). */
static int needed_index(const char *needed)
{
    bool path = false;
    for (const char *c = needed; *c; c++)
        path |= *c == '/';
    for (int i = 0; i < nobjs; i++) {
        const char *so = objs[i].dyn ? cg_elf_soname(&objs[i]) : NULL;
        if (path ? cg_streq(objs[i].name, needed)
                 : (so ? cg_streq(so, needed) : cg_streq(cg_basename(objs[i].name), needed)))
            return i;
    }
    return -1;
}

/* The caller's local scope: its own dependency tree, breadth first, itself
 * first (the tree of the dlopen()ed object above it is not visible from
 * here: a library that calls into a sibling it does not list is missed). */
static void *local_def(int caller, const struct want *w)
{
    static int queue[MAX_OBJS];
    static unsigned char seen[MAX_OBJS];
    memset(seen, 0, (size_t)nobjs);
    int head = 0, tail = 0;
    queue[tail++] = caller;
    seen[caller] = 1;
    while (head < tail) {
        const struct cg_obj *o = &objs[queue[head++]];
        void *p = def_in(o, w);
        if (p)
            return p;
        const char *n;
        for (int k = 0; o->dyn && (n = cg_elf_needed(o, k)); k++) {
            int j = needed_index(n);
            if (j >= 0 && !seen[j]) {
                seen[j] = 1;
                queue[tail++] = j;
            }
        }
    }
    return NULL;
}

static int definers(const struct want *w)
{
    int n = 0;
    for (int i = 0; i < nobjs; i++)
        n += def_in(&objs[i], w) != NULL;
    return n;
}

/* Where the caller's lookup lands, the shim left out.  *everyone: every
 * caller that reaches the shim would land there too. */
static void *lookup(const void *caller, const struct want *w, const struct global *gl, bool *everyone, bool *local)
{
    *everyone = *local = false;
    void *g = global_def(w, gl);
    if (g) {
        *everyone = true;
        return g;
    }
    int c = caller ? obj_index_of(caller) : -1;
    void *l = c >= 0 && objs[c].base != self_base ? local_def(c, w) : NULL;
    *local = true;
    *everyone = l && definers(w) == 1;
    return l;
}

void *cg_bind_lookup(const void *caller, const char *name, const char *ver)
{
    bool everyone, local;
    struct want w = {name, ver, false};
    struct global g = global_ask(&w);
    bind_enter();
    collect();
    void *p = lookup(caller, &w, &g, &everyone, &local);
    bind_leave();
    return p;
}

/* ---- answers per call site, for what is not the same for everyone.
 * Written under bind_lock, read without it: a sequence number per entry,
 * odd while it is being written; every access sequentially consistent (no
 * fences: ThreadSanitizer does not take them; this is the cold path). */
#define SITE_BITS 9
#define SITE_PROBES 8
static struct site {
    _Atomic uint32_t seq;
    _Atomic uint32_t gen; /* site_gen it was written in; another: empty */
    _Atomic(const void *) caller;
    _Atomic int key; /* slot * CG_NHOOKS + hook */
    _Atomic(void *) fn;
    atomic_bool wrap;
} sites[1u << SITE_BITS];
static _Atomic uint32_t site_gen = 1;

static unsigned site_hash(const void *caller, int key)
{
    uint64_t h = ((uint64_t)(uintptr_t)caller ^ (uint64_t)key * 0x9E3779B97F4A7C15ull) * 0xff51afd7ed558ccdull;
    return (unsigned)(h >> (64 - SITE_BITS));
}

static bool site_find(const void *caller, int key, void **fn, bool *wrap)
{
    uint32_t gen = atomic_load(&site_gen);
    unsigned i = site_hash(caller, key);
    for (int k = 0; k < SITE_PROBES; k++, i = (i + 1) & ((1u << SITE_BITS) - 1)) {
        struct site *s = &sites[i];
        uint32_t q = atomic_load(&s->seq);
        if (q & 1)
            return false;
        bool live = atomic_load(&s->gen) == gen;
        const void *c = atomic_load(&s->caller);
        int kk = atomic_load(&s->key);
        void *f = atomic_load(&s->fn);
        bool w = atomic_load(&s->wrap);
        if (atomic_load(&s->seq) != q || !live)
            return false;
        if (c == caller && kk == key) {
            *fn = f;
            *wrap = w;
            return true;
        }
    }
    return false;
}

static void site_put(const void *caller, int key, void *fn, bool wrap)
{
    uint32_t gen = atomic_load(&site_gen);
    unsigned i = site_hash(caller, key);
    for (int k = 0; k < SITE_PROBES; k++, i = (i + 1) & ((1u << SITE_BITS) - 1)) {
        struct site *s = &sites[i];
        if (atomic_load(&s->gen) == gen &&
            !(atomic_load(&s->caller) == caller && atomic_load(&s->key) == key))
            continue;
        uint32_t q = atomic_load(&s->seq);
        q += q & 1; /* odd: a fork took the child while its writer was here */
        atomic_store(&s->seq, q + 1);
        atomic_store(&s->caller, caller);
        atomic_store(&s->key, key);
        atomic_store(&s->fn, fn);
        atomic_store(&s->wrap, wrap);
        atomic_store(&s->gen, gen);
        atomic_store(&s->seq, q + 2);
        return;
    }
    /* full around here: this site is resolved again at each call (correct, slower) */
}

/* ---- the PLT entries' cold path (export.c) */
static bool in_slot_lib(int slot, const void *fn)
{
    int i = obj_index_of(fn);
    const char *so = i >= 0 && objs[i].dyn ? cg_elf_soname(&objs[i]) : NULL;
    return so && cg_streq(so, cg_slots[slot].soname);
}

void *cg_bind_plt(int slot, int hook, const void *caller, bool *wrap)
{
    int key = slot * CG_NHOOKS + hook;
    void *fn;
    if (site_find(caller, key, &fn, wrap))
        return fn;
    int saved = errno;
    struct want w = {cg_hooks[hook].name, cg_slots[slot].version_node, true};
    uint32_t epoch = atomic_load(&bind_epoch);
    struct global g = global_ask(&w);
    bind_enter();
    collect();
    bool everyone, local;
    fn = lookup(caller, &w, &g, &everyone, &local);
    *wrap = false;
    bool traced = atomic_load(&cg.traced), lib = fn && in_slot_lib(slot, fn);
    traced = traced && (!lib || cg_lazytab_for(hook)); /* the wrappers' tables first */
    /* the library's own family calling it: untouched (as on the dlsym route),
     * an answer for this caller only */
    if (lib && cg_caller_family(caller) == (int)cg_hooks[hook].family)
        everyone = lib = false;
    if (lib && traced) {
        void *expected = NULL;
        if (atomic_compare_exchange_strong(&cg_real[slot][hook], &expected, fn))
            atomic_fetch_add(&cg_real_gen, 1);
        else if (expected != fn)
            cg_libs_step_aside(cg_hooks[hook].name, fn, expected, "plt");
        *wrap = expected == NULL || expected == fn;
    }
    if (atomic_load(&bind_epoch) != epoch) {
        /* the objects changed while the loader was asked: use, do not keep */
    } else if (fn && everyone) {
        atomic_store(&kept_local[slot][hook], local);
        atomic_store(*wrap ? &cg_plt[slot][hook] : &cg_plt_plain[slot][hook], fn);
    } else {
        site_put(caller, key, fn, *wrap);
    }
    bind_leave();
    errno = saved;
    return fn;
}

/* Nothing defines the name where the caller looks.  Without the shim a lazily
 * bound call would have ended the process in the loader ("symbol lookup
 * error", status 127): the shim does the same, after an event.  A weak
 * reference would have read as NULL and the program would not have called:
 * it gets an error status instead (the family's "symbol not found"). */
long long cg_bind_unbound(int slot, int hook, const void *caller)
{
    int saved = errno;
    struct cg_obj o;
    bool found = caller && cg_objsnap_find_obj(caller, &o);
    bool weak = found && cg_elf_import_bind(&o, cg_hooks[hook].name) == STB_WEAK;
    long long status = cg_hooks[hook].family == CG_FAM_DRV      ? CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND
                       : cg_hooks[hook].family == CG_FAM_CUDART ? cudaErrorSharedObjectSymbolNotFound
                       : slot == CG_SLOT_CUDNN8                 ? CUDNN8_STATUS_NOT_INITIALIZED
                                                                : CUDNN_STATUS_NOT_INITIALIZED;
    const char *ver = cg_slots[slot].version_node;
    if (atomic_load(&cg.traced)) {
        char b[2048];
        struct cg_ev e;
        cg_ev_begin_call(&e, b, sizeof b, "call_unbound", hook);
        cg_ev_str(&e, "version", ver);
        cg_ev_caller(&e, caller);
        cg_ev_bool(&e, "weak", weak);
        if (weak)
            cg_ev_i64(&e, "status", status);
        else
            e.final = true;
        cg_ev_end(&e);
    }
    if (weak) {
        errno = saved;
        return status;
    }
    /* the loader's words: "<program>: symbol lookup error: <object>: undefined symbol: <name>[, version <v>]" */
    extern char *program_invocation_name;
    const char *who = found && o.name[0] ? o.name : program_invocation_name;
    char msg[4096];
    size_t n = cg_strlcpy(msg, program_invocation_name, sizeof msg);
    const char *parts[] = {": symbol lookup error: ", who, ": undefined symbol: ", cg_hooks[hook].name,
                           ver ? ", version " : "", ver ? ver : "", "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        n = cg_append(msg, sizeof msg, n, parts[i]);
    if (n >= sizeof msg)
        n = sizeof msg - 1;
    ssize_t w = write(2, msg, n);
    (void)w;
    /* as the loader ends it: exit_group, not the shim's own _exit (shim.c),
     * which would add an exit line the loader's way out never has */
    for (;;)
        syscall(SYS_exit_group, 127);
}

/* ---- when the answers change */
/* Under bind_lock: an answer being worked out is kept before this drops it,
 * or is worked out after the change. */
static void clear_kept(bool local_only)
{
    bind_enter();
    atomic_fetch_add(&bind_epoch, 1);
    for (int s = 0; s < CG_NSLOTS; s++)
        for (int h = 0; h < CG_NHOOKS; h++)
            if (!local_only || atomic_load(&kept_local[s][h])) {
                atomic_store(&cg_plt[s][h], NULL);
                atomic_store(&cg_plt_plain[s][h], NULL);
            }
    atomic_fetch_add(&site_gen, 1);
    bind_leave();
}

/* A library was loaded: a local answer may have a second definition now (a
 * global one stays first: the global scope only grows at its end). */
void cg_bind_after_load(void) { clear_kept(true); }

/* A library was unloaded, or tracing started (untraced answers are plain). */
void cg_bind_reset(void) { clear_kept(false); }
