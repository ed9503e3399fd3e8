/* inspect.c - `convguard inspect PID`: what a process that is running now
 * has mapped of CUDA, read from outside.
 *
 * Only /proc/PID/{maps,environ,cmdline,status,cwd,root} and the mapped
 * files on disk are read: no ptrace, no signal, nothing runs inside the
 * target, and no CUDA library is loaded here (versions come from file names,
 * the data symbols of cuDNN's parts, and the wheels' dist-info; GPU memory
 * from NVML in a forked child, as doctor does).  The picture becomes a
 * one-process trace - a `start`, one `lib` per CUDA file (the facts a
 * shim's lib event holds), a `lib_changed` per file replaced on disk, and an
 * `exit` marked `snapshot` - and analyse() reads it as it reads a trace: one
 * diagnosis (analysis/diagnose.c) and one rule table (rules.def) for report,
 * inspect and the Python check(). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "inspect.h"
#include "cudnn_version.h"
#include "cli.h"
#include "out/out.h"

/* ---- reading /proc */
static char *read_file(const char *path, size_t *len, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct sbuf b = {0};
    char buf[65536];
    ssize_t n = 0;
    while (b.len < max && ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
            sb_addn(&b, buf, (size_t)n);
    int e = errno;
    close(fd);
    if (n < 0 && e != EINTR) {
        free(b.s);
        errno = e;
        return NULL;
    }
    *len = b.len;
    return sb_take(&b);
}

/* gone, or a zombie: it exited (maybe while we read it) */
static bool proc_gone(long long pid)
{
    char p[64];
    size_t n;
    snprintf(p, sizeof p, "/proc/%lld/stat", pid);
    char *s = read_file(p, &n, 4096);
    if (!s)
        return errno == ENOENT || errno == ESRCH;
    const char *close_paren = strrchr(s, ')');
    bool dead = close_paren && (close_paren[1] == ' ') && (close_paren[2] == 'Z' || close_paren[2] == 'X');
    free(s);
    return dead;
}

static long long proc_status_field(long long pid, const char *key)
{
    char p[64];
    size_t n;
    snprintf(p, sizeof p, "/proc/%lld/status", pid);
    char *s = read_file(p, &n, 1 << 16);
    long long v = -1;
    char *k = s ? strstr(s, key) : NULL;
    if (k)
        v = strtoll(k + strlen(key), NULL, 10);
    free(s);
    return v;
}

static char *proc_link(long long pid, const char *what)
{
    char p[64], out[PATH_MAX];
    snprintf(p, sizeof p, "/proc/%lld/%s", pid, what);
    ssize_t n = readlink(p, out, sizeof out - 1);
    if (n <= 0)
        return NULL;
    out[n] = 0;
    return xstrdup(out);
}

/* ---- what a mapped file is */
static const struct kind {
    const char *prefix, *kind, *family, *label, *wheel;
} kinds[] = {
    {"libcudnn", "cudnn", "cudnn", "cuDNN", "nvidia_cudnn"},
    {"libcudart", "cudart", "cudart", "CUDA runtime", "nvidia_cuda_runtime"},
    {"libcuda.so", "driver", "driver", "driver", NULL},
    {"libcublasLt", "cublasLt", "other", "cuBLASLt", "nvidia_cublas"},
    {"libcublas", "cublas", "other", "cuBLAS", "nvidia_cublas"},
    {"libnvrtc", "nvrtc", "other", "NVRTC", "nvidia_cuda_nvrtc"},
    {"libnccl", "nccl", "other", "NCCL", "nvidia_nccl"},
    {"libnvJitLink", "nvjitlink", "other", "nvJitLink", "nvidia_nvjitlink"},
    {"libcufft", "cufft", "other", "cuFFT", "nvidia_cufft"},
    {"libcurand", "curand", "other", "cuRAND", "nvidia_curand"},
    {"libcusolver", "cusolver", "other", "cuSOLVER", "nvidia_cusolver"},
    {"libcusparse", "cusparse", "other", "cuSPARSE", "nvidia_cusparse"},
    {"libcupti", "cupti", "other", "CUPTI", "nvidia_cuda_cupti"},
    {"libnvidia-ml", "nvml", "other", "NVML", NULL},
};

static const struct kind *kind_of(const char *base)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(base, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
            return &kinds[i];
    return NULL;
}

/* the frameworks, from the objects that are theirs; `cuda`: that object
 * exists only in the framework's GPU build */
static const struct fw_marker {
    const char *needle, *name, *label;
    bool cuda;
} fw_markers[] = {
    {"libtorch_cuda.so", "torch", "PyTorch", true},       {"libc10_cuda.so", "torch", "PyTorch", true},
    {"libtorch_cpu.so", "torch", "PyTorch", false},       {"xla_cuda_plugin.so", "jax", "JAX", true},
    {"jax_cuda", "jax", "JAX", true},                     {"xla_extension.so", "jax", "JAX", false},
    {"-packages/jaxlib/", "jax", "JAX", false},           {"libtensorflow_framework.so", "tensorflow", "TensorFlow", false},
    {"_pywrap_tensorflow_internal.so", "tensorflow", "TensorFlow", false},
    {"-packages/cupy", "cupy", "CuPy", true},             {"onnxruntime_providers_cuda", "onnxruntime", "onnxruntime", true},
    {"onnxruntime_pybind11_state", "onnxruntime", "onnxruntime", false},
    {"ctranslate2", "ctranslate2", "CTranslate2", false},
};

/* ---- versions, read from files */
/* "13.0.96" -> 13000 (CUDA's encoding: major*1000 + minor*10) */
static long long cuda_encode(const char *v)
{
    char *end;
    long long maj = strtoll(v, &end, 10);
    if (end == v || *end != '.' || maj < 7 || maj > 99)
        return -1;
    long long min = strtoll(end + 1, NULL, 10);
    return min >= 0 && min < 100 ? maj * 1000 + min * 10 : -1;
}

/* the dotted version in a file's own name after ".so." (libcudnn.so.9.19.0:
 * "9.19.0"), "" when the name carries only the soname's major */
static const char *name_version(const char *base)
{
    const char *so = strstr(base, ".so.");
    if (!so || !strchr(so + 4, '.'))
        return "";
    return so + 4;
}

/* The wheel a file came in: a `<prefix>*-<version>.dist-info` near it
 * (site-packages for nvidia/<pkg>/lib, or a `dist-info` folder beside lib/)
 * whose RECORD names this file with this size. */
static bool wheel_version(const char *rpath, const char *prefix, long long size, char *out, size_t cap)
{
    char dir[PATH_MAX];
    dir_name(rpath, dir, sizeof dir);
    const char *base = base_name(rpath);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "/%s,", base);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return false;
        *slash = 0;
        for (int sub = 0; sub < 2; sub++) {
            char d[PATH_MAX + 16];
            snprintf(d, sizeof d, "%s%s", dir, sub ? "/dist-info" : "");
            DIR *dd = opendir(d);
            if (!dd)
                continue;
            struct dirent *de;
            bool found = false;
            while (!found && (de = readdir(dd))) {
                size_t len = strlen(de->d_name);
                if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 || len < 11 ||
                    strcmp(de->d_name + len - 10, ".dist-info") != 0 || !strchr(de->d_name, '-'))
                    continue;
                char rec[PATH_MAX * 2];
                snprintf(rec, sizeof rec, "%s/%s/RECORD", d, de->d_name);
                size_t n;
                char *r = read_file(rec, &n, 4 << 20);
                for (char *hit = r ? strstr(r, want) : NULL; hit && !found; hit = strstr(hit + 1, want)) {
                    char *eol = strchr(hit, '\n'), *comma = eol ? eol : hit + strlen(hit);
                    while (comma > hit && comma[-1] != ',')
                        comma--;
                    found = strtoll(comma, NULL, 10) == size;
                }
                free(r);
                if (found) {
                    const char *v = strchr(de->d_name, '-') + 1;
                    snprintf(out, cap, "%.*s", (int)(strlen(v) - 10), v);
                }
            }
            closedir(dd);
            if (found)
                return true;
        }
    }
    return false;
}

