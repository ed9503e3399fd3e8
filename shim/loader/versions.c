/* versions.c - versions of the loaded libraries and the compatibility
 * verdicts drawn from them.
 *
 * Versions are read without creating a CUDA context and without making a
 * library load anything it would not have loaded: cuDriverGetVersion and
 * cudaRuntimeGetVersion answer from constants; cuDNN's version is asked of
 * the sub-library that implements cudnnGetVersion (libcudnn_graph.so.9,
 * libcudnn_ops_infer.so.8) once that sub-library is mapped, never of the
 * dispatcher, which would load it. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "loader/libs.h"


static _Atomic int cudnn_version;
static bool said_copies, said_sublib, said_cuda_major, said_driver;

int cg_versions_cudnn(void) { return atomic_load(&cudnn_version); }

static bool is_dispatcher(const char *soname) { return cg_starts_with(soname, "libcudnn.so"); }

/* "9.19.0.56" -> 91900 (cuDNN 9), "8.9.7" -> 8907 (cuDNN 8); -1 if not a version */
static long long cudnn_encode(const char *v)
{
    long long part[3] = {-1, -1, 0};
    for (int i = 0; i < 3 && *v >= '0' && *v <= '9'; i++) {
        part[i] = 0;
        while (*v >= '0' && *v <= '9')
            part[i] = part[i] * 10 + (*v++ - '0');
        if (*v == '.')
            v++;
    }
    if (part[0] < 7 || part[0] > 99 || part[1] < 0 || part[1] > 99 || part[2] > 99)
        return -1;
    return part[0] >= 9 ? part[0] * 10000 + part[1] * 100 + part[2] : part[0] * 1000 + part[1] * 100 + part[2];
}

/* The dispatcher libcudnn.so.N answers cudnnGetVersion through a part
 * (it would load one), and most parts (cnn, engines, heuristic) have no
 * version of their own to read, so theirs is read from their files: the
 * name the soname link points to (libcudnn.so.9.19.0), else the wheel they
 * came in (site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info).  Where a
 * part of another install answers cudnnGetVersion, this is the only way to
 * name both versions of a mix. */
static void version_from_files(const char *path, struct cg_lib *l)
{
    char real[PATH_MAX];
    if (realpath(path, real)) {
        long long v = cudnn_encode(cg_lib_name_version(real));
        if (v > 0) {
            l->version = v;
            l->version_source = "file_name";
            return;
        }
    }
    const char *w = strstr(path, "/nvidia/cudnn/lib/");
    if (!w)
        return;
    char sp[PATH_MAX];
    size_t n = (size_t)(w - path);
    if (n >= sizeof sp)
        return;
    memcpy(sp, path, n);
    sp[n] = 0;
    DIR *d = opendir(sp);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *dash = strchr(de->d_name, '-');
        size_t len = strlen(de->d_name);
        if (!cg_starts_with(de->d_name, "nvidia_cudnn_cu") || !dash || len < 10 ||
            strcmp(de->d_name + len - 10, ".dist-info") != 0)
            continue;
        long long v = cudnn_encode(dash + 1);
        if (v > 0) {
            l->version = v;
            l->version_source = "wheel";
            break;
        }
    }
    closedir(d);
}

