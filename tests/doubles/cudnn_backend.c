/* cudnn_backend.c - TEST DOUBLE of cuDNN 9's backend (graph) API, built into
 * libcudnn_graph.so.9.  This is NOT NVIDIA's library.
 *
 * A descriptor is a heap object that remembers its type and every attribute
 * set on it.  Semantics copied from real cuDNN 9.19 (measured on this host,
 * which has no GPU) and from how cudnn-frontend calls it:
 *  - GetAttribute before Finalize: NOT_INITIALIZED (1001), reason "status";
 *    a wrong attribute type: 2010 "CUDNN_TYPE_INT64 != attrType";
 *    Set or Finalize after Finalize: BAD_PARAM with the real reasons;
 *  - attributes of type CUDNN_TYPE_BACKEND_DESCRIPTOR are read back INTO
 *    descriptors the caller created (so are the heuristics' results: the
 *    caller creates N ENGINECFG descriptors and the library fills them);
 *  - tensor Finalize needs DIMENSIONS ("_nbDims < 1"), as many STRIDES
 *    ("_nbDims != _nbStrides") and BYTE_ALIGNMENT; UNIQUE_ID and DATA_TYPE
 *    are not checked (real 9.19 does not either).
 * Simulated engines (see README.md): CGTEST_HEUR_COUNT (default 4) engine
 * configs with global index 0..n-1; plan Finalize follows CGTEST_PLAN_RULES
 * (default "0:notsup,1:badparam,2:ws=256,3:ws=0"; unlisted: notsup);
 * Execute allocates CGTEST_EXEC_ALLOC_MB (default 0) through the driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudnn_int.h"

#define BMAGIC 0x62656e64u
#define MAX_ATTR 32

struct attr { int name, type; int64_t count; void *data; };
struct bdesc {
    unsigned magic;
    int type, finalized, nattr;
    struct attr a[MAX_ATTR];
    int64_t engine; /* ENGINE, ENGINECFG: global index */
    int64_t ws;     /* EXECUTION_PLAN: workspace bytes */
};

static const char *type_names[] = {
    [CUDNN_TYPE_HANDLE] = "CUDNN_TYPE_HANDLE", [CUDNN_TYPE_DATA_TYPE] = "CUDNN_TYPE_DATA_TYPE",
    [CUDNN_TYPE_INT64] = "CUDNN_TYPE_INT64", [CUDNN_TYPE_FLOAT] = "CUDNN_TYPE_FLOAT",
    [CUDNN_TYPE_VOID_PTR] = "CUDNN_TYPE_VOID_PTR", [CUDNN_TYPE_BACKEND_DESCRIPTOR] = "CUDNN_TYPE_BACKEND_DESCRIPTOR",
};

static const char *type_name(int t)
{
    return t >= 0 && t < (int)(sizeof type_names / sizeof *type_names) && type_names[t] ? type_names[t] : "attrType";
}

/* Bytes per element; the enum-valued types are ints. */
static size_t elem_size(int type)
{
    switch (type) {
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_INT64: case CUDNN_TYPE_DOUBLE:
    case CUDNN_TYPE_VOID_PTR: case CUDNN_TYPE_BACKEND_DESCRIPTOR: return 8;
    case CUDNN_TYPE_BOOLEAN: case CUDNN_TYPE_CHAR: return 1;
    case CUDNN_TYPE_FRACTION: return 16;
    default: return 4;
    }
}

static struct bdesc *D(void *p) { struct bdesc *d = p; return d && d->magic == BMAGIC ? d : NULL; }

static struct attr *find(struct bdesc *d, int name)
{
    for (int i = 0; i < d->nattr; i++)
        if (d->a[i].name == name)
            return &d->a[i];
    return NULL;
}

static int64_t get_i64(struct bdesc *d, int name, int64_t dflt)
{
    struct attr *a = find(d, name);
    return a && a->type == CUDNN_TYPE_INT64 && a->count >= 1 ? *(int64_t *)a->data : dflt;
}

