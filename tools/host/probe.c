/* probe.c - what this machine's libraries answer, asked where they cannot
 * hurt: each is loaded only in a forked child (probe_run), since loading
 * cuDNN can pull in other libraries, start threads or crash, and the command
 * must survive all of that and stay free of them; the child writes one JSON
 * object to a pipe.  And the cuDNN a framework of the active python3 would
 * load, found without importing the framework. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/host.h"
#include "cudefs.h"

json_t *probe_run(probe_fn fn, const char *arg)
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
json_t *probe_lib_version(const char *name)
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

/* In the child: the driver and the GPUs, through NVML. */
json_t *probe_nvml(const char *unused)
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

/* The cuDNN the frameworks of the active Python would load: the
 * nvidia-cudnn wheel beside torch / tensorflow / jaxlib (their RUNPATHs and
 * loaders look there first), or one inside torch/lib (older wheels).  Found
 * without importing any framework: importlib's find_spec only.  Lines
 * "<framework> <path>", the first framework with one first. */
static const char framework_probe[] =
    "import importlib.util as u, glob, os\n"
    "for n, l in (('torch', 'PyTorch'), ('tensorflow', 'TensorFlow'), ('jaxlib', 'JAX')):\n"
    "    try: s = u.find_spec(n)\n"
    "    except Exception: s = None\n"
    "    if not s or not s.submodule_search_locations: continue\n"
    "    d = list(s.submodule_search_locations)[0]\n"
    "    for g in ('../nvidia/cudnn/lib/libcudnn.so.[0-9]', 'lib/libcudnn.so.[0-9]'):\n"
    "        f = sorted(glob.glob(os.path.join(d, g)))\n"
    "        if f: print(l, os.path.normpath(f[-1])); break\n";

/* the first framework's cuDNN (into path), its name (into who); false: none */
bool probe_framework_cudnn(char *path, size_t cap, char *who, size_t whocap)
{
    char *cmd = xasprintf("python3 -c \"$CG_PROBE\" 2>/dev/null");
    setenv("CG_PROBE", framework_probe, 1); /* ours alone: unset before the program runs */
    FILE *f = popen(cmd, "r");
    free(cmd);
    char line[PATH_MAX + 64] = "";
    bool found = f && fgets(line, sizeof line, f) != NULL;
    if (f)
        pclose(f);
    unsetenv("CG_PROBE");
    line[strcspn(line, "\n")] = 0;
    char *sp = strchr(line, ' ');
    if (!found || !sp || access(sp + 1, R_OK) != 0)
        return false;
    snprintf(who, whocap, "%.*s", (int)(sp - line), line);
    snprintf(path, cap, "%s", sp + 1);
    return true;
}

