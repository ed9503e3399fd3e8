/* graph_table.c - what each cuDNN backend descriptor is, and one record per
 * operation graph.
 *
 * The table is open addressing over a fixed array keyed by the descriptor
 * pointer: Create claims a slot with one compare-and-swap, Destroy leaves a
 * tombstone that a later Create reuses, lookups stop at an empty slot or after
 * GT_PROBE slots.  No malloc, no lock, no syscall: it runs on every descriptor
 * call.  A full neighbourhood means the descriptor is not tracked; that is
 * counted (exit event, graph.untracked) and nothing else changes.
 *
 * Entry fields other than key and id are written by the thread that owns the
 * descriptor (cuDNN descriptors are not shared between threads while being
 * built) and read on the rare paths; counters that several threads may touch
 * are atomics. */
#include <string.h>

#include "graph/graph.h"

struct gt_ent gt_table[GT_SIZE];
_Atomic uint64_t gt_untracked;

/* Entry 0 is NULL's slot (see gt_find); taken before any hook can run. */
__attribute__((constructor(101))) static void gt_reserve(void)
{
    atomic_store_explicit(&gt_table[0].key, GT_RESERVED, memory_order_relaxed);
}

/* the records are read by the backend API's wrappers (cudnn_graph.c) */
static bool backend_hook(int hook) { return strncmp(cg_hooks[hook].name, "cudnnBackend", 12) == 0; }

/* Ids come from a global counter in blocks, so threads creating descriptors
 * at once (JAX compiles on several) do not share a cache line per Create. */
static _Atomic uint32_t id_next = 1;
static __thread uint32_t tl_id, tl_id_end;

static uint32_t new_id(void)
{
    if (CG_UNLIKELY(tl_id == tl_id_end)) {
        tl_id = atomic_fetch_add_explicit(&id_next, 256, memory_order_relaxed);
        tl_id_end = tl_id + 256;
        if (!tl_id) /* 0 means "no descriptor" in links: skip it on wrap-around */
            tl_id++;
    }
    return tl_id++;
}

/* Only the member of the union that the type uses is cleared: fixed-size
 * stores, not the whole union, on every Create. */
static inline void init_ent(struct gt_ent *e, int type)
{
    e->type = type;
    e->finalized = 0;
    switch (type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        memset(&e->u.tensor, 0, sizeof e->u.tensor);
        e->u.tensor.dtype = -1;
        break;
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
        memset(&e->u.conv, 0, sizeof e->u.conv);
        e->u.conv.mode = e->u.conv.comp = -1;
        break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        memset(&e->u.graph, 0, sizeof e->u.graph);
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        memset(&e->u.heur, 0, sizeof e->u.heur);
        break;
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
        memset(&e->u.engine, 0, sizeof e->u.engine);
        e->u.engine.index = -1;
        break;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        memset(&e->u.cfg, 0, sizeof e->u.cfg);
        e->u.cfg.index = -1;
        e->u.cfg.heur_rank = -1;
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        memset(&e->u.plan, 0, sizeof e->u.plan);
        e->u.plan.ws = -1;
        e->u.plan.execs = (uint64_t)-1;
        e->u.plan.index = -1;
        e->u.plan.heur_rank = -1;
        break;
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
        memset(&e->u.vpack, 0, sizeof e->u.vpack);
        break;
    default: /* operations (set_op_ref), and types nothing reads */
        memset(&e->u.op, 0, sizeof e->u.op);
        break;
    }
    atomic_store_explicit(&e->id, new_id(), memory_order_release);
}

/* One pass: a pointer we still hold (its Destroy went by another route) is
 * reused; else the first free slot (tombstone or empty) before the end of
 * the key's run is claimed. */
struct gt_ent *gt_insert(uintptr_t desc, int type)
{
    if (!desc)
        return NULL;
    uint32_t s = gt_slot_of(desc);
    struct gt_ent *e = &gt_table[s], *free_ent = NULL;
    /* The first slot of the run is free and nothing of desc can lie past it:
     * empty (the run ends there), or desc's own tombstone (a pointer freed and
     * handed out again, the common case: a live desc elsewhere in the run
     * would have been found, and taken, by the Create that put it here). */
    uintptr_t k0 = atomic_load_explicit(&e->key, memory_order_acquire);
    if (k0 == desc) {
        init_ent(e, type);
        return e;
    }
    if ((k0 == GT_EMPTY || k0 == gt_tomb_of(desc)) &&
        atomic_compare_exchange_strong_explicit(&e->key, &k0, desc, memory_order_acq_rel, memory_order_relaxed)) {
        init_ent(e, type);
        return e;
    }
    for (uint32_t i = 0; i < GT_PROBE; i++) {
        e = &gt_table[(s + i) & (GT_SIZE - 1)];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == desc) {
            init_ent(e, type);
            return e;
        }
        if (gt_is_tomb(k) && !free_ent)
            free_ent = e;
        if (k == GT_EMPTY) {
            if (!free_ent)
                free_ent = e;
            break;
        }
    }
    /* claim it; lost races move on to the next free slot of the run */
    for (uint32_t i = free_ent ? (uint32_t)(free_ent - gt_table - s) & (GT_SIZE - 1) : GT_PROBE; i < GT_PROBE; i++) {
        e = &gt_table[(s + i) & (GT_SIZE - 1)];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
        while (k == GT_EMPTY || gt_is_tomb(k)) {
            if (atomic_compare_exchange_weak_explicit(&e->key, &k, desc, memory_order_acq_rel,
                                                      memory_order_relaxed)) {
                init_ent(e, type);
                return e;
            }
        }
    }
    atomic_fetch_add_explicit(&gt_untracked, 1, memory_order_relaxed);
    return NULL;
}

