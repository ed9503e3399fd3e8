/* machine.c - the verdict of `convguard doctor` on this machine's copies of
 * cuDNN, the CUDA runtime and the driver (host/copies.c found them, each
 * with the version it reports), on what a program loading each bare name
 * gets, and on the GPUs: each problem with its fix.  Its classifications are
 * diagnose.c's (diag_parts, diag_driver_older, diag_low_free), as for a
 * trace.  Nothing here prints. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "host/host.h"

static void problem(json_t *ps, const char *sev, char *what, char *fix)
{
    json_array_append_new(ps, json_pack("{s:s, s:s, s:s}", "severity", sev, "problem", what, "fix", fix));
    free(what);
    free(fix);
}

/* the driver: missing, its NVML broken, no GPU seen */
static void driver_problems(json_t *ps, json_t *r)
{
    json_t *drv = json_object_get(json_object_get(r, "picks"), "libcuda.so.1");
    if (jget(drv, "error"))
        problem(ps, "error", xasprintf("no NVIDIA driver: libcuda.so.1 cannot be loaded (%s)", jstr(drv, "error", "?")),
                xstrdup("install the NVIDIA driver and check that `nvidia-smi` lists the GPU; in a container add "
                        "`--gpus all` (NVIDIA Container Toolkit)"));
    else if (jget(r, "nvml.error"))
        problem(ps, "warning", xasprintf("NVML: %s", jstr(r, "nvml.error", "?")),
                xstrdup("reinstall the driver so that libnvidia-ml.so.1 matches libcuda.so.1"));
    else if (json_array_size(jget(r, "nvml.gpus")) == 0)
        problem(ps, "error", xstrdup("the driver sees no GPU"), xstrdup("check `nvidia-smi -L` and the container's --gpus"));
}

/* what a bare name gets: cuDNN's parts from two folders, a driver older than the runtime */
static void picks_problems(json_t *ps, json_t *r)
{
    json_t *picks = json_object_get(r, "picks");
    json_t *drv = json_object_get(picks, "libcuda.so.1");
    char a[32], b[32];
    const char *key;
    json_t *v;
    long long dv = jint(drv, "version", -1), rt = -1;
    json_object_foreach(picks, key, v) {
        if (strncmp(key, "libcudart", 9) == 0 && jint(v, "version", -1) > rt)
            rt = jint(v, "version", -1);
        if (strncmp(key, "libcudnn.so", 11) == 0 && !jget(v, "error")) {
            char d1[PATH_MAX], d2[PATH_MAX];
            const char *graph = jstr(v, "graph", NULL);
            if (graph && strcmp(dir_name(jstr(v, "path", ""), d1, sizeof d1), dir_name(graph, d2, sizeof d2)) != 0) {
                /* one version from two folders is a warning, two installs an error (analysis/diagnose.c) */
                long long ver[2] = {libfile_cudnn_own_version(jstr(v, "path", "")), jint(v, "version", -1)},
                          built[2] = {-1, jint(v, "cuda_built_for", -1)};
                if (strcmp(diag_parts(ver, built, 2), "one_version") == 0)
                    problem(ps, "warning", xasprintf("%s from %s takes its part %s from another folder: one cuDNN "
                                                     "version (%s) from two folders",
                                                     key, d1, graph, fmt_cudnn_ver(ver[1] > 0 ? ver[1] : ver[0], a, sizeof a)),
                            xasprintf("keep every part of cuDNN in one folder; take %s out of LD_LIBRARY_PATH or "
                                      "ld.so.cache", d2));
                else
                    problem(ps, "error", xasprintf("%s from %s takes its part %s from another folder: two cuDNN installs "
                                                   "mix", key, d1, graph),
                            xasprintf("keep one cuDNN; take %s out of LD_LIBRARY_PATH or ld.so.cache", d2));
            }
        }
    }
    if (diag_driver_older(dv, rt)) {
        /* both texts filled first: the order arguments are evaluated in is
         * unspecified (b was read before it was written; make check-sanitize) */
        fmt_cuda_ver(dv, a, sizeof a);
        fmt_cuda_ver(rt, b, sizeof b);
        problem(ps, "error", xasprintf("the driver supports CUDA %s, older than the CUDA runtime %s a program gets", a, b),
                xasprintf("upgrade the NVIDIA driver to one for CUDA %s or newer", b));
    }
}

