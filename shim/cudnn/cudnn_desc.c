/* cudnn_desc.c - cuDNN's own state, read on cuDNN's failure and lookup
 * paths only: its descriptor getters, its last error string, enum names.
 *
 * cuDNN 9 (and 8) ship a small dispatcher, libcudnn.so.N, whose exported
 * functions dlopen() their sub-library at their first call.  The shim never
 * calls the dispatcher: it calls the function in the sub-library that
 * implements it (libcudnn_ops.so.9 for tensor and filter descriptors,
 * libcudnn_cnn.so.9 for convolution descriptors, libcudnn_graph.so.9 for
 * cudnnGetLastErrorString; libcudnn_ops_infer.so.8 / libcudnn_cnn_infer.so.8
 * for cuDNN 8), found in the link map by soname, of the same major as the
 * slot and preferably from the dispatcher's own directory.  A sub-library
 * that is not loaded is never loaded by us: the getter is then missing and
 * the descriptor is written as null.  The found pointers are cached per slot
 * until the link map changes (objects added or removed). */
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "cudnn/cudnn.h"

/* ---- finding functions in the sub-libraries */
/* Changes whenever an object is added to or removed from the link map: the
 * shim's copy is refreshed by every dlopen that adds one (cuDNN's dispatcher
 * loads its parts through dlopen, so through the shim) and every dlclose.
 * Not the loader's own counters: asking for them takes its lock (forkgate.c).
 * 0 is "never filled". */
static uint64_t link_generation(void) { return cg_objsnap_generation() + 1; }

