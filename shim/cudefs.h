/* cudefs.h - convguard's own declarations of the few CUDA, cuDNN and NVML
 * types, constants and prototypes it needs.
 *
 * Why our own: the shim must build with gcc and make alone, on a machine with
 * no CUDA toolkit.  Every layout here is checked against the real headers by
 * tests/unit/check_cudefs.c when /usr/local/cuda/include is present.
 * Only the ABI matters (sizes, values, argument order); the names follow the
 * vendor's so that code reads like the documentation. */
#ifndef CONVGUARD_CUDEFS_H
#define CONVGUARD_CUDEFS_H

#include <stddef.h>
#include <stdint.h>

/* ---- cuDNN (values of cuDNN 9; cuDNN 8 numbering is translated in cudnn.c) */
typedef int cudnnStatus_t;
#define CUDNN_STATUS_SUCCESS 0
#define CUDNN_STATUS_NOT_INITIALIZED 1001
#define CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH 1002
#define CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED 1008
#define CUDNN_STATUS_BAD_PARAM 2000
#define CUDNN_STATUS_NOT_SUPPORTED 3000
#define CUDNN_STATUS_INTERNAL_ERROR 4000
#define CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED 4003
#define CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED 4004
#define CUDNN_STATUS_ALLOC_FAILED CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED
#define CUDNN_STATUS_EXECUTION_FAILED 5000
/* cuDNN 8 numbering (libcudnn.so.8) */
#define CUDNN8_STATUS_NOT_INITIALIZED 1
#define CUDNN8_STATUS_ALLOC_FAILED 2
#define CUDNN8_STATUS_BAD_PARAM 3
#define CUDNN8_STATUS_INTERNAL_ERROR 4
#define CUDNN8_STATUS_NOT_SUPPORTED 9

typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
typedef struct cudnnActivationStruct *cudnnActivationDescriptor_t;
typedef void *cudnnBackendDescriptor_t;

typedef int cudnnDataType_t;
typedef int cudnnTensorFormat_t;
typedef int cudnnMathType_t;
typedef int cudnnDeterminism_t;
typedef int cudnnConvolutionMode_t;
typedef int cudnnConvolutionFwdAlgo_t;
typedef int cudnnConvolutionBwdDataAlgo_t;
typedef int cudnnConvolutionBwdFilterAlgo_t;
typedef int cudnnBackendDescriptorType_t;
typedef int cudnnBackendAttributeName_t;
typedef int cudnnBackendAttributeType_t;

/* The three perf structs share one layout (cudnn_cnn_v9.h). */
typedef struct {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} cudnnConvolutionFwdAlgoPerf_t;
typedef cudnnConvolutionFwdAlgoPerf_t cudnnConvolutionBwdDataAlgoPerf_t;
typedef cudnnConvolutionFwdAlgoPerf_t cudnnConvolutionBwdFilterAlgoPerf_t;

#define CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR 1
#define CUDNN_BACKEND_ENGINE_DESCRIPTOR 2
#define CUDNN_BACKEND_ENGINECFG_DESCRIPTOR 3
#define CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR 4
#define CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR 5
#define CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR 10
#define CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR 11
#define CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR 12
#define CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR 15
#define CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR 16
#define CUDNN_BACKEND_TENSOR_DESCRIPTOR 17
#define CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR 19

#define CUDNN_ATTR_ENGINEHEUR_MODE 200
#define CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH 201
#define CUDNN_ATTR_ENGINEHEUR_RESULTS 202
#define CUDNN_ATTR_ENGINECFG_ENGINE 300
#define CUDNN_ATTR_ENGINECFG_KNOB_CHOICES 302
#define CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE 303
#define CUDNN_ATTR_EXECUTION_PLAN_HANDLE 400
#define CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG 401
#define CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE 402
#define CUDNN_ATTR_OPERATIONGRAPH_HANDLE 800
#define CUDNN_ATTR_OPERATIONGRAPH_OPS 801
#define CUDNN_ATTR_TENSOR_DATA_TYPE 901
#define CUDNN_ATTR_TENSOR_DIMENSIONS 902
#define CUDNN_ATTR_TENSOR_UNIQUE_ID 906
#define CUDNN_ATTR_VARIANT_PACK_WORKSPACE 1003
#define CUDNN_ATTR_ENGINE_OPERATION_GRAPH 1300
#define CUDNN_ATTR_ENGINE_GLOBAL_INDEX 1301

