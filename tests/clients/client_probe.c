/* client_probe.c - symbol-lookup probe (test client).
 *
 * Checks what a program sees of cuDNN and the driver through the dynamic
 * linker when nothing has loaded them, and after libcudnn.so.9 is loaded
 * RTLD_GLOBAL: dlsym(RTLD_DEFAULT / RTLD_NEXT / dlopen(NULL)), dlopen of a
 * library that does not exist, and dlerror() semantics (a second call gives
 * NULL).  A preloaded library that defines cudnnCreate or cuMemAlloc_v2 must
 * not change any of these answers.  LD_LIBRARY_PATH points at the doubles. */
#include "common.h"

static void *lookup(void *where, const char *how, const char *name)
{
    void *p = dlsym(where, name);

    printf("dlsym(%s, \"%s\") = %s\n", how, name, p ? "found" : "NULL");
    printf("dlerror = %s\n", dlerr());
    return p;
}

int main(void)
{
    void *h, *self, *p, *q;
    cudnnHandle_t hd = NULL;
    cudnnStatus_t st;

    setvbuf(stdout, NULL, _IOLBF, 0);
    lookup(RTLD_DEFAULT, "RTLD_DEFAULT", "cudnnCreate");
    lookup(RTLD_DEFAULT, "RTLD_DEFAULT", "cuMemAlloc_v2");
    h = dlopen("libcudnn.so.7", RTLD_NOW);
    printf("dlopen(\"libcudnn.so.7\", RTLD_NOW) = %s\n", h ? "ok" : "NULL");
    printf("dlerror = %s\n", dlerr());
    printf("dlerror again = %s\n", dlerr());
    lookup(RTLD_NEXT, "RTLD_NEXT", "cudnnCreate");

    h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
    printf("dlopen(\"libcudnn.so.9\", RTLD_NOW|RTLD_GLOBAL) = %s\n", h ? "ok" : "NULL");
    printf("dlerror = %s\n", dlerr());
    if (h) {
        p = lookup(RTLD_DEFAULT, "RTLD_DEFAULT", "cudnnCreate");
        q = lookup(h, "libcudnn", "cudnnCreate");
        printf("RTLD_DEFAULT and handle agree: %s\n", p == q ? "yes" : "no");
        if (p) {
            st = ((__typeof__(&cudnnCreate))p)(&hd);
            printf("cudnnCreate through the pointer = %d\n", st);
            if (!st) {
                q = lookup(h, "libcudnn", "cudnnDestroy");
                if (q)
                    printf("cudnnDestroy = %d\n", ((__typeof__(&cudnnDestroy))q)(hd));
            }
        }
        p = lookup(RTLD_NEXT, "RTLD_NEXT", "cudnnCreate");
        q = lookup(h, "libcudnn", "cudnnCreate");
        printf("RTLD_NEXT and handle agree: %s\n", p == q ? "yes" : "no");
        /* the graph library and the driver came in RTLD_LOCAL, from cuDNN */
        lookup(RTLD_DEFAULT, "RTLD_DEFAULT", "cuMemAlloc_v2");
        lookup(RTLD_DEFAULT, "RTLD_DEFAULT", "cgtestCudnnFail");
    }
    self = dlopen(NULL, RTLD_NOW);
    printf("dlopen(NULL, RTLD_NOW) = %s\n", self ? "ok" : "NULL");
    printf("dlerror = %s\n", dlerr());
    if (self) {
        p = lookup(self, "dlopen(NULL)", "cudnnCreate");
        q = h ? dlsym(h, "cudnnCreate") : NULL;
        printf("dlopen(NULL) and handle agree: %s\n", p == q ? "yes" : "no");
        lookup(self, "dlopen(NULL)", "cudnnNoSuchFunction");
    }
    print_maps();
    return 0;
}
