/* cudnn.h - the cudnn layer (cudnn/README.md): cuDNN's legacy API.  cuDNN's
 * own state read on its failure paths (cudnn_desc.c): its functions in the
 * sub-library that implements them, the legacy descriptors decoded with
 * cuDNN's getters, cuDNN 9's last error string (taken and handed back), the
 * names of its enums; the fallback policy applied to its calls
 * (fallback_cudnn.c).  Includes only the headers of the layers below. */
#ifndef CONVGUARD_CUDNN_H
#define CONVGUARD_CUDNN_H

#include "cuda/cuda.h"

/* ---- cudnn_desc.c */
/* cuDNN's functions the shim calls itself, from the sub-library of the
 * slot's cuDNN that implements them (never the dispatcher, whose first call
 * of a function dlopen()s: that would write events and touch dlerror()).
 * NULL where no loaded sub-library has it. */
struct cg_cudnn_fns {
    cudnnStatus_t (*tensor)(cudnnTensorDescriptor_t, int, cudnnDataType_t *, int *, int *, int *);
    cudnnStatus_t (*filter)(cudnnFilterDescriptor_t, int, cudnnDataType_t *, cudnnTensorFormat_t *, int *, int *);
    cudnnStatus_t (*conv)(cudnnConvolutionDescriptor_t, int, int *, int *, int *, int *, cudnnConvolutionMode_t *,
                          cudnnDataType_t *);
    cudnnStatus_t (*groups)(cudnnConvolutionDescriptor_t, int *);
    cudnnStatus_t (*math)(cudnnConvolutionDescriptor_t, cudnnMathType_t *);
    void (*last_error)(char *, size_t); /* cuDNN 9 only */
    /* for the fallback (fallback_cudnn.c), by enum cg_conv_op: the
     * Get*Algorithm_v7 and Get*WorkspaceSize functions, and
     * cudnnBackendGetAttribute (cuDNN 9 only).  void *: the three ops'
     * prototypes differ only in descriptor types, all pointers. */
    void *get_v7[3], *ws_size[3];
    void *backend_get;
};
/* `real` is the wrapped function: its library tells which copy to search. */
void cg_cudnn_fns(int slot, const void *real, struct cg_cudnn_fns *out);
/* The slot a real cuDNN function pointer belongs to. */
int cg_cudnn_slot_of(int hook, const void *real);

/* cuDNN 9 clears its last error string when it is read.  take: reads it into
 * out and keeps it for the program, whose next cudnnGetLastErrorString call
 * gets the same text (cg_w_cudnnGetLastErrorString).  drop: reads and
 * forgets what the shim's own calls since take may have left. */
void cg_cudnn_reason_take(const struct cg_cudnn_fns *f, char *out, size_t cap);
void cg_cudnn_reason_drop(const struct cg_cudnn_fns *f);

#define CG_MAX_DIMS 8
struct cg_tensor {
    bool ok;
    int nb, dims[CG_MAX_DIMS], strides[CG_MAX_DIMS];
    int dtype;
    int format; /* filters: cuDNN's format; tensors: -1 (derived from strides) */
};
struct cg_conv {
    bool ok;
    int n, pad[CG_MAX_DIMS], stride[CG_MAX_DIMS], dilation[CG_MAX_DIMS];
    int mode, compute_type;
    int groups, math; /* -1: unknown */
};
void cg_cudnn_tensor(const struct cg_cudnn_fns *f, cudnnTensorDescriptor_t d, struct cg_tensor *t);
void cg_cudnn_filter(const struct cg_cudnn_fns *f, cudnnFilterDescriptor_t d, struct cg_tensor *t);
void cg_cudnn_conv(const struct cg_cudnn_fns *f, cudnnConvolutionDescriptor_t d, struct cg_conv *c);
/* {"dims":[..],"dtype":"float","layout":"NCHW"} or null */
void cg_ev_tensor(struct cg_ev *e, const char *key, const struct cg_tensor *t);
void cg_ev_conv(struct cg_ev *e, const char *key, const struct cg_conv *c);

enum cg_conv_op { CG_OP_FWD, CG_OP_BWD_DATA, CG_OP_BWD_FILTER };
const char *cg_cudnn_algo_name(int op, int algo);
const char *cg_cudnn_math_name(int math);

/* ---- fallback_cudnn.c: applied by the cuDNN wrappers (cudnn.c,
 * cudnn_graph.c) on their rare paths, each a no-op unless enabled.  slot:
 * CG_SLOT_CUDNN9/8; real: the wrapped function; op: enum cg_conv_op.
 * Descriptor arguments in the order of the op's own prototype. */
void cg_fb_v7(int hook, int slot, const void *real, cudnnHandle_t h, void *a1, void *a2,
              cudnnConvolutionDescriptor_t conv, void *a3, int requested, int *returned,
              cudnnConvolutionFwdAlgoPerf_t *perf);
cudnnStatus_t cg_fb_find(int hook, int op, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *a1,
                         void *a2, cudnnConvolutionDescriptor_t conv, void *a3, int requested, int *returned,
                         cudnnConvolutionFwdAlgoPerf_t *perf);
/* *ws_bytes becomes the size of the last try */
cudnnStatus_t cg_fb_findex(int hook, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *d1,
                           const void *p1, void *d2, const void *p2, cudnnConvolutionDescriptor_t conv, void *d3,
                           void *p3, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf, void *ws,
                           size_t *ws_bytes);
int cg_fb_exec_algo(int op, int slot, const void *real, cudnnStatus_t r, cudnnHandle_t h, void *d1, void *d2,
                    cudnnConvolutionDescriptor_t conv, void *d3, int algo, const void *ws, size_t ws_bytes,
                    size_t *need);
void cg_fb_exec_done(int hook, int slot, int algo_asked, size_t need, int algo_given, size_t ws_bytes,
                     cudnnStatus_t r_first, cudnnStatus_t r);
/* true: the program gets NOT_SUPPORTED from this (successful) Finalize */
bool cg_fb_plan_refused(int slot, const void *real, cudnnBackendDescriptor_t plan);
#endif
