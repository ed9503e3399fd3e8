/* A C program using cuDNN (as TensorFlow-like C++ code does) with a filter of 32 input channels
 * for an input of 64: cudnnGetConvolution2dForwardOutputDim returns CUDNN_STATUS_BAD_PARAM,
 * printed with cudnnGetErrorString.  cuDNN is the wheel's (CG2_CUDNN, set by record.sh), loaded
 * with dlopen as frameworks do; no cuDNN headers needed. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int st;
typedef void *H;

int main(void)
{
    const char *path = getenv("CG2_CUDNN") && *getenv("CG2_CUDNN") ? getenv("CG2_CUDNN") : "libcudnn.so.9";
    void *l = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!l) {
        fprintf(stderr, "Could not load library %s: %s\n", path, dlerror());
        return 1;
    }
    st (*create)(H *) = (st(*)(H *))dlsym(l, "cudnnCreate");
    st (*ctensor)(H *) = (st(*)(H *))dlsym(l, "cudnnCreateTensorDescriptor");
    st (*stensor)(H, int, int, int, int, int, int) = (st(*)(H, int, int, int, int, int, int))dlsym(l, "cudnnSetTensor4dDescriptor");
    st (*cfilter)(H *) = (st(*)(H *))dlsym(l, "cudnnCreateFilterDescriptor");
    st (*sfilter)(H, int, int, int, int, int, int) = (st(*)(H, int, int, int, int, int, int))dlsym(l, "cudnnSetFilter4dDescriptor");
    st (*cconv)(H *) = (st(*)(H *))dlsym(l, "cudnnCreateConvolutionDescriptor");
    st (*sconv)(H, int, int, int, int, int, int, int, int) =
        (st(*)(H, int, int, int, int, int, int, int, int))dlsym(l, "cudnnSetConvolution2dDescriptor");
    st (*outdim)(H, H, H, int *, int *, int *, int *) =
        (st(*)(H, H, H, int *, int *, int *, int *))dlsym(l, "cudnnGetConvolution2dForwardOutputDim");
    const char *(*errstr)(st) = (const char *(*)(st))dlsym(l, "cudnnGetErrorString");
    if (!create || !ctensor || !stensor || !cfilter || !sfilter || !cconv || !sconv || !outdim || !errstr) {
        fprintf(stderr, "Invalid handle. Cannot load symbol from %s\n", path);
        return 1;
    }
    H h, x, w, c;
    st s = create(&h);
    if (s) {
        fprintf(stderr, "cudnnCreate failed: %s\n", errstr(s));
        return 1;
    }
    enum { NCHW = 0, FLOAT = 0, CROSS_CORRELATION = 1 };
    ctensor(&x);
    stensor(x, NCHW, FLOAT, 8, 64, 56, 56);
    cfilter(&w);
    sfilter(w, FLOAT, NCHW, 64, 32, 3, 3); /* 32 input channels: the layer was built for another input */
    cconv(&c);
    sconv(c, 1, 1, 1, 1, 1, 1, CROSS_CORRELATION, FLOAT);
    int n, k, oh, ow;
    s = outdim(c, x, w, &n, &k, &oh, &ow);
    if (s) {
        fprintf(stderr, "cudnnGetConvolution2dForwardOutputDim failed: %s\n", errstr(s));
        return 1;
    }
    printf("output %dx%dx%dx%d\n", n, k, oh, ow);
    return 0;
}
