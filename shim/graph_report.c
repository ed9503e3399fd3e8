/* graph_report.c - the graph layer's rare moments: a failed call, the first
 * execution of each plan, a graph whose every plan failed, exit.
 *
 * Only here does the graph layer format anything, ask cuDNN for its reason
 * (cudnnGetLastErrorString of the same copy of cuDNN, cudnn_desc.c), or read
 * back attributes it did not capture, with the real functions of the same
 * slot (never through our own entries, so nothing is counted twice).
 * Reading a reason clears it inside cuDNN: the text is kept per thread and
 * handed to the program's own next cudnnGetLastErrorString call, so the
 * program sees what it would have seen.  errno is saved and restored. */
#include <errno.h>
#include <string.h>

#include "cudnn_desc.h"
#include "gpuinfo.h"
#include "graph.h"

#define EVB 8192

/* ---- library functions of a slot, and cuDNN's reason */
static void *real_fn(int slot, int hook)
{
    void *f = atomic_load_explicit(&cg_real[slot][hook], memory_order_acquire);
    return f ? f : cg_resolve_plt(slot, hook);
}

bool gx_not_supported(int slot, cudnnStatus_t st)
{
    return slot == CG_SLOT_CUDNN8 ? st == CUDNN8_STATUS_NOT_SUPPORTED : st / 1000 == 3;
}

/* cuDNN's reason for this thread's last failure (kept for the program). */
static void take_reason(int slot, const void *real, char *out, size_t cap)
{
    struct cg_cudnn_fns f;
    cg_cudnn_fns(slot, real ? real : real_fn(slot, CG_H_cudnnBackendGetAttribute), &f);
    cg_cudnn_reason_take(&f, out, cap);
}

/* ---- failures written once per kind: the rest are counted */
#define SIGS 128
static _Atomic uint64_t sig_key[SIGS];
static _Atomic uint64_t not_written;
static _Atomic uint64_t plans_finalized, plans_not_supported, plans_failed_other, exec_failures;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static bool first_of_kind(int hook, int type, int attr, cudnnStatus_t st, const char *reason)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix(mix(mix(mix(h, (uint64_t)hook), (uint64_t)(uint32_t)type), (uint64_t)(uint32_t)attr), (uint64_t)(uint32_t)st);
    for (const char *p = reason; p && *p; p++)
        h = mix(h, (unsigned char)*p);
    h |= 1;
    for (int i = 0; i < SIGS; i++) {
        uint64_t k = atomic_load_explicit(&sig_key[i], memory_order_relaxed);
        if (k == 0 && atomic_compare_exchange_strong(&sig_key[i], &k, h))
            return true;
        if (k == h)
            break;
    }
    atomic_fetch_add_explicit(&not_written, 1, memory_order_relaxed);
    return false;
}

static void count_fail(int hook) { atomic_fetch_add_explicit(&cg_count[hook].fails, 1, memory_order_relaxed); }

static void ev_status(struct cg_ev *e, int slot, cudnnStatus_t st, const char *reason)
{
    cg_ev_i64(e, "status", st);
    cg_ev_str(e, "status_name", cg_cudnn_status_name(slot, st));
    cg_ev_str(e, "reason", reason && *reason ? reason : NULL);
}