/* ---- the process */
struct proc {
    long long pid, uid;
    char root[64];       /* "" or "/proc/PID/root": where its paths are, seen from here */
    json_t *libs;        /* [{path, dir, file, soname, kind, family, label, version, version_text, version_source, ...}] */
    json_t *frameworks;  /* [{name, label, build, path}] */
    json_t *env;         /* the variables that matter (as the shim's start.env) */
    json_t *argv;
    char *exe, *cwd;
    json_t *shim;        /* {preloaded, path, trace_dir, trace} */
    json_t *gpu;         /* {known, ...} */
    bool kernel_thread;
};

static void seen_path(const struct proc *p, const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", p->root, path);
}

static bool env_wanted(const char *k, size_t n)
{
    static const char *const exact[] = {"LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_VISIBLE_DEVICES",
                                        "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "CUDA_MODULE_LOADING",
                                        "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
                                        "RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "CUDA_CACHE_PATH",
                                        "CONDA_PREFIX", "VIRTUAL_ENV"};
    static const char *const prefixes[] = {"TF_", "XLA_", "JAX_", "CUDNN_", "CONVGUARD_", "NCCL_DEBUG"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strlen(exact[i]) == n && strncmp(k, exact[i], n) == 0)
            return true;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (n >= strlen(prefixes[i]) && strncmp(k, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static void read_env(struct proc *p)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%lld/environ", p->pid);
    char *s = read_file(path, &n, 4 << 20);
    p->env = json_object();
    for (size_t i = 0; s && i < n;) {
        const char *kv = s + i, *eq = memchr(kv, '=', n - i);
        size_t len = strnlen(kv, n - i);
        if (eq && eq < kv + len && env_wanted(kv, (size_t)(eq - kv))) {
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
            char *val = xasprintf("%.*s", (int)(len - (size_t)(eq - kv) - 1), eq + 1);
            json_t *js = json_string(val);
            json_object_set_new(p->env, key, js ? js : json_string("(not UTF-8)"));
            free(val);
        }
        i += len + 1;
    }
    free(s);
}

static void read_argv(struct proc *p)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%lld/cmdline", p->pid);
    char *s = read_file(path, &n, 1 << 16);
    p->argv = json_array();
    for (size_t i = 0; s && i < n;) {
        size_t len = strnlen(s + i, n - i);
        char *a = xasprintf("%.*s", (int)len, s + i);
        json_t *js = json_string(a);
        json_array_append_new(p->argv, js ? js : json_string("?"));
        free(a);
        i += len + 1;
    }
    free(s);
}

/* one mapped CUDA file: its own version, read from the file */
static json_t *describe_lib(struct proc *p, const struct kind *k, const char *path, bool deleted,
                            unsigned long long inode)
{
    char rpath[PATH_MAX + 64], d[PATH_MAX];
    seen_path(p, path, rpath, sizeof rpath);
    const char *base = base_name(path);
    json_t *l = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:b}", "path", path, "dir", dir_name(path, d, sizeof d),
                          "file", base, "kind", k->kind, "family", k->family, "label", k->label, "inode",
                          (json_int_t)inode, "deleted", deleted);
    struct stat st;
    bool have = stat(rpath, &st) == 0;
    if (have && (unsigned long long)st.st_ino != inode && !deleted)
        json_object_set_new(l, "replaced", json_true());
    struct elf_file e;
    bool elf = !deleted && elf_file_open(rpath, &e) == 0;
    const char *soname = elf ? elf_file_soname(&e) : NULL;
    json_object_set_new(l, "soname", json_string(soname ? soname : base));
    long long ver = -1;
    const char *src = NULL;
    char text[64] = "";
    const char *fv = name_version(base);
    if (*fv)
        json_object_set_new(l, "file_version", json_string(fv));
    if (strcmp(k->kind, "cudnn") == 0) {
        if (elf && (ver = elf_file_cudnn_version(&e)) > 0)
            src = "data";
        else if ((ver = cg_cudnn_version_parse(fv)) > 0)
            src = "file_name";
        else if (have && k->wheel && wheel_version(rpath, k->wheel, st.st_size, text, sizeof text) &&
                 (ver = cg_cudnn_version_parse(text)) > 0)
            src = "wheel";
        if (ver > 0)
            fmt_cudnn_ver(ver, text, sizeof text);
    } else {
        if (*fv)
            snprintf(text, sizeof text, "%s", fv), src = "file_name";
        else if (have && k->wheel && wheel_version(rpath, k->wheel, st.st_size, text, sizeof text))
            src = "wheel";
        if (src && strcmp(k->kind, "cudart") == 0)
            ver = cuda_encode(text);
    }
    if (elf)
        elf_file_close(&e);
    json_object_set_new(l, "version", ver > 0 ? json_integer(ver) : json_null());
    json_object_set_new(l, "version_text", *text ? json_string(text) : json_null());
    json_object_set_new(l, "version_source", src ? json_string(src) : json_null());
    return l;
}

