/* cudnn_int.h - private to convguard's cuDNN TEST DOUBLES (not NVIDIA's).
 *
 * One set of sources builds both the cuDNN 9 doubles and, with
 * -DCGTEST_CUDNN8, the cuDNN 8 ones; ST_* gives the status in the numbering
 * of the version being built. */
#ifndef CGTEST_CUDNN_INT_H
#define CGTEST_CUDNN_INT_H

#include <stdint.h>
#include "cuda_double.h"
#include "cudnn_double.h"

#define API __attribute__((visibility("default")))
#define MiB ((size_t)1 << 20)

#ifdef CGTEST_CUDNN8
#define CGTEST_VERSION 8907           /* "cuDNN 8.9.7" */
#define CGTEST_CUDART_VERSION 12020
#define ST_NOT_INITIALIZED CUDNN8_STATUS_NOT_INITIALIZED
#define ST_BAD_PARAM CUDNN8_STATUS_BAD_PARAM
#define ST_NOT_SUPPORTED CUDNN8_STATUS_NOT_SUPPORTED
#define ST_INTERNAL_ERROR CUDNN8_STATUS_INTERNAL_ERROR
#define ST_ALLOC_FAILED CUDNN8_STATUS_ALLOC_FAILED
#define ST_DEVICE_ALLOC_FAILED CUDNN8_STATUS_ALLOC_FAILED /* no finer code in 8 */
#define ST_EXECUTION_FAILED CUDNN8_STATUS_EXECUTION_FAILED
#else
#define CGTEST_VERSION 90100          /* "cuDNN 9.1.0" */
#define CGTEST_CUDART_VERSION 13000
#define ST_NOT_INITIALIZED CUDNN_STATUS_NOT_INITIALIZED
#define ST_BAD_PARAM CUDNN_STATUS_BAD_PARAM
#define ST_NOT_SUPPORTED CUDNN_STATUS_NOT_SUPPORTED
#define ST_INTERNAL_ERROR CUDNN_STATUS_INTERNAL_ERROR
#define ST_ALLOC_FAILED CUDNN_STATUS_ALLOC_FAILED /* 4003 */
#define ST_DEVICE_ALLOC_FAILED CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED
#define ST_EXECUTION_FAILED CUDNN_STATUS_EXECUTION_FAILED
#endif

#define HANDLE_MAGIC 0x6e6e6475u /* "udnn" */
struct cudnnContext {
    unsigned magic;
    CUdeviceptr scratch; /* CGTEST_CUDNN_HANDLE_MB, allocated at cudnnCreate */
    cudaStream_t stream;
};

/* Legacy descriptors (cudnn_desc.c, cudnn_cnn.c), shared by the libraries. */
enum { TMAGIC = 0x74656e73, FMAGIC = 0x66696c74, CMAGIC = 0x636f6e76, AMAGIC = 0x61637476 };
struct cudnnTensorStruct { unsigned magic; int set, format, dtype, n, c, h, w; };
struct cudnnFilterStruct { unsigned magic; int set, dtype, format, k, c, r, s; };
struct cudnnConvolutionStruct { unsigned magic; int set, ph, pw, u, v, dh, dw, mode, ctype, groups, math; };
struct cudnnActivationStruct { unsigned magic; int mode, nan; double coef; };

#define BAD(...) cgtestCudnnFail(ST_BAD_PARAM, __VA_ARGS__)
#define CREATE(fn, T, M)                                                     \
    API cudnnStatus_t fn(T *out)                                             \
    {                                                                        \
        if (!out)                                                            \
            return BAD("descriptor == nullptr");                             \
        if (!(*out = calloc(1, sizeof **out)))                               \
            return cgtestCudnnFail(ST_ALLOC_FAILED, "out of host memory");   \
        (*out)->magic = M;                                                   \
        return CUDNN_STATUS_SUCCESS;                                         \
    }
#define DESTROY(fn, T, M)                                                    \
    API cudnnStatus_t fn(T d)                                                \
    {                                                                        \
        if (d && d->magic != M)                                              \
            return BAD("not a descriptor of this type");                     \
        if (d)                                                               \
            d->magic = 0;                                                    \
        free(d);                                                             \
        return CUDNN_STATUS_SUCCESS;                                         \
    }

/* Exported by the handle library (graph / ops_infer) for the cnn library,
 * which has it as DT_NEEDED; the real cuDNN has such internal exports too. */
cudnnStatus_t cgtestCudnnFail(cudnnStatus_t st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int cgtestCudnnHandleOk(cudnnHandle_t h);
CUresult cgtestCudnnDevAlloc(CUdeviceptr *p, size_t n);
void cgtestCudnnDevFree(CUdeviceptr p);
size_t cgtestCudnnEnvNum(const char *name, size_t dflt);

#endif
