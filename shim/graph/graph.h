/* graph.h - the graph layer (graph/README.md), cuDNN's graph (backend) API:
 *   cudnn_graph.c   the hooks: a counter, the forward, and a few copies of
 *                   small fixed-size data on success
 *   graph_table.c   what each descriptor is (a lock-free table keyed by the
 *                   descriptor pointer) and the per-operation-graph records
 *   graph_report.c  the rare moments: failures, first execution of a plan,
 *                   exit (its events' fields: graph_json.c)
 *   graph_readback.c  what it asks cuDNN itself then: reasons, what a plan is
 *   graph_names.c   descriptor type and data type names
 * It uses the cudnn layer (cuDNN's reason, kept for the program), the cuda
 * layer (free/total memory) and the core's status names: graph.h includes
 * cudnn/cudnn.h and through it the headers below.
 *
 * Why a table: JAX makes ~50,000 descriptor create/destroy calls for one small
 * convolution and PyTorch thousands per training step, so knowing what a
 * descriptor is must cost a hash and a probe, with no malloc and no lock. */
#ifndef CONVGUARD_GRAPH_H
#define CONVGUARD_GRAPH_H

#include "cudnn/cudnn.h"

/* ---- the descriptor table (graph_table.c) */
#define GT_BITS 15
#define GT_SIZE (1u << GT_BITS) /* entries; 128 bytes each, 4 MiB of untouched bss until used */
#define GT_PROBE 32             /* longest probe; past it a descriptor is not tracked */
#define GT_EMPTY ((uintptr_t)0)
#define GT_TOMB ((uintptr_t)1)
#define GT_RESERVED ((uintptr_t)2) /* entry 0's key, for good (see gt_find); never a descriptor */
/* A removed entry's key is a tombstone that remembers the descriptor: the
 * pointer with its top bit set (user-space pointers never have it; GT_TOMB
 * is no longer written).  No lookup matches it, every insert may take it, and
 * a Create of the same pointer again takes it at the first probe. */
#define GT_TOMB_BIT ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))
static inline uintptr_t gt_tomb_of(uintptr_t desc) { return desc | GT_TOMB_BIT; }
static inline bool gt_is_tomb(uintptr_t k) { return (k & GT_TOMB_BIT) || k == GT_TOMB; }

/* A reference to another descriptor: its pointer and the id it had when the
 * reference was taken, so a freed-and-reused pointer is never mistaken for it. */
struct gt_link {
    uintptr_t key;
    uint32_t id;
};

#define GT_MAX_DIMS 8 /* CUDNN_DIM_MAX */
struct gt_tensor {
    int64_t dims[GT_MAX_DIMS];
    int64_t uid;
    int32_t dtype;   /* -1: not set */
    int8_t nd;       /* dimensions set (may exceed GT_MAX_DIMS: only the first are kept) */
    int8_t is_virtual;
    uint8_t has_uid;
};

/* CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: the convolution's parameters */
#define GT_CONV_DIMS 3
struct gt_conv {
    int32_t pre[GT_CONV_DIMS], post[GT_CONV_DIMS], stride[GT_CONV_DIMS], dil[GT_CONV_DIMS];
    int32_t mode, comp; /* -1: not set */
    int8_t spatial, npre, npost, nstride, ndil;
};

/* an operation (convolution, matmul, pointwise, ...): the tensors set on it */
#define GT_OP_TENSORS 4
struct gt_op {
    struct gt_link t[GT_OP_TENSORS];
    uint16_t attr[GT_OP_TENSORS]; /* which attribute: x, w, y, dx, ... */
    struct gt_link conv;
    uint8_t nt;
};

#define GT_GRAPH_OPS 5
struct gt_graph {
    struct gt_link op[GT_GRAPH_OPS];
    uint32_t rec, gen; /* its record (gr_*), set at Finalize */
    uint8_t nops, ops_more;
};

struct gt_heur {
    uint32_t rec, gen;
};

struct gt_engine {
    int64_t index;      /* CUDNN_ATTR_ENGINE_GLOBAL_INDEX, -1 unknown */
    struct gt_link cfg; /* the engine config it was read out of, if any */
    uint32_t rec, gen;
};

struct gt_cfg {
    int64_t index; /* engine global index, -1 unknown */
    struct gt_link engine;
    uint32_t rec, gen;
    int32_t heur_rank; /* position in the heuristics' results, -1: built by hand */
};

