/* cudnn_dispatch.c - TEST DOUBLE of cuDNN's dispatcher library,
 * libcudnn.so.9 (or, with -DCGTEST_CUDNN8, libcudnn.so.8).  This is NOT
 * NVIDIA's library.
 *
 * Like real cuDNN 9.19 (seen with LD_DEBUG=files and gdb on dlopen):
 *  - no DT_NEEDED on any sub-library, RUNPATH $ORIGIN;
 *  - each exported function, at its FIRST call, dlopen()s its sub-library by
 *    bare name, RTLD_NOW, trying libcudnn_graph.so.9.1.0, .so.9.1, .so.9
 *    (the first two do not exist: benign probes), then .so; it never
 *    dlclose()s, so every function's first call adds one reference and
 *    one set of probes; then dlsym(subhandle, name) and the pointer is kept.
 *    The caller of dlopen is this library, so its RUNPATH ($ORIGIN) is the
 *    one searched (after LD_LIBRARY_PATH);
 *  - nothing loadable: "Unable to load any of {...}" and "Invalid handle.
 *    Cannot load symbol NAME" on stderr (real cuDNN 9 messages).
 * cuDNN 8 (libcudnn.so.8): "libcudnn_ops_infer.so.8" / "libcudnn_cnn_infer.so.8"
 * by bare name, and the famous "Could not load library
 * libcudnn_cnn_infer.so.8. Error: <dlerror>" on stderr.
 * The real libraries then abort(); the double returns
 * SUBLIBRARY_LOADING_FAILED (1008; 8: NOT_INITIALIZED, 1), or 0 / a status
 * name for size_t / string calls, unless CGTEST_CUDNN_ABORT=1. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "cudnn_double.h"

#define EXPORT __attribute__((visibility("default")))
enum { GRAPH, CNN };

#ifdef CGTEST_CUDNN8
#define OPS GRAPH /* libcudnn_ops_infer.so.8 */
#define LOAD_FAILED CUDNN8_STATUS_NOT_INITIALIZED
static const char *const names[2][4] = {
    { "libcudnn_ops_infer.so.8" },
    { "libcudnn_cnn_infer.so.8" },
};
#else
#define OPS CNN
#define LOAD_FAILED CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED
static const char *const names[2][4] = {
    { "libcudnn_graph.so.9.1.0", "libcudnn_graph.so.9.1", "libcudnn_graph.so.9", "libcudnn_graph.so" },
    { "libcudnn_cnn.so.9.1.0", "libcudnn_cnn.so.9.1", "libcudnn_cnn.so.9", "libcudnn_cnn.so" },
};
#endif

static void *resolve(void **slot, int lib, const char *fn)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *h = NULL;
    const char *err = NULL;
    int i;

    if (f)
        return f;
    for (i = 0; i < 4 && names[lib][i] && !h; i++)
        if (!(h = dlopen(names[lib][i], RTLD_NOW)))
            err = dlerror();
    if (!h) {
#ifdef CGTEST_CUDNN8
        fprintf(stderr, "Could not load library %s. Error: %s\n", names[lib][0], err);
#else
        (void)err;
        fprintf(stderr, "Unable to load any of {%s, %s, %s, %s}\nInvalid handle. Cannot load symbol %s\n",
                names[lib][0], names[lib][1], names[lib][2], names[lib][3], fn);
#endif
    } else if (!(f = dlsym(h, fn))) {
        fprintf(stderr, "Could not load symbol %s. Error: %s\n", fn, dlerror());
    }
    if (!f && getenv("CGTEST_CUDNN_ABORT") && *getenv("CGTEST_CUDNN_ABORT") == '1')
        abort();
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
}

/* One exported stub per line of cudnn_api.def. */
#define API(lib, ret, fail, name, params, args)                                  \
    EXPORT ret name params                                                       \
    {                                                                            \
        static void *cgt_slot;                                                   \
        ret (*cgt_fn) params = (ret (*) params)resolve(&cgt_slot, lib, #name);   \
        if (!cgt_fn)                                                             \
            return fail;                                                         \
        return cgt_fn args;                                                      \
    }
#ifdef CGTEST_CUDNN8
#define API9(...)
#else
#define API9(...) API(__VA_ARGS__)
#endif
#include "cudnn_api.def"

#ifndef CGTEST_CUDNN8
EXPORT void cudnnGetLastErrorString(char *message, size_t max_size)
{
    static void *slot;
    void (*f)(char *, size_t) = (void (*)(char *, size_t))resolve(&slot, GRAPH, "cudnnGetLastErrorString");

    if (f)
        f(message, max_size);
    else if (message && max_size)
        message[0] = 0;
}
#endif