/* more of the graph (backend) API, for the graph layer (cudnn_graph.c) */
#define CUDNN_BACKEND_POINTWISE_DESCRIPTOR 0
#define CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR 7
#define CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR 13
#define CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR 43 /* the last type of cuDNN 9.19 */
#define CUDNN_ATTR_CONVOLUTION_COMP_TYPE 100
#define CUDNN_ATTR_CONVOLUTION_CONV_MODE 101
#define CUDNN_ATTR_CONVOLUTION_DILATIONS 102
#define CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES 103
#define CUDNN_ATTR_CONVOLUTION_POST_PADDINGS 104
#define CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS 105
#define CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS 106
#define CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE 600
#define CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE 601
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC 702
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W 703
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X 704
#define CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y 705
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC 708
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W 709
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX 710
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY 711
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC 714
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW 715
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X 716
#define CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY 717
#define CUDNN_ATTR_OPERATION_POINTWISE_XDESC 751
#define CUDNN_ATTR_OPERATION_POINTWISE_BDESC 752
#define CUDNN_ATTR_OPERATION_POINTWISE_YDESC 753
#define CUDNN_ATTR_OPERATION_POINTWISE_DXDESC 756
#define CUDNN_ATTR_OPERATION_POINTWISE_DYDESC 757
#define CUDNN_ATTR_OPERATION_POINTWISE_TDESC 758
#define CUDNN_ATTR_TENSOR_IS_VIRTUAL 907
#define CUDNN_ATTR_OPERATION_MATMUL_ADESC 1520
#define CUDNN_ATTR_OPERATION_MATMUL_BDESC 1521
#define CUDNN_ATTR_OPERATION_MATMUL_CDESC 1522
#define CUDNN_TYPE_BOOLEAN 2
#define CUDNN_TYPE_KNOB_TYPE 9
typedef struct CUgraph_st *cudaGraph_t; /* cudnnBackendPopulateCudaGraph */

#define CUDNN_TYPE_HANDLE 0
#define CUDNN_TYPE_DATA_TYPE 1
#define CUDNN_TYPE_INT64 3
#define CUDNN_TYPE_VOID_PTR 6
#define CUDNN_TYPE_BACKEND_DESCRIPTOR 15

/* ---- CUDA runtime */
typedef int cudaError_t;
#define cudaSuccess 0
#define cudaErrorMemoryAllocation 2
#define cudaErrorInitializationError 3
#define cudaErrorInsufficientDriver 35
#define cudaErrorNoDevice 100
#define cudaErrorSharedObjectSymbolNotFound 302
#define cudaErrorUnknown 999
typedef struct CUstream_st *cudaStream_t;
typedef int cudaDriverEntryPointQueryResult; /* enum in the real header */

/* ---- CUDA driver */
typedef int CUresult;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND 302
#define CUDA_ERROR_NOT_FOUND 500
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 on 64-bit hosts */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef uint64_t cuuint64_t;
typedef int CUdriverProcAddressQueryResult;
typedef int CUdevice_attribute;
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
struct CUmemAllocationProp_st; /* only passed through */
typedef struct CUmod_st *CUmodule;
typedef struct CUlib_st *CUlibrary;
typedef int CUjit_option;     /* enum in the real header: only passed through */
typedef int CUlibraryOption;  /* enum in the real header: only passed through */
#define CUDA_ERROR_NO_BINARY_FOR_GPU 209
#define CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
/* Error Log Management (CUDA 12.9+): the driver's own error messages (drvlog.c) */
typedef int CUlogLevel; /* enum CUlogLevel_enum in the real header (same size, checked) */
#define CU_LOG_LEVEL_ERROR 0
#define CU_LOG_LEVEL_WARNING 1
typedef struct CUlogsCallbackEntry_st *CUlogsCallbackHandle;
typedef void (*CUlogsCallback)(void *data, CUlogLevel logLevel, char *message, size_t length);
CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void *userData, CUlogsCallbackHandle *callback_out);
CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback);

/* ---- NVML (loaded lazily, only on failures) */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t; /* the _v2 layout, used by nvmlDeviceGetComputeRunningProcesses_v3 */

#endif