struct gt_ent *gt_find_more(uintptr_t desc, const struct gt_ent *first)
{
    if (!desc)
        return NULL;
    uint32_t s = (uint32_t)(first - gt_table);
    for (uint32_t i = 1; i < GT_PROBE; i++) {
        struct gt_ent *e = &gt_table[(s + i) & (GT_SIZE - 1)];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == desc)
            return e;
        if (k == GT_EMPTY)
            return NULL;
    }
    return NULL;
}

void gt_remove(struct gt_ent *e)
{
    atomic_store_explicit(&e->id, 0, memory_order_relaxed);
    uintptr_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
    atomic_store_explicit(&e->key, gt_tomb_of(k), memory_order_release);
}

void gt_link_to(struct gt_link *l, const struct gt_ent *e)
{
    l->key = e ? atomic_load_explicit(&e->key, memory_order_relaxed) : 0;
    l->id = e ? atomic_load_explicit(&e->id, memory_order_relaxed) : 0;
}

struct gt_ent *gt_follow(const struct gt_link *l)
{
    if (!l->key || !l->id)
        return NULL;
    struct gt_ent *e = gt_find(l->key);
    return e && atomic_load_explicit(&e->id, memory_order_relaxed) == l->id ? e : NULL;
}

uint32_t gt_index(const struct gt_ent *e) { return (uint32_t)(e - gt_table); }
struct gt_ent *gt_at(uint32_t index) { return index < GT_SIZE ? &gt_table[index] : NULL; }

/* ---- operation graph records (GR_COUNT, mapped with the table) */
static struct cg_lazytab rec_tab = {backend_hook, sizeof(struct gr_rec) * GR_COUNT, NULL, NULL};
CG_LAZYTAB(rec_tab);
#define recs ((struct gr_rec *)rec_tab.p)
static _Atomic uint64_t rec_cursor;

uint64_t gr_allocated(void) { return atomic_load_explicit(&rec_cursor, memory_order_relaxed); }

struct gr_rec *gr_get(uint32_t idx, uint32_t gen)
{
    if (!gen || idx >= GR_COUNT)
        return NULL;
    struct gr_rec *r = &recs[idx];
    return atomic_load_explicit(&r->gen, memory_order_acquire) == gen ? r : NULL;
}

void gr_each(void (*fn)(struct gr_rec *r, void *arg), void *arg)
{
    if (!__atomic_load_n(&rec_tab.p, __ATOMIC_ACQUIRE)) /* cuDNN never wrapped */
        return;
    uint64_t n = gr_allocated();
    for (uint32_t i = 0; i < GR_COUNT && i < n; i++)
        if (atomic_load_explicit(&recs[i].gen, memory_order_acquire))
            fn(&recs[i], arg);
}

void gr_add_ws(struct gr_rec *r, int64_t ws)
{
    uint32_t i = atomic_fetch_add_explicit(&r->nws, 1, memory_order_relaxed);
    if (i < GR_WS)
        r->ws[i] = ws;
}

static void copy_tensor(struct gr_tensor *d, const struct gt_tensor *t, uint16_t attr)
{
    memcpy(d->dims, t->dims, sizeof d->dims);
    d->uid = t->uid;
    d->dtype = t->dtype;
    d->attr = attr;
    d->nd = t->nd;
    d->is_virtual = t->is_virtual;
    d->has_uid = t->has_uid;
}

void gr_new(struct gt_ent *g, void (*retired)(struct gr_rec *r, const char *when))
{
    uint64_t c = atomic_fetch_add_explicit(&rec_cursor, 1, memory_order_relaxed);
    uint32_t idx = (uint32_t)(c % GR_COUNT);
    uint32_t gen = (uint32_t)(c / GR_COUNT) + 1;
    struct gr_rec *r = &recs[idx];
    if (atomic_load_explicit(&r->gen, memory_order_acquire))
        retired(r, "recycled"); /* its last chance to say every plan failed */
    atomic_store_explicit(&r->gen, 0, memory_order_release);
    memset((char *)r + sizeof r->gen, 0, sizeof *r - sizeof r->gen);
    r->graph_id = atomic_load_explicit(&g->id, memory_order_relaxed);
    struct gt_graph *gg = &g->u.graph;
    for (int i = 0; i < gg->nops; i++) {
        struct gt_ent *op = gt_follow(&gg->op[i]);
        if (!op)
            continue;
        if (r->nops == GR_OPS) {
            r->ops_more++;
            continue;
        }
        struct gr_op *o = &r->ops[r->nops++];
        o->type = op->type;
        struct gt_op *so = &op->u.op;
        for (int k = 0; k < so->nt && o->nt < GR_TENSORS; k++) {
            struct gt_ent *t = gt_follow(&so->t[k]);
            if (t && t->type == CUDNN_BACKEND_TENSOR_DESCRIPTOR)
                copy_tensor(&o->t[o->nt++], &t->u.tensor, so->attr[k]);
        }
        struct gt_ent *cv = gt_follow(&so->conv);
        if (cv && cv->type == CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR) {
            o->conv = cv->u.conv;
            o->has_conv = 1;
        }
    }
    r->ops_more += gg->ops_more;
    atomic_store_explicit(&r->last_status, 0, memory_order_relaxed);
    atomic_store_explicit(&r->gen, gen, memory_order_release);
    gg->rec = idx;
    gg->gen = gen;
}