struct gt_plan {
    int64_t ws;    /* CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, -1 unknown */
    int64_t index; /* engine global index, -1 unknown */
    struct gt_link cfg;
    uint32_t rec, gen;
    int32_t heur_rank;
    _Atomic uint64_t execs;       /* successful executions - 1: starts at -1, so the first one makes it 0 */
    _Atomic uint8_t first_done;   /* graph_plan written */
    _Atomic uint8_t fail_written; /* graph_exec_failed written for this plan */
    uint16_t reg;                 /* 1 + its slot in the executed-plans list, 0: none */
};

struct gt_vpack {
    uintptr_t workspace; /* CUDNN_ATTR_VARIANT_PACK_WORKSPACE */
    uint8_t ws_set;
};

struct gt_ent {
    _Atomic uintptr_t key; /* the descriptor; GT_EMPTY, a tombstone (gt_is_tomb) */
    _Atomic uint32_t id;   /* this descriptor's id (unique per Create; the trace's "plan"/"graph") */
    int32_t type;          /* cudnnBackendDescriptorType_t */
    uint8_t finalized;
    union {
        struct gt_tensor tensor;
        struct gt_conv conv;
        struct gt_op op;
        struct gt_graph graph;
        struct gt_heur heur;
        struct gt_engine engine;
        struct gt_cfg cfg;
        struct gt_plan plan;
        struct gt_vpack vpack;
    } u;
} __attribute__((aligned(128)));

/* Create: a fresh entry for desc (NULL when the table is full: counted). */
struct gt_ent *gt_insert(uintptr_t desc, int type);
/* The entry of desc, NULL when not tracked.  Inline: every descriptor call
 * and every Execute asks. */
/* Static, not mapped on first use like the records and the memory tables
 * (core/lazytab.c): read through a pointer, every descriptor call and
 * Execute took 9-10 instructions more (the pointer reloaded after stores). */
extern struct gt_ent gt_table[GT_SIZE];
#define GT_HASH(key) ((uint64_t)(key) * 0x9E3779B97F4A7C15ull)
static inline uint32_t gt_slot_of(uintptr_t key) { return (uint32_t)(GT_HASH(key) >> (64 - GT_BITS)); }
/* The key's first slot.  The pointer itself is hashed (not pointer >> 4):
 * one shift less on every Execute, and Fibonacci hashing spreads multiples
 * of 16 as well. */
static inline struct gt_ent *gt_first(uintptr_t key)
{
    return &gt_table[GT_HASH(key) >> (64 - GT_BITS)];
}
/* Past the first probe at e (out of line: the first probe finds nearly every
 * key).  It takes the entry, not its index, so the inline probe need not keep both. */
struct gt_ent *gt_find_more(uintptr_t desc, const struct gt_ent *e);
/* NULL needs no test of its own: its slot is 0, whose key is GT_RESERVED for
 * good, so the first probe never matches it and gt_find_more says NULL. */
static inline struct gt_ent *gt_find(uintptr_t desc)
{
    struct gt_ent *e = gt_first(desc);
    uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
    if (CG_LIKELY(k == desc))
        return e;
    if (k == GT_EMPTY)
        return NULL;
    return gt_find_more(desc, e);
}
/* The entry a link points to, NULL when that descriptor is gone. */
struct gt_ent *gt_follow(const struct gt_link *l);
void gt_link_to(struct gt_link *l, const struct gt_ent *e);
/* Destroy: forget the entry (before the real destroy, so the pointer cannot
 * be handed out again while we still hold it). */
void gt_remove(struct gt_ent *e);
uint32_t gt_index(const struct gt_ent *e);
struct gt_ent *gt_at(uint32_t index);
extern _Atomic uint64_t gt_untracked;

/* ---- per-operation-graph records (graph_table.c).
 * An operation graph's description and counters live in a record of their
 * own, allocated when the graph is finalized, because frameworks destroy the
 * graph descriptor while plans made from it live on (and execute).  Records
 * are recycled oldest first; a plan whose record was recycled reports no
 * graph counters. */
#define GR_COUNT 1024
#define GR_OPS 3
#define GR_TENSORS 3
#define GR_WS 8
#define GR_REASON 160

struct gr_tensor {
    int64_t dims[GT_MAX_DIMS];
    int64_t uid;
    int32_t dtype;
    uint16_t attr;
    int8_t nd, is_virtual;
    uint8_t has_uid;
};
struct gr_op {
    int32_t type;
    uint8_t nt, has_conv;
    struct gr_tensor t[GR_TENSORS];
    struct gt_conv conv;
};
struct gr_rec {
    _Atomic uint32_t gen; /* 0: being written */
    uint32_t graph_id;
    uint8_t nops, ops_more;
    struct gr_op ops[GR_OPS];
    _Atomic uint32_t heur_returned, plans_tried, finalized, not_supported, failed_other, executed;
    _Atomic uint32_t nws;
    int64_t ws[GR_WS]; /* workspaces of plans that finalized, as cuDNN reported them */
    _Atomic uint8_t all_failed_written;
    _Atomic int32_t last_status;
    int32_t slot; /* which cuDNN numbering last_status is in */
    char last_reason[GR_REASON];
};