static void ev_desc_type(struct cg_ev *e, int type)
{
    const char *n = cg_cudnn_desc_type_name(type);
    if (n)
        cg_ev_str(e, "desc_type", n);
    else
        cg_ev_i64(e, "desc_type", type);
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
#define MAX_KNOBS 16
struct plan_info {
    uint32_t plan_id, graph_id;
    int64_t engine, ws;
    int32_t heur_rank;
    int nknobs;
    int32_t knob_type[MAX_KNOBS];
    int64_t knob_val[MAX_KNOBS];
    bool have_rec;
    struct gr_rec rec; /* a copy, taken while the record was still this graph's */
};

static void read_knobs(struct rb *rb, void *cfg, struct plan_info *pi)
{
    void *k[MAX_KNOBS];
    int made = 0;
    int64_t n = 0;
    for (; made < MAX_KNOBS; made++)
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

/* finalized: the plan itself can be read (else only its engine config). */
static void plan_info(int slot, const void *real, struct gt_ent *p, bool finalized, bool knobs,
                      struct plan_info *pi)
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

/* ---- writing a graph's description */
static const char *op_name(int type)
{
    switch (type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR: return "convolution_forward";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR: return "convolution_backward_data";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: return "convolution_backward_filter";
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: return "pointwise";
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: return "matmul";
    default: return cg_cudnn_desc_type_name(type);
    }
}

static const char *role_name(int attr)
{
    switch (attr) {
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X:
    case CUDNN_ATTR_OPERATION_POINTWISE_XDESC: return "x";
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W: return "w";
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y:
    case CUDNN_ATTR_OPERATION_POINTWISE_YDESC: return "y";
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX:
    case CUDNN_ATTR_OPERATION_POINTWISE_DXDESC: return "dx";
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY:
    case CUDNN_ATTR_OPERATION_POINTWISE_DYDESC: return "dy";
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW: return "dw";
    case CUDNN_ATTR_OPERATION_POINTWISE_BDESC: return "b";
    case CUDNN_ATTR_OPERATION_POINTWISE_TDESC: return "t";
    case CUDNN_ATTR_OPERATION_MATMUL_ADESC: return "a";
    case CUDNN_ATTR_OPERATION_MATMUL_BDESC: return "b";
    case CUDNN_ATTR_OPERATION_MATMUL_CDESC: return "c";
    default: return NULL;
    }
}

static void ev_dims(struct cg_ev *e, const char *key, const int64_t *dims, int nd)
{
    cg_ev_open(e, key, '[');
    for (int i = 0; i < nd && i < GT_MAX_DIMS; i++)
        cg_ev_i64(e, NULL, dims[i]);
    cg_ev_close(e, ']');
}

static void ev_dtype(struct cg_ev *e, const char *key, int dtype)
{
    const char *n = cg_cudnn_dtype_name(dtype);
    if (n)
        cg_ev_str(e, key, n);
    else if (dtype >= 0)
        cg_ev_i64(e, key, dtype);
}

static void ev_i32s(struct cg_ev *e, const char *key, const int32_t *v, int n)
{
    if (n <= 0)
        return;
    cg_ev_open(e, key, '[');
    for (int i = 0; i < n && i < GT_CONV_DIMS; i++)
        cg_ev_i64(e, NULL, v[i]);
    cg_ev_close(e, ']');
}

static void ev_conv(struct cg_ev *e, const struct gt_conv *c)
{
    cg_ev_open(e, "conv", '{');
    if (c->spatial)
        cg_ev_i64(e, "spatial_dims", c->spatial);
    ev_i32s(e, "pre_padding", c->pre, c->npre);
    ev_i32s(e, "post_padding", c->post, c->npost);
    ev_i32s(e, "stride", c->stride, c->nstride);
    ev_i32s(e, "dilation", c->dil, c->ndil);
    if (c->mode >= 0)
        cg_ev_str(e, "mode", c->mode == 0 ? "convolution" : c->mode == 1 ? "cross_correlation" : "unknown");
    ev_dtype(e, "compute_type", c->comp);
    cg_ev_close(e, '}');
}

static void ev_tensor_fields(struct cg_ev *e, const int64_t *dims, int nd, int dtype, bool has_uid, int64_t uid,
                             bool is_virtual)
{
    ev_dims(e, "dims", dims, nd);
    if (nd > GT_MAX_DIMS)
        cg_ev_i64(e, "ndims", nd);
    ev_dtype(e, "dtype", dtype);
    if (has_uid)
        cg_ev_i64(e, "uid", uid);
    if (is_virtual)
        cg_ev_bool(e, "virtual", true);
}

static void ev_ops(struct cg_ev *e, const struct gr_rec *r)
{
    cg_ev_open(e, "ops", '[');
    for (int i = 0; i < r->nops; i++) {
        const struct gr_op *o = &r->ops[i];
        cg_ev_open(e, NULL, '{');
        const char *n = op_name(o->type);
        if (n)
            cg_ev_str(e, "op", n);
        else
            cg_ev_i64(e, "op", o->type);
        cg_ev_open(e, "tensors", '[');
        for (int k = 0; k < o->nt; k++) {
            const struct gr_tensor *t = &o->t[k];
            cg_ev_open(e, NULL, '{');
            const char *role = role_name(t->attr);
            if (role)
                cg_ev_str(e, "role", role);
            else
                cg_ev_i64(e, "attr", t->attr);
            ev_tensor_fields(e, t->dims, t->nd, t->dtype, t->has_uid, t->uid, t->is_virtual);
            cg_ev_close(e, '}');
        }
        cg_ev_close(e, ']');
        if (o->has_conv)
            ev_conv(e, &o->conv);
        cg_ev_close(e, '}');
    }
    cg_ev_close(e, ']');
    if (r->ops_more)
        cg_ev_i64(e, "ops_more", r->ops_more);
}

static void ev_counts(struct cg_ev *e, const struct gr_rec *r)
{
    cg_ev_u64(e, "heuristics_returned", atomic_load(&r->heur_returned));
    cg_ev_u64(e, "plans_tried", atomic_load(&r->plans_tried));
    cg_ev_u64(e, "plans_finalized", atomic_load(&r->finalized));
    cg_ev_u64(e, "plans_not_supported", atomic_load(&r->not_supported));
    cg_ev_u64(e, "plans_failed_other", atomic_load(&r->failed_other));
}

static void ev_plan(struct cg_ev *e, const struct plan_info *pi, bool with_graph)
{
    cg_ev_u64(e, "plan", pi->plan_id);
    if (pi->have_rec)
        cg_ev_u64(e, "graph", pi->graph_id);
    else
        cg_ev_raw(e, "graph", "null");
    if (pi->engine >= 0)
        cg_ev_i64(e, "engine", pi->engine);
    else
        cg_ev_raw(e, "engine", "null");
    if (pi->nknobs) {
        cg_ev_open(e, "knobs", '[');
        for (int i = 0; i < pi->nknobs; i++) {
            cg_ev_open(e, NULL, '{');
            cg_ev_i64(e, "knob", pi->knob_type[i]);
            cg_ev_i64(e, "value", pi->knob_val[i]);
            cg_ev_close(e, '}');
        }
        cg_ev_close(e, ']');
    }
    if (pi->heur_rank >= 0)
        cg_ev_i64(e, "heuristics_rank", pi->heur_rank);
    if (pi->ws >= 0)
        cg_ev_i64(e, "workspace", pi->ws);
    else
        cg_ev_raw(e, "workspace", "null");
    if (with_graph && pi->have_rec) {
        ev_ops(e, &pi->rec);
        ev_counts(e, &pi->rec);
        uint32_t n = atomic_load(&pi->rec.nws);
        cg_ev_open(e, "finalized_workspaces", '[');
        for (uint32_t i = 0; i < n && i < GR_WS; i++)
            cg_ev_i64(e, NULL, pi->rec.ws[i]);
        cg_ev_close(e, ']');
        if (n > GR_WS)
            cg_ev_u64(e, "finalized_workspaces_more", n - GR_WS);
    }
}

/* ---- the events */
void gx_create_failed(int slot, const void *real, int type, cudnnStatus_t st)
{
    int saved = errno;
    char reason[512], b[2048];
    struct cg_ev e;
    count_fail(CG_H_cudnnBackendCreateDescriptor);
    cg_note_failure();
    take_reason(slot, real, reason, sizeof reason);
    if (first_of_kind(CG_H_cudnnBackendCreateDescriptor, type, -1, st, reason)) {
        cg_ev_begin(&e, b, sizeof b, "call_failed");
        cg_ev_str(&e, "fn", "cudnnBackendCreateDescriptor");
        ev_status(&e, slot, st, reason);
        ev_desc_type(&e, type);
        cg_ev_end(&e);
    }
    errno = saved;
}

void gx_call_failed(int slot, const void *real, int hook, struct gt_ent *d, int attr, cudnnStatus_t st)
{
    int saved = errno;
    char reason[512], b[2048];
    struct cg_ev e;
    count_fail(hook);
    /* A refused Set/GetAttribute is often a probe (frontends ask for what
     * an engine may not have); its consequence, if any, shows at Finalize or
     * Execute.  Counted in `fails`, not in the exit line's failures. */
    if (hook != CG_H_cudnnBackendSetAttribute && hook != CG_H_cudnnBackendGetAttribute)
        cg_note_failure();
    take_reason(slot, real, reason, sizeof reason);
    int type = d ? d->type : -1;
    if (first_of_kind(hook, type, attr, st, reason)) {
        cg_ev_begin(&e, b, sizeof b, "call_failed");
        cg_ev_str(&e, "fn", cg_hooks[hook].name);
        ev_status(&e, slot, st, reason);
        if (d) {
            ev_desc_type(&e, type);
            cg_ev_u64(&e, "desc", atomic_load_explicit(&d->id, memory_order_relaxed));
        }
        if (attr >= 0)
            cg_ev_i64(&e, "attr", attr);
        cg_ev_end(&e);
    }
    errno = saved;
}

void gx_plan_finalized(int slot, struct gt_ent *p)
{
    (void)slot;
    atomic_fetch_add_explicit(&plans_finalized, 1, memory_order_relaxed);
    struct gr_rec *r = gr_get(p->u.plan.rec, p->u.plan.gen);
    if (r) {
        atomic_fetch_add_explicit(&r->plans_tried, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->finalized, 1, memory_order_relaxed);
    }
}

static void all_failed_event(struct gr_rec *r, const char *when)
{
    uint8_t z = 0;
    if (!atomic_compare_exchange_strong(&r->all_failed_written, &z, 1))
        return;
    struct gr_rec c;
    memcpy(&c, r, sizeof c);
    char b[EVB];
    struct cg_ev e;
    cg_note_failure();
    cg_ev_begin(&e, b, sizeof b, "graph_all_plans_failed");
    cg_ev_u64(&e, "graph", c.graph_id);
    cg_ev_str(&e, "when", when);
    ev_ops(&e, &c);
    ev_counts(&e, &c);
    int32_t ls = atomic_load(&c.last_status);
    cg_ev_i64(&e, "last_status", ls);
    /* records do not know their slot: cuDNN 9 numbering unless it is clearly 8's */
    cg_ev_str(&e, "last_status_name", cg_cudnn_status_name(c.slot, ls));
    cg_ev_str(&e, "last_reason", c.last_reason[0] ? c.last_reason : NULL);
    cg_ev_end(&e);
}

void gx_rec_retired(struct gr_rec *r, const char *when)
{
    if (atomic_load(&r->plans_tried) > 0 && atomic_load(&r->finalized) == 0)
        all_failed_event(r, when);
}

void gx_finalize_failed(int slot, const void *real, struct gt_ent *d, cudnnStatus_t st)
{
    int saved = errno;
    char reason[512];
    count_fail(CG_H_cudnnBackendFinalize);
    take_reason(slot, real, reason, sizeof reason);
    bool plan = d && d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR;
    bool ns = plan && gx_not_supported(slot, st);
    struct gr_rec *r = plan ? gr_get(d->u.plan.rec, d->u.plan.gen) : NULL;
    if (plan) {
        atomic_fetch_add_explicit(ns ? &plans_not_supported : &plans_failed_other, 1, memory_order_relaxed);
        if (r) {
            atomic_fetch_add_explicit(&r->plans_tried, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(ns ? &r->not_supported : &r->failed_other, 1, memory_order_relaxed);
            atomic_store_explicit(&r->last_status, st, memory_order_relaxed);
            r->slot = slot;
            cg_strlcpy(r->last_reason, reason, sizeof r->last_reason);
        }
    }
    /* An engine declining a graph (NOT_SUPPORTED) is how heuristics work:
     * counted per graph, not written, not a failure of the program. */
    if (!ns) {
        cg_note_failure();
        int type = d ? d->type : -1;
        if (first_of_kind(CG_H_cudnnBackendFinalize, type, -1, st, reason)) {
            char b[EVB];
            struct cg_ev e;
            struct plan_info pi;
            if (plan)
                plan_info(slot, real, d, false, false, &pi);
            cg_ev_begin(&e, b, sizeof b, "graph_finalize_failed");
            if (d) {
                ev_desc_type(&e, type);
                cg_ev_u64(&e, "desc", atomic_load_explicit(&d->id, memory_order_relaxed));
            } else {
                cg_ev_raw(&e, "desc_type", "null");
            }
            ev_status(&e, slot, st, reason);
            if (plan) {
                ev_plan(&e, &pi, true);
            } else if (d && d->type == CUDNN_BACKEND_TENSOR_DESCRIPTOR) {
                cg_ev_open(&e, "tensor", '{');
                const struct gt_tensor *t = &d->u.tensor;
                ev_tensor_fields(&e, t->dims, t->nd, t->dtype, t->has_uid, t->uid, t->is_virtual);
                cg_ev_close(&e, '}');
            } else if (d && d->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
                cg_ev_i64(&e, "ops_set", d->u.graph.nops + d->u.graph.ops_more);
            }
            cg_ev_end(&e);
        }
    }
    /* Every configuration the heuristics offered has been tried, none finalized. */
    if (r) {
        uint32_t h = atomic_load(&r->heur_returned);
        if (h && atomic_load(&r->finalized) == 0 && atomic_load(&r->plans_tried) >= h)
            all_failed_event(r, "every_config_tried");
    }
    errno = saved;
}

/* ---- plans that executed: for the exit summary */
#define XP_MAX 64
struct xplan {
    _Atomic uint32_t plan_id; /* 0: slot being filled */
    uint32_t ent, graph_id;
    int64_t engine, ws;
    _Atomic uint64_t final_execs;
    _Atomic uint8_t gone;
};
static struct xplan xplans[XP_MAX];
static _Atomic uint32_t nxplans;

void gx_first_exec(int slot, int hook, struct gt_ent *p)
{
    uint8_t z = 0;
    if (!atomic_compare_exchange_strong(&p->u.plan.first_done, &z, 1))
        return;
    int saved = errno;
    struct plan_info pi;
    plan_info(slot, NULL, p, true, true, &pi);
    struct gr_rec *r = gr_get(p->u.plan.rec, p->u.plan.gen);
    if (r)
        atomic_fetch_add_explicit(&r->executed, 1, memory_order_relaxed);
    uint32_t i = atomic_fetch_add_explicit(&nxplans, 1, memory_order_relaxed);
    if (i < XP_MAX) {
        struct xplan *x = &xplans[i];
        x->ent = gt_index(p);
        x->graph_id = pi.graph_id;
        x->engine = pi.engine;
        x->ws = pi.ws;
        atomic_store_explicit(&x->plan_id, pi.plan_id, memory_order_release);
        p->u.plan.reg = (uint16_t)(i + 1);
    }
    char b[EVB];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "graph_plan");
    cg_ev_str(&e, "fn", cg_hooks[hook].name);
    ev_plan(&e, &pi, true);
    cg_ev_end(&e);
    errno = saved;
}

void gx_destroyed(struct gt_ent *d)
{
    int saved = errno;
    if (d->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
        struct gr_rec *r = gr_get(d->u.graph.rec, d->u.graph.gen);
        if (r)
            gx_rec_retired(r, "graph_destroyed");
    } else if (d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && d->u.plan.reg) {
        struct xplan *x = &xplans[d->u.plan.reg - 1];
        atomic_store(&x->final_execs, atomic_load(&d->u.plan.execs));
        atomic_store(&x->gone, 1);
    }
    errno = saved;
}

void gx_exec_failed(int slot, const void *real, int hook, struct gt_ent *p, struct gt_ent *vp, cudnnStatus_t st)
{
    int saved = errno;
    char reason[512];
    count_fail(hook);
    cg_note_failure();
    atomic_fetch_add_explicit(&exec_failures, 1, memory_order_relaxed);
    take_reason(slot, real, reason, sizeof reason);
    bool first;
    if (p) {
        uint8_t z = 0;
        first = atomic_compare_exchange_strong(&p->u.plan.fail_written, &z, 1);
        if (!first)
            atomic_fetch_add_explicit(&not_written, 1, memory_order_relaxed);
    } else {
        first = first_of_kind(hook, -1, -1, st, reason);
    }
    if (!first) {
        errno = saved;
        return;
    }
    struct plan_info pi;
    if (p)
        plan_info(slot, real, p, true, false, &pi);
    struct cg_gpu_mem gm;
    cg_gpu_mem_now(&gm);
    bool mem = gm.known;
    unsigned long long fr = gm.free, to = gm.total;
    char b[EVB];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "graph_exec_failed");
    cg_ev_str(&e, "fn", cg_hooks[hook].name);
    ev_status(&e, slot, st, reason);
    if (p)
        ev_plan(&e, &pi, true);
    else
        cg_ev_raw(&e, "plan", "null");
    if (vp && vp->type == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        cg_ev_bool(&e, "workspace_given", vp->u.vpack.ws_set && vp->u.vpack.workspace);
    else
        cg_ev_raw(&e, "workspace_given", "null");
    cg_ev_gpu_mem(&e, "mem", &gm);
    /* Why, in one line. */
    char detail[256], num[24];
    size_t n = 0;
    const char *kind = "unknown";
    bool alloc_status = slot == CG_SLOT_CUDNN8 ? st == CUDNN8_STATUS_ALLOC_FAILED
                                               : st == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
    long long ws = p ? pi.ws : -1;
    detail[0] = 0;
#define ADD(s) (n += cg_strlcpy(detail + n, (s), n < sizeof detail ? sizeof detail - n : 0))
#define ADDN(v) (num[cg_utoa(num, (unsigned long long)(v))] = 0, ADD(num))
    bool ws_given = vp && vp->type == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR && vp->u.vpack.ws_set &&
                    vp->u.vpack.workspace;
    bool ws_known = vp && vp->type == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR;
    if (ws > 0 && ws_known && !ws_given) {
        kind = "workspace_missing";
        ADD("the plan needs ");
        ADDN(ws);
        ADD(" bytes of workspace and the variant pack gave none");
        if (mem && (unsigned long long)ws > fr) {
            ADD("; only ");
            ADDN(fr);
            ADD(" of ");
            ADDN(to);
            ADD(" bytes were free");
        }
    } else if (mem && ws > 0 && (unsigned long long)ws > fr) {
        kind = "out_of_memory";
        ADD("the plan needs ");
        ADDN(ws);
        ADD(" bytes of workspace; ");
        ADDN(fr);
        ADD(" of ");
        ADDN(to);
        ADD(" bytes were free");
    } else if (alloc_status) {
        kind = "out_of_memory";
        ADD("cuDNN could not allocate GPU memory while running the plan");
        if (mem) {
            ADD(" (");
            ADDN(fr);
            ADD(" of ");
            ADDN(to);
            ADD(" bytes free");
            if (ws >= 0) {
                ADD(", plan workspace ");
                ADDN(ws);
            }
            ADD(")");
        }
    }
#undef ADD
#undef ADDN
    cg_ev_open(&e, "likely_cause", '{');
    cg_ev_str(&e, "kind", kind);
    cg_ev_str(&e, "detail", detail[0] ? detail : NULL);
    cg_ev_close(&e, '}');
    cg_ev_end(&e);
    errno = saved;
}

/* ---- exit */
static bool graph_used(void)
{
    return atomic_load_explicit(&cg_count[CG_H_cudnnBackendCreateDescriptor].calls, memory_order_relaxed) != 0;
}

static void retire_at_exit(struct gr_rec *r, void *arg)
{
    (void)arg;
    gx_rec_retired(r, "exit");
}

void cg_graph_exit_events(void)
{
    if (graph_used())
        gr_each(retire_at_exit, NULL);
}

void cg_graph_exit_summary(struct cg_ev *e)
{
    if (!graph_used())
        return;
    uint32_t nx = atomic_load(&nxplans);
    cg_ev_open(e, "graph", '{');
    cg_ev_u64(e, "graphs", gr_allocated());
    cg_ev_u64(e, "plans_finalized", atomic_load(&plans_finalized));
    cg_ev_u64(e, "plans_not_supported", atomic_load(&plans_not_supported));
    cg_ev_u64(e, "plans_failed_other", atomic_load(&plans_failed_other));
    cg_ev_u64(e, "plans_executed", nx);
    cg_ev_u64(e, "exec_failures", atomic_load(&exec_failures));
    cg_ev_u64(e, "untracked", atomic_load(&gt_untracked));
    cg_ev_u64(e, "failures_not_written", atomic_load(&not_written));
    cg_ev_open(e, "plans", '[');
    for (uint32_t i = 0; i < nx && i < XP_MAX; i++) {
        struct xplan *x = &xplans[i];
        uint32_t id = atomic_load_explicit(&x->plan_id, memory_order_acquire);
        if (!id)
            continue;
        uint64_t execs = atomic_load(&x->final_execs);
        struct gt_ent *p = gt_at(x->ent);
        if (!atomic_load(&x->gone) && p && atomic_load_explicit(&p->id, memory_order_relaxed) == id)
            execs = atomic_load_explicit(&p->u.plan.execs, memory_order_relaxed);
        cg_ev_open(e, NULL, '{');
        cg_ev_u64(e, "plan", id);
        if (x->graph_id)
            cg_ev_u64(e, "graph", x->graph_id);
        if (x->engine >= 0)
            cg_ev_i64(e, "engine", x->engine);
        if (x->ws >= 0)
            cg_ev_i64(e, "workspace", x->ws);
        cg_ev_u64(e, "executions", execs);
        cg_ev_close(e, '}');
    }
    cg_ev_close(e, ']');
    if (nx > XP_MAX)
        cg_ev_u64(e, "plans_more", nx - XP_MAX);
    cg_ev_close(e, '}');
}
