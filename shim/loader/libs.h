/* libs.h - the table of CUDA-family libraries seen in this process (libs.c)
 * and the search-order listing used when a load fails (search.c). */
#ifndef CONVGUARD_LIBS_H
#define CONVGUARD_LIBS_H

#include <sys/stat.h>

#include "cg.h"

#define CG_FAM_OTHER CG_NFAMILIES /* traced, but not a hooked family (cuBLAS, NVRTC, NVML...) */
#define CG_MAX_LIBS 192

struct cg_lib {
    uintptr_t base;
    uintptr_t start, end;
    char path[512];
    char soname[96];
    int family;
    dev_t dev;
    ino_t ino;
    off_t size;
    long long mtime;
    bool unloaded;
    bool replaced_reported;
    long long version;      /* the library's own version number, -1 unknown */
    long long built_for;    /* cuDNN: cudnnGetCudartVersion, -1 unknown */
    const char *version_source; /* how version was read (versions.c), NULL: asked the library */
};

/* at start: fork handlers, and what a recorded libcuda.so.1 is handed to (its lib event's "driver_log") */
void cg_libs_init(const char *(*on_driver)(const struct cg_obj *o));

/* loader.c -> libs.c */
/* added: the dlopen mapped objects that were not there before (loader.c) */
void cg_libs_after_open(const char *file, int flags, const void *caller, void *handle, bool traced_name, bool added);
void cg_libs_open_failed(const char *file, int flags, const void *caller, const char *err);
void cg_libs_after_close(uintptr_t base);
void cg_libs_step_aside(const char *name, void *real, void *first, const char *route);

/* Visit every library still mapped, under the table's lock. */
void cg_libs_each(void (*fn)(struct cg_lib *l, void *arg), void *arg);
struct cg_lib *cg_libs_current(void); /* the last one recorded (versions.c, while recording it), NULL: none */
int cg_libs_unresolved_failures(void);
/* The last written, still unresolved load failure of a library (stem
 * "libcuda.so"): the seq of its dlopen event and its error text. */
bool cg_libs_load_failure(const char *stem, uint64_t *seq, char *err, size_t cap);
void cg_libs_unresolved_events(void); /* at exit: candidates of loads that never succeeded */
uint64_t cg_libs_repeats(void);

/* search.c: appends "candidates":[...] for a failed load of `file` by `caller` */
void cg_search_candidates(struct cg_ev *e, const char *file, const void *caller);
/* search.c: a library recorded from a folder of LD_LIBRARY_PATH: appends
 * "shadowed":[{path, source}] for the copies of its soname in the RUNPATH of
 * the object that needed it (which lost to LD_LIBRARY_PATH), if any */
void cg_search_shadowed(struct cg_ev *e, const char *loaded, const char *soname, const struct cg_obj *needer);
/* "libcudnn_graph.so.9.19.0" -> "libcudnn_graph.so" (stem) and "9.19.0" (version) */
size_t cg_lib_stem(const char *file, char *out, size_t cap);
const char *cg_lib_name_version(const char *file);
#endif
