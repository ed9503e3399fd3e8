/* dlerrno.c - errno after each loader call and after each dlerror(), for
 * t_loader_edges.sh to compare with and without the shim (issue 26 item
 * 12: glibc's dlerror() sets errno from the failure it formats).
 *   dlerrno DOUBLES_DIR [CUDNN_LIB]
 * Each step sets errno to 1234 first, then prints what the call returned,
 * errno after it, dlerror()'s text and errno after that, twice.  With
 * CUDNN_LIB (a real or a double libcudnn.so.9) it also calls cuDNN functions
 * whose first call loads a sub-library, and prints errno after each. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void err_twice(void)
{
    for (int i = 0; i < 2; i++) {
        errno = 1234;
        const char *m = dlerror();
        printf("  dlerror: %s; errno %d\n", m ? m : "(null)", errno);
    }
}

static void *open_step(const char *what, const char *file, int flags)
{
    errno = 1234;
    void *h = dlopen(file, flags);
    printf("dlopen %s: %s; errno %d\n", what, h ? "handle" : "NULL", errno);
    err_twice();
    return h;
}

static void *sym_step(const char *what, void *h, const char *name)
{
    errno = 1234;
    void *p = dlsym(h, name);
    printf("dlsym %s: %s; errno %d\n", what, p ? "found" : "NULL", errno);
    err_twice();
    return p;
}

/* a dlopen that fails for lack of descriptors (EMFILE) */
static void no_fds_step(const char *file)
{
    struct rlimit old, low;
    getrlimit(RLIMIT_NOFILE, &old);
    low = old;
    low.rlim_cur = 64;
    setrlimit(RLIMIT_NOFILE, &low);
    int fds[64], n = 0;
    while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
        n++;
    errno = 1234;
    void *h = dlopen(file, RTLD_NOW);
    int e = errno;
    errno = 1234;
    const char *m = dlerror();
    int e2 = errno;
    char text[1024]; /* glibc frees its text at the next dlerror() */
    snprintf(text, sizeof text, "%s", m ? m : "(null)");
    errno = 1234;
    const char *m2 = dlerror();
    int e3 = errno;
    while (n > 0)
        close(fds[--n]);
    setrlimit(RLIMIT_NOFILE, &old);
    printf("dlopen without a free descriptor: %s; errno %d\n", h ? "handle" : "NULL", e);
    printf("  dlerror: %s; errno %d\n", text, e2);
    printf("  dlerror: %s; errno %d\n", m2 ? m2 : "(null)", e3);
}

typedef int (*create_fn)(void **);
typedef int (*destroy_fn)(void *);
typedef int (*backend_create_fn)(int, void **);

static void cudnn_steps(const char *lib)
{
    void *h = open_step("cuDNN", lib, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        return;
    static const char *const names[] = {"cudnnCreate", "cudnnCreateTensorDescriptor",
                                        "cudnnCreateConvolutionDescriptor", "cudnnCreateFilterDescriptor",
                                        "cudnnCreateRNNDescriptor", "cudnnCreateAttnDescriptor",
                                        "cudnnCreateCTCLossDescriptor", "cudnnCreateRNNDataDescriptor"};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            create_fn f = (create_fn)dlsym(h, names[i]);
            if (!f)
                continue;
            void *obj = NULL;
            errno = 1234;
            int st = f(&obj);
            printf("%s (call %d): status %d; errno %d\n", names[i], round + 1, st, errno);
            err_twice();
        }
        backend_create_fn bc = (backend_create_fn)dlsym(h, "cudnnBackendCreateDescriptor");
        if (bc) {
            void *d = NULL;
            errno = 1234;
            int st = bc(3 /* ENGINECFG */, &d);
            printf("cudnnBackendCreateDescriptor (call %d): status %d; errno %d\n", round + 1, st, errno);
            err_twice();
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char path[4096];
    err_twice(); /* before any loader call */
    open_step("missing traced name", "libcudnn_missing_for_test.so.9", RTLD_NOW);
    open_step("missing other name", "libnothing_for_test.so.1", RTLD_NOW);
    open_step("missing path", "/nonexistent/libcuda.so.1", RTLD_NOW);
    open_step("not an ELF file", "/etc/hostname", RTLD_NOW);
    open_step("a directory", "/etc", RTLD_NOW);
    open_step("RTLD_NOLOAD of an unloaded library", "libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    void *m = open_step("libm", "libm.so.6", RTLD_NOW);
    sym_step("missing in libm", m, "no_such_function_for_test");
    sym_step("cos in libm", m, "cos");
    sym_step("RTLD_DEFAULT missing", RTLD_DEFAULT, "no_such_function_for_test");
    sym_step("RTLD_DEFAULT cuInit, no driver loaded", RTLD_DEFAULT, "cuInit");
    sym_step("RTLD_NEXT cuMemAlloc_v2, no driver loaded", RTLD_NEXT, "cuMemAlloc_v2");
    snprintf(path, sizeof path, "%s/cuda/libcuda.so.1", argv[1]);
    no_fds_step(path);
    void *cu = open_step("the driver double", path, RTLD_NOW);
    sym_step("cuInit in the driver", cu, "cuInit");
    sym_step("missing cu name in the driver", cu, "cuNoSuchFunctionForTest");
    errno = 1234;
    int r = dlclose(m);
    printf("dlclose libm: %d; errno %d\n", r, errno);
    err_twice();
    if (argc > 2)
        cudnn_steps(argv[2]);
    return 0;
}