/* A cuDNN file with no version of its own (the dispatcher libcudnn.so.9 has
 * none to read without running it) takes the version of a part of the same
 * major in the same folder: one folder, one install. */
static void cudnn_folder_versions(struct proc *p)
{
    size_t i, j;
    json_t *l, *o;
    json_array_foreach(p->libs, i, l) {
        if (strcmp(jstr(l, "kind", ""), "cudnn") || jint(l, "version", -1) > 0)
            continue;
        const char *so = strstr(jstr(l, "soname", ""), ".so.");
        long long from = -1;
        const char *who = NULL;
        json_array_foreach(p->libs, j, o) {
            const char *oso = strstr(jstr(o, "soname", ""), ".so.");
            if (j != i && !strcmp(jstr(o, "kind", ""), "cudnn") && jint(o, "version", -1) > 0 && so && oso &&
                !strcmp(so, oso) && !strcmp(jstr(o, "dir", ""), jstr(l, "dir", "-"))) {
                from = jint(o, "version", -1), who = jstr(o, "file", "?");
                break;
            }
        }
        char sib[PATH_MAX + 64], *whobuf = NULL;
        if (from < 0 && so) {
            /* not mapped yet: the graph part on disk beside it */
            static const char *const parts[] = {"libcudnn_graph", "libcudnn_ops_infer", "libcudnn_ops"};
            for (size_t k = 0; k < 3 && from < 0; k++) {
                snprintf(sib, sizeof sib, "%s%s/%s%s", p->root, jstr(l, "dir", ""), parts[k], so);
                struct elf_file e;
                if (elf_file_open(sib, &e) == 0) {
                    from = elf_file_cudnn_version(&e);
                    elf_file_close(&e);
                    if (from > 0)
                        who = whobuf = xasprintf("%s%s", parts[k], so);
                }
            }
        }
        if (from > 0) {
            char v[32];
            json_object_set_new(l, "version", json_integer(from));
            json_object_set_new(l, "version_text", json_string(fmt_cudnn_ver(from, v, sizeof v)));
            json_object_set_new(l, "version_source", json_string("folder"));
            json_object_set_new(l, "version_from", json_string(who));
        }
        free(whobuf);
    }
}

/* a line "Key:\t<hex>" of a status file (CapEff, CapPrm); 0 when absent */
static unsigned long long status_hex(const char *path, const char *key)
{
    size_t n;
    char *s = read_file(path, &n, 1 << 16);
    char *k = s ? strstr(s, key) : NULL;
    unsigned long long v = k ? strtoull(k + strlen(key), NULL, 16) : 0;
    free(s);
    return v;
}

/* Why the kernel refused to let us read the map (ptrace_may_access, READ
 * mode): another owner, a process holding capabilities we lack, or one that
 * is not dumpable; each is waived by CAP_SYS_PTRACE (bit 19), which a
 * container drops by default.  Yama's ptrace_scope limits attaching only, and
 * reading a map is not attaching.  Returns the message's middle part. */
static const char *denial_reason(long long pid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%lld/status", pid);
    int ptrace_cap = (status_hex("/proc/self/status", "CapEff:") >> 19) & 1;
    long long uid = proc_status_field(pid, "Uid:");
    if (ptrace_cap)
        return "refused although this process has CAP_SYS_PTRACE (a security module: AppArmor, SELinux)";
    if (uid != (long long)geteuid())
        snprintf(buf, cap, "belongs to another user (uid %lld)%s", uid,
                 geteuid() ? "" : " and convguard runs without CAP_SYS_PTRACE (a container's default)");
    else if (status_hex(path, "CapPrm:") & ~status_hex("/proc/self/status", "CapPrm:"))
        snprintf(buf, cap, "holds capabilities convguard lacks, and convguard runs without CAP_SYS_PTRACE "
                           "(a container's default)");
    else
        snprintf(buf, cap, "is not dumpable (it changed its identity or set PR_SET_DUMPABLE 0), and convguard "
                           "runs without CAP_SYS_PTRACE");
    return buf;
}

/* why the memory map could not be read, told; the exit code */
static int maps_unreadable(struct proc *p, const char *me, const char *path, int e)
{
    if (e == ENOENT || e == ESRCH) {
        fprintf(stderr, "%s: no process %lld (it does not exist, or it exited)\n", me, p->pid);
        return INSPECT_NO_PROCESS;
    }
    if (e == EACCES || e == EPERM) {
        char why[256];
        fprintf(stderr,
                "%s: process %lld %s: its memory map can be read only by its user or a process with "
                "CAP_SYS_PTRACE; run `convguard inspect %lld` as that user, with sudo, or in a container started "
                "with --cap-add=SYS_PTRACE\n",
                me, p->pid, denial_reason(p->pid, why, sizeof why), p->pid);
        return INSPECT_PERMISSION;
    }
    fprintf(stderr, "%s: %s: %s\n", me, path, strerror(e));
    return INSPECT_NO_PROCESS;
}

