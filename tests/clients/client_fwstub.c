/* client_fwstub.c - loads a framework with its own CUDA stubs (test client).
 *
 * Usage: client_fwstub MODE LIB
 *   global  dlopen(LIB = libfwuser.so, RTLD_NOW | RTLD_GLOBAL), as Python
 *           loads TensorFlow's _pywrap_tensorflow_internal.so: the stub
 *           library (a dependency) joins the global scope; call fwuser_run
 *   local   the same RTLD_LOCAL (a JAX-like plugin): the stubs are found only
 *           in the library's own scope
 *   self    dlopen(LIB = libfwstub.so, RTLD_NOW | RTLD_GLOBAL) and call its
 *           own fwstub_run: the library calls its own definitions (what
 *           libtensorflow_framework.so.2 does)
 *   two     LIB and LIB2 (libfwuser.so, libfwuser2.so: two frameworks, each
 *           with its own stub library) both RTLD_LOCAL: each must reach its own
 *           stubs (libfwstub2.so answers a missing driver with 999)
 * Without argument-LIB it is linked: client_fwstub_linked has libfwstub.so as
 * DT_NEEDED and runs the sequence from the main program (main_run).
 * Then the sorted shared objects mapped (common.h). */
#include "common.h"

#ifdef FWSTUB_LINKED
int main_run(void);
int main(void)
{
    int r = main_run();
    print_maps();
    return r;
}
#else
int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s global|local|self LIB\n", argv[0]);
        return 2;
    }
    int global = strcmp(argv[1], "local") != 0 && strcmp(argv[1], "two") != 0;
    if (!strcmp(argv[1], "two")) {
        void *h1 = argc > 3 ? dlopen(argv[2], RTLD_NOW | RTLD_LOCAL) : NULL;
        void *h2 = argc > 3 ? dlopen(argv[3], RTLD_NOW | RTLD_LOCAL) : NULL;
        int (*r1)(void) = h1 ? (int (*)(void))dlsym(h1, "fwuser_run") : NULL;
        int (*r2)(void) = h2 ? (int (*)(void))dlsym(h2, "fwuser_run") : NULL;
        if (!r1 || !r2) {
            printf("two: %s\n", dlerr());
            return 1;
        }
        /* interleaved: each call site keeps its own answer */
        for (int i = 0; i < 2; i++) {
            printf("== first framework\n");
            r1();
            printf("== second framework\n");
            r2();
        }
        print_maps();
        return 0;
    }
    void *h = dlopen(argv[2], RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    printf("dlopen(%s) = %s\n", argv[1], h ? "ok" : dlerr());
    if (!h)
        return 1;
    int (*run)(void) = (int (*)(void))dlsym(h, strcmp(argv[1], "self") ? "fwuser_run" : "fwstub_run");
    if (!run) {
        printf("dlsym: %s\n", dlerr());
        return 1;
    }
    int r = run();
    print_maps();
    return r;
}
#endif
