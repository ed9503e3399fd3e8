/* objsnap.c - a copy of the list of loaded objects that a signal handler
 * can read.
 *
 * The crash handler must name the module of each frame, but every way of
 * asking the dynamic loader (dladdr, dl_iterate_phdr) takes its lock, and
 * the crash may have happened while that lock was held.  So the list is
 * copied (address ranges and path names) at start and after every dlopen /
 * dlclose that goes through the shim, outside any signal handler, and the
 * handler only reads the copy.
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

#include "cg.h"

#define SNAP_OBJS 1024
#define SNAP_NAMES (96 * 1024)

struct snap_obj {
    uintptr_t start, end, base;
    uint32_t name; /* offset into names */
};
struct snap {
    int n;
    size_t used;
    struct snap_obj obj[SNAP_OBJS];
    char names[SNAP_NAMES];
};
static struct snap bufs[2];
static _Atomic int published = -1;
static _Atomic int readers[2];
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
CG_FORK_REINIT(writer);
static char exe[1024];

static int add_obj(const struct cg_obj *o, void *arg)
{
    struct snap *s = arg;
    if (s->n >= SNAP_OBJS || o->end <= o->start)
        return 0;
    const char *name = o->name[0] ? o->name : exe;
    size_t len = strlen(name);
    if (s->used + len + 1 > SNAP_NAMES)
        name = "?", len = 1;
    if (s->used + len + 1 > SNAP_NAMES)
        return 1;
    memcpy(s->names + s->used, name, len + 1);
    s->obj[s->n++] = (struct snap_obj){o->start, o->end, o->base, (uint32_t)s->used};
    s->used += len + 1;
    return 0;
}

void cg_objsnap_refresh(void)
{
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
    cg_elf_each_obj(add_obj, &bufs[w]);
    atomic_store(&published, w);
    pthread_mutex_unlock(&writer);
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
bool cg_objsnap_find(uintptr_t addr, char *name, size_t cap, uintptr_t *base)
{
    for (int tries = 0; tries < 8; tries++) {
        int b = atomic_load(&published);
        if (b < 0)
            return false;
        atomic_fetch_add(&readers[b], 1);
        if (atomic_load(&published) != b) { /* republished meanwhile: retry */
            atomic_fetch_sub(&readers[b], 1);
            continue;
        }
        const struct snap *s = &bufs[b];
        bool found = false;
        for (int i = 0; i < s->n && !found; i++)
            if (addr >= s->obj[i].start && addr < s->obj[i].end) {
                cg_strlcpy(name, s->names + s->obj[i].name, cap);
                *base = s->obj[i].base;
                found = true;
            }
        atomic_fetch_sub(&readers[b], 1);
        return found;
    }
    return false;
}