/* a mapped file that marks a framework: which one, and whether its CUDA build */
static void note_framework(struct proc *p, const char *file)
{
    for (size_t i = 0; i < sizeof fw_markers / sizeof fw_markers[0]; i++) {
        if (!strstr(file, fw_markers[i].needle))
            continue;
        json_t *f = NULL, *x;
        size_t j;
        json_array_foreach(p->frameworks, j, x) if (!strcmp(jstr(x, "name", ""), fw_markers[i].name)) f = x;
        if (!f)
            json_array_append_new(p->frameworks,
                                  f = json_pack("{s:s, s:s, s:s, s:s}", "name", fw_markers[i].name, "label",
                                                fw_markers[i].label, "build", "?", "path", file));
        if (fw_markers[i].cuda) {
            json_object_set_new(f, "build", json_string("cuda"));
            json_object_set_new(f, "path", json_string(file));
        }
        if (!fw_markers[i].cuda && !strcmp(fw_markers[i].name, "torch") && !strcmp(jstr(f, "build", ""), "?"))
            json_object_set_new(f, "build", json_string("cpu?"));
    }
}

/* one line of the map: a CUDA library, the shim, a framework's object (each file once) */
static void map_line(struct proc *p, char *line, json_t *seen)
{
    unsigned long long inode = 0;
    int off = 0;
    /* start-end perms offset dev inode path */
    if (sscanf(line, "%*s %*s %*s %*s %llu %n", &inode, &off) < 1 || off <= 0 || line[off] != '/')
        return;
    char *file = line + off;
    size_t fl = strlen(file);
    bool deleted = fl > 10 && strcmp(file + fl - 10, " (deleted)") == 0;
    if (deleted)
        file[fl - 10] = 0;
    if (json_object_get(seen, file))
        return;
    json_object_set_new(seen, file, json_true());
    const char *base = base_name(file);
    const struct kind *k = kind_of(base);
    if (k)
        json_array_append_new(p->libs, describe_lib(p, k, file, deleted, inode));
    if (strncmp(base, "libconvguard", 12) == 0)
        json_object_set_new(p->shim, "preloaded", json_true()), json_object_set_new(p->shim, "path", json_string(file));
    note_framework(p, file);
}

/* The framework's build, from its own files beside the mapped object:
 * TensorFlow's python/platform/build_info.py ('is_cuda_build'), PyTorch's
 * version.py (`cuda = None` in a CPU build), JAX's CUDA plugin installed
 * beside jaxlib.  "unknown" when none says. */
static const char *build_from_files(const struct proc *p, const char *name, const char *path)
{
    static const struct { const char *name, *dir, *file; } where[] = {
        {"tensorflow", "/tensorflow/", "python/platform/build_info.py"},
        {"torch", "/torch/", "version.py"},
    };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        const char *d = strcmp(name, where[i].name) == 0 ? strstr(path, where[i].dir) : NULL;
        if (!d)
            continue;
        char f[PATH_MAX + 64];
        size_t n;
        snprintf(f, sizeof f, "%s%.*s%s", p->root, (int)(d - path + strlen(where[i].dir)), path, where[i].file);
        char *t = read_file(f, &n, 1 << 20);
        const char *b = !t ? "unknown"
                        : strstr(t, "'is_cuda_build': True") ? "cuda"
                        : strstr(t, "'is_cuda_build': False") ? "cpu"
                        : i == 1 && (strstr(t, "\ncuda: Optional[str] = None") || strstr(t, "\ncuda = None")) ? "cpu"
                        : i == 1 && (strstr(t, "\ncuda: Optional[str] = '") || strstr(t, "\ncuda = '")) ? "cuda"
                                                                                                : "unknown";
        free(t);
        return b;
    }
    const char *j = strcmp(name, "jax") == 0 ? strstr(path, "/jaxlib/") : NULL;
    if (j) { /* site-packages/jax_cuda12_plugin, or jax_plugins/xla_cuda12 */
        char site[PATH_MAX + 64];
        snprintf(site, sizeof site, "%s%.*s", p->root, (int)(j - path), path);
        DIR *dd = opendir(site);
        struct dirent *de;
        bool plugin = false;
        while (dd && !plugin && (de = readdir(dd)))
            plugin = strncmp(de->d_name, "jax_cuda", 8) == 0 && strstr(de->d_name, "_plugin") != NULL;
        if (dd)
            closedir(dd);
        return plugin ? "cuda" : "cpu";
    }
    return "unknown";
}

static int read_maps(struct proc *p, const char *me)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%lld/maps", p->pid);
    char *m = read_file(path, &n, 64 << 20);
    if (!m)
        return maps_unreadable(p, me, path, errno);
    if (n == 0) { /* m is still read below (an empty map): freed there */
        if (proc_gone(p->pid)) {
            free(m);
            fprintf(stderr, "%s: process %lld exited while it was being read\n", me, p->pid);
            return INSPECT_NO_PROCESS;
        }
        p->kernel_thread = true;
    }
    p->libs = json_array();
    p->frameworks = json_array();
    p->shim = json_pack("{s:b}", "preloaded", false);
    json_t *seen = json_object();
    for (char *line = m; line && line < m + n;) {
        char *eol = memchr(line, '\n', (size_t)(m + n - line));
        if (eol)
            *eol = 0;
        map_line(p, line, seen);
        line = eol ? eol + 1 : NULL;
    }
    json_decref(seen);
    free(m);
    /* PyTorch's CPU build maps libtorch_cpu.so and no libtorch_cuda.so */
    size_t j;
    json_t *x;
    json_array_foreach(p->frameworks, j, x) {
        if (!strcmp(jstr(x, "build", ""), "cpu?"))
            json_object_set_new(x, "build", json_string("cpu"));
        if (!strcmp(jstr(x, "build", ""), "?"))
            json_object_set_new(x, "build", json_string(build_from_files(p, jstr(x, "name", ""), jstr(x, "path", ""))));
    }
    cudnn_folder_versions(p);
    return 0;
}

