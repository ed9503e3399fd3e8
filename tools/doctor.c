/* doctor.c - `convguard doctor`: every cuDNN, CUDA runtime and driver copy on
 * this machine, the version each reports about itself, which copy a program
 * gets today, the GPUs, and a verdict.  No GPU needed.
 *
 * Libraries are only ever loaded in a forked child (probe()): loading cuDNN
 * can pull in other libraries, start threads or crash, and the doctor must
 * survive all of that and stay free of them. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cudefs.h"
#include "inspect.h"
#include "analysis/analysis.h"

/* ---- probes: run fn in a child, which writes one JSON object to a pipe */

json_t *probe(probe_fn fn, const char *arg)
{
    int p[2];
    if (pipe(p) != 0)
        return json_pack("{s:s}", "error", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        alarm(30);
        json_t *r = fn(arg);
        char *s = json_dumps(r, JSON_COMPACT);
        if (s)
            (void)!write(p[1], s, strlen(s));
        _exit(0);
    }
    close(p[1]);
    struct sbuf b = {0};
    char buf[4096];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            sb_addn(&b, buf, (size_t)n);
    close(p[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    json_t *r = b.len ? json_loadb(b.s, b.len, 0, NULL) : NULL;
    free(b.s);
    if (!r)
        r = WIFSIGNALED(st) ? json_pack("{s:s}", "error", strsignal(WTERMSIG(st)))
                            : json_pack("{s:s}", "error", "the probe gave no answer");
    return r;
}

static json_t *err_json(const char *e) { return json_pack("{s:s}", "error", e ? e : "?"); }

/* The path of the object a handle belongs to (what a bare name resolved to). */
static const char *handle_path(void *h)
{
    struct link_map *lm = NULL;
    return h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm ? lm->l_name : NULL;
}

/* In the child: load a library by path or bare name and ask its version. */
static json_t *child_version(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return err_json(dlerror());
    json_t *r = json_pack("{s:s}", "path", handle_path(h) ?: name);
    char real[PATH_MAX];
    if (realpath(jstr(r, "path", name), real) && strcmp(real, jstr(r, "path", "")) != 0)
        json_object_set_new(r, "file", json_string(real));
    const char *base = base_name(name);
    if (strncmp(base, "libcudnn", 8) == 0) {
        size_t (*ver)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
        size_t (*rt)(void) = (size_t(*)(void))dlsym(h, "cudnnGetCudartVersion");
        if (ver)
            json_object_set_new(r, "version", json_integer((json_int_t)ver()));
        if (rt)
            json_object_set_new(r, "cuda_built_for", json_integer((json_int_t)rt()));
        /* which graph part the dispatcher took: it decides the real version */
        struct link_map *lm = NULL;
        dlinfo(h, RTLD_DI_LINKMAP, &lm);
        for (; lm && lm->l_prev; lm = lm->l_prev)
            ;
        for (; lm; lm = lm->l_next)
            if (strstr(lm->l_name, "libcudnn_graph.so") || strstr(lm->l_name, "libcudnn_ops_infer.so"))
                json_object_set_new(r, "graph", json_string(lm->l_name));
    } else if (strncmp(base, "libcudart", 9) == 0) {
        cudaError_t (*ver)(int *) = (cudaError_t(*)(int *))dlsym(h, "cudaRuntimeGetVersion");
        int v = 0;
        if (ver && ver(&v) == cudaSuccess)
            json_object_set_new(r, "version", json_integer(v));
    } else if (strncmp(base, "libcuda.so", 10) == 0) {
        CUresult (*ver)(int *) = (CUresult(*)(int *))dlsym(h, "cuDriverGetVersion");
        int v = 0;
        if (ver && ver(&v) == CUDA_SUCCESS)
            json_object_set_new(r, "version", json_integer(v));
    }
    return r;
}

/* for inspect: whether this machine can load a library at all (libcuda.so.1) */
json_t *child_lib_version(const char *name)
{
    return child_version(name);
}

/* In the child: the driver and the GPUs, through NVML. */
json_t *child_nvml(const char *unused)
{
    (void)unused;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return err_json("libnvidia-ml.so.1 not found (it comes with the NVIDIA driver)");
#define SYM(n, args) nvmlReturn_t(*n) args = (nvmlReturn_t(*) args)dlsym(h, #n)
    SYM(nvmlInit_v2, (void));
    SYM(nvmlSystemGetDriverVersion, (char *, unsigned));
    SYM(nvmlSystemGetCudaDriverVersion_v2, (int *));
    SYM(nvmlDeviceGetCount_v2, (unsigned *));
    SYM(nvmlDeviceGetHandleByIndex_v2, (unsigned, nvmlDevice_t *));
    SYM(nvmlDeviceGetName, (nvmlDevice_t, char *, unsigned));
    SYM(nvmlDeviceGetMemoryInfo, (nvmlDevice_t, nvmlMemory_t *));
    SYM(nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t, unsigned *, nvmlProcessInfo_t *));
#undef SYM
    if (!nvmlInit_v2 || nvmlInit_v2() != 0)
        return err_json("nvmlInit failed: the driver is installed but not working (try `nvidia-smi`)");
    json_t *r = json_object(), *gpus = json_array();
    char s[96] = "";
    int cv = 0;
    unsigned n = 0;
    if (nvmlSystemGetDriverVersion && nvmlSystemGetDriverVersion(s, sizeof s) == 0)
        json_object_set_new(r, "driver", json_string(s));
    if (nvmlSystemGetCudaDriverVersion_v2 && nvmlSystemGetCudaDriverVersion_v2(&cv) == 0)
        json_object_set_new(r, "cuda", json_integer(cv));
    if (nvmlDeviceGetCount_v2)
        nvmlDeviceGetCount_v2(&n);
    for (unsigned i = 0; i < n && nvmlDeviceGetHandleByIndex_v2; i++) {
        nvmlDevice_t d;
        if (nvmlDeviceGetHandleByIndex_v2(i, &d) != 0)
            continue;
        json_t *g = json_pack("{s:i}", "index", i);
        if (nvmlDeviceGetName && nvmlDeviceGetName(d, s, sizeof s) == 0)
            json_object_set_new(g, "name", json_string(s));
        nvmlMemory_t m;
        if (nvmlDeviceGetMemoryInfo && nvmlDeviceGetMemoryInfo(d, &m) == 0)
            json_object_set_new(g, "mem", json_pack("{s:I, s:I}", "free", (json_int_t)m.free, "total", (json_int_t)m.total));
        nvmlProcessInfo_t pi[64];
        unsigned np = 64;
        json_t *hold = json_array();
        if (nvmlDeviceGetComputeRunningProcesses_v3 && nvmlDeviceGetComputeRunningProcesses_v3(d, &np, pi) == 0)
            for (unsigned k = 0; k < np && k < 64; k++) {
                char path[64], comm[64] = "?";
                snprintf(path, sizeof path, "/proc/%u/comm", pi[k].pid);
                FILE *f = fopen(path, "r");
                if (f) {
                    if (fgets(comm, sizeof comm, f))
                        comm[strcspn(comm, "\n")] = 0;
                    fclose(f);
                }
                json_array_append_new(hold, json_pack("{s:i, s:s, s:I}", "pid", pi[k].pid, "name", comm, "bytes",
                                                      (json_int_t)pi[k].usedGpuMemory));
            }
        json_object_set_new(g, "holders", hold);
        json_array_append_new(gpus, g);
    }
    json_object_set_new(r, "gpus", gpus);
    return r;
}

/* ---- where to look */
static void add_dir(json_t *dirs, const char *dir, const char *source)
{
    char real[PATH_MAX];
    if (!dir || !*dir || !realpath(dir, real))
        return;
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    json_t *d = json_object_get(dirs, real);
    if (!d) {
        d = json_pack("{s:s, s:[]}", "dir", dir, "sources");
        json_object_set_new(dirs, real, d);
    }
    json_t *srcs = json_object_get(d, "sources");
    for (size_t i = 0; i < json_array_size(srcs); i++)
        if (strcmp(json_string_value(json_array_get(srcs, i)), source) == 0)
            return;
    json_array_append_new(srcs, json_string(source));
}

static void add_glob(json_t *dirs, const char *pattern, const char *source)
{
    glob_t g;
    if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            add_dir(dirs, g.gl_pathv[i], source);
    globfree(&g);
}

static void add_path_list(json_t *dirs, const char *list, const char *source)
{
    char *copy = xstrdup(list ? list : ""), *save = NULL;
    for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
        add_dir(dirs, p, source);
    free(copy);
}

static bool wanted(const char *n)
{
    return (strncmp(n, "libcudnn", 8) == 0 || strncmp(n, "libcudart.so", 12) == 0 || strncmp(n, "libcuda.so", 10) == 0) &&
           strstr(n, ".so") != NULL;
}

static void from_ldconfig(json_t *dirs)
{
    FILE *f = popen("ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null", "r");
    char line[4096], d[PATH_MAX];
    while (f && fgets(line, sizeof line, f)) {
        char *arrow = strstr(line, "=> ");
        if (!arrow || !wanted(line + strspn(line, " \t")))
            continue;
        arrow[3 + strcspn(arrow + 3, "\n")] = 0;
        add_dir(dirs, dir_name(arrow + 3, d, sizeof d), "ld.so.cache");
    }
    if (f)
        pclose(f);
}

static void from_python(json_t *dirs)
{
    FILE *f = popen("python3 -c 'import site,sys; print(\"\\n\".join(site.getsitepackages()+[site.getusersitepackages()]))' "
                    "2>/dev/null", "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *pat = xasprintf("%s/nvidia/*/lib", line);
        add_glob(dirs, pat, "python site-packages");
        free(pat);
    }
    if (f)
        pclose(f);
}

/* Environments that are not the active one: a copy there is what another
 * shell, job or notebook kernel loads (works in one, fails in another). */
static void envs_under(json_t *dirs, const char *prefix_glob, const char *source)
{
    /* a venv or conda env: <prefix>/lib/python3.X/site-packages/{nvidia/<part>/lib,torch/lib}, and conda's <prefix>/lib */
    char *a = xasprintf("%s/lib/python3*/site-packages/nvidia/*/lib", prefix_glob);
    char *b = xasprintf("%s/lib/python3*/site-packages/torch/lib", prefix_glob);
    add_glob(dirs, a, source);
    add_glob(dirs, b, source);
    free(a), free(b);
}

static void other_envs(json_t *dirs, const char *home)
{
    static const char *const venvs[] = {"%s/.venv", "%s/venv", "%s/.virtualenvs/*", "%s/.pyenv/versions/*",
                                        "%s/.local/share/virtualenvs/*", "%s/*/.venv", "%s/*/venv"};
    for (size_t i = 0; home && i < sizeof venvs / sizeof venvs[0]; i++) {
        char *g = xasprintf(venvs[i], home);
        envs_under(dirs, g, "venv (not active)");
        free(g);
    }
    envs_under(dirs, "./.venv", "venv (not active)");
    envs_under(dirs, "./venv", "venv (not active)");
    static const char *const condas[] = {"%s/miniconda3", "%s/anaconda3", "%s/miniforge3", "%s/mambaforge",
                                         "%s/.conda"};
    for (size_t i = 0; home && i < sizeof condas / sizeof condas[0]; i++) {
        char *base = xasprintf(condas[i], home), *envs = xasprintf("%s/envs/*", base);
        envs_under(dirs, base, "conda env (not active)");
        envs_under(dirs, envs, "conda env (not active)");
        char *libs = xasprintf("%s/envs/*/lib", base);
        add_glob(dirs, libs, "conda env (not active)");
        free(base), free(envs), free(libs);
    }
    add_dir(dirs, "/opt/conda/lib", "conda env (not active)");
    add_glob(dirs, "/opt/conda/envs/*/lib", "conda env (not active)");
    envs_under(dirs, "/opt/conda", "conda env (not active)");
    envs_under(dirs, "/opt/*/.venv", "venv (not active)");
    envs_under(dirs, "/opt/*/venv", "venv (not active)");
    envs_under(dirs, "/opt/*venv", "venv (not active)");
}

static json_t *where_to_look(void)
{
    json_t *dirs = json_object();
    const char *home = getenv("HOME");
    add_path_list(dirs, getenv("LD_LIBRARY_PATH"), "LD_LIBRARY_PATH");
    from_ldconfig(dirs);
    add_glob(dirs, "/usr/local/cuda*/lib*", "/usr/local/cuda*");
    add_glob(dirs, "/usr/local/cuda*/targets/*/lib", "/usr/local/cuda*");
    static const char *const sys[] = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib"};
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        add_dir(dirs, sys[i], "system");
    if (getenv("CONDA_PREFIX")) {
        char *p = xasprintf("%s/lib", getenv("CONDA_PREFIX"));
        add_dir(dirs, p, "conda ($CONDA_PREFIX)");
        free(p);
    }
    static const char *const conda[] = {"miniconda3", "anaconda3", "miniforge3", "mambaforge"};
    for (size_t i = 0; home && i < sizeof conda / sizeof conda[0]; i++) {
        char *p = xasprintf("%s/%s/lib", home, conda[i]);
        add_dir(dirs, p, "conda base");
        free(p);
    }
    from_python(dirs);
    other_envs(dirs, home);
    return dirs;
}

/* ---- the copies on disk */
static const char *family_of(const char *n)
{
    return strncmp(n, "libcudnn", 8) == 0 ? "cudnn" : strncmp(n, "libcudart", 9) == 0 ? "cudart" : "driver";
}

/* the libraries whose version we ask: cuDNN's dispatcher and graph part,
 * cudart, the driver; cuDNN's other parts are only listed */
static bool ask_version(const char *n)
{
    return (strncmp(n, "libcudnn.so.", 12) == 0 || strncmp(n, "libcudnn_graph.so.", 18) == 0 ||
            strncmp(n, "libcudnn_ops_infer.so.", 22) == 0 || strncmp(n, "libcudart.so.", 13) == 0 ||
            strcmp(n, "libcuda.so.1") == 0);
}

static int cmp_keys(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* A dispatcher's own version: that of the graph part beside it (the
 * dispatcher has none to read without loading a part), read from the file;
 * -1 when its folder has none. */
static long long own_cudnn_version(const char *dispatcher)
{
    char fd[PATH_MAX];
    dir_name(dispatcher, fd, sizeof fd);
    const char *so = strstr(base_name(dispatcher), ".so.");
    long long own = -1;
    static const char *const parts[] = {"libcudnn_graph", "libcudnn_ops_infer"};
    for (size_t k = 0; k < 2 && own < 0 && so; k++) {
        char *sib = xasprintf("%s/%s.so.%.*s", fd, parts[k], (int)strcspn(so + 4, "."), so + 4);
        struct elf_file e;
        if (elf_file_open(sib, &e) == 0) {
            own = elf_file_cudnn_version(&e);
            elf_file_close(&e);
        }
        free(sib);
    }
    return own;
}

/* A dispatcher loaded by its path took its graph part from another folder
 * (LD_LIBRARY_PATH is searched before its own): the version it answered is
 * that part's, not its install's.  Its own comes from the part beside it, read
 * from the file; both are kept, and the verdict names the mix. */
static void parts_from_elsewhere(json_t *d)
{
    const char *graph = jstr(d, "graph", NULL), *file = jstr(d, "file", "");
    char gd[PATH_MAX], fd[PATH_MAX], greal[PATH_MAX];
    if (!graph || strncmp(base_name(file), "libcudnn.so", 11) != 0)
        return;
    if (!realpath(graph, greal) || strcmp(dir_name(greal, gd, sizeof gd), dir_name(file, fd, sizeof fd)) == 0)
        return;
    long long own = own_cudnn_version(file);
    json_object_set_new(d, "runs_as", json_integer(jint(d, "version", -1)));
    json_object_set_new(d, "graph_from", json_string(greal));
    json_object_del(d, "cuda_built_for"); /* the other part's answer too */
    json_object_set_new(d, "version", own > 0 ? json_integer(own) : json_null());
}

static json_t *scan(json_t *dirs)
{
    json_t *files = json_object(); /* realpath -> entry */
    const char *key;
    json_t *d;
    json_object_foreach(dirs, key, d) {
        DIR *dd = opendir(key);
        struct dirent *e;
        while (dd && (e = readdir(dd))) {
            if (!wanted(e->d_name))
                continue;
            char *p = xasprintf("%s/%s", key, e->d_name), real[PATH_MAX];
            if (!realpath(p, real)) {
                free(p);
                continue;
            }
            json_t *f = json_object_get(files, real);
            if (!f) {
                f = json_pack("{s:s, s:s, s:[], s:O}", "path", p, "family", family_of(e->d_name), "names",
                              "sources", json_object_get(d, "sources"));
                json_object_set_new(files, real, f);
            }
            json_array_append_new(json_object_get(f, "names"), json_string(e->d_name));
            /* the name to load it by: the shortest versioned one (libcudnn.so.9) */
            const char *cur = base_name(jstr(f, "path", ""));
            if (strstr(e->d_name, ".so.") && (!strstr(cur, ".so.") || strlen(e->d_name) < strlen(cur)))
                json_object_set_new(f, "path", json_string(p));
            free(p);
        }
        if (dd)
            closedir(dd);
    }
    json_t *list = json_array();
    /* by path: a folder's copies together, the dispatcher before its parts */
    const char **keys = calloc(json_object_size(files) + 1, sizeof *keys);
    size_t nk = 0;
    json_object_foreach(files, key, d)
        keys[nk++] = key;
    qsort(keys, nk, sizeof *keys, cmp_keys);
    for (size_t ki = 0; ki < nk; ki++) {
        key = keys[ki];
        d = json_object_get(files, key);
        json_object_set_new(d, "file", json_string(key));
        const char *n = base_name(jstr(d, "path", ""));
        if (ask_version(n)) {
            json_t *v = probe(child_version, jstr(d, "path", ""));
            json_object_update(d, v);
            json_object_del(d, "path");
            json_object_set_new(d, "path", json_string(jstr(d, "file", "")));
            json_decref(v);
            parts_from_elsewhere(d);
        }
        json_array_append(list, d);
    }
    free(keys);
    json_decref(files);
    return list;
}

/* ---- the verdict */
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
                long long ver[2] = {own_cudnn_version(jstr(v, "path", "")), jint(v, "version", -1)},
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
static void gpu_problems(json_t *ps, json_t *r)
{
    char a[32];
    json_t *f;
    size_t i;
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
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

static json_t *verdict(json_t *r)
{
    json_t *ps = json_array();
    driver_problems(ps, r);
    picks_problems(ps, r);
    cudnn_mixed_problem(ps, r);
    cudnn_versions_problem(ps, r);
    gpu_problems(ps, r);
    return ps;
}

/* ---- output: paths, process names and variables as found, escaped (util/term.c) */
/* the copies of cuDNN, the CUDA runtime and the driver found on disk */
static void print_copies(json_t *r)
{
    char v[32], w[32];
    static const char *const fams[][2] = {{"cudnn", "cuDNN"}, {"cudart", "CUDA runtime"}, {"driver", "driver (libcuda)"}};
    json_t *copies = json_object_get(r, "copies"), *f;
    size_t i;
    for (size_t k = 0; k < 3; k++) {
        term_printf(stdout, "%s copies:\n", fams[k][1]);
        int shown = 0, parts = 0;
        json_array_foreach(copies, i, f) {
            if (strcmp(jstr(f, "family", ""), fams[k][0]) != 0)
                continue;
            const char *n = base_name(jstr(f, "path", ""));
            if (k == 0 && !ask_version(n)) {
                parts++;
                continue;
            }
            long long ver = jint(f, "version", -1);
            const char *vs = ver < 0 ? "?" : k == 0 ? fmt_cudnn_ver(ver, v, sizeof v) : fmt_cuda_ver(ver, v, sizeof v);
            struct sbuf line = {0};
            sb_printf(&line, "  %-8s %s", vs, jstr(f, "path", "?"));
            if (jint(f, "cuda_built_for", -1) > 0)
                sb_printf(&line, "  (for CUDA %s)", fmt_cuda_ver(jint(f, "cuda_built_for", -1), w, sizeof w));
            if (jget(f, "graph_from"))
                sb_printf(&line, "  (loaded here it runs as %s: its graph part comes from %s)",
                          fmt_cudnn_ver(jint(f, "runs_as", -1), w, sizeof w), jstr(f, "graph_from", "?"));
            if (jget(f, "error"))
                sb_printf(&line, "  (does not load: %s)", jstr(f, "error", "?"));
            json_t *src = jget(f, "sources");
            sb_add(&line, "  [");
            for (size_t s = 0; s < json_array_size(src); s++)
                sb_printf(&line, "%s%s", s ? ", " : "", json_string_value(json_array_get(src, s)));
            sb_add(&line, "]");
            term_wrapf(stdout, 11, "%s", line.s);
            free(line.s);
            shown++;
        }
        if (parts)
            term_printf(stdout, "  (+%d other cuDNN parts: cnn, ops, engines, heuristic, adv)\n", parts);
        if (!shown && !parts)
            term_printf(stdout, "  none found\n");
    }
}

static void print_picks(json_t *r)
{
    char v[32];
    term_printf(stdout, "a program that loads by bare name gets:\n");
    const char *key;
    json_t *p;
    json_object_foreach(json_object_get(r, "picks"), key, p) {
        if (jget(p, "error")) {
            term_printf(stdout, "  %-16s not found\n", key);
            continue;
        }
        long long ver = jint(p, "version", -1);
        char *graph = jstr(p, "graph", NULL) ? xasprintf(", its graph part %s", jstr(p, "graph", "")) : xstrdup("");
        term_wrapf(stdout, 19, "  %-16s %s%s%s%s (%s)%s", key, jstr(p, "path", "?"), jget(p, "file") ? " (= " : "",
                   jstr(p, "file", ""), jget(p, "file") ? ")" : "",
                   ver < 0 ? "?" : strncmp(key, "libcudnn", 8) == 0 ? fmt_cudnn_ver(ver, v, sizeof v) : fmt_cuda_ver(ver, v, sizeof v),
                   graph);
        free(graph);
    }
}

static void print_gpus(json_t *r)
{
    char v[32], w[32];
    json_t *f;
    size_t i;
    json_t *nv = json_object_get(r, "nvml");
    if (jget(nv, "error")) {
        term_wrapf(stdout, 2, "GPUs: unknown: %s", jstr(nv, "error", "?"));
        return;
    }
    term_printf(stdout, "driver %s (CUDA %s), %zu GPU%s\n", jstr(nv, "driver", "?"), fmt_cuda_ver(jint(nv, "cuda", -1), v, sizeof v),
           json_array_size(jget(nv, "gpus")), json_array_size(jget(nv, "gpus")) == 1 ? "" : "s");
    json_array_foreach(jget(nv, "gpus"), i, f) {
        struct sbuf line = {0};
        sb_printf(&line, "  GPU %lld %s: %s free of %s", jint(f, "index", 0), jstr(f, "name", "?"),
                  fmt_size(jint(f, "mem.free", -1), v, sizeof v), fmt_size(jint(f, "mem.total", -1), w, sizeof w));
        json_t *h;
        size_t k;
        json_array_foreach(jget(f, "holders"), k, h)
            sb_printf(&line, "%s pid %lld (%s) %s", k ? "," : "; held by", jint(h, "pid", -1), jstr(h, "name", "?"),
                      fmt_size(jint(h, "bytes", -1), v, sizeof v));
        term_wrapf(stdout, 4, "%s", line.s);
        free(line.s);
    }
}

static void print_human(json_t *r)
{
    term_printf(stdout, "convguard doctor\n");
    print_copies(r);
    print_picks(r);
    print_gpus(r);
    term_wrapf(stdout, 2, "looked in %zu folders: LD_LIBRARY_PATH, ld.so.cache, /usr/local/cuda*, the system's, the active "
               "python3's site-packages, venvs and conda envs under $HOME, ./ and /opt; not in other users' homes, "
               "container images or other folders (put one in LD_LIBRARY_PATH to include it)",
               json_array_size(json_object_get(r, "searched")));
    term_wrapf(stdout, 2, "environment: LD_LIBRARY_PATH=%s CUDA_VISIBLE_DEVICES=%s", jstr(r, "env.LD_LIBRARY_PATH", "(unset)"),
               jstr(r, "env.CUDA_VISIBLE_DEVICES", "(unset)"));
    json_t *ps = json_object_get(r, "problems"), *f;
    size_t i;
    if (!json_array_size(ps))
        term_printf(stdout, "verdict: no problem found\n");
    else
        term_printf(stdout, "verdict: %zu problem%s\n", json_array_size(ps), json_array_size(ps) > 1 ? "s" : "");
    json_array_foreach(ps, i, f) {
        term_wrapf(stdout, 6, "  [%s] %s", jstr(f, "severity", "?"), jstr(f, "problem", "?"));
        term_wrapf(stdout, 11, "      fix: %s", jstr(f, "fix", "?"));
    }
}

/* the bare names to probe: every major found on disk, plus the usual ones, the driver last */
static json_t *bare_names(json_t *copies)
{
    json_t *names = json_pack("[s, s, s, s]", "libcudnn.so.9", "libcudnn.so.8", "libcudart.so.13", "libcudart.so.12");
    size_t i;
    json_t *f;
    json_array_foreach(copies, i, f) {
        const char *n = base_name(jstr(f, "path", ""));
        if (strncmp(n, "libcudnn.so.", 12) == 0 || strncmp(n, "libcudart.so.", 13) == 0) {
            char *soname = xasprintf("%.*s", (int)(strstr(n, ".so.") + 4 + strcspn(strstr(n, ".so.") + 4, ".") - n), n);
            bool have = false;
            json_t *x;
            size_t k;
            json_array_foreach(names, k, x) have |= strcmp(json_string_value(x), soname) == 0;
            if (!have)
                json_array_append_new(names, json_string(soname));
            free(soname);
        }
    }
    json_array_append_new(names, json_string("libcuda.so.1"));
    return names;
}

/* what a program loading each bare name gets (in a child each) */
static json_t *probe_picks(json_t *copies)
{
    json_t *picks = json_object(), *names = bare_names(copies), *f;
    size_t i;
    json_array_foreach(names, i, f) {
        json_t *p = probe(child_version, json_string_value(f));
        /* a missing optional major is noise; keep misses of the driver and of majors on disk */
        bool optional = strcmp(json_string_value(f), "libcuda.so.1") != 0 && jget(p, "error") && i < 4;
        if (!optional)
            json_object_set_new(picks, json_string_value(f), p);
        else
            json_decref(p);
    }
    json_decref(names);
    return picks;
}

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard doctor [--json]\n"
               "  every cuDNN, CUDA runtime and driver copy on this machine (the loader's\n"
               "  search path, LD_LIBRARY_PATH, the Python environments' wheels), the one\n"
               "  each framework here would load, the driver and the GPUs (NVML), and a verdict\n"
               "  --json      the same as JSON on stdout\n"
               "exit status: 0 no problem found, 1 problems found, 2 usage\n");
    return rc;
}

int cmd_doctor(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool as_json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jh", longopts, NULL)) != -1) {
        if (c == 'j')
            as_json = true;
        else
            return c == 'h' ? usage(stdout, 0) : usage(stderr, 2);
    }
    json_t *dirs = where_to_look();
    json_t *r = json_object();
    json_t *copies = scan(dirs);
    json_object_set_new(r, "searched", json_array());
    const char *key;
    json_t *d;
    json_object_foreach(dirs, key, d)
        json_array_append_new(json_object_get(r, "searched"), json_pack("{s:s, s:O}", "dir", key, "sources",
                                                                        json_object_get(d, "sources")));
    json_object_set_new(r, "copies", copies);
    json_object_set_new(r, "picks", probe_picks(copies));
    json_object_set_new(r, "nvml", probe(child_nvml, NULL));
    json_object_set_new(r, "env", json_pack("{s:o, s:o}", "LD_LIBRARY_PATH",
                                            getenv("LD_LIBRARY_PATH") ? json_string(getenv("LD_LIBRARY_PATH")) : json_null(),
                                            "CUDA_VISIBLE_DEVICES",
                                            getenv("CUDA_VISIBLE_DEVICES") ? json_string(getenv("CUDA_VISIBLE_DEVICES"))
                                                                           : json_null()));
    json_object_set_new(r, "problems", verdict(r));
    int rc = json_array_size(json_object_get(r, "problems")) ? 1 : 0;
    if (as_json) {
        json_dumpf(r, stdout, JSON_INDENT(2));
        printf("\n");
    } else {
        print_human(r);
    }
    json_decref(r);
    json_decref(dirs);
    return rc;
}