/* The descriptor stored in a BACKEND_DESCRIPTOR or HANDLE attribute. */
static void *get_ptr(struct bdesc *d, int name)
{
    struct attr *a = find(d, name);
    return a && a->count >= 1 && elem_size(a->type) == sizeof(void *) ? *(void **)a->data : NULL;
}

static void clear(struct bdesc *d)
{
    for (int i = 0; i < d->nattr; i++)
        free(d->a[i].data);
    d->nattr = d->finalized = 0;
    d->engine = -1;
    d->ws = 0;
}

/* dst becomes a copy of src (what GetAttribute does for descriptors). */
static cudnnStatus_t copy_into(struct bdesc *dst, const struct bdesc *src)
{
    if (!dst || dst->type != src->type)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE, "descriptorType != ptrDesc->getType()");
    clear(dst);
    for (int i = 0; i < src->nattr; i++) {
        size_t n = (size_t)src->a[i].count * elem_size(src->a[i].type);
        dst->a[i] = src->a[i];
        if ((dst->a[i].data = malloc(n ? n : 1)))
            memcpy(dst->a[i].data, src->a[i].data, n);
        dst->nattr = i + 1;
    }
    dst->finalized = src->finalized;
    dst->engine = src->engine;
    dst->ws = src->ws;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    struct bdesc *d;

    if (!out)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "descriptor == nullptr");
    if (type < 0 || type > 40)
        return cgtestCudnnFail(CUDNN_STATUS_ALLOC_FAILED,
                               "CUDNN_STATUS_SUCCESS != getSizeOfDescriptor(descriptorType, size)");
    if (!(d = calloc(1, sizeof *d)))
        return cgtestCudnnFail(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = BMAGIC;
    d->type = type;
    d->engine = -1;
    *out = d;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t p)
{
    struct bdesc *d = D(p);

    if (!d)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "descriptor == nullptr");
    clear(d);
    d->magic = 0;
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t p)
{
    struct bdesc *d = D(p);

    if (!d)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "descriptor == nullptr");
    clear(d);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t p, cudnnBackendAttributeName_t name,
                                           cudnnBackendAttributeType_t type, int64_t count, const void *elems)
{
    struct bdesc *d = D(p);
    struct attr *a;
    size_t n;

    if (!d || count < 0 || (count && !elems))
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "arrayOfElements == nullptr");
    if ((type == CUDNN_TYPE_HANDLE || type == CUDNN_TYPE_BACKEND_DESCRIPTOR) && count && !*(void *const *)elems)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "element == nullptr");
    if (d->finalized)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM,
                               "ptrDesc->set(attributeName, attributeType, elementCount, arrayOfElements)");
    if (!(a = find(d, name))) {
        if (d->nattr == MAX_ATTR)
            return cgtestCudnnFail(CUDNN_STATUS_NOT_SUPPORTED, "too many attributes for the test double");
        a = &d->a[d->nattr++];
    } else {
        free(a->data);
    }
    n = (size_t)count * elem_size(type);
    a->name = name;
    a->type = type;
    a->count = count;
    if ((a->data = malloc(n ? n : 1)))
        memcpy(a->data, elems, n);
    return CUDNN_STATUS_SUCCESS;
}

/* CGTEST_PLAN_RULES: "index:notsup|badparam|ws=MiB,...".  Sets no reason:
 * GetAttribute(ENGINECFG_WORKSPACE_SIZE) asks too. */
static cudnnStatus_t plan_rule(int64_t engine, int64_t *ws)
{
    const char *r = getenv("CGTEST_PLAN_RULES");
    char buf[256], *tok, *save = NULL;

    snprintf(buf, sizeof buf, "%s", r ? r : "0:notsup,1:badparam,2:ws=256,3:ws=0");
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon || strtoll(tok, NULL, 10) != engine)
            continue;
        if (!strncmp(colon + 1, "ws=", 3)) {
            *ws = strtoll(colon + 4, NULL, 10) * (int64_t)MiB;
            return CUDNN_STATUS_SUCCESS;
        }
        if (!strcmp(colon + 1, "badparam"))
            return CUDNN_STATUS_BAD_PARAM;
        break;
    }
    return CUDNN_STATUS_NOT_SUPPORTED;
}