void cg_versions_on_load(const struct cg_obj *o, const char *soname, int family)
{
    struct cg_lib *l = cg_libs_current();
    if (!l || !o->dyn)
        return;
    if (family == CG_FAM_DRV && cg_starts_with(soname, "libcuda.so")) {
        CUresult (*fn)(int *) = (CUresult(*)(int *))cg_elf_sym(o, "cuDriverGetVersion", NULL);
        int v = 0;
        if (fn && fn(&v) == CUDA_SUCCESS)
            l->version = v;
        /* Fill the driver slot now, so entry points can be recognised. */
        for (int h = 0; h < CG_NHOOKS; h++)
            if (cg_hooks[h].family == CG_FAM_DRV)
                cg_real_in_lib(CG_SLOT_DRV, h);
    } else if (family == CG_FAM_CUDART) {
        cudaError_t (*fn)(int *) = (cudaError_t(*)(int *))cg_elf_sym(o, "cudaRuntimeGetVersion", NULL);
        int v = 0;
        if (fn && fn(&v) == cudaSuccess)
            l->version = v;
    } else if (family == CG_FAM_CUDNN && is_dispatcher(soname)) {
        version_from_files(o->name, l);
    } else if (family == CG_FAM_CUDNN) {
        size_t (*ver)(void) = (size_t(*)(void))cg_elf_sym(o, "cudnnGetVersion", NULL);
        size_t (*cuda)(void) = (size_t(*)(void))cg_elf_sym(o, "cudnnGetCudartVersion", NULL);
        if (ver) {
            l->version = (long long)ver();
            int expected = 0;
            atomic_compare_exchange_strong(&cudnn_version, &expected, (int)l->version);
        }
        if (cuda)
            l->built_for = (long long)cuda();
        if (!ver) {
            /* Sub-libraries without cudnnGetVersion carry their version as
             * data: bytes patch, minor, major (9.19.0 -> 00 13 09). Reading
             * it runs no code of theirs. */
            static const char *const names[] = {
#define CG_CUDNN_VERSION_DATA(sym, shim) CG_VDATA_SHIM_##shim(#sym)
#define CG_VDATA_SHIM_1(name) name,
#define CG_VDATA_SHIM_0(name)
#include "cudnn_versions.def"
#undef CG_CUDNN_VERSION_DATA
#undef CG_VDATA_SHIM_1
#undef CG_VDATA_SHIM_0
            };
            for (size_t i = 0; i < sizeof names / sizeof names[0] && l->version < 0; i++) {
                const unsigned char *v = cg_elf_sym(o, names[i], NULL);
                if (v && v[2] >= 7 && v[2] <= 99) {
                    l->version = v[2] >= 9 ? v[2] * 10000LL + v[1] * 100LL + v[0] : v[2] * 1000LL + v[1] * 100LL + v[0];
                    l->version_source = "data";
                }
            }
        }
        if (l->version < 0)
            version_from_files(o->name, l);
    }
}

static void verdict(const char *kind, const char *detail, const char *a_key, const char *a, const char *b_key,
                    const char *b, const char *when)
{
    char buf[4096];
    struct cg_ev e;
    cg_ev_begin(&e, buf, sizeof buf, "verdict");
    cg_ev_str(&e, "kind", kind);
    cg_ev_str(&e, "detail", detail);
    if (a_key)
        cg_ev_str(&e, a_key, a);
    if (b_key)
        cg_ev_str(&e, b_key, b);
    cg_ev_str(&e, "when", when);
    cg_ev_end(&e);
}

static void dir_of(const char *path, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        cg_strlcpy(real, path, sizeof real);
    char *slash = strrchr(real, '/');
    if (slash)
        *slash = 0;
    cg_strlcpy(out, real, cap);
}

struct collect {
    struct cg_lib *dispatcher[4];
    int ndisp;
    struct cg_lib *sub[64];
    int nsub;
    struct cg_lib *cudart, *driver;
};

static void collect_cb(struct cg_lib *l, void *arg)
{
    struct collect *c = arg;
    if (l->family == CG_FAM_CUDNN) {
        if (is_dispatcher(l->soname)) {
            if (c->ndisp < 4)
                c->dispatcher[c->ndisp++] = l;
        } else if (c->nsub < 64) {
            c->sub[c->nsub++] = l;
        }
    } else if (l->family == CG_FAM_CUDART && !c->cudart) {
        c->cudart = l;
    } else if (l->family == CG_FAM_DRV && !c->driver) {
        c->driver = l;
    }
}

static void fmt_int(char *out, long long v)
{
    out[cg_utoa(out, (unsigned long long)(v < 0 ? 0 : v))] = 0;
}

