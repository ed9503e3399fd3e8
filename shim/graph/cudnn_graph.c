/* cudnn_graph.c - cuDNN graph (backend) API hooks.
 *
 * PyTorch, JAX/XLA and current TensorFlow run every convolution through
 * these calls: descriptors are created, given attributes, finalized, and an
 * execution plan is executed.  Each hook forwards first and, on success,
 * does only what the table needs: claim or free an entry, or copy a few
 * numbers of an attribute that describes a failure later (a tensor's dims,
 * the engine config of a plan, the operations of a graph).  No formatting,
 * no syscall, no lock.  Everything else happens in graph_report.c at rare
 * moments: a failure, the first execution of a plan, exit.
 *
 * The program's view is unchanged: same status, same out-parameters; the
 * shim only reads what the call wrote.  cuDNN's reason, which the shim reads
 * on failures and which reading clears, goes back to the program through the
 * cudnn layer's cudnnGetLastErrorString hook (cudnn/cudnn_desc.c). */
#include <string.h>

#include "graph/graph.h"

static inline bool is_op_type(int t)
{
    switch (t) {
    case 10: case 11: case 12: case 13: case 14: case 19: case 20: case 22: case 23: case 25: case 26: case 27:
    case 28: case 29: case 30: case 31: case 33: case 35: case 36: case 37: case 39: case 40: case 41: case 42:
    case 43:
        return true; /* CUDNN_BACKEND_OPERATION_*_DESCRIPTOR */
    default:
        return false;
    }
}

static inline struct gt_ent *find_typed(const void *desc, int type)
{
    struct gt_ent *e = gt_find((uintptr_t)desc);
    return e && e->type == type ? e : NULL;
}

static inline void copy_i32(int32_t *dst, int8_t *n, int64_t count, const int64_t *src)
{
    int k = count < GT_CONV_DIMS ? (int)count : GT_CONV_DIMS;
    for (int i = 0; i < k; i++)
        dst[i] = (int32_t)src[i];
    *n = (int8_t)(count < 127 ? count : 127);
}

/* A descriptor attribute set on an operation: a tensor it reads or writes,
 * or its convolution descriptor. */
