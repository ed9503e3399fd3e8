/* hookcall_main.h - shared by hookcall_main.c and the hookcall.c that
 * gen_hookcall.py writes from shim/hooks.def (tests/preload/t_hook_routes.sh). */
#ifndef CGTEST_HOOKCALL_H
#define CGTEST_HOOKCALL_H
#include <stddef.h>
#include "cuda_double.h"
#include "cudnn_double.h"

struct hook {
    const char *name, *family, *soname;
    long (*plt)(void *unused); /* calls the function by name: the PLT */
    long (*ptr)(void *fn);     /* calls it through fn */
};
extern const struct hook hooks[];
extern const size_t n_hooks;

/* zeroed out-parameters, one per parameter position */
extern char scratch[24][1 << 16];
/* objects made on the doubles before the calls */
extern cudnnHandle_t g_handle;
extern cudnnTensorDescriptor_t g_tensor;
extern cudnnFilterDescriptor_t g_filter;
extern cudnnConvolutionDescriptor_t g_conv;
extern cudnnActivationDescriptor_t g_act;
#endif