void cg_versions_verdicts(const char *when)
{
    struct collect c;
    memset(&c, 0, sizeof c);
    cg_libs_each(collect_cb, &c);
    /* 1. two different cuDNN files of one name (or two dispatchers) */
    if (!said_copies) {
        for (int i = 0; i < c.ndisp && !said_copies; i++)
            for (int j = i + 1; j < c.ndisp && !said_copies; j++)
                if (strcmp(c.dispatcher[i]->soname, c.dispatcher[j]->soname) == 0 &&
                    c.dispatcher[i]->ino != c.dispatcher[j]->ino) {
                    said_copies = true;
                    verdict("cudnn_multiple_copies", "two different files of one libcudnn soname are mapped in this process",
                            "path_a", c.dispatcher[i]->path, "path_b", c.dispatcher[j]->path, when);
                }
        for (int i = 0; i < c.nsub && !said_copies; i++)
            for (int j = i + 1; j < c.nsub && !said_copies; j++)
                if (strcmp(c.sub[i]->soname, c.sub[j]->soname) == 0 && c.sub[i]->ino != c.sub[j]->ino) {
                    said_copies = true;
                    verdict("cudnn_multiple_copies", "two different files of one cuDNN sub-library are mapped",
                            "path_a", c.sub[i]->path, "path_b", c.sub[j]->path, when);
                }
    }
    /* 2. a sub-library from another directory than its dispatcher, or of another version */
    if (!said_sublib && c.ndisp == 1) {
        char ddir[PATH_MAX], sdir[PATH_MAX];
        dir_of(c.dispatcher[0]->path, ddir, sizeof ddir);
        long long v0 = -1;
        for (int i = 0; i < c.nsub && !said_sublib; i++) {
            dir_of(c.sub[i]->path, sdir, sizeof sdir);
            if (strcmp(ddir, sdir) != 0) {
                said_sublib = true;
                verdict("cudnn_sublib_mismatch",
                        "a cuDNN sub-library was loaded from another directory than libcudnn.so itself "
                        "(LD_LIBRARY_PATH is searched before cuDNN's own RUNPATH)",
                        "dispatcher", c.dispatcher[0]->path, "sublib", c.sub[i]->path, when);
            } else if (c.sub[i]->version > 0) {
                if (v0 < 0)
                    v0 = c.sub[i]->version;
                else if (v0 != c.sub[i]->version) {
                    said_sublib = true;
                    verdict("cudnn_sublib_mismatch", "cuDNN sub-libraries of different versions are mapped",
                            "dispatcher", c.dispatcher[0]->path, "sublib", c.sub[i]->path, when);
                }
            }
        }
    }
    /* 3. cuDNN built for another CUDA major than the cudart loaded */
    long long built_for = -1;
    for (int i = 0; i < c.nsub; i++)
        if (c.sub[i]->built_for > 0)
            built_for = c.sub[i]->built_for;
    if (!said_cuda_major && built_for > 0 && c.cudart && c.cudart->version > 0 &&
        built_for / 1000 != c.cudart->version / 1000) {
        char a[24], b[24];
        fmt_int(a, built_for);
        fmt_int(b, c.cudart->version);
        said_cuda_major = true;
        verdict("cudnn_cuda_major_mismatch", "cuDNN was built for another CUDA major version than the runtime loaded",
                "cudnn_built_for", a, "cudart_version", b, when);
    }
    /* 4. driver older than the runtime */
    if (!said_driver && c.driver && c.cudart && c.driver->version > 0 && c.cudart->version > 0 &&
        c.driver->version < c.cudart->version) {
        char a[24], b[24];
        fmt_int(a, c.driver->version);
        fmt_int(b, c.cudart->version);
        said_driver = true;
        verdict("driver_older_than_runtime", "the CUDA driver is older than the CUDA runtime this process loaded",
                "driver_version", a, "runtime_version", b, when);
    }
}