/* several cuDNN versions on disk: the search order decides which one runs */
/* a dispatcher that, loaded with this environment, runs another folder's parts */
static void cudnn_mixed_problem(json_t *ps, json_t *r)
{
    char a[32], b[32], d[PATH_MAX];
    json_t *f;
    size_t i;
    json_array_foreach(json_object_get(r, "copies"), i, f) {
        if (!jget(f, "graph_from"))
            continue;
        long long own = jint(f, "version", -1);
        long long ver[2] = {own, jint(f, "runs_as", -1)}, built[2] = {-1, -1};
        if (strcmp(diag_parts(ver, built, 2), "one_version") == 0) {
            /* one version from two folders: a warning, no mix (analysis/diagnose.c) */
            problem(ps, "warning",
                    xasprintf("%s, loaded with this LD_LIBRARY_PATH, takes its graph part from %s: one cuDNN version "
                              "(%s) from two folders", jstr(f, "path", "?"), jstr(f, "graph_from", "?"),
                              fmt_cudnn_ver(own > 0 ? own : ver[1], a, sizeof a)),
                    xasprintf("keep every part of cuDNN in one folder; take %s out of LD_LIBRARY_PATH",
                              dir_name(jstr(f, "graph_from", "?"), d, sizeof d)));
            continue;
        }
        problem(ps, "error",
                xasprintf("cuDNN of two installs in one process: %s, loaded with this LD_LIBRARY_PATH, takes its graph "
                          "part from %s and runs as %s%s%s; a program (a framework's wheel) that maps %s gets parts "
                          "of both (\"cuDNN version incompatibility\", CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, "
                          "or a crash)",
                          jstr(f, "path", "?"), jstr(f, "graph_from", "?"), fmt_cudnn_ver(jint(f, "runs_as", -1), a, sizeof a),
                          own > 0 ? ", not " : "", own > 0 ? fmt_cudnn_ver(own, b, sizeof b) : "", jstr(f, "path", "?")),
                xasprintf("take %s out of LD_LIBRARY_PATH (LD_LIBRARY_PATH is searched before a library's own "
                          "RUNPATH), or remove that older cuDNN", dir_name(jstr(f, "graph_from", "?"), d, sizeof d)));
    }
}

static void cudnn_versions_problem(json_t *ps, json_t *r)
{
    char a[32];
    const char *key;
    json_t *v;
    json_t *vers = json_object();
    json_t *f;
    size_t i;
    json_array_foreach(json_object_get(r, "copies"), i, f) {
        if (strcmp(jstr(f, "family", ""), "cudnn") == 0 && jint(f, "version", -1) > 0 &&
            strncmp(base_name(jstr(f, "path", "")), "libcudnn.so", 11) == 0) {
            fmt_cudnn_ver(jint(f, "version", -1), a, sizeof a);
            json_object_set_new(vers, a, json_string(jstr(f, "path", "")));
        }
    }
    if (json_object_size(vers) > 1) {
        struct sbuf s = {0};
        json_object_foreach(vers, key, v)
            sb_printf(&s, "%s%s (%s)", s.len ? ", " : "", key, json_string_value(v));
        problem(ps, "warning", xasprintf("several cuDNN versions on this machine: %s", s.s),
                xstrdup("which one a program gets depends on LD_LIBRARY_PATH and its RUNPATH: keep one, or run "
                        "programs under `convguard run` to see which they map"));
        free(s.s);
    }
    json_decref(vers);
}

/* the GPUs: all hidden, or one nearly full with another process's memory */
static void gpu_problems(json_t *ps, json_t *r, const char *cvd)
{
    char a[32];
    json_t *f;
    size_t i;
    if (cvd && (!*cvd || strcmp(cvd, "-1") == 0))
        problem(ps, "error", xasprintf("CUDA_VISIBLE_DEVICES=\"%s\" hides every GPU", cvd),
                xstrdup("unset CUDA_VISIBLE_DEVICES or set it to the GPUs to use"));
    json_array_foreach(jget(r, "nvml.gpus"), i, f) {
        if (diag_low_free(jint(f, "mem.free", -1)) && json_array_size(jget(f, "holders")))
            problem(ps, "warning", xasprintf("GPU %lld has only %s free; process %lld (%s) holds memory", jint(f, "index", 0),
                                             fmt_size(jint(f, "mem.free", 0), a, sizeof a),
                                             jint(json_array_get(jget(f, "holders"), 0), "pid", -1),
                                             jstr(json_array_get(jget(f, "holders"), 0), "name", "?")),
                    xstrdup("stop it if it is a leftover, or pick another GPU with CUDA_VISIBLE_DEVICES"));
    }
}

json_t *machine_verdict(json_t *r, const char *cvd)
{
    json_t *ps = json_array();
    driver_problems(ps, r);
    picks_problems(ps, r);
    cudnn_mixed_problem(ps, r);
    cudnn_versions_problem(ps, r);
    gpu_problems(ps, r, cvd);
    return ps;
}