static int finalized(void *p) { struct bdesc *d = D(p); return d && d->finalized; }

API cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t p)
{
    struct bdesc *d = D(p), *cfg;
    struct attr *dims, *strides;
    cudnnStatus_t st;

    if (!d)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "descriptor == nullptr");
    if (d->finalized)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "ptrDesc->finalize()");
    switch (d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        dims = find(d, CUDNN_ATTR_TENSOR_DIMENSIONS);
        strides = find(d, CUDNN_ATTR_TENSOR_STRIDES);
        if (!dims || dims->count < 1)
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "_nbDims < 1");
        if (!strides || strides->count != dims->count)
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "_nbDims != _nbStrides");
        if (get_i64(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 0) <= 0)
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "%s",
                "(_ptrAlignment <= 0) || _ptrAlignment % sizeofCudnnType(_dataType) != 0");
        break;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        if (!finalized(get_ptr(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X)) ||
            !finalized(get_ptr(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W)) ||
            !finalized(get_ptr(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC)) ||
            !finalized(get_ptr(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y)))
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "(!xDesc.isFinalized()) || (!wDesc.isFinalized()) || "
                                   "(!cDesc.isFinalized()) || (!yDesc.isFinalized())");
        break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        if (!get_ptr(d, CUDNN_ATTR_OPERATIONGRAPH_OPS))
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "outputGraph.buildDAG()");
        if (!cgtestCudnnHandleOk(get_ptr(d, CUDNN_ATTR_OPERATIONGRAPH_HANDLE)))
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "handle is not a cudnnHandle_t");
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        if (!finalized(get_ptr(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH)))
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "nullptr == opset_ptr");
        break;
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: /* built by hand: graph + index */
        if (!finalized(get_ptr(d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH)) ||
            (d->engine = get_i64(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, -1)) < 0)
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "nullptr == opset_ptr");
        break;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: /* built by hand: an engine */
        if (!finalized(get_ptr(d, CUDNN_ATTR_ENGINECFG_ENGINE)))
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "assert_finalized == true");
        d->engine = D(get_ptr(d, CUDNN_ATTR_ENGINECFG_ENGINE))->engine;
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        cfg = D(get_ptr(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG));
        if (!cfg || !cfg->finalized)
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "assert_finalized == true");
        if (!cgtestCudnnHandleOk(get_ptr(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE)))
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "handle is not a cudnnHandle_t");
        if ((st = plan_rule(cfg->engine, &d->ws)))
            return cgtestCudnnFail(st, "engine %lld: %s (CGTEST_PLAN_RULES)", (long long)cfg->engine,
                                   st == CUDNN_STATUS_BAD_PARAM ? "bad parameter" : "not supported");
        d->engine = cfg->engine;
        break;
    }
    d->finalized = 1;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t put_i64(int64_t v, int type, int64_t req, int64_t *count, void *out)
{
    if (type != CUDNN_TYPE_INT64)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE, "CUDNN_TYPE_INT64 != attrType");
    if (count)
        *count = 1;
    if (req >= 1 && out)
        *(int64_t *)out = v;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const p, cudnnBackendAttributeName_t name,
                                           cudnnBackendAttributeType_t type, int64_t req, int64_t *count,
                                           void *out)
{
    struct bdesc *d = D(p), **outd = out;
    struct attr *a;
    int64_t n, i;
    cudnnStatus_t st;

    if (!d || req < 0 || (req && !out))
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "arrayOfElements == nullptr");
    if (!d->finalized)
        return cgtestCudnnFail(CUDNN_STATUS_NOT_INITIALIZED, "status");
    if (d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && name == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)
        return put_i64(d->ws, type, req, count, out);
    if (d->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR && name == CUDNN_ATTR_ENGINE_GLOBAL_INDEX)
        return put_i64(d->engine, type, req, count, out);
    if (d->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR && name == CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT)
        return put_i64((int64_t)cgtestCudnnEnvNum("CGTEST_HEUR_COUNT", 4), type, req, count, out);
    if (d->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR && name == CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE) {
        int64_t ws = 0;
        plan_rule(d->engine, &ws); /* a query: what the plan would need */
        return put_i64(ws, type, req, count, out);
    }
    if ((d->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR && name == CUDNN_ATTR_ENGINEHEUR_RESULTS) ||
        (d->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR && name == CUDNN_ATTR_ENGINECFG_ENGINE)) {
        int heur = d->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR;
        if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
            return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE, "CUDNN_TYPE_BACKEND_DESCRIPTOR != attrType");
        n = heur ? (int64_t)cgtestCudnnEnvNum("CGTEST_HEUR_COUNT", 4) : 1;
        n = req && req < n ? req : n;
        for (i = 0; i < (req ? n : 0); i++) {
            struct bdesc *e = D(outd[i]);
            if (!e || e->type != (heur ? CUDNN_BACKEND_ENGINECFG_DESCRIPTOR : CUDNN_BACKEND_ENGINE_DESCRIPTOR))
                return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE, "descriptorType != ptrDesc->getType()");
            clear(e);
            e->engine = heur ? i : d->engine;
            e->finalized = 1;
        }
        if (count)
            *count = n;
        return CUDNN_STATUS_SUCCESS;
    }
    if (!(a = find(d, name)))
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "attribute %d was not set", name);
    if (a->type != type)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE, "%s != attrType", type_name(a->type));
    n = req < a->count ? req : a->count;
    if (count)
        *count = req ? n : a->count;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        for (i = 0; i < n; i++) {
            struct bdesc *src = D(((void **)a->data)[i]);
            if (!src)
                return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "stored descriptor was destroyed");
            if ((st = copy_into(D(outd[i]), src)))
                return st;
        }
    } else if (n) {
        memcpy(out, a->data, (size_t)n * elem_size(type));
    }
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan_p, cudnnBackendDescriptor_t vp_p)
{
    struct bdesc *plan = D(plan_p), *vp = D(vp_p);
    size_t extra = cgtestCudnnEnvNum("CGTEST_EXEC_ALLOC_MB", 0) * MiB;
    CUdeviceptr tmp = 0;

    if (!cgtestCudnnHandleOk(h) || !plan || !vp)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "%s", "");
    if (plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !plan->finalized ||
        vp->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || !vp->finalized)
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, "assert_finalized == true");
    if (plan->ws > 0 && !get_ptr(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE))
        return cgtestCudnnFail(CUDNN_STATUS_BAD_PARAM, "workspace == nullptr but the plan needs %lld bytes",
                               (long long)plan->ws);
    if (extra) {
        if (cgtestCudnnDevAlloc(&tmp, extra))
            return cgtestCudnnFail(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED,
                                   "cudnnBackendExecute: could not allocate %zu bytes of device memory", extra);
        cgtestCudnnDevFree(tmp);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* cuDNN >= 9.5 (added for convguard's graph layer): recording a plan into a
 * CUDA graph checks what Execute checks; nothing runs, nothing is recorded. */
API cudnnStatus_t cudnnBackendPopulateCudaGraph(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                                cudnnBackendDescriptor_t vp, cudaGraph_t g)
{
    (void)g;
    return cudnnBackendExecute(h, plan, vp);
}

API cudnnStatus_t cudnnBackendUpdateCudaGraph(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                              cudnnBackendDescriptor_t vp, cudaGraph_t g)
{
    (void)g;
    return cudnnBackendExecute(h, plan, vp);
}