/* where the shim in it writes: CONVGUARD_DIR (else ./convguard-logs of its
 * cwd), file <host>[-r<rank>]-<pid>[.<n>].jsonl; the highest n is this image */
static void find_trace(struct proc *p)
{
    const char *d = jstr(p->env, "CONVGUARD_DIR", NULL);
    char *dir = d && *d == '/' ? xstrdup(d) : xasprintf("%s/%s", p->cwd ? p->cwd : ".", d && *d ? d : "convguard-logs");
    json_object_set_new(p->shim, "trace_dir", json_string(dir));
    char rdir[PATH_MAX + 64];
    seen_path(p, dir, rdir, sizeof rdir);
    DIR *dd = opendir(rdir);
    char best[512] = "";
    long best_n = -1;
    char tail[64];
    int tl = snprintf(tail, sizeof tail, "-%lld", p->pid);
    struct dirent *de;
    while (dd && (de = readdir(dd))) {
        const char *hit = strstr(de->d_name, tail);
        while (hit && strstr(hit + 1, tail))
            hit = strstr(hit + 1, tail);
        if (!hit)
            continue;
        const char *rest = hit + tl;
        long nth = 1;
        if (*rest == '.' && isdigit((unsigned char)rest[1])) {
            char *end;
            nth = strtol(rest + 1, &end, 10);
            rest = end;
        }
        if (strcmp(rest, ".jsonl") != 0 || nth <= best_n)
            continue;
        best_n = nth;
        snprintf(best, sizeof best, "%s", de->d_name);
    }
    if (dd)
        closedir(dd);
    if (*best) {
        char *t = xasprintf("%s/%s", dir, best);
        json_object_set_new(p->shim, "trace", json_string(t));
        free(t);
    } else {
        json_object_set_new(p->shim, "trace", json_null());
    }
    free(dir);
}

/* GPU memory from NVML, in a child (doctor.c's probe); unknown without it */
static void read_gpu(struct proc *p)
{
    json_t *r = probe(child_nvml, NULL);
    const char *err = jstr(r, "error", NULL);
    if (err) {
        p->gpu = json_pack("{s:b, s:s}", "known", false, "why", err);
        /* no NVML: is there a driver at all?  doctor's question, asked the same way */
        json_t *drv = probe(child_lib_version, "libcuda.so.1");
        if (jstr(drv, "error", NULL))
            json_object_set_new(p->gpu, "no_driver", json_string(jstr(drv, "error", "?")));
        json_decref(drv);
        json_decref(r);
        return;
    }
    long long mine = 0;
    size_t i, k;
    json_t *g, *h, *gpus = json_array();
    json_array_foreach(jget(r, "gpus"), i, g) {
        long long here = 0;
        json_t *others = json_array();
        json_array_foreach(jget(g, "holders"), k, h) {
            if (jint(h, "pid", -1) == p->pid)
                here += jint(h, "bytes", 0);
            else
                json_array_append(others, h);
        }
        mine += here;
        json_array_append_new(gpus, json_pack("{s:I, s:O, s:O, s:I, s:o}", "index", (json_int_t)jint(g, "index", -1),
                                              "name", jget(g, "name") ?: json_null(), "mem",
                                              jget(g, "mem") ?: json_null(), "this_process_bytes", (json_int_t)here,
                                              "other_holders", others));
    }
    p->gpu = json_pack("{s:b, s:I, s:o, s:O}", "known", true, "bytes_held", (json_int_t)mine, "gpus", gpus,
                       "driver_cuda", jget(r, "cuda") ?: json_null());
    json_decref(r);
}

/* ---- the snapshot as a trace, for the rules */
static json_t *ev_new(json_t *evs, const char *name, struct proc *p)
{
    json_t *e = json_pack("{s:s, s:I, s:i, s:I, s:I}", "ev", name, "seq", (json_int_t)json_array_size(evs), "t", 0,
                          "pid", (json_int_t)p->pid, "tid", (json_int_t)p->pid);
    json_array_append_new(evs, e);
    return e;
}

/* a mapped file that is not the one on disk any more: a fact, as the shim's
 * lib_changed event; what it means, and every verdict about the libraries,
 * is analysis/diagnose.c's, as for a trace */
static void add_changed(json_t *evs, struct proc *p)
{
    size_t i;
    json_t *a;
    json_array_foreach(p->libs, i, a) {
        if (!jtrue(a, "deleted") && !jtrue(a, "replaced"))
            continue;
        json_t *v = ev_new(evs, "lib_changed", p);
        json_object_set_new(v, "path", json_string(jstr(a, "path", "?")));
        json_object_set_new(v, "when", json_string("inspect"));
        json_object_set_new(v, "deleted", json_boolean(jtrue(a, "deleted")));
    }
}

static json_t *snapshot_events(struct proc *p, const char *host)
{
    json_t *evs = json_array();
    json_t *s = ev_new(evs, "start", p);
    json_object_set_new(s, "convguard", json_string(CONVGUARD_VERSION));
    json_object_set_new(s, "ppid", json_integer(proc_status_field(p->pid, "PPid:")));
    json_object_set_new(s, "exe", json_string(p->exe ? p->exe : "?"));
    json_object_set(s, "argv", p->argv);
    json_object_set_new(s, "cwd", json_string(p->cwd ? p->cwd : "?"));
    json_object_set_new(s, "host", json_string(host));
    json_object_set_new(s, "rank", json_null());
    json_object_set_new(s, "uid", json_integer(p->uid));
    json_object_set(s, "env", p->env);
    size_t i;
    json_t *l;
    json_array_foreach(p->libs, i, l) {
        json_t *e = ev_new(evs, "lib", p);
        static const char *const keep[] = {"path",           "soname",       "family",        "version",
                                           "version_source", "file_version", "cuda_built_for"};
        for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++)
            if (jget(l, keep[k]) && !json_is_null(jget(l, keep[k])))
                json_object_set(e, keep[k], jget(l, keep[k]));
        json_object_set_new(e, "inode", json_integer(jint(l, "inode", 0)));
        json_object_set_new(e, "via", json_string("(mapped)"));
    }
    add_changed(evs, p);
    json_t *x = ev_new(evs, "exit", p);
    json_object_set_new(x, "snapshot", json_true());
    json_object_set_new(x, "libs", json_integer((json_int_t)json_array_size(p->libs)));
    json_t *names = json_array(), *f;
    json_array_foreach(p->frameworks, i, f) json_array_append_new(names, json_string(jstr(f, "name", "?")));
    json_object_set_new(x, "frameworks", names);
    if (jtrue(p->gpu, "known"))
        json_object_set_new(x, "gpu_memory_held", json_integer(jint(p->gpu, "bytes_held", 0)));
    if (jstr(p->gpu, "no_driver", NULL)) /* a fact of the machine, for the rules' fix */
        json_object_set_new(x, "machine_driver", json_pack("{s:b, s:s}", "loadable", false, "error",
                                                          jstr(p->gpu, "no_driver", "?")));
    json_t *builds = json_object();
    json_array_foreach(p->frameworks, i, f) json_object_set_new(builds, jstr(f, "name", "?"),
                                                                json_string(jstr(f, "build", "unknown")));
    json_object_set_new(x, "framework_builds", builds);
    return evs;
}

