/* objsnap.c - a copy of the list of loaded objects that a signal handler,
 * and the shim's frequent paths, can read without asking the loader.
 *
 * The crash handler must name the module of each frame, but every way of
 * asking the dynamic loader (dladdr, dl_iterate_phdr) takes its lock, and
 * the crash may have happened while that lock was held.  The frequent paths
 * (every dlopen and dlsym of the program, the lookups of cuDNN's parts) must
 * not take the loader's dl_load_write_lock either: a fork() while they hold
 * it leaves the child's loader locked for ever (issue 21; forkgate.c).  So the
 * list is copied (address ranges, dynamic sections, program headers, path
 * names) at start, after every dlopen that added an object and after every
 * dlclose that goes through the shim (every dlopen of the program does:
 * the shim defines dlopen), outside any signal handler, and they read the
 * copy.  Objects that libc loads and unloads for itself (NSS, iconv
 * modules) bypass the shim's dlopen: an address in none of the copied
 * objects sends cg_objsnap_find_obj to the loader (gated against fork).
 *
 * Two buffers: the writer fills the one no reader holds, then publishes it.
 * A reader announces itself on the published buffer and checks it is still
 * the published one; the writer waits until nobody reads the buffer it is
 * about to overwrite.  No lock is taken on the reading side. */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "loader/loader.h"

#define SNAP_OBJS 1024
#define SNAP_NAMES (96 * 1024)

struct snap_obj {
    uintptr_t start, end, base;
    const void *dyn, *phdr;
    const char *loader_name; /* the loader's own string: valid while the object is loaded */
    int phnum;
    uint32_t name; /* offset into names: the copy a signal handler reads */
};
struct snap {
    int n;
    bool complete; /* every object fitted */
    size_t used;
    struct snap_obj obj[SNAP_OBJS];
    char names[SNAP_NAMES];
};
static struct snap bufs[2];
static _Atomic int published = -1;
static _Atomic int readers[2];
static _Atomic uint64_t generation; /* publications so far */
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
CG_FORK_REINIT(writer);
static char exe[1024];

/* The loader's path strings are read inside dl_iterate_phdr, under its
 * dl_load_write_lock, which ThreadSanitizer cannot see (ld.so's own locks
 * are not intercepted): through libc's strlen/memcpy, which TSan intercepts,
 * it reported the loader's earlier write of the string as a race.  Plain
 * loops in this file, which is built without TSan (tests/robust.mk); the
 * reads are volatile so that the compiler does not turn them back into
 * strlen and memcpy calls. */
static size_t name_len(const volatile char *p)
{
    size_t n = 0;
    while (p[n])
        n++;
    return n;
}

static int add_obj(const struct cg_obj *o, void *arg)
{
    struct snap *s = arg;
    if (s->n >= SNAP_OBJS || o->end <= o->start)
        return 0;
    const char *name = o->name[0] ? o->name : exe;
    size_t len = name_len(name);
    if (s->used + len + 1 > SNAP_NAMES)
        name = "?", len = 1;
    if (s->used + len + 1 > SNAP_NAMES)
        return 1;
    for (size_t i = 0; i <= len; i++)
        s->names[s->used + i] = ((const volatile char *)name)[i];
    s->obj[s->n++] = (struct snap_obj){o->start, o->end, o->base, o->dyn, o->phdr, o->name, o->phnum, (uint32_t)s->used};
    s->used += len + 1;
    return 0;
}

void cg_objsnap_refresh(void)
{
    cg_fork_gate_enter(); /* before the lock: the order every gated section keeps (forkgate.c) */
    pthread_mutex_lock(&writer);
    if (!exe[0]) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        if (!exe[0])
            cg_strlcpy(exe, "(main program)", sizeof exe);
    }
    int cur = atomic_load(&published);
    int w = cur == 0 ? 1 : 0;
    /* a crash handler on another thread is reading it: it is quick; the
     * bound only guards against a reader a program's handler jumped out of */
    uint64_t give_up = cg_now_ns() + 1000000000ull;
    while (atomic_load(&readers[w]) != 0 && cg_now_ns() < give_up)
        sched_yield();
    bufs[w].n = 0;
    bufs[w].used = 0;
    bufs[w].complete = cg_elf_each_obj(add_obj, &bufs[w]) == 0 && bufs[w].n < SNAP_OBJS;
    atomic_store(&published, w);
    atomic_fetch_add(&generation, 1);
    pthread_mutex_unlock(&writer);
    cg_fork_gate_leave();
}