static void set_op_ref(struct gt_ent *op, int name, const void *target)
{
    struct gt_ent *t = gt_find((uintptr_t)target);
    if (!t)
        return;
    struct gt_op *o = &op->u.op;
    if (t->type == CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR) {
        gt_link_to(&o->conv, t);
        return;
    }
    if (t->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        return;
    int k = 0;
    while (k < o->nt && o->attr[k] != name)
        k++;
    if (k == GT_OP_TENSORS)
        return;
    if (k == o->nt)
        o->nt++;
    o->attr[k] = (uint16_t)name;
    gt_link_to(&o->t[k], t);
}

static void capture_set(void *desc, int name, int type, int64_t count, const void *elems)
{
    struct gt_ent *e, *t;
    if (count < 1 || !elems)
        return;
    const int64_t *i64 = elems;
    void *const *ptr = elems;
    switch (name) {
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
        if (type == CUDNN_TYPE_INT64 && (e = find_typed(desc, CUDNN_BACKEND_TENSOR_DESCRIPTOR))) {
            int k = count < GT_MAX_DIMS ? (int)count : GT_MAX_DIMS;
            memcpy(e->u.tensor.dims, i64, (size_t)k * sizeof *i64);
            e->u.tensor.nd = (int8_t)(count < 127 ? count : 127);
        }
        return;
    case CUDNN_ATTR_TENSOR_DATA_TYPE:
        if (type == CUDNN_TYPE_DATA_TYPE && (e = find_typed(desc, CUDNN_BACKEND_TENSOR_DESCRIPTOR)))
            e->u.tensor.dtype = *(const int32_t *)elems;
        return;
    case CUDNN_ATTR_TENSOR_UNIQUE_ID:
        if (type == CUDNN_TYPE_INT64 && (e = find_typed(desc, CUDNN_BACKEND_TENSOR_DESCRIPTOR))) {
            e->u.tensor.uid = i64[0];
            e->u.tensor.has_uid = 1;
        }
        return;
    case CUDNN_ATTR_TENSOR_IS_VIRTUAL:
        if (type == CUDNN_TYPE_BOOLEAN && (e = find_typed(desc, CUDNN_BACKEND_TENSOR_DESCRIPTOR)))
            e->u.tensor.is_virtual = *(const uint8_t *)elems != 0;
        return;
    case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS:
        if (type == CUDNN_TYPE_INT64 && (e = find_typed(desc, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)))
            e->u.conv.spatial = (int8_t)(i64[0] < 127 ? i64[0] : 127);
        return;
    case CUDNN_ATTR_CONVOLUTION_CONV_MODE:
        if ((e = find_typed(desc, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)))
            e->u.conv.mode = *(const int32_t *)elems;
        return;
    case CUDNN_ATTR_CONVOLUTION_COMP_TYPE:
        if ((e = find_typed(desc, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)))
            e->u.conv.comp = *(const int32_t *)elems;
        return;
    case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS:
    case CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
    case CUDNN_ATTR_CONVOLUTION_DILATIONS:
        if (type == CUDNN_TYPE_INT64 && (e = find_typed(desc, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR))) {
            struct gt_conv *c = &e->u.conv;
            if (name == CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS)
                copy_i32(c->pre, &c->npre, count, i64);
            else if (name == CUDNN_ATTR_CONVOLUTION_POST_PADDINGS)
                copy_i32(c->post, &c->npost, count, i64);
            else if (name == CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES)
                copy_i32(c->stride, &c->nstride, count, i64);
            else
                copy_i32(c->dil, &c->ndil, count, i64);
        }
        return;
    case CUDNN_ATTR_VARIANT_PACK_WORKSPACE:
        if ((e = find_typed(desc, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR))) {
            e->u.vpack.workspace = (uintptr_t)ptr[0];
            e->u.vpack.ws_set = 1;
        }
        return;
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        if (type == CUDNN_TYPE_INT64 && (e = find_typed(desc, CUDNN_BACKEND_ENGINE_DESCRIPTOR)))
            e->u.engine.index = i64[0];
        return;
    }
    if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
        return;
    switch (name) {
    case CUDNN_ATTR_OPERATIONGRAPH_OPS:
        if ((e = find_typed(desc, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR))) {
            struct gt_graph *g = &e->u.graph;
            g->nops = 0;
            for (int64_t i = 0; i < count; i++) {
                if (g->nops == GT_GRAPH_OPS) {
                    g->ops_more = (uint8_t)(count - i < 255 ? count - i : 255);
                    break;
                }
                gt_link_to(&g->op[g->nops++], gt_find((uintptr_t)ptr[i]));
            }
        }
        return;
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
        if ((e = find_typed(desc, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)) &&
            (t = find_typed(ptr[0], CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR))) {
            e->u.heur.rec = t->u.graph.rec;
            e->u.heur.gen = t->u.graph.gen;
        }
        return;
    case CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
        if ((e = find_typed(desc, CUDNN_BACKEND_ENGINE_DESCRIPTOR)) &&
            (t = find_typed(ptr[0], CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR))) {
            e->u.engine.rec = t->u.graph.rec;
            e->u.engine.gen = t->u.graph.gen;
        }
        return;
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        if ((e = find_typed(desc, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) &&
            (t = find_typed(ptr[0], CUDNN_BACKEND_ENGINE_DESCRIPTOR))) {
            gt_link_to(&e->u.cfg.engine, t);
            e->u.cfg.index = t->u.engine.index;
            e->u.cfg.rec = t->u.engine.rec;
            e->u.cfg.gen = t->u.engine.gen;
            e->u.cfg.heur_rank = -1;
        }
        return;
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        if ((e = find_typed(desc, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)) &&
            (t = find_typed(ptr[0], CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))) {
            gt_link_to(&e->u.plan.cfg, t);
            e->u.plan.index = t->u.cfg.index;
            e->u.plan.rec = t->u.cfg.rec;
            e->u.plan.gen = t->u.cfg.gen;
            e->u.plan.heur_rank = t->u.cfg.heur_rank;
        }
        return;
    }
    if (count == 1 && (e = gt_find((uintptr_t)desc)) && is_op_type(e->type))
        set_op_ref(e, name, ptr[0]);
}

/* What the program read back that we want too: which engine configs the
 * heuristics returned for which graph, engine indices, plan workspaces. */
static void capture_get(void *desc, int name, int type, int64_t requested, const int64_t *count, void *elems)
{
    struct gt_ent *e, *t;
    if (requested < 1 || !elems)
        return;
    int64_t n = count ? (*count < requested ? *count : requested) : 1;
    if (n < 1)
        return;
    void **ptr = elems;
    switch (name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS:
        if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR && (e = find_typed(desc, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR))) {
            struct gr_rec *r = gr_get(e->u.heur.rec, e->u.heur.gen);
            if (r)
                atomic_fetch_add_explicit(&r->heur_returned, (uint32_t)n, memory_order_relaxed);
            for (int64_t i = 0; i < n; i++)
                if ((t = find_typed(ptr[i], CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))) {
                    t->u.cfg.rec = e->u.heur.rec;
                    t->u.cfg.gen = e->u.heur.gen;
                    t->u.cfg.heur_rank = (int32_t)i;
                    t->u.cfg.index = -1;
                    t->u.cfg.engine = (struct gt_link){0, 0};
                }
        }
        return;
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR && (e = find_typed(desc, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) &&
            (t = find_typed(ptr[0], CUDNN_BACKEND_ENGINE_DESCRIPTOR))) {
            gt_link_to(&t->u.engine.cfg, e);
            gt_link_to(&e->u.cfg.engine, t);
            t->u.engine.rec = e->u.cfg.rec;
            t->u.engine.gen = e->u.cfg.gen;
            t->u.engine.index = e->u.cfg.index;
        }
        return;
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        if (type == CUDNN_TYPE_INT64 && (e = find_typed(desc, CUDNN_BACKEND_ENGINE_DESCRIPTOR))) {
            e->u.engine.index = *(int64_t *)elems;
            if ((t = gt_follow(&e->u.engine.cfg)) && t->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
                t->u.cfg.index = e->u.engine.index;
        }
        return;
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        if (type == CUDNN_TYPE_INT64 && (e = find_typed(desc, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)) &&
            e->u.plan.ws < 0) {
            e->u.plan.ws = *(int64_t *)elems;
            struct gr_rec *r = gr_get(e->u.plan.rec, e->u.plan.gen);
            if (r)
                gr_add_ws(r, e->u.plan.ws);
        }
        return;
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR &&
            (e = find_typed(desc, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)) &&
            (t = find_typed(ptr[0], CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))) {
            t->u.cfg.rec = e->u.plan.rec;
            t->u.cfg.gen = e->u.plan.gen;
            t->u.cfg.index = e->u.plan.index;
            t->u.cfg.heur_rank = e->u.plan.heur_rank;
        }
        return;
    }
}

/* ---- the hooks */
cudnnStatus_t cg_w_cudnnBackendCreateDescriptor(cg_t_cudnnBackendCreateDescriptor real, CG_CALLER,
                                                cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *desc)
{
    cudnnStatus_t r = real(type, desc);
    if (CG_LIKELY(r == 0)) {
        if (desc)
            gt_insert((uintptr_t)*desc, type);
        return r;
    }
    gx_create_failed(cg_cudnn_slot_of(CG_H_cudnnBackendCreateDescriptor, (void *)real), (void *)real, type, r);
    return r;
}

cudnnStatus_t cg_w_cudnnBackendDestroyDescriptor(cg_t_cudnnBackendDestroyDescriptor real, CG_CALLER,
                                                 cudnnBackendDescriptor_t desc)
{
    struct gt_ent *e = gt_find((uintptr_t)desc);
    if (e) {
        if (CG_UNLIKELY(e->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR ||
                        (e->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && e->u.plan.reg)))
            gx_destroyed(e);
        gt_remove(e);
    }
    cudnnStatus_t r = real(desc);
    if (CG_UNLIKELY(r != 0))
        gx_call_failed(cg_cudnn_slot_of(CG_H_cudnnBackendDestroyDescriptor, (void *)real), (void *)real,
                       CG_H_cudnnBackendDestroyDescriptor, NULL, -1, r);
    return r;
}

cudnnStatus_t cg_w_cudnnBackendInitialize(cg_t_cudnnBackendInitialize real, CG_CALLER, cudnnBackendDescriptor_t desc)
{
    cudnnStatus_t r = real(desc);
    struct gt_ent *e = gt_find((uintptr_t)desc);
    if (r == 0 && e) {
        /* the descriptor is blank again: forget what was captured, keep the type */
        int type = e->type;
        gt_remove(e);
        gt_insert((uintptr_t)desc, type);
    } else if (CG_UNLIKELY(r != 0)) {
        gx_call_failed(cg_cudnn_slot_of(CG_H_cudnnBackendInitialize, (void *)real), (void *)real,
                       CG_H_cudnnBackendInitialize, e, -1, r);
    }
    return r;
}

cudnnStatus_t cg_w_cudnnBackendFinalize(cg_t_cudnnBackendFinalize real, CG_CALLER, cudnnBackendDescriptor_t desc)
{
    cudnnStatus_t r = real(desc);
    struct gt_ent *e = gt_find((uintptr_t)desc);
    if (CG_LIKELY(r == 0)) {
        /* CONVGUARD_FALLBACK=1 with CONVGUARD_WORKSPACE_LIMIT_MB: a plan over the limit is refused
         * (fallback_cudnn.c); the descriptor stays unfinalized in the table, as after a failure */
        if (CG_UNLIKELY(cg_cfg.fallback) && e && e->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
            cg_fb_plan_refused(cg_cudnn_slot_of(CG_H_cudnnBackendFinalize, (void *)real), (void *)real, desc))
            return cg_cudnn_slot_of(CG_H_cudnnBackendFinalize, (void *)real) == CG_SLOT_CUDNN8
                       ? CUDNN8_STATUS_NOT_SUPPORTED
                       : CUDNN_STATUS_NOT_SUPPORTED;
        if (e) {
            e->finalized = 1;
            if (e->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
                gr_new(e, gx_rec_retired);
            else if (e->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
                gx_plan_finalized(cg_cudnn_slot_of(CG_H_cudnnBackendFinalize, (void *)real), e);
        }
        return r;
    }
    gx_finalize_failed(cg_cudnn_slot_of(CG_H_cudnnBackendFinalize, (void *)real), (void *)real, e, r);
    return r;
}

cudnnStatus_t cg_w_cudnnBackendSetAttribute(cg_t_cudnnBackendSetAttribute real, CG_CALLER, cudnnBackendDescriptor_t desc,
                                            cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                                            int64_t count, const void *elements)
{
    cudnnStatus_t r = real(desc, name, type, count, elements);
    if (CG_LIKELY(r == 0)) {
        capture_set(desc, name, type, count, elements);
        return r;
    }
    gx_call_failed(cg_cudnn_slot_of(CG_H_cudnnBackendSetAttribute, (void *)real), (void *)real,
                   CG_H_cudnnBackendSetAttribute, gt_find((uintptr_t)desc), name, r);
    return r;
}

cudnnStatus_t cg_w_cudnnBackendGetAttribute(cg_t_cudnnBackendGetAttribute real, CG_CALLER, cudnnBackendDescriptor_t desc,
                                            cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                                            int64_t requested, int64_t *count, void *elements)
{
    cudnnStatus_t r = real(desc, name, type, requested, count, elements);
    if (CG_LIKELY(r == 0)) {
        capture_get(desc, name, type, requested, count, elements);
        return r;
    }
    gx_call_failed(cg_cudnn_slot_of(CG_H_cudnnBackendGetAttribute, (void *)real), (void *)real,
                   CG_H_cudnnBackendGetAttribute, gt_find((uintptr_t)desc), name, r);
    return r;
}

/* Execute, PopulateCudaGraph, UpdateCudaGraph: a plan runs (or is recorded
 * into a CUDA graph that will run it).  The plan's entry is looked up before
 * the real call, while the plan pointer is still in its register, so that
 * only the entry is kept across the call; what a failure needs besides (the
 * real function, the variant pack) is stored in this thread's plan_call with
 * plain stores and read back by the cold path, so the wrapper saves one
 * register instead of three.  A hooked call the real function makes on this
 * thread is of another family (cudaMalloc, ...) and does not touch plan_call;
 * cuDNN does not execute a plan from inside an execution.
 * On success: one atomic add; the counter starts at -1 (graph.h), so the one
 * add that makes it 0 is the plan's first execution (graph_plan, written
 * once: gx_first_exec), told by the add's own flags.  A plan that is not in
 * the table counts into no_plan, whose counter starts at 0 and never gets
 * back to 0. */
static __thread struct {
    const void *real;
    cudnnBackendDescriptor_t vpack;
} plan_call;
static struct gt_ent no_plan;

static __attribute__((noinline, cold)) cudnnStatus_t plan_failed(int hook, cudnnStatus_t r, struct gt_ent *e)
{
    const void *real = plan_call.real;
    gx_exec_failed(cg_cudnn_slot_of(hook, real), real, hook, e == &no_plan ? NULL : e,
                   gt_find((uintptr_t)plan_call.vpack), r);
    return r;
}

static __attribute__((noinline, cold)) void plan_first(int hook, struct gt_ent *e)
{
    gx_first_exec(cg_cudnn_slot_of(hook, plan_call.real), hook, e);
}

static inline struct gt_ent *plan_before(const void *real, cudnnBackendDescriptor_t plan,
                                         cudnnBackendDescriptor_t vpack)
{
    plan_call.real = real;
    plan_call.vpack = vpack;
    struct gt_ent *e = gt_find((uintptr_t)plan);
    return e && e->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR ? e : &no_plan;
}

static inline cudnnStatus_t plan_ran(int hook, cudnnStatus_t r, struct gt_ent *e)
{
    if (CG_UNLIKELY(r != 0))
        return plan_failed(hook, r, e);
    if (CG_UNLIKELY(atomic_fetch_add_explicit(&e->u.plan.execs, 1, memory_order_relaxed) == (uint64_t)-1))
        plan_first(hook, e);
    return r;
}

/* always_inline: LTO inlines it into the entries (see cudnn.c's executions) */
inline __attribute__((always_inline)) cudnnStatus_t cg_w_cudnnBackendExecute(cg_t_cudnnBackendExecute real, CG_CALLER, cudnnHandle_t h,
                                       cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t variant_pack)
{
    struct gt_ent *e = plan_before((const void *)real, plan, variant_pack);
    cudnnStatus_t r = real(h, plan, variant_pack);
    return plan_ran(CG_H_cudnnBackendExecute, r, e);
}

cudnnStatus_t cg_w_cudnnBackendPopulateCudaGraph(cg_t_cudnnBackendPopulateCudaGraph real, CG_CALLER, cudnnHandle_t h,
                                                 cudnnBackendDescriptor_t plan,
                                                 cudnnBackendDescriptor_t variant_pack, cudaGraph_t graph)
{
    struct gt_ent *e = plan_before((const void *)real, plan, variant_pack);
    cudnnStatus_t r = real(h, plan, variant_pack, graph);
    return plan_ran(CG_H_cudnnBackendPopulateCudaGraph, r, e);
}

cudnnStatus_t cg_w_cudnnBackendUpdateCudaGraph(cg_t_cudnnBackendUpdateCudaGraph real, CG_CALLER, cudnnHandle_t h,
                                               cudnnBackendDescriptor_t plan,
                                               cudnnBackendDescriptor_t variant_pack, cudaGraph_t graph)
{
    struct gt_ent *e = plan_before((const void *)real, plan, variant_pack);
    cudnnStatus_t r = real(h, plan, variant_pack, graph);
    return plan_ran(CG_H_cudnnBackendUpdateCudaGraph, r, e);
}
