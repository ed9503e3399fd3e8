/* graph_readback.c - what the graph layer asks cuDNN itself, at its rare
 * moments only: the reason for a failure (cudnnGetLastErrorString of the same
 * copy of cuDNN, kept for the program: cudnn_desc.c) and what a plan is when
 * the program's own calls did not show it (workspace, engine index, knobs),
 * read back with the real functions of the same slot, never through our own
 * entries, and only functions the program has called already. */
#include <string.h>

#include "graph/graph.h"

/* ---- library functions of a slot, and cuDNN's reason */
static void *real_fn(int slot, int hook)
{
    void *f = atomic_load_explicit(&cg_real[slot][hook], memory_order_acquire);
    return f ? f : cg_real_in_lib(slot, hook);
}

bool gx_not_supported(int slot, cudnnStatus_t st)
{
    return slot == CG_SLOT_CUDNN8 ? st == CUDNN8_STATUS_NOT_SUPPORTED : st / 1000 == 3;
}

/* cuDNN's reason for this thread's last failure (kept for the program). */
void gx_take_reason(int slot, const void *real, char *out, size_t cap)
{
    struct cg_cudnn_fns f;
    cg_cudnn_fns(slot, real ? real : real_fn(slot, CG_H_cudnnBackendGetAttribute), &f);
    cg_cudnn_reason_take(&f, out, cap);
}

/* ---- read-backs with the real functions of the slot */
struct rb {
    cg_t_cudnnBackendCreateDescriptor create;
    cg_t_cudnnBackendDestroyDescriptor destroy;
    cg_t_cudnnBackendGetAttribute get;
    struct cg_cudnn_fns fns;
};

static bool called(int hook) { return atomic_load_explicit(&cg_count[hook].calls, memory_order_relaxed) != 0; }

static bool rb_begin(struct rb *rb, int slot, const void *real)
{
    /* Only functions the program has called already: cuDNN's dispatcher
     * dlopen()s a function's sub-library at its first call, which is not the
     * shim's to cause. */
    if (!called(CG_H_cudnnBackendCreateDescriptor) || !called(CG_H_cudnnBackendDestroyDescriptor) ||
        !called(CG_H_cudnnBackendGetAttribute))
        return false;
    rb->create = (cg_t_cudnnBackendCreateDescriptor)real_fn(slot, CG_H_cudnnBackendCreateDescriptor);
    rb->destroy = (cg_t_cudnnBackendDestroyDescriptor)real_fn(slot, CG_H_cudnnBackendDestroyDescriptor);
    rb->get = (cg_t_cudnnBackendGetAttribute)real_fn(slot, CG_H_cudnnBackendGetAttribute);
    if (!rb->create || !rb->destroy || !rb->get)
        return false;
    cg_cudnn_fns(slot, real ? real : (const void *)rb->get, &rb->fns);
    /* An unread reason the program may still ask for must survive our calls. */
    char unread[1024];
    cg_cudnn_reason_take(&rb->fns, unread, sizeof unread);
    return true;
}

/* Our own failed read-backs leave reasons behind: drop them. */
static void rb_end(struct rb *rb) { cg_cudnn_reason_drop(&rb->fns); }

static bool rb_i64(struct rb *rb, void *desc, int attr, int64_t *out)
{
    int64_t n = 0, v = 0;
    if (!desc || rb->get(desc, attr, CUDNN_TYPE_INT64, 1, &n, &v) != 0 || n < 1)
        return false;
    *out = v;
    return true;
}

/* A new descriptor of `type` holding attribute attr of desc; NULL if not readable. */
static void *rb_desc(struct rb *rb, void *desc, int attr, int type)
{
    void *d = NULL;
    int64_t n = 0;
    if (!desc || rb->create(type, &d) != 0 || !d)
        return NULL;
    if (rb->get(desc, attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &d) != 0 || n < 1) {
        rb->destroy(d);
        return NULL;
    }
    return d;
}

/* ---- what a plan is */

static void read_knobs(struct rb *rb, void *cfg, struct gx_plan_info *pi)
{
    void *k[GX_MAX_KNOBS];
    int made = 0;
    int64_t n = 0;
    for (; made < GX_MAX_KNOBS; made++)
        if (rb->create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &k[made]) != 0)
            break;
    if (made && rb->get(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &n, k) == 0) {
        for (int i = 0; i < n && i < made; i++) {
            int32_t t = 0;
            int64_t c = 0, v = 0;
            if (rb->get(k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &c, &t) == 0 &&
                rb_i64(rb, k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, &v)) {
                pi->knob_type[pi->nknobs] = t;
                pi->knob_val[pi->nknobs++] = v;
            }
        }
    }
    for (int i = 0; i < made; i++)
        rb->destroy(k[i]);
}

static bool copy_rec(uint32_t idx, uint32_t gen, struct gr_rec *out)
{
    struct gr_rec *r = gr_get(idx, gen);
    if (!r)
        return false;
    memcpy(out, r, sizeof *out);
    /* recycled while we copied: the copy may mix two graphs */
    return atomic_load_explicit(&r->gen, memory_order_acquire) == gen;
}

void gx_plan_info(int slot, const void *real, struct gt_ent *p, bool finalized, bool knobs,
                      struct gx_plan_info *pi)
{
    struct gt_plan *pl = &p->u.plan;
    memset(pi, 0, sizeof *pi - sizeof pi->rec);
    pi->plan_id = atomic_load_explicit(&p->id, memory_order_relaxed);
    pi->ws = pl->ws;
    pi->engine = pl->index;
    pi->heur_rank = pl->heur_rank;
    struct gt_ent *cfg = gt_follow(&pl->cfg);
    if (cfg && cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
        cfg = NULL;
    if (pi->engine < 0 && cfg) {
        pi->engine = cfg->u.cfg.index;
        struct gt_ent *eng = gt_follow(&cfg->u.cfg.engine);
        if (pi->engine < 0 && eng && eng->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR)
            pi->engine = eng->u.engine.index;
    }
    struct rb rb;
    bool need_ws = finalized && pi->ws < 0;
    if ((need_ws || pi->engine < 0 || knobs) && rb_begin(&rb, slot, real)) {
        void *plan = (void *)atomic_load_explicit(&p->key, memory_order_relaxed);
        if (need_ws && rb_i64(&rb, plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, &pi->ws)) {
            pl->ws = pi->ws;
            struct gr_rec *r = gr_get(pl->rec, pl->gen);
            if (r)
                gr_add_ws(r, pi->ws);
        }
        /* A finalized plan is read through itself: it is alive (it is being
         * executed), where the program's engine config may be long gone. */
        void *cfgd = NULL, *own_cfg = NULL;
        if (finalized && (pi->engine < 0 || knobs))
            cfgd = own_cfg = rb_desc(&rb, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                     CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        if (!cfgd && cfg)
            cfgd = (void *)atomic_load_explicit(&cfg->key, memory_order_relaxed);
        if (pi->engine < 0 && cfgd) {
            void *eng = rb_desc(&rb, cfgd, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
            if (eng) {
                rb_i64(&rb, eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &pi->engine);
                rb.destroy(eng);
            }
        }
        if (knobs && cfgd)
            read_knobs(&rb, cfgd, pi);
        if (own_cfg)
            rb.destroy(own_cfg);
        rb_end(&rb);
        if (pi->engine >= 0 && pl->index < 0)
            pl->index = pi->engine;
    }
    pi->have_rec = copy_rec(pl->rec, pl->gen, &pi->rec);
    pi->graph_id = pi->have_rec ? pi->rec.graph_id : 0;
}
