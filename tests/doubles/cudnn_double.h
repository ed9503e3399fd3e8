/* cudnn_double.h - prototypes of the cuDNN functions that convguard's TEST
 * DOUBLES implement and the test clients call.  Not NVIDIA's header.
 *
 * The prototypes are those of the real cuDNN 9 headers (cudnn_graph_v9.h,
 * cudnn_ops_v9.h, cudnn_cnn_v9.h); types and most constants come from
 * shim/cudefs.h so that nothing here needs a CUDA toolkit.  Constants that
 * cudefs.h lacks are defined below, with the real header's value. */
#ifndef CGTEST_CUDNN_DOUBLE_H
#define CGTEST_CUDNN_DOUBLE_H

#include "cudefs.h"

/* ---- not in cudefs.h (values from cudnn_graph_v9.h / library_types.h);
 * guarded, as cudefs.h may gain them */
typedef int libraryPropertyType; /* enum in library_types.h */
typedef int cudnnActivationMode_t;
typedef int cudnnNanPropagation_t;
typedef int cudnnBackendHeurMode_t;
#ifndef MAJOR_VERSION
#define MAJOR_VERSION 0
#endif
#ifndef MINOR_VERSION
#define MINOR_VERSION 1
#endif
#ifndef PATCH_LEVEL
#define PATCH_LEVEL 2
#endif
#ifndef CUDNN_DATA_FLOAT
#define CUDNN_DATA_FLOAT 0
#endif
#ifndef CUDNN_TENSOR_NCHW
#define CUDNN_TENSOR_NCHW 0
#endif
#ifndef CUDNN_TENSOR_NHWC
#define CUDNN_TENSOR_NHWC 1
#endif
#ifndef CUDNN_CONVOLUTION
#define CUDNN_CONVOLUTION 0
#endif
#ifndef CUDNN_CROSS_CORRELATION
#define CUDNN_CROSS_CORRELATION 1
#endif
#ifndef CUDNN_DEFAULT_MATH
#define CUDNN_DEFAULT_MATH 0
#endif
#ifndef CUDNN_NON_DETERMINISTIC
#define CUDNN_NON_DETERMINISTIC 0
#endif
#ifndef CUDNN_DETERMINISTIC
#define CUDNN_DETERMINISTIC 1
#endif
#ifndef CUDNN_ACTIVATION_RELU
#define CUDNN_ACTIVATION_RELU 1
#endif
#ifndef CUDNN_ACTIVATION_IDENTITY
#define CUDNN_ACTIVATION_IDENTITY 5
#endif
#ifndef CUDNN_NOT_PROPAGATE_NAN
#define CUDNN_NOT_PROPAGATE_NAN 0
#endif
#ifndef CUDNN_HEUR_MODE_INSTANT
#define CUDNN_HEUR_MODE_INSTANT 0
#endif
#ifndef CUDNN_STATUS_BAD_PARAM_NULL_POINTER
#define CUDNN_STATUS_BAD_PARAM_NULL_POINTER 2002
#endif
#ifndef CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED
#define CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED 2004
#endif
#ifndef CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE
#define CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE 2010
#endif
#ifndef CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE
#define CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE 2012
#endif
#ifndef CUDNN8_STATUS_EXECUTION_FAILED
#define CUDNN8_STATUS_EXECUTION_FAILED 8
#endif
#ifndef CUDNN_ATTR_CONVOLUTION_COMP_TYPE
#define CUDNN_ATTR_CONVOLUTION_COMP_TYPE 100
#endif
#ifndef CUDNN_ATTR_CONVOLUTION_CONV_MODE
#define CUDNN_ATTR_CONVOLUTION_CONV_MODE 101
#endif
#ifndef CUDNN_ATTR_CONVOLUTION_DILATIONS
#define CUDNN_ATTR_CONVOLUTION_DILATIONS 102
#endif
#ifndef CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES
#define CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES 103
#endif
#ifndef CUDNN_ATTR_CONVOLUTION_POST_PADDINGS
#define CUDNN_ATTR_CONVOLUTION_POST_PADDINGS 104
#endif
#ifndef CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS
#define CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS 105
#endif
#ifndef CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS
#define CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS 106
#endif
#ifndef CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA 700
#endif
#ifndef CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA 701
#endif
#ifndef CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC 702
#endif
#ifndef CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W 703
#endif
#ifndef CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X 704
#endif
#ifndef CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y 705
#endif
#ifndef CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT
#define CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT 802
#endif
#ifndef CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT
#define CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT 900
#endif
#ifndef CUDNN_ATTR_TENSOR_STRIDES
#define CUDNN_ATTR_TENSOR_STRIDES 903
#endif
#ifndef CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS
#define CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS 1000
#endif
#ifndef CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS
#define CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS 1001
#endif
#ifndef CUDNN_TYPE_BOOLEAN
#define CUDNN_TYPE_BOOLEAN 2
#endif
#ifndef CUDNN_TYPE_FLOAT
#define CUDNN_TYPE_FLOAT 4
#endif
#ifndef CUDNN_TYPE_DOUBLE
#define CUDNN_TYPE_DOUBLE 5
#endif
#ifndef CUDNN_TYPE_CONVOLUTION_MODE
#define CUDNN_TYPE_CONVOLUTION_MODE 7
#endif
#ifndef CUDNN_TYPE_HEUR_MODE
#define CUDNN_TYPE_HEUR_MODE 8
#endif
#ifndef CUDNN_TYPE_INT32
#define CUDNN_TYPE_INT32 23
#endif
#ifndef CUDNN_TYPE_CHAR
#define CUDNN_TYPE_CHAR 24
#endif
#ifndef CUDNN_TYPE_FRACTION
#define CUDNN_TYPE_FRACTION 26
#endif

