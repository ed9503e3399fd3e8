/* cudnn_desc.c - TEST DOUBLE of cuDNN's tensor, filter and activation
 * descriptors.  This is NOT NVIDIA's library.  Built into
 * libcudnn_cnn.so.9 (the real cuDNN 9 has them in libcudnn_ops.so.9, which
 * the doubles do not have) and into libcudnn_ops_infer.so.8 (as the real
 * cuDNN 8), so that a missing libcudnn_cnn_infer.so.8 is first noticed at
 * the first convolution call, as with the real one.  Descriptors are heap
 * structs (cudnn_int.h); only 4-d NCHW packed tensors are modelled. */
#include <stdlib.h>
#include "cudnn_int.h"

CREATE(cudnnCreateTensorDescriptor, cudnnTensorDescriptor_t, TMAGIC)
CREATE(cudnnCreateFilterDescriptor, cudnnFilterDescriptor_t, FMAGIC)
CREATE(cudnnCreateActivationDescriptor, cudnnActivationDescriptor_t, AMAGIC)
DESTROY(cudnnDestroyTensorDescriptor, cudnnTensorDescriptor_t, TMAGIC)
DESTROY(cudnnDestroyFilterDescriptor, cudnnFilterDescriptor_t, FMAGIC)
DESTROY(cudnnDestroyActivationDescriptor, cudnnActivationDescriptor_t, AMAGIC)

API cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                             cudnnDataType_t dtype, int n, int c, int h, int w)
{
    if (!d || d->magic != TMAGIC || n <= 0 || c <= 0 || h <= 0 || w <= 0)
        return BAD("bad tensor descriptor or dimensions");
    *d = (struct cudnnTensorStruct){ TMAGIC, 1, format, dtype, n, c, h, w };
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int req, cudnnDataType_t *dtype,
                                             int *nb, int dim[], int str[])
{
    int v[4], s[4];

    if (!d || d->magic != TMAGIC || !d->set || !dtype || !nb || req < 0)
        return BAD("bad tensor descriptor");
    v[0] = d->n, v[1] = d->c, v[2] = d->h, v[3] = d->w;
    s[3] = 1, s[2] = d->w, s[1] = d->h * d->w, s[0] = d->c * d->h * d->w;
    *dtype = d->dtype;
    *nb = 4;
    for (int i = 0; i < req && i < 4; i++) {
        if (dim)
            dim[i] = v[i];
        if (str)
            str[i] = s[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dtype,
                                             cudnnTensorFormat_t format, int k, int c, int h, int w)
{
    if (!d || d->magic != FMAGIC || k <= 0 || c <= 0 || h <= 0 || w <= 0)
        return BAD("bad filter descriptor or dimensions");
    *d = (struct cudnnFilterStruct){ FMAGIC, 1, dtype, format, k, c, h, w };
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d, int req, cudnnDataType_t *dtype,
                                             cudnnTensorFormat_t *format, int *nb, int dim[])
{
    if (!d || d->magic != FMAGIC || !d->set || !dtype || !format || !nb || req < 0)
        return BAD("bad filter descriptor");
    *dtype = d->dtype;
    *format = d->format;
    *nb = 4;
    int v[4] = { d->k, d->c, d->r, d->s };
    for (int i = 0; i < req && i < 4 && dim; i++)
        dim[i] = v[i];
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                               cudnnNanPropagation_t nan, double coef)
{
    if (!d || d->magic != AMAGIC || mode < 0 || mode > 6)
        return BAD("bad activation descriptor or mode");
    d->mode = mode, d->nan = nan, d->coef = coef;
    return CUDNN_STATUS_SUCCESS;
}

