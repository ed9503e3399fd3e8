/* versions.c - versions of the loaded libraries: facts for the `lib`
 * events.  What they mean together (two copies, parts of two installs, a
 * driver older than the runtime) is the CLI's to say (tools/analysis/
 * diagnose.c), from the lib events; the shim judges nothing.
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

#include "loader/loader.h"
#include "cudnn_version.h"


static _Atomic int cudnn_version;

int cg_versions_cudnn(void) { return atomic_load(&cudnn_version); }

static bool is_dispatcher(const char *soname) { return cg_starts_with(soname, "libcudnn.so"); }

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
        long long v = cg_cudnn_version_parse(cg_lib_name_version(real));
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
        long long v = cg_cudnn_version_parse(dash + 1);
        if (v > 0) {
            l->version = v;
            l->version_source = "wheel";
            break;
        }
    }
    closedir(d);
}

void cg_versions_on_load(const struct cg_obj *o, struct cg_lib *l)
{
    const char *soname = l->soname;
    int family = l->family;
    if (!o->dyn)
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
                if (v && cg_cudnn_version_of(v[2], v[1], v[0]) > 0) {
                    l->version = cg_cudnn_version_of(v[2], v[1], v[0]);
                    l->version_source = "data";
                }
            }
        }
        if (l->version < 0)
            version_from_files(o->name, l);
    }
}
