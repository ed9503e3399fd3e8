/* dlflags.c - the flags a program gives dlopen/dlmopen reach the loader
 * unchanged: checked by what each flag does, not by the value passed
 * (tests/preload/t_dlflags.sh runs it with and without the shim and compares).
 * Usage: dlflags DIR   (DIR: the flag_* libraries of tests/loader.mk) */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the program's own who(): a library bound to the global scope sees this one */
__attribute__((visibility("default"))) int who(void) { return 1; }

static char path[4096];
static const char *lib(const char *dir, const char *name)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static const char *err(void)
{
    const char *e = dlerror();
    return e ? (strstr(e, ": ") ? strstr(e, ": ") + 2 : e) : "(null)"; /* without the directory */
}

static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, name) != NULL;
    if (f)
        fclose(f);
    return n > 0;
}

static int call(void *h, const char *fn)
{
    int (*f)(void) = h ? (int (*)(void))dlsym(h, fn) : NULL;
    return f ? f() : -1;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    void *h;

    /* RTLD_LAZY: a function that is never called may stay unresolved */
    h = dlopen(lib(dir, "libflag_lazy.so"), RTLD_LAZY);
    printf("RTLD_LAZY, unresolved symbol: %s\n", h ? "loaded" : err());
    h = dlopen(lib(dir, "libflag_lazy2.so"), RTLD_NOW);
    printf("RTLD_NOW, unresolved symbol: %s\n", h ? "loaded" : err());

    /* RTLD_DEEPBIND: the library's own who() before the program's */
    h = dlopen(lib(dir, "libflag_deep.so"), RTLD_NOW | RTLD_DEEPBIND);
    printf("RTLD_DEEPBIND: who() = %d\n", call(h, "ask"));
    h = dlopen(lib(dir, "libflag_deep2.so"), RTLD_NOW);
    printf("without RTLD_DEEPBIND: who() = %d\n", call(h, "ask"));

    /* RTLD_NODELETE: dlclose leaves it loaded, with its state */
    h = dlopen(lib(dir, "libflag_count.so"), RTLD_NOW | RTLD_NODELETE);
    printf("RTLD_NODELETE: bump = %d\n", call(h, "bump"));
    printf("  dlclose = %d\n", dlclose(h));
    h = dlopen(lib(dir, "libflag_count.so"), RTLD_NOW | RTLD_NOLOAD);
    printf("  after dlclose: %s, bump = %d\n", h ? "still loaded" : "gone", call(h, "bump"));
    h = dlopen(lib(dir, "libflag_count2.so"), RTLD_NOW);
    int bumped = call(h, "bump");
    printf("without RTLD_NODELETE: bump = %d, dlclose = %d\n", bumped, dlclose(h));
    h = dlopen(lib(dir, "libflag_count2.so"), RTLD_NOW | RTLD_NOLOAD);
    printf("  after dlclose: %s, mapped = %d\n", h ? "still loaded" : "gone", mapped("libflag_count2.so"));

    /* RTLD_NOLOAD: asks, loads nothing */
    h = dlopen(lib(dir, "libflag_never.so"), RTLD_NOW | RTLD_NOLOAD);
    printf("RTLD_NOLOAD, not loaded: %s, dlerror = %s, mapped = %d\n", h ? "handle" : "NULL", err(),
           mapped("libflag_never.so"));

    /* dlmopen(LM_ID_NEWLM): a namespace of its own, with its own copy */
    void *base = dlopen(lib(dir, "libflag_count3.so"), RTLD_NOW);
    h = dlmopen(LM_ID_NEWLM, lib(dir, "libflag_count3.so"), RTLD_NOW);
    Lmid_t lm = LM_ID_BASE;
    int info = h ? dlinfo(h, RTLD_DI_LMID, &lm) : -1;
    printf("dlmopen(LM_ID_NEWLM): %s, dlinfo = %d, new namespace = %s\n", h ? "handle" : err(), info,
           lm != LM_ID_BASE ? "yes" : "no");
    int b1 = call(base, "bump"), b2 = call(base, "bump");
    printf("  bump in the base namespace = %d, %d; in the new one = %d\n", b1, b2, call(h, "bump"));
    void *a = base ? dlsym(base, "bump") : NULL, *b = h ? dlsym(h, "bump") : NULL;
    printf("  two copies: %s\n", a && b && a != b ? "yes" : "no");
    return 0;
}
