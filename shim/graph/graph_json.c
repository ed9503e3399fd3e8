/* graph_json.c - the graph layer's event fields: an operation graph's
 * operations and tensors, its counts, a plan, a status. */
#include "graph/graph.h"

void gx_ev_status(struct cg_ev *e, int slot, cudnnStatus_t st, const char *reason)
{
    cg_ev_status(e, st, cg_cudnn_status_name(slot, st));
    cg_ev_str(e, "reason", reason && *reason ? reason : NULL);
}

void gx_ev_desc_type(struct cg_ev *e, int type)
{
    const char *n = cg_cudnn_desc_type_name(type);
    if (n)
        cg_ev_str(e, "desc_type", n);
    else
        cg_ev_i64(e, "desc_type", type);
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

void gx_ev_tensor_fields(struct cg_ev *e, const int64_t *dims, int nd, int dtype, bool has_uid, int64_t uid,
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

void gx_ev_ops(struct cg_ev *e, const struct gr_rec *r)
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
            gx_ev_tensor_fields(e, t->dims, t->nd, t->dtype, t->has_uid, t->uid, t->is_virtual);
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

void gx_ev_counts(struct cg_ev *e, const struct gr_rec *r)
{
    cg_ev_u64(e, "heuristics_returned", atomic_load(&r->heur_returned));
    cg_ev_u64(e, "plans_tried", atomic_load(&r->plans_tried));
    cg_ev_u64(e, "plans_finalized", atomic_load(&r->finalized));
    cg_ev_u64(e, "plans_not_supported", atomic_load(&r->not_supported));
    cg_ev_u64(e, "plans_failed_other", atomic_load(&r->failed_other));
}

void gx_ev_plan(struct cg_ev *e, const struct gx_plan_info *pi, bool with_graph)
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
        gx_ev_ops(e, &pi->rec);
        gx_ev_counts(e, &pi->rec);
        uint32_t n = atomic_load(&pi->rec.nws);
        cg_ev_open(e, "finalized_workspaces", '[');
        for (uint32_t i = 0; i < n && i < GR_WS; i++)
            cg_ev_i64(e, NULL, pi->rec.ws[i]);
        cg_ev_close(e, ']');
        if (n > GR_WS)
            cg_ev_u64(e, "finalized_workspaces_more", n - GR_WS);
    }
}
