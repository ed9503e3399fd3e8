/* graph_report.c - the graph layer's rare moments: a failed call, the first
 * execution of each plan, a graph whose every plan failed, exit.
 *
 * Only here (and in graph_json.c, graph_readback.c, which it calls) does the
 * graph layer format anything or ask cuDNN anything.  Failures are written
 * once per kind (or per plan) and counted after that; successes are written
 * once per plan, at its first execution.  errno is saved and restored. */
#include <errno.h>
#include <string.h>

#include "graph/graph.h"

#define EVB 8192

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

/* ---- the events */
void gx_create_failed(int slot, const void *real, int type, cudnnStatus_t st)
{
    int saved = errno;
    char reason[512], b[2048];
    struct cg_ev e;
    cg_failed(CG_H_cudnnBackendCreateDescriptor, CG_FAIL_REPORTED);
    gx_take_reason(slot, real, reason, sizeof reason);
    if (first_of_kind(CG_H_cudnnBackendCreateDescriptor, type, -1, st, reason)) {
        cg_ev_begin_call(&e, b, sizeof b, "call_failed", CG_H_cudnnBackendCreateDescriptor);
        gx_ev_status(&e, slot, st, reason);
        gx_ev_desc_type(&e, type);
        cg_ev_end(&e);
    }
    errno = saved;
}

void gx_call_failed(int slot, const void *real, int hook, struct gt_ent *d, int attr, cudnnStatus_t st)
{
    int saved = errno;
    char reason[512], b[2048];
    struct cg_ev e;
    /* A refused Set/GetAttribute is often a probe (frontends ask for what
     * an engine may not have); its consequence, if any, shows at Finalize or
     * Execute.  Counted in `fails`, not in the exit line's failures. */
    bool probe = hook == CG_H_cudnnBackendSetAttribute || hook == CG_H_cudnnBackendGetAttribute;
    cg_failed(hook, probe ? CG_FAIL_QUIET : CG_FAIL_REPORTED);
    gx_take_reason(slot, real, reason, sizeof reason);
    int type = d ? d->type : -1;
    if (first_of_kind(hook, type, attr, st, reason)) {
        cg_ev_begin_call(&e, b, sizeof b, "call_failed", hook);
        gx_ev_status(&e, slot, st, reason);
        if (d) {
            gx_ev_desc_type(&e, type);
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
    cg_failed(CG_NO_HOOK, CG_FAIL_REPORTED);
    cg_ev_begin(&e, b, sizeof b, "graph_all_plans_failed");
    cg_ev_u64(&e, "graph", c.graph_id);
    cg_ev_str(&e, "when", when);
    gx_ev_ops(&e, &c);
    gx_ev_counts(&e, &c);
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
    gx_take_reason(slot, real, reason, sizeof reason);
    bool plan = d && d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR;
    bool ns = plan && gx_not_supported(slot, st);
    /* An engine declining a graph (NOT_SUPPORTED) is how heuristics work:
     * counted per graph, not written, not a failure of the program. */
    cg_failed(CG_H_cudnnBackendFinalize, ns ? CG_FAIL_QUIET : CG_FAIL_REPORTED);
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
    if (!ns) {
        int type = d ? d->type : -1;
        if (first_of_kind(CG_H_cudnnBackendFinalize, type, -1, st, reason)) {
            char b[EVB];
            struct cg_ev e;
            struct gx_plan_info pi;
            if (plan)
                gx_plan_info(slot, real, d, false, false, &pi);
            cg_ev_begin(&e, b, sizeof b, "graph_finalize_failed");
            if (d) {
                gx_ev_desc_type(&e, type);
                cg_ev_u64(&e, "desc", atomic_load_explicit(&d->id, memory_order_relaxed));
            } else {
                cg_ev_raw(&e, "desc_type", "null");
            }
            gx_ev_status(&e, slot, st, reason);
            if (plan) {
                gx_ev_plan(&e, &pi, true);
            } else if (d && d->type == CUDNN_BACKEND_TENSOR_DESCRIPTOR) {
                cg_ev_open(&e, "tensor", '{');
                const struct gt_tensor *t = &d->u.tensor;
                gx_ev_tensor_fields(&e, t->dims, t->nd, t->dtype, t->has_uid, t->uid, t->is_virtual);
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
    struct gx_plan_info pi;
    gx_plan_info(slot, NULL, p, true, true, &pi);
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
    cg_ev_begin_call(&e, b, sizeof b, "graph_plan", hook);
    gx_ev_plan(&e, &pi, true);
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
        atomic_store(&x->final_execs, atomic_load(&d->u.plan.execs) + 1);
        atomic_store(&x->gone, 1);
    }
    errno = saved;
}

void gx_exec_failed(int slot, const void *real, int hook, struct gt_ent *p, struct gt_ent *vp, cudnnStatus_t st)
{
    int saved = errno;
    char reason[512];
    cg_failed(hook, CG_FAIL_REPORTED);
    atomic_fetch_add_explicit(&exec_failures, 1, memory_order_relaxed);
    gx_take_reason(slot, real, reason, sizeof reason);
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
    struct gx_plan_info pi;
    if (p)
        gx_plan_info(slot, real, p, true, false, &pi);
    struct cg_gpu_mem gm;
    cg_gpu_mem_now(&gm);
    char b[EVB];
    struct cg_ev e;
    cg_ev_begin_call(&e, b, sizeof b, "graph_exec_failed", hook);
    gx_ev_status(&e, slot, st, reason);
    if (p)
        gx_ev_plan(&e, &pi, true);
    else
        cg_ev_raw(&e, "plan", "null");
    if (vp && vp->type == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        cg_ev_bool(&e, "workspace_given", vp->u.vpack.ws_set && vp->u.vpack.workspace);
    else
        cg_ev_raw(&e, "workspace_given", "null");
    cg_ev_gpu_mem(&e, "mem", &gm);
    /* facts only (workspace, workspace_given, mem, status): the cause is the
     * CLI's (tools/analysis/diagnose.c) */
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
            execs = atomic_load_explicit(&p->u.plan.execs, memory_order_relaxed) + 1;
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