uint64_t cg_objsnap_generation(void) { return atomic_load(&generation); }

/* The published buffer, announced as read; NULL when there is none. */
static const struct snap *read_begin(int *b_out)
{
    for (int tries = 0; tries < 8; tries++) {
        int b = atomic_load(&published);
        if (b < 0)
            return NULL;
        atomic_fetch_add(&readers[b], 1);
        if (atomic_load(&published) == b) {
            *b_out = b;
            return &bufs[b];
        }
        atomic_fetch_sub(&readers[b], 1); /* republished meanwhile: retry */
    }
    return NULL;
}

static void read_end(int b) { atomic_fetch_sub(&readers[b], 1); }

static void to_obj(const struct snap_obj *so, struct cg_obj *o)
{
    *o = (struct cg_obj){.base = so->base, .start = so->start, .end = so->end, .name = so->loader_name,
                         .dyn = so->dyn, .phdr = so->phdr, .phnum = so->phnum};
}

/* Inside one of the object's PT_LOAD segments, not only its span. */
static bool in_segment(const void *phdr, int phnum, uintptr_t base, uintptr_t addr)
{
    const ElfW(Phdr) *ph = phdr;
    for (int i = 0; i < phnum; i++)
        if (ph[i].p_type == PT_LOAD && addr >= base + ph[i].p_vaddr && addr < base + ph[i].p_vaddr + ph[i].p_memsz)
            return true;
    return false;
}

/* The copied object holding addr: 1 found, 0 in none of a complete copy, -1 no usable copy. */
static int lookup(const void *addr, struct cg_obj *out)
{
    int b;
    const struct snap *s = read_begin(&b);
    if (!s)
        return -1;
    int r = s->complete ? 0 : -1;
    for (int i = 0; i < s->n; i++)
        if ((uintptr_t)addr >= s->obj[i].start && (uintptr_t)addr < s->obj[i].end &&
            in_segment(s->obj[i].phdr, s->obj[i].phnum, s->obj[i].base, (uintptr_t)addr)) {
            to_obj(&s->obj[i], out);
            r = 1;
            break;
        }
    read_end(b);
    return r;
}

struct find_ctx {
    uintptr_t addr;
    struct cg_obj *out;
};

static int find_cb(const struct cg_obj *o, void *p)
{
    struct find_ctx *c = p;
    if (c->addr < o->start || c->addr >= o->end || !in_segment(o->phdr, o->phnum, o->base, c->addr))
        return 0;
    *c->out = *o;
    return 1;
}

/* The copy first (no lock); the loader only for an address the copy does
 * not hold (an object loaded behind the shim's dlopen, or none at all). */
bool cg_objsnap_find_obj(const void *addr, struct cg_obj *out)
{
    int r = lookup(addr, out);
    if (r == 1)
        return true;
    struct find_ctx c = {(uintptr_t)addr, out};
    return cg_elf_each_obj(find_cb, &c) == 1;
}

bool cg_objsnap_has_dyn(const void *dyn)
{
    int b;
    const struct snap *s = read_begin(&b);
    if (!s)
        return false;
    bool found = false;
    for (int i = 0; i < s->n && !found; i++)
        found = s->obj[i].dyn == dyn;
    read_end(b);
    return found;
}

/* A forked child has one thread: nobody reads (the writer lock is
 * re-initialised with the others, CG_FORK_REINIT). */
void cg_objsnap_after_fork(void)
{
    atomic_store(&readers[0], 0);
    atomic_store(&readers[1], 0);
}

/* Async-signal-safe: copies the module path of addr into name (cap bytes)
 * and sets *base to its load address; false when addr is in no object that
 * was loaded at the last refresh. */
bool cg_objsnap_name_at(uintptr_t addr, char *name, size_t cap, uintptr_t *base)
{
    int b;
    const struct snap *s = read_begin(&b);
    if (!s)
        return false;
    bool found = false;
    for (int i = 0; i < s->n && !found; i++)
        if (addr >= s->obj[i].start && addr < s->obj[i].end) {
            cg_strlcpy(name, s->names + s->obj[i].name, cap);
            *base = s->obj[i].base;
            found = true;
        }
    read_end(b);
    return found;
}
