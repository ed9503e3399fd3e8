/* loader.h - the loader layer (loader/README.md): what is loaded and how to
 * reach the real functions.  libc's loader functions and the dlerror() text,
 * reading loaded objects and the shim's copy of the link map, the real
 * functions and what a PLT call would reach, the CUDA-family libraries seen
 * (lib events, versions, search order), crash reports.  Includes only the
 * core's header. */
#ifndef CONVGUARD_LOADER_H
#define CONVGUARD_LOADER_H

#include <sys/stat.h>

#include "core/core.h"

struct dl_phdr_info;
/* ---- loader/dl.c: libc's dynamic-loader functions, and the dlerror() text kept per thread */
struct cg_libc_dl {
    void *(*dlopen)(const char *, int);
    void *(*dlmopen)(long, const char *, int);
    void *(*dlsym)(void *, const char *);
    void *(*dlvsym)(void *, const char *, const char *);
    char *(*dlerror)(void);
    int (*dlclose)(void *);
    /* libc's own, never an interposer's: a sanitizer runtime intercepts it
     * and calls our dlsym before it can forward anything (elf.c) */
    int (*dl_iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
};
extern struct cg_libc_dl cg_dl; /* filled by cg_real_dl_init (real.c) */
/* A dlerror() text the shim had to consume, with the errno glibc's dlerror()
 * set for it (code, 0: none): set (replacing any), keep (unless one is kept
 * already), clear; take hands it to the program's dlerror() once, setting
 * errno as glibc's would.  read: the real dlerror(), its code in *code,
 * errno left as it was. */
void cg_dlerror_clear(void);
void cg_dlerror_set(const char *msg, int code);
void cg_dlerror_keep(const char *msg, int code);
char *cg_dlerror_take(void); /* NULL: none kept */
const char *cg_dlerror_read(int *code);

/* ---- loader/elf.c: reading loaded objects without calling into the dynamic loader */
struct cg_obj {
    uintptr_t base;           /* load bias (l_addr) */
    uintptr_t start, end;     /* lowest and highest mapped address */
    const char *name;         /* dlpi_name: path, "" for the main program */
    const void *dyn;          /* PT_DYNAMIC */
    const void *phdr;
    int phnum;
};
/* Calls fn for every loaded object; stops when fn returns non-zero. */
int cg_elf_each_obj(int (*fn)(const struct cg_obj *o, void *arg), void *arg);
const char *cg_elf_soname(const struct cg_obj *o);
const char *cg_elf_runpath(const struct cg_obj *o, bool *is_rpath);
/* i-th DT_NEEDED entry, NULL past the end */
const char *cg_elf_needed(const struct cg_obj *o, int i);
/* Address of symbol `name` defined by o, with version `ver` (NULL: the default one). */
void *cg_elf_sym(const struct cg_obj *o, const char *name, const char *ver);
/* Does o import `name` (a relocation against that undefined symbol: it calls it through its PLT/GOT)? */
bool cg_elf_imports(const struct cg_obj *o, const char *name);
/* Does o define symbol versions of its own (DT_VERDEF)? */
bool cg_elf_defines_versions(const struct cg_obj *o);
/* How o refers to the undefined symbol `name` (STB_GLOBAL, STB_WEAK), -1: it does not. */
int cg_elf_import_bind(const struct cg_obj *o, const char *name);
/* An address inside o's code holding a `ret` instruction, 0 if none. */
uintptr_t cg_elf_ret_gadget(const struct cg_obj *o);
/* ---- loader/objsnap.c: a copy of the link map that signal handlers can read */
void cg_objsnap_refresh(void); /* at start and after dlopen/dlclose; never in a handler */
void cg_objsnap_after_fork(void);
/* The loaded object holding addr (inside one of its PT_LOAD segments): from
 * the copy, else from the loader (gated against fork); false: none. */
bool cg_objsnap_find_obj(const void *addr, struct cg_obj *out);
/* async-signal-safe: addr's object's path (from the copy) and load address */
bool cg_objsnap_name_at(uintptr_t addr, char *name, size_t cap, uintptr_t *base);
bool cg_objsnap_has_dyn(const void *dyn); /* is the object with this PT_DYNAMIC in the copy? */
uint64_t cg_objsnap_generation(void);     /* changes whenever the copy is refreshed */

/* ---- loader/real.c: finding the real functions, and calling them "as" a caller */
bool cg_real_dl_init(void); /* fills cg_dl from libc's symbol table; false: not all found */
/* Calls fn(a, b, c) so that the dynamic loader sees `caller` as its caller.
 * glibc resolves bare names, $ORIGIN, RTLD_DEFAULT and RTLD_NEXT relative to
 * the return address; this keeps those answers exactly what they would have
 * been without the shim. */
void *cg_call_as(const void *caller, void *fn, void *a, void *b, void *c);
void *cg_call_as_asm(uintptr_t gadget, void *fn, void *a, void *b, void *c); /* callas_x86_64.S */
/* The function of (slot, hook) in the slot's own library (libcuda.so.1,
 * libcudnn.so.9, ...), read from its symbol table; NULL when it is not loaded.
 * What the entries handed out by dlsym/cuGetProcAddress forward to, and what
 * the shim itself calls; not what a PLT caller reaches (bind.c). */
void *cg_real_in_lib(int slot, int hook);
/* Tracing has just started: what cg_real_in_lib found before goes into cg_real
 * (after cg_bind_reset: the PLT answers kept while not tracing are plain forwards). */
void cg_real_promote(void);

/* ---- loader/bind.c: what a call through the PLT would have reached without the shim.
 * cg_plt[s][h]: the slot library's function (cg_real's), when every PLT caller
 * reaches it; cg_plt_plain[s][h]: another definition every PLT caller reaches
 * (a framework's stub, or anything while not tracing), forwarded untouched.
 * NULL in both: the PLT entry's cold path asks cg_bind_plt. */
extern _Atomic(void *) cg_plt[CG_NSLOTS][CG_NHOOKS];
extern _Atomic(void *) cg_plt_plain[CG_NSLOTS][CG_NHOOKS];
/* The definition this caller's reference reaches with the shim left out;
 * *wrap: it is the slot library's, to be wrapped.  NULL: nothing defines it. */
void *cg_bind_plt(int slot, int hook, const void *caller, bool *wrap);
/* Nothing defines it: exits as the loader would, or (weak reference) returns a status. */
long long cg_bind_unbound(int slot, int hook, const void *caller);
/* dlsym(RTLD_DEFAULT, name) from caller, the shim left out (ver: dlvsym's). */
void *cg_bind_lookup(const void *caller, const char *name, const char *ver);
void cg_bind_after_load(void); /* a dlopen added objects */
void cg_bind_reset(void);      /* a dlclose, or tracing started */

/* ---- loader/libs.c: the CUDA-family libraries seen */
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

/* the dynamic-loader entries (routes.c) tell what the program loaded and unloaded;
 * added: the dlopen mapped objects that were not there before */
void cg_libs_after_open(const char *file, int flags, const void *caller, void *handle, bool traced_name, bool added);
void cg_libs_open_failed(const char *file, int flags, const void *caller, const char *err);
void cg_libs_after_close(uintptr_t base);
void cg_libs_step_aside(const char *name, void *real, void *first, const char *route);

/* Visit every library still mapped, under the table's lock. */
void cg_libs_each(void (*fn)(struct cg_lib *l, void *arg), void *arg);
int cg_libs_unresolved_failures(void);
/* The last written, still unresolved load failure of a library (stem
 * "libcuda.so"): the seq of its dlopen event and its error text. */
bool cg_libs_load_failure(const char *stem, uint64_t *seq, char *err, size_t cap);
void cg_libs_unresolved_events(void); /* at exit: candidates of loads that never succeeded */
uint64_t cg_libs_repeats(void);

bool cg_lib_is_traced_name(const char *path);
/* Is this caller one of the traced CUDA-family libraries? family or -1 */
int cg_caller_family(const void *caller);
void cg_libs_scan(const char *reason); /* record objects mapped since the last scan (at start: all complete) */
void cg_libs_scan_opened(const char *reason, const void *opened_dyn); /* after the shim's own dlopen */
void cg_libs_scan_exit(void);          /* at exit: objects not yet recorded, without calling into them */
void cg_libs_check_replaced(const char *when);
const char *cg_libs_primary(char *out, size_t cap); /* "libcudnn.so.9 9.19.0 (/path)" or "" */
/* "caller" (the object holding this return address, "(main program)",
 * or null) and "caller_offset" into an event. */
void cg_ev_caller(struct cg_ev *e, const void *caller);

/* ---- loader/search.c: where a failed load could have found a library */
/* appends "candidates":[...] for a failed load of `file` by `caller` */
void cg_search_candidates(struct cg_ev *e, const char *file, const void *caller);
/* a library recorded from a folder of LD_LIBRARY_PATH: appends
 * "shadowed":[{path, source}] for the copies of its soname in the RUNPATH of
 * the object that needed it (which lost to LD_LIBRARY_PATH), if any */
void cg_search_shadowed(struct cg_ev *e, const char *loaded, const char *soname, const struct cg_obj *needer);
/* "libcudnn_graph.so.9.19.0" -> "libcudnn_graph.so" (stem) and "9.19.0" (version) */
size_t cg_lib_stem(const char *file, char *out, size_t cap);
const char *cg_lib_name_version(const char *file);

/* ---- loader/nvversion.c: the kernel module's version in /proc/driver/nvidia/version's text */
bool cg_nvidia_module_version(const char *text, char *out, size_t cap);

/* ---- loader/versions.c: versions of the loaded libraries (facts; no verdicts) */
/* Fills l's version fields (version, built_for, version_source) from the
 * object o it is being recorded for (libs.c hands it its entry). */
void cg_versions_on_load(const struct cg_obj *o, struct cg_lib *l);
int cg_versions_cudnn(void); /* cudnnGetVersion as first read, 0 if unknown */

/* ---- loader/crash.c: a `crash` event on SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGABRT, then the signal handed on */
void cg_crash_install(void);
void cg_crash_after_fork(void);
void cg_crash_after_load(void); /* a dlopen added objects: an unwinder may have arrived (auto) */
const char *cg_crash_unwinder(void); /* "libunwind", "glibc" or "none" */
/* The library this thread is loading now (dlopen), for a crash inside the
 * loader: enter returns what was set before (a constructor's own dlopen nests). */
const char *cg_loading_enter(const char *name);
void cg_loading_leave(const char *prev);
#endif