/* Allocates a record for the graph entry g and fills its description; the
 * record it recycles, if still in use, is handed to retired first (the
 * caller's report: its last chance to say every plan failed). */
void gr_new(struct gt_ent *g, void (*retired)(struct gr_rec *r, const char *when));
/* The record (idx, gen) if still that one, else NULL. */
struct gr_rec *gr_get(uint32_t idx, uint32_t gen);
void gr_add_ws(struct gr_rec *r, int64_t ws);
uint64_t gr_allocated(void);
void gr_each(void (*fn)(struct gr_rec *r, void *arg), void *arg);

/* ---- what the layer asks cuDNN itself (graph_readback.c), rare moments only */
/* cuDNN's reason for this thread's last failure, kept for the program. */
void gx_take_reason(int slot, const void *real, char *out, size_t cap);
#define GX_MAX_KNOBS 16
struct gx_plan_info {
    uint32_t plan_id, graph_id;
    int64_t engine, ws; /* -1: unknown */
    int32_t heur_rank;
    int nknobs;
    int32_t knob_type[GX_MAX_KNOBS];
    int64_t knob_val[GX_MAX_KNOBS];
    bool have_rec;
    struct gr_rec rec; /* a copy of its graph's record, taken while it was still that graph's (last member) */
};
/* What plan p is: from the table, else read back.  finalized: the plan itself
 * can be read (else only its engine config); knobs: read the knob choices. */
void gx_plan_info(int slot, const void *real, struct gt_ent *p, bool finalized, bool knobs,
                  struct gx_plan_info *pi);

/* ---- event fields (graph_json.c) */
void gx_ev_status(struct cg_ev *e, int slot, cudnnStatus_t st, const char *reason);
void gx_ev_desc_type(struct cg_ev *e, int type);
void gx_ev_tensor_fields(struct cg_ev *e, const int64_t *dims, int nd, int dtype, bool has_uid, int64_t uid,
                         bool is_virtual);
void gx_ev_ops(struct cg_ev *e, const struct gr_rec *r);    /* "ops":[...], "ops_more" */
void gx_ev_counts(struct cg_ev *e, const struct gr_rec *r); /* heuristics_returned, plans_* */
/* plan, graph, engine, knobs, heuristics_rank, workspace; with_graph: ops,
 * counts and finalized_workspaces too */
void gx_ev_plan(struct cg_ev *e, const struct gx_plan_info *pi, bool with_graph);

/* ---- the rare moments (graph_report.c).  slot: CG_SLOT_CUDNN9 / 8
 * (cg_cudnn_slot_of); real: the wrapped function, whose library tells which
 * copy of cuDNN to ask for its reason. */
void gx_create_failed(int slot, const void *real, int type, cudnnStatus_t st);
void gx_call_failed(int slot, const void *real, int hook, struct gt_ent *e, int attr, cudnnStatus_t st);
void gx_finalize_failed(int slot, const void *real, struct gt_ent *e, cudnnStatus_t st);
void gx_plan_finalized(int slot, struct gt_ent *plan);
void gx_first_exec(int slot, int hook, struct gt_ent *plan);
void gx_exec_failed(int slot, const void *real, int hook, struct gt_ent *plan, struct gt_ent *vpack,
                    cudnnStatus_t st);
/* Destroy of an operation graph, or of a plan that executed. */
void gx_destroyed(struct gt_ent *e);
/* A record leaves (graph destroyed, record recycled, exit): if plans were
 * tried and none finalized, graph_all_plans_failed, once. */
void gx_rec_retired(struct gr_rec *r, const char *when);
bool gx_not_supported(int slot, cudnnStatus_t st);

/* ---- names (graph_names.c); NULL when unknown.  Status names: core/core.h. */
const char *cg_cudnn_desc_type_name(int type);
const char *cg_cudnn_dtype_name(int dtype);

/* ---- at exit (graph_report.c), for the lifecycle (shim.c) */
void cg_graph_exit_events(void);               /* before the exit event: graphs whose plans all failed */
void cg_graph_exit_summary(struct cg_ev *e);   /* the exit event's "graph" member */
#endif
