/* lazytab.c - the large tables, made when first needed.
 *
 * The graph layer's operation-graph records (1.3 MiB) and the GPU memory
 * tables (2 MiB) used to be static: address space of every preloaded
 * process, counted by RLIMIT_AS (`ulimit -v`) even in a process that never
 * touches CUDA.  (The graph's descriptor table, 4 MiB, stays static: read
 * through a pointer, the descriptor calls and Execute took 9-10
 * instructions more, the pointer reloaded after every store.)  Now each is an anonymous mapping made
 * the first time a wrapped entry of its family is about to be handed out:
 * the fast paths read a table only through a wrapped entry (cg_real, cg_plt),
 * so every store of one is preceded by cg_lazytab_for(hook), and a fast path
 * always finds its table made (one load of the pointer, where a static table
 * cost one address computation: no instruction more, bench/run.sh).  A
 * process that never calls cuDNN's backend API maps no records; one that
 * never allocates GPU memory through the driver, no memory table.
 *
 * Made once: each thread that finds the pointer NULL maps and fills its own,
 * one compare-and-swap publishes it, the others unmap theirs.  No malloc, no
 * lock: mmap is a system call, usable before libc is ready and in a forked
 * child (the child inherits the parent's tables as it did the static ones).
 * When a table cannot be made (the address-space limit) tracing stops, said
 * once: nothing is wrapped any more and every call forwards untouched. */
#include <sys/mman.h>

#include "core/core.h"

extern struct cg_lazytab *const __start_cg_lazytabs[] __attribute__((weak, visibility("hidden")));
extern struct cg_lazytab *const __stop_cg_lazytabs[] __attribute__((weak, visibility("hidden")));

static bool make(struct cg_lazytab *t)
{
    if (__atomic_load_n(&t->p, __ATOMIC_ACQUIRE))
        return true;
    void *m = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return false;
    if (t->init)
        t->init(m);
    void *expected = NULL;
    if (!__atomic_compare_exchange_n(&t->p, &expected, m, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        munmap(m, t->size); /* another thread's came first */
    return true;
}

bool cg_lazytab_for(int hook)
{
    bool ok = true;
    for (struct cg_lazytab *const *t = __start_cg_lazytabs; t && t < __stop_cg_lazytabs; t++)
        if ((*t)->read_by(hook))
            ok &= make(*t);
    if (ok)
        return true;
    static atomic_bool warned;
    atomic_store(&cg.traced, false);
    if (!atomic_exchange(&warned, true))
        cg_warn("no memory for convguard's tables (address-space limit), tracing off; needed for ",
                cg_hooks[hook].name);
    return false;
}