/* ---- output */
/* text: what /proc says, escaped and wrapped at the terminal's width (util/term.c) */
static void wrap_text(FILE *out, const char *head, const char *text, int indent)
{
    term_wrap(out, term_width(out), head, text, indent);
}

static const char *const memory_knobs[] = {
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING", "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_GPU_ALLOCATOR", "TF_CUDNN_WORKSPACE_LIMIT_IN_MB", "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR", "CUDA_MODULE_LOADING",
};

static void print_libs(struct proc *p, FILE *out)
{
    size_t i;
    json_t *l;
    if (!json_array_size(p->libs)) {
        fprintf(out, "  CUDA libraries mapped now: none%s\n", p->kernel_thread ? " (a kernel thread: no memory map)" : "");
        return;
    }
    fprintf(out, "  CUDA libraries mapped now:\n");
    json_array_foreach(p->libs, i, l) {
        const char *vt = jstr(l, "version_text", NULL), *src = jstr(l, "version_source", NULL);
        char *v = !vt ? xstrdup("version unknown")
                  : !strcmp(src, "folder") ? xasprintf("%s (of %s beside it)", vt, jstr(l, "version_from", "?"))
                  : !strcmp(src, "data") ? xasprintf("%s", vt)
                  : xasprintf("%s (%s)", vt, !strcmp(src, "wheel") ? "its wheel" : "its file name");
        /* two lines: what and which version, then where (a folder is often longer than a line) */
        char *raw = xasprintf("    %-13s %-28s ", jstr(l, "label", "?"), jstr(l, "file", "?")), *what = term_text(raw);
        free(raw);
        term_wrap(out, term_width(out), what, v, 18);
        char *dir = path_tidy(jstr(l, "dir", "?"));
        char *where = xasprintf("in %s%s", dir, jtrue(l, "deleted") ? " (deleted on disk)" : jtrue(l, "replaced") ? " (replaced on disk)" : "");
        term_wrap(out, term_width(out), "                  ", where, 21);
        free(what), free(dir), free(where);
        free(v);
    }
}

static void print_frameworks(struct proc *p, FILE *out)
{
    size_t i;
    json_t *f;
    struct sbuf fw = {0};
    json_array_foreach(p->frameworks, i, f) {
        const char *b = jstr(f, "build", "?");
        sb_printf(&fw, "%s%s%s", fw.len ? "; " : "", jstr(f, "label", "?"),
                  !strcmp(b, "cuda") ? " (CUDA build)" : !strcmp(b, "cpu") ? " (CPU-only build)" : "");
        sb_printf(&fw, ", %s", jstr(f, "path", "?"));
    }
    wrap_text(out, "  framework: ", fw.len ? fw.s : "none seen (no PyTorch, TensorFlow, JAX, CuPy or onnxruntime object mapped)", 13);
    free(fw.s);
}

/* the environment the loader and the frameworks' memory read */
static void print_env(struct proc *p, FILE *out)
{
    const char *cvd = jstr(p->env, "CUDA_VISIBLE_DEVICES", NULL), *llp = jstr(p->env, "LD_LIBRARY_PATH", NULL);
    struct sbuf env = {0};
    sb_printf(&env, "CUDA_VISIBLE_DEVICES%s%s%s", cvd ? "=\"" : " unset", cvd ? cvd : "", cvd ? "\"" : "");
    sb_printf(&env, "  LD_LIBRARY_PATH%s%s%s", llp ? "=\"" : " unset", llp ? llp : "", llp ? "\"" : "");
    wrap_text(out, "  environment: ", env.s, 15);
    free(env.s);
    struct sbuf mk = {0};
    for (size_t k = 0; k < sizeof memory_knobs / sizeof memory_knobs[0]; k++)
        if (jstr(p->env, memory_knobs[k], NULL))
            sb_printf(&mk, "%s%s=%s", mk.len ? "  " : "", memory_knobs[k], jstr(p->env, memory_knobs[k], ""));
    wrap_text(out, "  memory settings: ", mk.len ? mk.s : "none set (the frameworks' defaults)", 19);
    free(mk.s);
}