/* ---- handle, version, errors (libcudnn_graph.so.9; ops_infer in cuDNN 8) */
size_t cudnnGetVersion(void);
size_t cudnnGetCudartVersion(void);
const char *cudnnGetErrorString(cudnnStatus_t status);
void cudnnGetLastErrorString(char *message, size_t max_size); /* cuDNN 9 only */
cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value);
cudnnStatus_t cudnnCreate(cudnnHandle_t *handle);
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle);
cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId);
cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId);

/* ---- backend (graph) API, cuDNN 9 double only (libcudnn_graph.so.9) */
cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType,
                                           cudnnBackendDescriptor_t *descriptor);
cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor);
cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor);
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor);
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t attributeName,
                                       cudnnBackendAttributeType_t attributeType,
                                       int64_t elementCount, const void *arrayOfElements);
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                       cudnnBackendAttributeName_t attributeName,
                                       cudnnBackendAttributeType_t attributeType,
                                       int64_t requestedElementCount, int64_t *elementCount,
                                       void *arrayOfElements);
cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                                  cudnnBackendDescriptor_t variantPack);
/* cuDNN >= 9.5; the double checks as Execute does and records nothing */
cudnnStatus_t cudnnBackendPopulateCudaGraph(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                                            cudnnBackendDescriptor_t variantPack, cudaGraph_t graph);
cudnnStatus_t cudnnBackendUpdateCudaGraph(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                                          cudnnBackendDescriptor_t variantPack, cudaGraph_t graph);

/* ---- legacy descriptors (real: libcudnn_ops.so.9 / libcudnn_cnn.so.9;
 * the double serves them all from libcudnn_cnn.so.9) */
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc);
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
                                         cudnnDataType_t dataType, int n, int c, int h, int w);
cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc, int nbDimsRequested,
                                         cudnnDataType_t *dataType, int *nbDims, int dimA[], int strideA[]);
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc);
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc);
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w);
cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t filterDesc, int nbDimsRequested,
                                         cudnnDataType_t *dataType, cudnnTensorFormat_t *format,
                                         int *nbDims, int filterDimA[]);
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc);
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc);
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w,
                                              int u, int v, int dilation_h, int dilation_w,
                                              cudnnConvolutionMode_t mode, cudnnDataType_t computeType);
cudnnStatus_t cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t convDesc, int *pad_h,
                                              int *pad_w, int *u, int *v, int *dilation_h, int *dilation_w,
                                              cudnnConvolutionMode_t *mode, cudnnDataType_t *computeType);
cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t convDesc,
                                              int arrayLengthRequested, int *arrayLength, int padA[],
                                              int strideA[], int dilationA[], cudnnConvolutionMode_t *mode,
                                              cudnnDataType_t *computeType);
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount);
cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int *groupCount);
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType);
cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t *mathType);
cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                    const cudnnTensorDescriptor_t inputTensorDesc,
                                                    const cudnnFilterDescriptor_t filterDesc,
                                                    int *n, int *c, int *h, int *w);
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc);
cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *activationDesc);
cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t activationDesc,
                                           cudnnActivationMode_t mode, cudnnNanPropagation_t reluNanOpt,
                                           double coef);
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t activationDesc);

/* ---- legacy convolution API (libcudnn_cnn.so.9; cnn_infer in cuDNN 8) */
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t y, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf);
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t dx, int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf);
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnFilterDescriptor_t dw, int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf);
cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t y, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf);
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t dx, int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf);
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnFilterDescriptor_t dw, int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf);
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd, const void *w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t yd, void *y, int requested, int *returned,
    cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t ws_bytes);
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t h, cudnnFilterDescriptor_t wd, const void *w, cudnnTensorDescriptor_t dyd, const void *dy,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dxd, void *dx, int requested, int *returned,
    cudnnConvolutionBwdDataAlgoPerf_t *perf, void *ws, size_t ws_bytes);
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnTensorDescriptor_t dyd, const void *dy,
    cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dwd, void *dw, int requested, int *returned,
    cudnnConvolutionBwdFilterAlgoPerf_t *perf, void *ws, size_t ws_bytes);
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo, size_t *bytes);
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t dx, cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes);
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnFilterDescriptor_t dw, cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes);
cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
    const void *w, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
    const void *beta, cudnnTensorDescriptor_t yd, void *y);
cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t h, const void *alpha, cudnnFilterDescriptor_t wd, const void *w, cudnnTensorDescriptor_t dyd,
    const void *dy, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdDataAlgo_t algo, void *ws,
    size_t ws_bytes, const void *beta, cudnnTensorDescriptor_t dxd, void *dx);
cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x, cudnnTensorDescriptor_t dyd,
    const void *dy, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
    size_t ws_bytes, const void *beta, cudnnFilterDescriptor_t dwd, void *dw);
cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
    const void *w, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
    const void *alpha2, cudnnTensorDescriptor_t zd, const void *z, cudnnTensorDescriptor_t biasd,
    const void *bias, cudnnActivationDescriptor_t act, cudnnTensorDescriptor_t yd, void *y);

#endif
