/* cudnn_api.h - the few cuDNN and CUDA runtime functions `convguard smoke`
 * calls, resolved with dlsym so that convguard builds and runs without them.
 * Types and constants come from shim/cudefs.h (checked against the real
 * headers by tests/unit/check_cudefs.c); these prototypes follow cudnn_*_v9.h
 * and cuda_runtime_api.h. */
#ifndef CONVGUARD_CUDNN_API_H
#define CONVGUARD_CUDNN_API_H
#include "cudefs.h"

#define CG_CUDNN_DATA_FLOAT 0
#define CG_CUDNN_TENSOR_NCHW 0
#define CG_CUDNN_CROSS_CORRELATION 1
#define CG_CUDNN_FMA_MATH 3 /* plain fp32: no TF32, so results match the CPU */
#define CG_cudaMemcpyHostToDevice 1
#define CG_cudaMemcpyDeviceToHost 2

typedef cudnnTensorDescriptor_t TD;
typedef cudnnFilterDescriptor_t FD;
typedef cudnnConvolutionDescriptor_t CD;

/* X(name, return type, parameters) */
#define CUDNN_FUNCS(X)                                                                                         \
    X(cudnnGetVersion, size_t, (void))                                                                         \
    X(cudnnGetCudartVersion, size_t, (void))                                                                   \
    X(cudnnGetErrorString, const char *, (cudnnStatus_t))                                                      \
    X(cudnnCreate, cudnnStatus_t, (cudnnHandle_t *))                                                           \
    X(cudnnDestroy, cudnnStatus_t, (cudnnHandle_t))                                                            \
    X(cudnnCreateTensorDescriptor, cudnnStatus_t, (TD *))                                                      \
    X(cudnnSetTensor4dDescriptor, cudnnStatus_t, (TD, int, int, int, int, int, int))                           \
    X(cudnnCreateFilterDescriptor, cudnnStatus_t, (FD *))                                                      \
    X(cudnnSetFilter4dDescriptor, cudnnStatus_t, (FD, int, int, int, int, int, int))                           \
    X(cudnnCreateConvolutionDescriptor, cudnnStatus_t, (CD *))                                                 \
    X(cudnnSetConvolution2dDescriptor, cudnnStatus_t, (CD, int, int, int, int, int, int, int, int))            \
    X(cudnnSetConvolutionMathType, cudnnStatus_t, (CD, int))                                                   \
    X(cudnnGetConvolution2dForwardOutputDim, cudnnStatus_t, (CD, TD, FD, int *, int *, int *, int *))          \
    X(cudnnGetConvolutionForwardAlgorithm_v7, cudnnStatus_t,                                                   \
      (cudnnHandle_t, TD, FD, CD, TD, int, int *, cudnnConvolutionFwdAlgoPerf_t *))                            \
    X(cudnnGetConvolutionForwardWorkspaceSize, cudnnStatus_t, (cudnnHandle_t, TD, FD, CD, TD, int, size_t *))  \
    X(cudnnConvolutionForward, cudnnStatus_t,                                                                  \
      (cudnnHandle_t, const void *, TD, const void *, FD, const void *, CD, int, void *, size_t, const void *,  \
       TD, void *))                                                                                            \
    X(cudnnGetConvolutionBackwardDataAlgorithm_v7, cudnnStatus_t,                                              \
      (cudnnHandle_t, FD, TD, CD, TD, int, int *, cudnnConvolutionBwdDataAlgoPerf_t *))                        \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize, cudnnStatus_t,                                             \
      (cudnnHandle_t, FD, TD, CD, TD, int, size_t *))                                                          \
    X(cudnnConvolutionBackwardData, cudnnStatus_t,                                                             \
      (cudnnHandle_t, const void *, FD, const void *, TD, const void *, CD, int, void *, size_t, const void *,  \
       TD, void *))                                                                                            \
    X(cudnnGetConvolutionBackwardFilterAlgorithm_v7, cudnnStatus_t,                                            \
      (cudnnHandle_t, TD, TD, CD, FD, int, int *, cudnnConvolutionBwdFilterAlgoPerf_t *))                      \
    X(cudnnGetConvolutionBackwardFilterWorkspaceSize, cudnnStatus_t,                                           \
      (cudnnHandle_t, TD, TD, CD, FD, int, size_t *))                                                          \
    X(cudnnConvolutionBackwardFilter, cudnnStatus_t,                                                           \
      (cudnnHandle_t, const void *, TD, const void *, TD, const void *, CD, int, void *, size_t, const void *,  \
       FD, void *))

#define CUDART_FUNCS(X)                                                                                        \
    X(cudaMalloc, cudaError_t, (void **, size_t))                                                              \
    X(cudaFree, cudaError_t, (void *))                                                                         \
    X(cudaMemcpy, cudaError_t, (void *, const void *, size_t, int))                                            \
    X(cudaDeviceSynchronize, cudaError_t, (void))                                                              \
    X(cudaGetErrorString, const char *, (cudaError_t))

#endif
