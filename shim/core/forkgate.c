/* forkgate.c - the shim's own calls into code that takes locks it does not
 * own (the dynamic loader, NVML, the driver on failure paths) never overlap
 * a fork().
 *
 * Why: glibc resets its dl_load_lock in a forked child, but not the
 * dl_load_write_lock that dl_iterate_phdr takes (2.36 here; older glibc the
 * same).  A child forked while another thread of the parent was inside
 * dl_iterate_phdr inherits that lock taken by a thread that does not exist in
 * the child, and its first dl_iterate_phdr or dlopen waits forever: a
 * DataLoader worker that hangs with no error (issue 21).  Without the shim no
 * thread would have been in there, so the shim must make its own calls
 * exclusive with fork.  NVML's and the driver's internal locks are the same
 * kind of foreign lock.
 *
 * How: a thread announces itself (one shared count) for the length of such a
 * call; fork's prepare handler raises a flag that holds new entrants back and
 * waits for the count to drain, so the fork happens with no shim thread in
 * there; the parent and child handlers lower the flag (the child also clears
 * the count: its only thread is the forking one).  Nested entries on one
 * thread count once.  The handlers are registered before any other handler of
 * the shim, so this prepare runs last (prepare handlers run in reverse order):
 * the shim's other prepare handlers take locks whose holders may be waiting
 * to enter here, so they must get those locks first.  Entering costs two
 * atomic operations and a thread-local; it is never on a hot path (the hot
 * paths read the shim's copy of the link map, objsnap.c). */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "core/core.h"

static _Atomic int users;          /* threads inside a gated call */
static _Atomic bool fork_pending;  /* a fork() is between prepare and parent/child */
static __thread int depth;         /* this thread's nesting */
static _Atomic unsigned gave_up;   /* prepares that stopped waiting (a stuck call) */

static void pause_briefly(unsigned *spins)
{
    if (++*spins < 64) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
}

void cg_fork_gate_enter(void)
{
    if (depth++ > 0)
        return;
    unsigned spins = 0;
    for (;;) {
        while (atomic_load(&fork_pending))
            pause_briefly(&spins);
        atomic_fetch_add(&users, 1);
        if (!atomic_load(&fork_pending))
            return;
        /* a prepare raised the flag between our test and our count: let it go first */
        atomic_fetch_sub(&users, 1);
    }
}

void cg_fork_gate_leave(void)
{
    if (--depth == 0)
        atomic_fetch_sub(&users, 1);
}

/* Bounded: a gated call that never returns (a driver stuck in the kernel)
 * must not turn into a program whose fork() never returns.  After 5 s the
 * fork goes ahead as it would have without the gate. */
static void prepare(void)
{
    atomic_store(&fork_pending, true);
    int mine = depth > 0; /* fork() from inside a gated call (a handler of the program's) */
    uint64_t give_up = cg_now_ns() + 5000000000ull;
    unsigned spins = 0;
    while (atomic_load(&users) > mine) {
        if (cg_now_ns() > give_up) {
            atomic_fetch_add(&gave_up, 1);
            return;
        }
        pause_briefly(&spins);
    }
}

static void parent(void) { atomic_store(&fork_pending, false); }

static void child(void)
{
    atomic_store(&users, depth > 0);
    atomic_store(&fork_pending, false);
}

void cg_fork_gate_init(void)
{
    static atomic_bool done;
    if (!atomic_exchange(&done, true))
        cg_atfork(prepare, parent, child);
}