static void print_gpu_memory(struct proc *p, FILE *out)
{
    char sz[32], sz2[32], sz3[32];
    if (!jtrue(p->gpu, "known")) {
        wrap_text(out, "  GPU memory: ", "unknown", 14);
        char *why = xasprintf("(%s)", jstr(p->gpu, "why", "?"));
        wrap_text(out, "              ", why, 14);
        free(why);
        return;
    }
    struct sbuf g = {0};
    json_t *gpu, *h;
    size_t i, k;
    sb_printf(&g, "this process holds %s", fmt_size(jint(p->gpu, "bytes_held", 0), sz, sizeof sz));
    json_array_foreach(jget(p->gpu, "gpus"), i, gpu) {
        const char *gname = jstr(gpu, "name", "");
        sb_printf(&g, "; GPU %lld%s%s: %s of %s free, this process %s", jint(gpu, "index", -1),
                  *gname ? " " : "", gname, fmt_size(jint(gpu, "mem.free", 0), sz, sizeof sz),
                  fmt_size(jint(gpu, "mem.total", 0), sz2, sizeof sz2),
                  fmt_size(jint(gpu, "this_process_bytes", 0), sz3, sizeof sz3));
        json_array_foreach(jget(gpu, "other_holders"), k, h)
            sb_printf(&g, ", pid %lld (%s) %s", jint(h, "pid", -1), jstr(h, "name", "?"),
                      fmt_size(jint(h, "bytes", 0), sz, sizeof sz));
    }
    wrap_text(out, "  GPU memory: ", g.s, 14);
    free(g.s);
}

static void print_shim(struct proc *p, FILE *out)
{
    if (!jtrue(p->shim, "preloaded")) {
        wrap_text(out, "  convguard: ", "not preloaded (to trace it from its start: `convguard run -- CMD`)", 13);
        return;
    }
    const char *t = jstr(p->shim, "trace", NULL);
    char *s = t ? xasprintf("preloaded (%s); its trace: %s (`convguard report %s`)", jstr(p->shim, "path", "?"), t, t)
                : xasprintf("preloaded (%s); no trace yet in %s", jstr(p->shim, "path", "?"),
                            jstr(p->shim, "trace_dir", "?"));
    wrap_text(out, "  convguard: ", s, 13);
    free(s);
}

static void print_snapshot(struct proc *p, struct analysis *a, FILE *out)
{
    int problems = analysis_problems(a);
    char verdict[64];
    snprintf(verdict, sizeof verdict, "%d problem%s", problems, problems > 1 ? "s" : "");
    char *head = xasprintf("pid %lld (%s), running now: %s", p->pid, a->p[0].prog,
                           problems ? verdict : !json_array_size(p->libs) ? "no CUDA library mapped" : "no problem found");
    wrap_text(out, "convguard inspect: ", head, 4);
    free(head);
    print_libs(p, out);
    print_frameworks(p, out);
    print_env(p, out);
    print_gpu_memory(p, out);
    print_shim(p, out);
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *fd = &a->f[i];
        char *h = xasprintf("[%s] %s", fd->r->layer, fd->title);
        wrap_text(out, "", h, 4);
        free(h);
        wrap_text(out, "    you see: ", fd->symptom, 13);
        wrap_text(out, "    cause:   ", fd->cause, 13);
        wrap_text(out, "    fix:     ", fd->fix, 13);
    }
}

static json_t *snapshot_json(struct proc *p, struct analysis *a, int rc)
{
    json_t *rj = analysis_json(a);
    json_t *j = json_pack("{s:i, s:I, s:s, s:O, s:s, s:s, s:I, s:O, s:O, s:O, s:O, s:O, s:i, s:O, s:i}",
                          "convguard_inspect", 1, "pid", (json_int_t)p->pid, "program", a->p[0].prog, "argv", p->argv,
                          "exe", p->exe ? p->exe : "?", "cwd", p->cwd ? p->cwd : "?", "uid", (json_int_t)p->uid,
                          "libraries", p->libs, "frameworks", p->frameworks, "env", p->env, "gpu_memory", p->gpu,
                          "convguard", p->shim, "problems", analysis_problems(a), "findings",
                          jget(rj, "findings") ?: json_null(), "exit_status", rc);
    json_decref(rj);
    return j;
}

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard inspect [--json] [--html FILE] [--pid] PID...\n"
               "  the CUDA libraries, framework, settings and GPU memory of running\n"
               "  processes, read from /proc/PID without stopping them, and the report's\n"
               "  diagnosis; several PIDs (`$(pgrep -f train.py)`) one after the other,\n"
               "  convguard's own processes among them skipped with a note\n"
               "  --json       as JSON (several PIDs: an array of them)\n"
               "  --html FILE  one process as a page (-: on stdout)\n"
               "  --pid PID    the same as PID (py-spy's spelling)\n"
               "exit status: 0 no problem, 1 problems, 2 usage, 3 not a process id,\n"
               "  4 no such process (or it exited), 5 permission denied (another user,\n"
               "  no CAP_SYS_PTRACE), 6 no CUDA library mapped; several PIDs: 1 when any\n"
               "  has problems, else the best of the others\n");
    return rc;
}

/* ARG as a process id: a whole number from 1 to the kernel's largest */
static bool parse_pid(const char *arg, long long *pid)
{
    char *end = NULL;
    errno = 0;
    *pid = strtoll(arg, &end, 10);
    bool digits = *arg && strspn(arg, "0123456789") == strlen(arg);
    return digits && !errno && *pid > 0 && *pid <= 4194304;
}

static void proc_free(struct proc *p)
{
    json_decref(p->libs), json_decref(p->frameworks), json_decref(p->shim), json_decref(p->env), json_decref(p->argv);
    json_decref(p->gpu);
    free(p->exe), free(p->cwd);
}

/* all that is read of the running process; 0, or the exit code (told) */
static int read_process(struct proc *p, const char *me)
{
    long long pid = p->pid;
    char *root = proc_link(pid, "root");
    if (root && strcmp(root, "/") != 0)
        snprintf(p->root, sizeof p->root, "/proc/%lld/root", pid);
    free(root);
    int rc = read_maps(p, me);
    if (rc)
        return rc;
    p->uid = proc_status_field(pid, "Uid:");
    read_env(p);
    read_argv(p);
    p->exe = proc_link(pid, "exe");
    p->cwd = proc_link(pid, "cwd");
    if (proc_gone(pid)) {
        fprintf(stderr, "%s: process %lld exited while it was being read\n", me, pid);
        proc_free(p);
        return INSPECT_NO_PROCESS;
    }
    find_trace(p);
    read_gpu(p);
    return 0;
}

