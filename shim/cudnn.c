/* cudnn.c - cuDNN handle and legacy convolution API wrappers. */
#include "cg.h"

cudnnStatus_t cg_w_cudnnCreate(cg_t_cudnnCreate real, cudnnHandle_t *handle)
{
    cudnnStatus_t r = real(handle);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnCreate, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnDestroy(cg_t_cudnnDestroy real, cudnnHandle_t handle)
{
    cudnnStatus_t r = real(handle);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnDestroy, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnGetConvolutionForwardAlgorithm_v7(cg_t_cudnnGetConvolutionForwardAlgorithm_v7 real, cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    cudnnStatus_t r = real(h, x, w, conv, y, requested, returned, perf);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnGetConvolutionForwardAlgorithm_v7, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnGetConvolutionBackwardDataAlgorithm_v7(cg_t_cudnnGetConvolutionBackwardDataAlgorithm_v7 real, cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dx, int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
    cudnnStatus_t r = real(h, w, dy, conv, dx, requested, returned, perf);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnGetConvolutionBackwardDataAlgorithm_v7, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnGetConvolutionBackwardFilterAlgorithm_v7(cg_t_cudnnGetConvolutionBackwardFilterAlgorithm_v7 real, cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dw, int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
    cudnnStatus_t r = real(h, x, dy, conv, dw, requested, returned, perf);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnGetConvolutionBackwardFilterAlgorithm_v7, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnFindConvolutionForwardAlgorithm(cg_t_cudnnFindConvolutionForwardAlgorithm real, cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    cudnnStatus_t r = real(h, x, w, conv, y, requested, returned, perf);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnFindConvolutionForwardAlgorithm, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnFindConvolutionBackwardDataAlgorithm(cg_t_cudnnFindConvolutionBackwardDataAlgorithm real, cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dx, int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
    cudnnStatus_t r = real(h, w, dy, conv, dx, requested, returned, perf);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnFindConvolutionBackwardDataAlgorithm, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnFindConvolutionBackwardFilterAlgorithm(cg_t_cudnnFindConvolutionBackwardFilterAlgorithm real, cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dw, int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
    cudnnStatus_t r = real(h, x, dy, conv, dw, requested, returned, perf);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnFindConvolutionBackwardFilterAlgorithm, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnFindConvolutionForwardAlgorithmEx(cg_t_cudnnFindConvolutionForwardAlgorithmEx real, cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t yd, void *y, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    cudnnStatus_t r = real(h, xd, x, wd, w, conv, yd, y, requested, returned, perf, ws, ws_bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnFindConvolutionForwardAlgorithmEx, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnFindConvolutionBackwardDataAlgorithmEx(cg_t_cudnnFindConvolutionBackwardDataAlgorithmEx real, cudnnHandle_t h, cudnnFilterDescriptor_t wd, const void *w, cudnnTensorDescriptor_t dyd, const void *dy, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dxd, void *dx, int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    cudnnStatus_t r = real(h, wd, w, dyd, dy, conv, dxd, dx, requested, returned, perf, ws, ws_bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnFindConvolutionBackwardDataAlgorithmEx, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnFindConvolutionBackwardFilterAlgorithmEx(cg_t_cudnnFindConvolutionBackwardFilterAlgorithmEx real, cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnTensorDescriptor_t dyd, const void *dy, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dwd, void *dw, int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    cudnnStatus_t r = real(h, xd, x, dyd, dy, conv, dwd, dw, requested, returned, perf, ws, ws_bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnFindConvolutionBackwardFilterAlgorithmEx, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnGetConvolutionForwardWorkspaceSize(cg_t_cudnnGetConvolutionForwardWorkspaceSize real, cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo, size_t *bytes)
{
    cudnnStatus_t r = real(h, x, w, conv, y, algo, bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnGetConvolutionForwardWorkspaceSize, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnGetConvolutionBackwardDataWorkspaceSize(cg_t_cudnnGetConvolutionBackwardDataWorkspaceSize real, cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dx, cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes)
{
    cudnnStatus_t r = real(h, w, dy, conv, dx, algo, bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnGetConvolutionBackwardDataWorkspaceSize, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnGetConvolutionBackwardFilterWorkspaceSize(cg_t_cudnnGetConvolutionBackwardFilterWorkspaceSize real, cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t dw, cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes)
{
    cudnnStatus_t r = real(h, x, dy, conv, dw, algo, bytes);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnGetConvolutionBackwardFilterWorkspaceSize, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnConvolutionForward(cg_t_cudnnConvolutionForward real, cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes, const void *beta, cudnnTensorDescriptor_t yd, void *y)
{
    cudnnStatus_t r = real(h, alpha, xd, x, wd, w, conv, algo, ws, ws_bytes, beta, yd, y);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnConvolutionForward, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnConvolutionBackwardData(cg_t_cudnnConvolutionBackwardData real, cudnnHandle_t h, const void *alpha, cudnnFilterDescriptor_t wd, const void *w, cudnnTensorDescriptor_t dyd, const void *dy, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t ws_bytes, const void *beta, cudnnTensorDescriptor_t dxd, void *dx)
{
    cudnnStatus_t r = real(h, alpha, wd, w, dyd, dy, conv, algo, ws, ws_bytes, beta, dxd, dx);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnConvolutionBackwardData, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnConvolutionBackwardFilter(cg_t_cudnnConvolutionBackwardFilter real, cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x, cudnnTensorDescriptor_t dyd, const void *dy, cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t ws_bytes, const void *beta, cudnnFilterDescriptor_t dwd, void *dw)
{
    cudnnStatus_t r = real(h, alpha, xd, x, dyd, dy, conv, algo, ws, ws_bytes, beta, dwd, dw);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnConvolutionBackwardFilter, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnConvolutionBiasActivationForward(cg_t_cudnnConvolutionBiasActivationForward real, cudnnHandle_t h, const void *alpha1, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes, const void *alpha2, cudnnTensorDescriptor_t zd, const void *z, cudnnTensorDescriptor_t biasd, const void *bias, cudnnActivationDescriptor_t act, cudnnTensorDescriptor_t yd, void *y)
{
    cudnnStatus_t r = real(h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, alpha2, zd, z, biasd, bias, act, yd, y);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnConvolutionBiasActivationForward, (long long)r);
    return r;
}
