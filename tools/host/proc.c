/* proc.c - a process that is running now, read from outside: only
 * /proc/PID/{maps,environ,cmdline,status,cwd,root,exe,comm} and the files it
 * mapped are read; no ptrace, no signal, nothing runs inside it.  Its GPU
 * memory comes from NVML in a forked child (probe.c), as doctor's does. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"

/* gone, or a zombie: it exited (maybe while we read it) */
static bool proc_gone(long long pid)
{
    char p[64];
    size_t n;
    snprintf(p, sizeof p, "/proc/%lld/stat", pid);
    char *s = file_read_all(p, &n, 4096);
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
    char *s = file_read_all(p, &n, 1 << 16);
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

static void seen_path(const struct proc_view *p, const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", p->root, path);
}

/* ---- its environment and command line */
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

static void read_env(struct proc_view *p)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%lld/environ", p->pid);
    char *s = file_read_all(path, &n, 4 << 20);
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

static void read_argv(struct proc_view *p)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%lld/cmdline", p->pid);
    char *s = file_read_all(path, &n, 1 << 16);
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

/* ---- why the map could not be read */
/* a line "Key:\t<hex>" of a status file (CapEff, CapPrm); 0 when absent */
static unsigned long long status_hex(const char *path, const char *key)
{
    size_t n;
    char *s = file_read_all(path, &n, 1 << 16);
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
const char *proc_denial_reason(long long pid, char *buf, size_t cap)
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

static enum proc_read maps_unreadable(struct proc_view *p, int e)
{
    p->error = e;
    return e == ENOENT || e == ESRCH ? PROC_READ_NO_PROCESS
           : e == EACCES || e == EPERM ? PROC_READ_DENIED
                                       : PROC_READ_FAILED;
}

/* ---- its memory map */
/* one line of the map: a CUDA library, the shim, a framework's object (each file once) */
static void map_line(struct proc_view *p, char *line, json_t *seen)
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
    const struct libfile_kind *k = libfile_kind_of(base);
    if (k)
        json_array_append_new(p->libs, libfile_describe(p->root, k, file, deleted, inode));
    if (strncmp(base, "libconvguard", 12) == 0)
        json_object_set_new(p->shim, "preloaded", json_true()), json_object_set_new(p->shim, "path", json_string(file));
    framework_note(p->frameworks, file);
}

static enum proc_read read_maps(struct proc_view *p)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%lld/maps", p->pid);
    char *m = file_read_all(path, &n, 64 << 20);
    if (!m)
        return maps_unreadable(p, errno);
    if (n == 0) { /* m is still read below (an empty map): freed there */
        if (proc_gone(p->pid)) {
            free(m);
            return PROC_READ_EXITED;
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
    framework_builds(p->root, p->frameworks);
    libfile_folder_versions(p->root, p->libs);
    return PROC_READ_OK;
}

/* where the shim in it writes: CONVGUARD_DIR (else ./convguard-logs of its
 * cwd), file <host>[-r<rank>]-<pid>[.<n>].jsonl; the highest n is this image */
static void find_trace(struct proc_view *p)
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

/* GPU memory from NVML, in a child (probe.c); unknown without it */
static void read_gpu(struct proc_view *p)
{
    json_t *r = probe_run(probe_nvml, NULL);
    const char *err = jstr(r, "error", NULL);
    if (err) {
        p->gpu = json_pack("{s:b, s:s}", "known", false, "why", err);
        /* no NVML: is there a driver at all?  doctor's question, asked the same way */
        json_t *drv = probe_run(probe_lib_version, "libcuda.so.1");
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

void proc_view_free(struct proc_view *p)
{
    json_decref(p->libs), json_decref(p->frameworks), json_decref(p->shim), json_decref(p->env), json_decref(p->argv);
    json_decref(p->gpu);
    free(p->exe), free(p->cwd);
}

/* all that is read of the running process */
enum proc_read proc_view_read(struct proc_view *p)
{
    long long pid = p->pid;
    char *root = proc_link(pid, "root");
    if (root && strcmp(root, "/") != 0)
        snprintf(p->root, sizeof p->root, "/proc/%lld/root", pid);
    free(root);
    enum proc_read rc = read_maps(p);
    if (rc != PROC_READ_OK)
        return rc;
    p->uid = proc_status_field(pid, "Uid:");
    read_env(p);
    read_argv(p);
    p->exe = proc_link(pid, "exe");
    p->cwd = proc_link(pid, "cwd");
    if (proc_gone(pid)) {
        proc_view_free(p);
        return PROC_READ_EXITED;
    }
    find_trace(p);
    read_gpu(p);
    p->ppid = proc_status_field(pid, "PPid:");
    return PROC_READ_OK;
}

/* convguard's own processes: `convguard run` and its signal relay, shown as
 * `cg-signals ARGV` (run_signals.c), which `pgrep -f train.py` finds beside
 * the program */
const char *proc_convguard_own(long long pid)
{
    char p[64], comm[64] = "";
    size_t n;
    snprintf(p, sizeof p, "/proc/%lld/comm", pid);
    char *c = file_read_all(p, &n, sizeof comm);
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