struct sub_find {
    const char *dispatcher; /* "libcudnn.so.9" */
    const char *suffix;     /* ".so.9" */
    const char *dir;        /* the dispatcher's directory, with its '/' */
    size_t dirlen;
    const char *name;
    void *best;
    bool best_same_dir;
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int sub_cb(const struct cg_obj *o, void *p)
{
    struct sub_find *f = p;
    const char *so = o->dyn ? cg_elf_soname(o) : NULL;
    if (!so || !cg_starts_with(so, "libcudnn") || strcmp(so, f->dispatcher) == 0 || !ends_with(so, f->suffix))
        return 0;
    void *fn = cg_elf_sym(o, f->name, NULL);
    if (!fn)
        return 0;
    bool same = f->dirlen && strncmp(o->name, f->dir, f->dirlen) == 0 && !strchr(o->name + f->dirlen, '/');
    if (!f->best || (same && !f->best_same_dir)) {
        f->best = fn;
        f->best_same_dir = same;
    }
    return 0;
}

static void *sub_sym(int slot, const char *dir, size_t dirlen, const char *name)
{
    const char *so = cg_slots[slot].soname; /* "libcudnn.so.9" */
    struct sub_find f = {.dispatcher = so, .suffix = strstr(so, ".so."), .dir = dir, .dirlen = dirlen, .name = name};
    cg_elf_each_obj(sub_cb, &f);
    return f.best;
}

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
CG_FORK_REINIT(cache_lock);
static struct {
    uint64_t gen;
    const void *dispatcher_base;
    struct cg_cudnn_fns fns;
} cache[CG_NSLOTS];

void cg_cudnn_fns(int slot, const void *real, struct cg_cudnn_fns *out)
{
    struct cg_obj d;
    bool have = real && cg_objsnap_find_obj(real, &d);
    const void *base = have ? (const void *)d.base : NULL;
    uint64_t gen = link_generation();
    cg_fork_gate_enter(); /* before the lock: a refill walks the link map (forkgate.c) */
    pthread_mutex_lock(&cache_lock);
    if (cache[slot].gen != gen || cache[slot].dispatcher_base != base) {
        char dir[512] = "";
        size_t dirlen = 0;
        const char *slash = have ? strrchr(d.name, '/') : NULL;
        if (slash && (size_t)(slash - d.name) + 1 < sizeof dir) {
            dirlen = (size_t)(slash - d.name) + 1;
            memcpy(dir, d.name, dirlen);
            dir[dirlen] = 0;
        }
        struct cg_cudnn_fns *c = &cache[slot].fns;
        c->tensor = (__typeof__(c->tensor))sub_sym(slot, dir, dirlen, "cudnnGetTensorNdDescriptor");
        c->filter = (__typeof__(c->filter))sub_sym(slot, dir, dirlen, "cudnnGetFilterNdDescriptor");
        c->conv = (__typeof__(c->conv))sub_sym(slot, dir, dirlen, "cudnnGetConvolutionNdDescriptor");
        c->groups = (__typeof__(c->groups))sub_sym(slot, dir, dirlen, "cudnnGetConvolutionGroupCount");
        c->math = (__typeof__(c->math))sub_sym(slot, dir, dirlen, "cudnnGetConvolutionMathType");
        c->last_error = slot == CG_SLOT_CUDNN9 ? (__typeof__(c->last_error))sub_sym(slot, dir, dirlen,
                                                                                      "cudnnGetLastErrorString")
                                               : NULL;
        static const char *const v7[3] = {"cudnnGetConvolutionForwardAlgorithm_v7",
                                          "cudnnGetConvolutionBackwardDataAlgorithm_v7",
                                          "cudnnGetConvolutionBackwardFilterAlgorithm_v7"};
        static const char *const wss[3] = {"cudnnGetConvolutionForwardWorkspaceSize",
                                           "cudnnGetConvolutionBackwardDataWorkspaceSize",
                                           "cudnnGetConvolutionBackwardFilterWorkspaceSize"};
        for (int op = 0; op < 3; op++) {
            c->get_v7[op] = sub_sym(slot, dir, dirlen, v7[op]);
            c->ws_size[op] = sub_sym(slot, dir, dirlen, wss[op]);
        }
        c->backend_get = slot == CG_SLOT_CUDNN9 ? sub_sym(slot, dir, dirlen, "cudnnBackendGetAttribute") : NULL;
        cache[slot].gen = gen;
        cache[slot].dispatcher_base = base;
    }
    *out = cache[slot].fns;
    pthread_mutex_unlock(&cache_lock);
    cg_fork_gate_leave();
}

int cg_cudnn_slot_of(int hook, const void *real)
{
    return atomic_load_explicit(&cg_real[CG_SLOT_CUDNN8][hook], memory_order_relaxed) == real ? CG_SLOT_CUDNN8
                                                                                              : CG_SLOT_CUDNN9;
}

/* ---- cuDNN 9's last error string: read by us, still seen by the program */
static __thread char kept_reason[1024];
static __thread bool kept;

void cg_cudnn_reason_take(const struct cg_cudnn_fns *f, char *out, size_t cap)
{
    out[0] = 0;
    if (!f->last_error || cap == 0)
        return;
    f->last_error(out, cap);
    out[cap - 1] = 0;
    if (out[0]) {
        /* a newer message replaces an older one the program has not read, as in cuDNN */
        cg_strlcpy(kept_reason, out, sizeof kept_reason);
        kept = true;
    }
}

void cg_cudnn_reason_drop(const struct cg_cudnn_fns *f)
{
    char scratch[1024];
    if (f->last_error)
        f->last_error(scratch, sizeof scratch);
}

void cg_w_cudnnGetLastErrorString(cg_t_cudnnGetLastErrorString real, CG_CALLER, char *message, size_t max_size)
{
    real(message, max_size);
    /* cuDNN had nothing newer than the text the shim took: hand that over. */
    if (CG_UNLIKELY(kept) && message && max_size) {
        if (!message[0])
            cg_strlcpy(message, kept_reason, max_size);
        kept = false;
    }
}

/* ---- descriptors */
void cg_cudnn_tensor(const struct cg_cudnn_fns *f, cudnnTensorDescriptor_t d, struct cg_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->format = -1;
    if (!f->tensor || !d)
        return;
    t->ok = f->tensor(d, CG_MAX_DIMS, &t->dtype, &t->nb, t->dims, t->strides) == CUDNN_STATUS_SUCCESS &&
            t->nb > 0 && t->nb <= CG_MAX_DIMS;
}

void cg_cudnn_filter(const struct cg_cudnn_fns *f, cudnnFilterDescriptor_t d, struct cg_tensor *t)
{
    memset(t, 0, sizeof *t);
    if (!f->filter || !d)
        return;
    t->ok = f->filter(d, CG_MAX_DIMS, &t->dtype, &t->format, &t->nb, t->dims) == CUDNN_STATUS_SUCCESS &&
            t->nb > 0 && t->nb <= CG_MAX_DIMS;
}

void cg_cudnn_conv(const struct cg_cudnn_fns *f, cudnnConvolutionDescriptor_t d, struct cg_conv *c)
{
    memset(c, 0, sizeof *c);
    c->groups = c->math = -1;
    if (!d)
        return;
    if (f->conv)
        c->ok = f->conv(d, CG_MAX_DIMS - 2, &c->n, c->pad, c->stride, c->dilation, &c->mode, &c->compute_type) ==
                    CUDNN_STATUS_SUCCESS &&
                c->n > 0 && c->n <= CG_MAX_DIMS - 2;
    if (f->groups && f->groups(d, &c->groups) != CUDNN_STATUS_SUCCESS)
        c->groups = -1;
    if (f->math && f->math(d, &c->math) != CUDNN_STATUS_SUCCESS)
        c->math = -1;
}

static const char *const dtypes[] = {"float",  "double",   "half",    "int8",      "int32",     "int8x4",
                                     "uint8",  "uint8x4",  "int8x32", "bfloat16",  "int64",     "boolean",
                                     "fp8_e4m3", "fp8_e5m2", "fast_float_for_fp8", "fp8_e8m0", "fp4_e2m1",
                                     "int4",   "uint4",    "uint32",  "complex_fp32", "complex_fp64"};

static const char *dtype_name(int t)
{
    return t >= 0 && (size_t)t < sizeof dtypes / sizeof dtypes[0] ? dtypes[t] : "unknown";
}

/* NCHW / NHWC from the strides of a 4-d or 5-d tensor; "strided" otherwise. */
static const char *layout_of(const struct cg_tensor *t)
{
    if (t->format >= 0)
        return t->format == 0 ? "NCHW" : t->format == 1 ? "NHWC" : t->format == 2 ? "NCHW_VECT_C" : "unknown";
    if (t->nb < 3)
        return "packed";
    int n = t->nb;
    bool nchw = true, nhwc = true;
    long long expect = 1;
    for (int i = n - 1; i >= 0; i--) {
        if (t->dims[i] != 1 && t->strides[i] != expect)
            nchw = false;
        expect *= t->dims[i];
    }
    /* channels last: C innermost, then W, H, (D), N */
    expect = 1;
    int order[CG_MAX_DIMS], k = 0;
    order[k++] = 1;
    for (int i = n - 1; i >= 2; i--)
        order[k++] = i;
    order[k++] = 0;
    for (int j = 0; j < n; j++) {
        int i = order[j];
        if (t->dims[i] != 1 && t->strides[i] != expect)
            nhwc = false;
        expect *= t->dims[i];
    }
    if (nchw)
        return n == 5 ? "NCDHW" : "NCHW";
    if (nhwc)
        return n == 5 ? "NDHWC" : "NHWC";
    return "strided";
}

static void ints(struct cg_ev *e, const char *key, const int *v, int n)
{
    cg_ev_open(e, key, '[');
    for (int i = 0; i < n; i++)
        cg_ev_i64(e, NULL, v[i]);
    cg_ev_close(e, ']');
}

void cg_ev_tensor(struct cg_ev *e, const char *key, const struct cg_tensor *t)
{
    if (!t->ok) {
        cg_ev_raw(e, key, "null");
        return;
    }
    cg_ev_open(e, key, '{');
    ints(e, "dims", t->dims, t->nb);
    cg_ev_str(e, "dtype", dtype_name(t->dtype));
    cg_ev_str(e, "layout", layout_of(t));
    cg_ev_close(e, '}');
}

static const char *const maths[] = {"default", "tensor_op", "tensor_op_allow_conversion", "fma"};

const char *cg_cudnn_math_name(int m) { return m >= 0 && m < 4 ? maths[m] : "unknown"; }

void cg_ev_conv(struct cg_ev *e, const char *key, const struct cg_conv *c)
{
    if (!c->ok && c->groups < 0 && c->math < 0) {
        cg_ev_raw(e, key, "null");
        return;
    }
    cg_ev_open(e, key, '{');
    if (c->ok) {
        ints(e, "pad", c->pad, c->n);
        ints(e, "stride", c->stride, c->n);
        ints(e, "dilation", c->dilation, c->n);
        cg_ev_str(e, "mode", c->mode == 0 ? "convolution" : c->mode == 1 ? "cross_correlation" : "unknown");
        cg_ev_str(e, "compute_type", dtype_name(c->compute_type));
    }
    if (c->groups >= 0)
        cg_ev_i64(e, "groups", c->groups);
    if (c->math >= 0)
        cg_ev_str(e, "math_type", cg_cudnn_math_name(c->math));
    cg_ev_close(e, '}');
}

static const char *const fwd_algos[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                        "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
static const char *const bwd_data_algos[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
static const char *const bwd_filter_algos[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
                                               "FFT_TILING"};

const char *cg_cudnn_algo_name(int op, int algo)
{
    if (algo < 0)
        return "unknown";
    if (op == CG_OP_FWD)
        return algo < 8 ? fwd_algos[algo] : "unknown";
    if (op == CG_OP_BWD_DATA)
        return algo < 6 ? bwd_data_algos[algo] : "unknown";
    return algo < 7 ? bwd_filter_algos[algo] : "unknown";
}
