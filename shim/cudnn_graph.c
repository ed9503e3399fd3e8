/* cudnn_graph.c - cuDNN graph (backend) API wrappers. */
#include "cg.h"

cudnnStatus_t cg_w_cudnnBackendCreateDescriptor(cg_t_cudnnBackendCreateDescriptor real, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *desc)
{
    cudnnStatus_t r = real(type, desc);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnBackendCreateDescriptor, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnBackendDestroyDescriptor(cg_t_cudnnBackendDestroyDescriptor real, cudnnBackendDescriptor_t desc)
{
    cudnnStatus_t r = real(desc);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnBackendDestroyDescriptor, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnBackendInitialize(cg_t_cudnnBackendInitialize real, cudnnBackendDescriptor_t desc)
{
    cudnnStatus_t r = real(desc);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnBackendInitialize, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnBackendFinalize(cg_t_cudnnBackendFinalize real, cudnnBackendDescriptor_t desc)
{
    cudnnStatus_t r = real(desc);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnBackendFinalize, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnBackendSetAttribute(cg_t_cudnnBackendSetAttribute real, cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void *elements)
{
    cudnnStatus_t r = real(desc, name, type, count, elements);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnBackendSetAttribute, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnBackendGetAttribute(cg_t_cudnnBackendGetAttribute real, cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t requested, int64_t *count, void *elements)
{
    cudnnStatus_t r = real(desc, name, type, requested, count, elements);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnBackendGetAttribute, (long long)r);
    return r;
}
cudnnStatus_t cg_w_cudnnBackendExecute(cg_t_cudnnBackendExecute real, cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t variant_pack)
{
    cudnnStatus_t r = real(h, plan, variant_pack);
    if (CG_UNLIKELY(r != 0))
        cg_hook_failed(CG_H_cudnnBackendExecute, (long long)r);
    return r;
}