/* the snapshot as a trace set of one process, for analyse() */
static void snapshot_set(struct proc *p, struct trace_set *s)
{
    struct utsname u;
    char host[256];
    snprintf(host, sizeof host, "%s", uname(&u) == 0 ? u.nodename : "host");
    *s = (struct trace_set){0};
    s->t = calloc(1, sizeof *s->t);
    s->n = s->cap = 1;
    s->unreadable = json_array();
    struct trace *t = &s->t[0];
    t->file = xasprintf("/proc/%lld", p->pid);
    t->events = snapshot_events(p, host);
    t->start = json_array_get(t->events, 0);
    t->exit = json_array_get(t->events, json_array_size(t->events) - 1);
    t->pid = p->pid, t->ppid = jint(t->start, "ppid", -1), t->forked_from = -1, t->rank = -1;
    t->host = jstr(t->start, "host", "?");
    t->parent = -1;
}

/* convguard's own processes: `convguard run` and its signal relay, shown as
 * `cg-signals ARGV` (run_signals.c), which `pgrep -f train.py` finds beside
 * the program */
static const char *convguard_own(long long pid)
{
    char p[64], comm[64] = "";
    size_t n;
    snprintf(p, sizeof p, "/proc/%lld/comm", pid);
    char *c = read_file(p, &n, sizeof comm);
    if (c)
        snprintf(comm, sizeof comm, "%.*s", (int)strcspn(c, "\n"), c);
    free(c);
    if (strcmp(comm, "cg-signals") == 0)
        return "convguard run's signal relay (cg-signals)";
    char *exe = proc_link(pid, "exe");
    bool own = exe && strcmp(base_name(exe), "convguard") == 0;
    free(exe);
    return own ? "convguard itself" : NULL;
}

/* one process inspected and shown; its exit code */
static int inspect_one(long long pid, bool as_json, const char *html, json_t *all)
{
    const char *me = "convguard inspect";
    struct proc p = {.pid = pid};
    int rc = read_process(&p, me);
    if (rc)
        return rc;
    struct trace_set s;
    snapshot_set(&p, &s);
    struct analysis *a = analyse(&s);
    rc = analysis_problems(a) ? INSPECT_PROBLEMS : json_array_size(p.libs) == 0 ? INSPECT_NO_CUDA : INSPECT_OK;
    if (as_json) {
        json_t *j = snapshot_json(&p, a, rc);
        if (all)
            json_array_append_new(all, j);
        else
            json_dumpf(j, stdout, JSON_INDENT(2)), fputc('\n', stdout), json_decref(j);
    } else {
        print_snapshot(&p, a, stdout);
    }
    if (rc == INSPECT_NO_CUDA)
        fprintf(stderr, "%s: process %lld has no CUDA library mapped%s\n", me, pid,
                json_array_size(p.frameworks) ? ": its framework does not use the GPU (now)" : "");
    if (html && write_html(a, html) != 0) {
        perror(html);
        rc = INSPECT_USAGE;
    } else if (html && strcmp(html, "-") != 0) {
        term_printf(stderr, "%s: wrote %s\n", me, html);
    }
    analysis_free(a);
    trace_set_free(&s);
    proc_free(&p);
    return rc;
}

/* several processes: problems anywhere first, then a clean one, then the
 * first error; one inspected is better than none */
static int combine(int sofar, int rc)
{
    static const int rank[] = {[INSPECT_PROBLEMS] = 6, [INSPECT_OK] = 5, [INSPECT_NO_CUDA] = 4,
                               [INSPECT_PERMISSION] = 3, [INSPECT_NO_PROCESS] = 2, [INSPECT_NOT_A_PID] = 1};
    if (sofar < 0)
        return rc;
    return rc >= 0 && rc <= INSPECT_NO_CUDA && rank[rc] > rank[sofar] ? rc : sofar;
}

int cmd_inspect(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"html", required_argument, 0, 'H'},
                                             {"pid", required_argument, 0, 'p'}, {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *me = "convguard inspect", *html = NULL;
    bool as_json = false;
    int c;
    json_t *pids = json_array();
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jH:p:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = true; break;
        case 'H': html = optarg; break;
        case 'p': json_array_append_new(pids, json_string(optarg)); break;
        case 'h': json_decref(pids); return usage(stdout, 0);
        default: json_decref(pids); return usage(stderr, INSPECT_USAGE);
        }
    }
    for (int i = optind; i < argc; i++)
        json_array_append_new(pids, json_string(argv[i]));
    size_t n = json_array_size(pids);
    if (n == 0 || (html && n > 1)) {
        if (n > 1)
            fprintf(stderr, "%s: --html draws one process: give it one PID\n", me);
        else
            fprintf(stderr, "%s: no PID given (`pgrep -f train.py` finds them; an empty `$(pgrep ...)`: no such "
                            "process runs)\n", me);
        json_decref(pids);
        return usage(stderr, INSPECT_USAGE);
    }
    json_t *all = as_json && n > 1 ? json_array() : NULL;
    int rc = -1, shown = 0;
    for (size_t i = 0; i < n; i++) {
        const char *arg = json_string_value(json_array_get(pids, i));
        long long pid;
        const char *own = NULL;
        if (!parse_pid(arg, &pid)) {
            fprintf(stderr, "%s: '%s' is not a process id (a whole number from 1, as `pgrep -f train.py` or "
                            "`nvidia-smi` print)\n", me, arg);
            rc = combine(rc, INSPECT_NOT_A_PID);
        } else if (n > 1 && (pid == (long long)getpid() || (own = convguard_own(pid)))) {
            fprintf(stderr, "%s: pid %lld skipped: %s, not the program\n", me, pid,
                    pid == (long long)getpid() ? "this inspect" : own);
        } else {
            if (shown++ && !as_json)
                fputc('\n', stdout);
            rc = combine(rc, inspect_one(pid, as_json, html, all));
        }
    }
    if (all) {
        json_dumpf(all, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(all);
    }
    json_decref(pids);
    return rc < 0 ? INSPECT_NO_PROCESS : rc;
}
