/* repeat.c - the same event again is counted, not written.
 *
 * A process that retries one failing call a hundred thousand times (a
 * failing cudnnCreate in a loop: 62 MB of identical lines) needs the first
 * few and a count.  An event is identical to an earlier one when its name
 * and its own members (everything past seq, t, pid and tid: the call, the
 * status, the sizes, the caller) are byte for byte the same.  Of each such
 * event the first CONVGUARD_REPEATS are written; later ones are counted in
 * a run, and the counts go out as one `repeated` event per run (of, count,
 * first/last seq and t, the fields) just before the next event that is
 * written, whatever it is (the exit and crash events too): so a reader
 * meets "again, N times" where the repeats stopped, and a count is never
 * held past a line that could be the trace's last.
 *
 * Runs live in a small table (SLOTS, WAYS per hash); a run whose count went
 * out may give its place to a new event (the least recently seen first).
 * One spinlock guards the table; it is held while a count is taken and
 * while the `repeated` lines are written, never while anything else is.
 * It is async-signal-safe in the way the crash handler needs: a thread that
 * holds it and is interrupted (a crash, a handler that calls CUDA) neither
 * folds nor flushes from the handler (its events are written plainly), and
 * no thread waits for the lock longer than a second.  A seq a folded event
 * took is missing from the file: the `repeated` event accounts for it
 * (docs/trace-format.md). */
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "core/core.h"

#define SLOTS 32
#define WAYS 4
#define BODY_MAX 2048 /* longer events are always written */

struct run {
    uint64_t hash; /* 0: free */
    char name[32];
    size_t body_len;
    char body[BODY_MAX + 1];
    uint64_t seen;    /* events of this identity since the slot was taken */
    uint64_t pending; /* counted, not yet in a `repeated` event */
    uint64_t first_seq, last_seq, first_ns, last_ns;
    uint64_t used; /* the table's clock at its last event */
};

static struct run runs[SLOTS];
static uint64_t clock_;
static atomic_int lock_;
static atomic_int owed; /* runs with pending > 0: the common path reads only this */
static __thread bool inside;

void cg_repeat_after_fork(void)
{
    /* the parent's counts are the parent's: its file will have them */
    memset(runs, 0, sizeof runs);
    clock_ = 0;
    atomic_store(&owed, 0);
    atomic_store(&lock_, 0);
    inside = false;
}

/* the lock, waited for at most a second (a holder stopped for good, say the
 * thread that crashed inside it) */
static bool take(void)
{
    uint64_t give_up = 0;
    for (unsigned spins = 0;; spins++) {
        int free_ = 0;
        if (atomic_compare_exchange_weak_explicit(&lock_, &free_, 1, memory_order_acquire, memory_order_relaxed)) {
            inside = true;
            return true;
        }
        if (spins < 64)
            continue;
        if (!give_up)
            give_up = cg_now_ns() + 1000000000ull;
        else if (cg_now_ns() > give_up)
            return false;
        sched_yield();
    }
}

static void give(void)
{
    inside = false;
    atomic_store_explicit(&lock_, 0, memory_order_release);
}

static uint64_t hash_of(const char *name, const char *body, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)body[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* events that are never folded: the ones a trace is read by, and our own */
static bool foldable(const struct cg_ev *e)
{
    return e->name && !e->final && !e->overflow && e->body_at && strlen(e->name) < sizeof runs[0].name &&
           strcmp(e->name, "start") != 0 && strcmp(e->name, "repeated") != 0 && strcmp(e->name, "trace_gap") != 0;
}

/* The run of this identity, or a slot taken for it; NULL when every slot
 * it may use still owes a count. */
static struct run *run_for(uint64_t h, const char *name, const char *body, size_t n)
{
    struct run *victim = NULL;
    for (int w = 0; w < WAYS; w++) {
        struct run *r = &runs[(h + (uint64_t)w) % SLOTS];
        if (r->hash == h && r->body_len == n && strcmp(r->name, name) == 0 && memcmp(r->body, body, n) == 0)
            return r;
        if (!r->pending && (!victim || !r->hash || (victim->hash && r->used < victim->used)))
            victim = r;
    }
    if (!victim)
        return NULL;
    victim->hash = h;
    cg_strlcpy(victim->name, name, sizeof victim->name);
    memcpy(victim->body, body, n);
    victim->body[n] = 0;
    victim->body_len = n;
    victim->seen = victim->pending = 0;
    return victim;
}

static void count(struct run *r, const struct cg_ev *e)
{
    if (!r->pending++) {
        r->first_seq = r->last_seq = e->seq;
        r->first_ns = r->last_ns = e->t_ns;
        atomic_fetch_add_explicit(&owed, 1, memory_order_relaxed);
        return;
    }
    /* threads take the lock in any order: the range, not the last one */
    if (e->seq < r->first_seq)
        r->first_seq = e->seq, r->first_ns = e->t_ns;
    if (e->seq > r->last_seq)
        r->last_seq = e->seq, r->last_ns = e->t_ns;
}

bool cg_repeat_fold(struct cg_ev *e)
{
    if (cg_cfg.repeats <= 0 || inside || !foldable(e))
        return false;
    /* the sealed line: header, members, "}\n"; the members without their comma */
    const char *body = e->buf + e->body_at;
    size_t n = e->len - 2 - e->body_at;
    if (n && *body == ',')
        body++, n--;
    if (n > BODY_MAX)
        return false;
    uint64_t h = hash_of(e->name, body, n);
    if (!take())
        return false;
    bool folded = false;
    struct run *r = run_for(h, e->name, body, n);
    if (r) {
        r->used = ++clock_;
        folded = ++r->seen > (uint64_t)cg_cfg.repeats;
        if (folded)
            count(r, e);
    }
    give();
    return folded;
}

/* one `repeated` line for r's count (the lock held: buf is the table's) */
static void write_run(struct run *r)
{
    static char buf[BODY_MAX + 512];
    char t[32];
    struct cg_ev e;
    cg_ev_begin(&e, buf, sizeof buf, "repeated");
    cg_ev_str(&e, "of", r->name);
    cg_ev_u64(&e, "count", r->pending);
    cg_ev_u64(&e, "first_seq", r->first_seq);
    cg_ev_u64(&e, "last_seq", r->last_seq);
    cg_fmt_t(t, r->first_ns);
    cg_ev_raw(&e, "first_t", t);
    cg_fmt_t(t, r->last_ns);
    cg_ev_raw(&e, "last_t", t);
    cg_ev_open(&e, "fields", '{');
    if (r->body_len)
        cg_ev_raw(&e, NULL, r->body);
    cg_ev_close(&e, '}');
    r->pending = 0;
    atomic_fetch_sub_explicit(&owed, 1, memory_order_relaxed);
    cg_ev_end(&e); /* inside: neither folded nor flushing again */
}

void cg_repeat_flush(void)
{
    if (CG_LIKELY(atomic_load_explicit(&owed, memory_order_relaxed) == 0) || inside)
        return;
    if (!take())
        return; /* the holder is stuck (it crashed inside): its counts are lost */
    /* oldest first: the order the runs began in */
    for (;;) {
        struct run *next = NULL;
        for (int i = 0; i < SLOTS; i++)
            if (runs[i].pending && (!next || runs[i].first_seq < next->first_seq))
                next = &runs[i];
        if (!next)
            break;
        write_run(next);
    }
    give();
}
