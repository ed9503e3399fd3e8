/* shim.c - start, fork and exit of a traced process.
 *
 * At load: read the settings and record the CUDA-family libraries already
 * mapped.  The trace folder is checked (and made) with the trace file, and
 * `start` written into it, at the process's first event: a process that never
 * touches a CUDA-family library and fails nothing (a shell, readlink, pyenv's
 * helpers) leaves no file and costs little more than reading the settings.
 * A process that mapped a deep-learning framework without ever loading CUDA
 * gets its file at exit ("the GPU was never used" is about it), and so does
 * a CUDA tool (ptxas, nvcc...) a framework ran.  A forked child has its own
 * file; after exec the preloaded shim starts afresh.  At exit: verdicts, an
 * `exit` event with counts, and one line on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "graph/graph.h"

extern char **environ;
static void sanitize(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '_' || *s == '-'))
            *s = '_';
}

static void identity(void)
{
    struct utsname u;
    cg_strlcpy(cg.host, uname(&u) == 0 ? u.nodename : "host", sizeof cg.host);
    sanitize(cg.host);
    if (!cg.host[0])
        cg_strlcpy(cg.host, "host", sizeof cg.host);
    static const char *const rank_vars[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};
    cg.rank[0] = 0;
    for (size_t i = 0; i < 4 && !cg.rank[0]; i++) {
        const char *v = cg_getenv(rank_vars[i]);
        if (!v || !*v)
            continue;
        bool digits = strlen(v) < sizeof cg.rank;
        for (const char *p = v; *p && digits; p++)
            digits = *p >= '0' && *p <= '9';
        if (digits)
            cg_strlcpy(cg.rank, v, sizeof cg.rank);
        else
            cg_warn(rank_vars[i], " is not a whole number; the trace name carries no rank");
    }
}

/* what `start` says of the moment the process started, kept for the file
 * that is made later */
static char start_cwd[2048];
static bool start_cwd_known;
static struct timespec start_wall;

static void absolute_dir(void)
{
    /* A relative directory is taken from the cwd at start, so that a process
     * that changes directory (and its children) keep writing to one place. */
    start_cwd_known = getcwd(start_cwd, sizeof start_cwd) != NULL;
    if (cg_cfg.dir[0] == '/')
        return;
    char cwd[2048];
    if (!start_cwd_known)
        return;
    cg_strlcpy(cwd, start_cwd, sizeof cwd);
    const char *rel = cg_cfg.dir;
    if (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    char abs[sizeof cg_cfg.dir];
    size_t n = cg_strlcpy(abs, cwd, sizeof abs);
    if (n + 1 + strlen(rel) >= sizeof abs)
        return;
    abs[n++] = '/';
    cg_append(abs, sizeof abs, n, rel);
    cg_strlcpy(cg_cfg.dir, abs, sizeof cg_cfg.dir);
}

static bool env_matters(const char *kv)
{
    static const char *const exact[] = {"LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_VISIBLE_DEVICES", "CUDA_HOME",
                                        "CUDA_PATH", "PYTORCH_CUDA_ALLOC_CONF", "NVIDIA_VISIBLE_DEVICES",
                                        "CUDA_MODULE_LOADING", "LOCAL_RANK", "WORLD_SIZE", "RANK"};
    static const char *const prefix[] = {"TF_", "XLA_", "CUDNN_", "CONVGUARD_", "JAX_", "NCCL_DEBUG"};
    const char *eq = strchr(kv, '=');
    if (!eq)
        return false;
    size_t n = (size_t)(eq - kv);
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strlen(exact[i]) == n && strncmp(kv, exact[i], n) == 0)
            return true;
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
        if (cg_starts_with(kv, prefix[i]))
            return true;
    return false;
}

static void read_small_file(const char *path, char *out, size_t cap, size_t *len)
{
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r;
    while (*len < cap && (r = read(fd, out + *len, cap - *len)) > 0)
        *len += (size_t)r;
    close(fd);
}

/* The CUDA tools a framework runs as child processes (XLA runs ptxas and
 * nvlink): a wrong or old one on PATH is a known cause of failures, so they
 * get a file, with the toolkit version they belong to. */
static bool is_cuda_tool(const char *exe)
{
    static const char *const tools[] = {"ptxas", "nvlink", "fatbinary", "nvcc", "cicc", "nvdisasm", "cuobjdump"};
    const char *b = cg_basename(exe);
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (strcmp(b, tools[i]) == 0)
            return true;
    return false;
}

/* "12.4.131" from <bin>/../version.json ("cuda": {"version": ...}) or
 * version.txt ("CUDA Version 11.8.89"): the toolkit a tool came with. */
static bool toolkit_version(const char *exe, char *out, size_t cap)
{
    static char dir[1024], p[1100], b[2048]; /* static: see start_event */
    const char *slash = strrchr(exe, '/');
    if (!slash || (size_t)(slash - exe) >= sizeof dir)
        return false;
    memcpy(dir, exe, (size_t)(slash - exe));
    dir[slash - exe] = 0;
    static const char *const files[] = {"/../version.json", "/../version.txt"};
    for (size_t f = 0; f < 2; f++) {
        size_t n = cg_strlcpy(p, dir, sizeof p);
        cg_append(p, sizeof p, n, files[f]);
        size_t len;
        read_small_file(p, b, sizeof b - 1, &len);
        b[len] = 0;
        const char *v = f == 0 ? strstr(b, "\"cuda\"") : strstr(b, "CUDA Version ");
        if (!v)
            continue;
        v = f == 0 ? strstr(v, "\"version\"") : v + 13;
        if (!v)
            continue;
        if (f == 0)
            v = strchr(v + 9, '"');
        if (!v)
            continue;
        v += f == 0;
        size_t k = strspn(v, "0123456789.");
        if (!k || k >= cap)
            continue;
        memcpy(out, v, k);
        out[k] = 0;
        return true;
    }
    return false;
}

/* Facts of the machine that explain failures only the driver reports:
 * written once, in `start`, and only when they say something. */
static void start_facts(struct cg_ev *e, const char *exe)
{
    char v[64];
    if (is_cuda_tool(exe)) {
        cg_ev_open(e, "cuda_tool", '{');
        cg_ev_str(e, "name", cg_basename(exe));
        cg_ev_str(e, "toolkit_version", toolkit_version(exe, v, sizeof v) ? v : NULL);
        cg_ev_close(e, '}');
    }
    /* a container, and whether it was given the GPU's device nodes */
    struct stat st;
    const char *container = stat("/.dockerenv", &st) == 0          ? "docker"
                            : stat("/run/.containerenv", &st) == 0 ? "podman"
                                                                   : NULL;
    if (container) {
        cg_ev_open(e, "container", '{');
        cg_ev_str(e, "kind", container);
        cg_ev_bool(e, "nvidia_devices", stat("/dev/nvidiactl", &st) == 0 || stat("/dev/nvidia0", &st) == 0);
        cg_ev_close(e, '}');
    }
    /* a small /dev/shm (a container started without --shm-size or --ipc=host) */
    cg_ev_shm(e, true);
    /* the driver's JIT cache: a ~/.nv the user cannot write (made by sudo) */
    const char *cache = cg_getenv("CUDA_CACHE_PATH");
    static char p[1100]; /* static: see start_event */
    if (!cache || !*cache) {
        const char *home = cg_getenv("HOME");
        if (!home || !*home || strlen(home) > 1000)
            return;
        cg_append(p, sizeof p, cg_strlcpy(p, home, sizeof p), "/.nv");
        cache = p;
    }
    if (stat(cache, &st) == 0 && (st.st_uid != geteuid() || access(cache, W_OK | X_OK) != 0)) {
        cg_ev_open(e, "nv_cache", '{');
        cg_ev_str(e, "path", cache);
        cg_ev_i64(e, "owner", (long long)st.st_uid);
        cg_ev_bool(e, "writable", access(cache, W_OK | X_OK) == 0);
        cg_ev_close(e, '}');
    }
}

/* The start event's "argv": /proc/self/cmdline's NUL-separated words.
 * static buffer: see start_event. */
static void ev_argv(struct cg_ev *e)
{
    static char args[4096];
    size_t alen;
    read_small_file("/proc/self/cmdline", args, sizeof args, &alen);
    cg_ev_open(e, "argv", '[');
    for (size_t i = 0; i < alen;) {
        size_t k = strnlen(args + i, alen - i);
        cg_ev_strn(e, NULL, args + i, k);
        i += k + 1;
    }
    cg_ev_close(e, ']');
}

/* The start event's "env": the variables that matter to a diagnosis (env_matters). */
static void ev_env(struct cg_ev *e)
{
    cg_ev_open(e, "env", '{');
    for (char **v = environ; v && *v; v++)
        if (env_matters(*v)) {
            const char *eq = strchr(*v, '=');
            char k[128];
            size_t kn = (size_t)(eq - *v) < sizeof k - 1 ? (size_t)(eq - *v) : sizeof k - 1;
            memcpy(k, *v, kn);
            k[kn] = 0;
            cg_ev_str(e, k, eq + 1);
        }
    cg_ev_close(e, '}');
}

static void start_event(pid_t forked_from)
{
    /* static, not on the stack: `start` may be written from the crash handler
     * on a small alternate stack (a process's first event can be its crash);
     * one thread at a time opens the file (trace.c's lazy open) */
    static char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "start");
    cg_ev_str(&e, "convguard", CONVGUARD_VERSION);
    cg_ev_i64(&e, "ppid", getppid());
    if (forked_from)
        cg_ev_i64(&e, "forked_from", forked_from);
    static char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    cg_ev_str(&e, "exe", exe);
    ev_argv(&e);
    static char cwd[2048];
    if (forked_from)
        cg_ev_str(&e, "cwd", getcwd(cwd, sizeof cwd) ? cwd : NULL);
    else
        cg_ev_str(&e, "cwd", start_cwd_known ? start_cwd : NULL);
    cg_ev_str(&e, "host", cg.host);
    if (cg.rank[0])
        cg_ev_raw(&e, "rank", cg.rank);
    else
        cg_ev_raw(&e, "rank", "null");
    cg_ev_i64(&e, "uid", getuid());
    struct timespec ts = start_wall;
    if (forked_from || !ts.tv_sec)
        clock_gettime(CLOCK_REALTIME, &ts);
    cg_ev_i64(&e, "wall_time", ts.tv_sec);
    cg_ev_i64(&e, "wall_time_ns", ts.tv_nsec);
    ev_env(&e);
    cg_ev_open(&e, "settings", '{');
    cg_ev_bool(&e, "fallback", cg_cfg.fallback);
    cg_ev_i64(&e, "workspace_limit_mb", cg_cfg.workspace_limit_mb);
    cg_ev_i64(&e, "reserve_mb", cg_cfg.reserve_mb);
    cg_ev_close(&e, '}');
    cg_ev_i64(&e, "max_mb", cg_cfg.max_mb);
    cg_ev_str(&e, "crash_unwinder", cg_cfg.crash ? cg_crash_unwinder() : "off");
    start_facts(&e, exe);
    cg_ev_end(&e);
}

/* A forked child gets its own file, opened at its first event: a child that
 * execs at once (a shell running a command) leaves no file behind, since the
 * new image starts its own trace. */
static pid_t forked_from;
static bool is_forked_child;

/* One exit line per process: the destructor's or the _exit hook's, whichever
 * comes first (exit() runs the destructors, then an atexit handler or a
 * later destructor may call _exit; _exit runs no destructor). */
static atomic_bool exit_written;
static void (*real_exit)(int); /* what _exit reaches without the shim (shim_init) */

static void lazy_open(void)
{
    pid_t parent = forked_from;
    forked_from = 0;
    if (cg_trace_open() >= 0)
        start_event(parent);
}

/* Deep-learning frameworks, by a library each maps: a process that ran one
 * but never loaded CUDA is the one "the GPU was never used" is about. */
static const struct {
    const char *name, *marker;
} fw_markers[] = {
    {"torch", "libtorch_cpu.so"},           {"tensorflow", "libtensorflow_framework.so"},
    {"tensorflow", "_pywrap_tensorflow"},   {"jax", "xla_extension"},
    {"jax", "jaxlib/_jax"},                 {"cupy", "cupy/_core"},
    {"onnxruntime", "onnxruntime_pybind11"}, {"ctranslate2", "libctranslate2"},
};
#define N_FW_MARKERS (sizeof fw_markers / sizeof fw_markers[0])

static int fw_cb(const struct cg_obj *o, void *arg)
{
    bool *seen = arg;
    for (size_t i = 0; i < N_FW_MARKERS; i++)
        if (strstr(o->name, fw_markers[i].marker))
            seen[i] = true;
    return 0;
}

/* "frameworks":["torch"] when any is mapped; returns how many */
static int ev_frameworks(struct cg_ev *e)
{
    bool seen[N_FW_MARKERS] = {0};
    cg_elf_each_obj(fw_cb, seen);
    int n = 0;
    for (size_t i = 0; i < N_FW_MARKERS; i++) {
        if (!seen[i])
            continue;
        bool dup = false;
        for (size_t k = 0; k < i; k++)
            dup |= seen[k] && strcmp(fw_markers[k].name, fw_markers[i].name) == 0;
        if (dup)
            continue;
        if (e && !n)
            cg_ev_open(e, "frameworks", '[');
        if (e)
            cg_ev_str(e, NULL, fw_markers[i].name);
        n++;
    }
    if (e && n)
        cg_ev_close(e, ']');
    return n;
}

/* the mutexes marked CG_FORK_REINIT, gathered by the linker */
extern pthread_mutex_t *const __start_cg_fork_mutexes[] __attribute__((weak, visibility("hidden")));
extern pthread_mutex_t *const __stop_cg_fork_mutexes[] __attribute__((weak, visibility("hidden")));

static void after_fork_child(void)
{
    for (pthread_mutex_t *const *m = __start_cg_fork_mutexes; m && m < __stop_cg_fork_mutexes; m++)
        pthread_mutex_init(*m, NULL);
    cg_objsnap_after_fork();
    if (!atomic_load(&cg.traced))
        return;
    forked_from = cg.pid;
    is_forked_child = true;
    atomic_store(&exit_written, false);
    /* The parent's descriptor is shared: close our copy. */
    int fd = cg_trace_fd();
    __atomic_store_n(&cg.fd, -1, __ATOMIC_RELEASE);
    if (fd >= 0)
        close(fd);
    cg.pid = getpid();
    cg_trace_after_fork();
    cg_crash_after_fork();
    /* The child's counts are its own calls: the parent's file has the rest. */
    for (int h = 0; h < CG_NHOOKS; h++) {
        atomic_store(&cg_count[h].calls, 0);
        atomic_store(&cg_count[h].fails, 0);
    }
    cg_gpumem_after_fork();
    cg_drvlog_after_fork();
    cg_codeload_after_fork();
    cg_failures_reset();
    cg_trace_open_lazily(lazy_open);
}

static atomic_bool inited;

static void shim_init(void);
__attribute__((constructor)) static void cg_ctor(void) { shim_init(); }

static void shim_init(void)
{
    if (atomic_exchange(&inited, true))
        return;
    int saved = errno;
    cg.t0_ns = cg_now_ns();
    cg.pid = getpid();
    cg_real_dl_init();
    /* what a call of _exit would reach without the shim: the next in the
     * global scope (libc's, or another preloaded library's) */
    if (cg_dl.dlsym)
        real_exit = (void (*)(int))cg_dl.dlsym(RTLD_NEXT, "_exit");
    cg_fork_gate_init(); /* before any other atfork handler of the shim: see forkgate.c */
    if (getauxval(AT_SECURE)) {
        /* setuid/setgid: the environment is not the user's to trust. Inert:
         * no settings read, no file, no signal handler. */
        errno = saved;
        return;
    }
    cg_config_load();
    identity();
    absolute_dir();
    clock_gettime(CLOCK_REALTIME, &start_wall);
    /* The trace folder is neither checked nor made here: both happen with
     * the file, at the first event (trace.c), so that a process that never
     * touches CUDA (ls, a shell, pyenv's helpers) leaves no folder and says
     * nothing about one it cannot use. */
    cg_libs_init(cg_drvlog_on_load);
    atomic_store(&cg.traced, true);
    cg_objsnap_refresh(); /* the copy of the link map the frequent paths read */
    cg_bind_reset(); /* the PLT answers kept while not tracing are plain forwards */
    cg_real_promote();
    cg_crash_install();
    /* the file comes with the first event (a CUDA library mapped now is one) */
    cg_trace_open_lazily(lazy_open);
    cg_atfork(NULL, NULL, after_fork_child);
    cg_libs_scan("(startup)");
    errno = saved;
}

/* A CUDA tool that did nothing else (XLA runs `ptxas --version` 47 times
 * at a JAX start): the first run of this tool (by path) under this parent
 * gets a file, <host>-<ppid>.<tool>-<hash of the path>.jsonl, made once,
 * which is all the report needs of it (the tool's path and toolkit version);
 * the other runs leave none.  Nothing counts them: they are not traced. */
static void one_file_per_parent(const char *exe)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = exe; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    static const char hex[] = "0123456789abcdef";
    char key[48];
    size_t n = cg_strlcpy(key, cg_basename(exe), 24);
    key[n++] = '-';
    for (int i = 7; i >= 0; i--)
        key[n++] = hex[(h >> (4 * i)) & 15];
    key[n] = 0;
    cg_trace_name_once(getppid(), key);
}

/* At exit, for a process that wrote nothing yet: does it deserve a file? */
static bool worth_a_file(void)
{
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    if (ev_frameworks(NULL) > 0)
        return true;
    if (!is_cuda_tool(exe))
        return false;
    one_file_per_parent(exe);
    return true;
}

static void count_cb(struct cg_lib *l, void *arg)
{
    (void)l;
    ++*(int *)arg;
}

/* the exit event's "calls" and "fails": atomic counters only (the _exit
 * hook's event has them too) */
static void ev_counts(struct cg_ev *e)
{
    cg_ev_open(e, "calls", '{');
    for (int h = 0; h < CG_NHOOKS; h++) {
        uint64_t c = atomic_load(&cg_count[h].calls);
        if (c)
            cg_ev_u64(e, cg_hooks[h].name, c);
    }
    cg_ev_close(e, '}');
    cg_ev_open(e, "fails", '{');
    for (int h = 0; h < CG_NHOOKS; h++) {
        uint64_t c = atomic_load(&cg_count[h].fails);
        if (c)
            cg_ev_u64(e, cg_hooks[h].name, c);
    }
    cg_ev_close(e, '}');
}

/* ---- the process's own way out: _exit and _Exit (Python's os._exit,
 * multiprocessing's fork workers, daemons) run no destructor, so without
 * these the trace would stop without its exit line.  They are the shim's
 * lifecycle hooks, not rows of hooks.def: that table is the CUDA libraries'
 * functions (slots, real pointers per library, the dlsym and entry-point
 * routes), and a call of _exit never comes back for a route test to look at
 * (tests/preload/t_exit.sh tests them).  Async-signal-safe (a handler may
 * call _exit): atomics, a static buffer taken once, write(2); nothing of the
 * destructor's that takes a lock (the libraries' table, GPU memory, graph).
 * A vfork child (posix_spawn's) shares the parent's memory and ran no
 * atfork handler: its pid is not cg.pid, and it writes nothing. */
static void exit_line_of_exit(int status)
{
    /* not traced, or a vfork child: nothing; nothing written yet: no file, except for a forked child
     * that fails (multiprocessing's worker exits 1 after printing its traceback): its status is a fact
     * of the run (the parent may never look at it) */
    if (!atomic_load(&cg.traced) || cg.pid != getpid() || (cg_trace_lazy_pending() && !(is_forked_child && status)))
        return;
    if (atomic_exchange(&exit_written, true))
        return;
    int saved = errno;
    static char b[CG_EV_BUF]; /* the one writer: exit_written */
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "exit");
    cg_ev_str(&e, "via", "_exit");
    cg_ev_i64(&e, "exit_status", status);
    if (status)
        cg_ev_shm(&e, false);
    cg_ev_u64(&e, "failures", cg_failures());
    ev_counts(&e);
    cg_ev_u64(&e, "events_dropped", atomic_load(&cg_events_dropped));
    cg_ev_end(&e);
    errno = saved;
}

static _Noreturn void leave(int status)
{
    exit_line_of_exit(status);
    if (real_exit)
        real_exit(status);
    for (;;) /* no _exit found at start (cannot be): what glibc's does */
        syscall(SYS_exit_group, status);
}

CG_EXPORT void _exit(int status) { leave(status); }
CG_EXPORT void _Exit(int status) { leave(status); }

__attribute__((destructor)) static void cg_dtor(void)
{
    if (!atomic_load(&cg.traced) || cg.pid != getpid())
        return;
    cg_libs_scan_exit();
    cg_libs_check_replaced("exit");
    cg_libs_unresolved_events();
    cg_graph_exit_events();
    /* nothing happened that a report could use: no file at all */
    if (cg_trace_lazy_pending() && !is_forked_child && !worth_a_file())
        return;
    if (cg_trace_lazy_pending() && is_forked_child)
        return; /* a forked child that did nothing: the parent's file speaks for it */
    if (atomic_exchange(&exit_written, true))
        return;
    int nlib = 0;
    cg_libs_each(count_cb, &nlib);
    int unresolved = cg_libs_unresolved_failures();
    uint64_t fails = cg_failures() + (uint64_t)unresolved;
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "exit");
    cg_ev_i64(&e, "libs", nlib);
    cg_ev_u64(&e, "failures", fails);
    cg_ev_i64(&e, "load_failures_unresolved", unresolved);
    ev_counts(&e);
    cg_ev_u64(&e, "dlopen_repeats", cg_libs_repeats());
    cg_ev_u64(&e, "events_dropped", atomic_load(&cg_events_dropped));
    cg_gpumem_exit(&e);
    cg_graph_exit_summary(&e);
    ev_frameworks(&e);
    cg_drvlog_exit(&e);
    cg_codeload_exit(&e);
    if (cg_cfg.fallback) {
        cg_ev_u64(&e, "fallbacks", cg_fallback_count());
        cg_ev_u64(&e, "fallback_reserve_reports", cg_fallback_reserve_reports());
    }
    cg_ev_end(&e);
    if (cg_cfg.quiet || cg_trace_refused() || !cg.path[0])
        return; /* refused: the one warning at the first event said why; no file: a sibling's says it */
    /* Benign probes were counted as failures when they happened; only the
     * ones no success followed still count. */
    char line[2048], primary[1024];
    size_t n;
    if (nlib == 0) {
        n = cg_strlcpy(line, "convguard: no CUDA library was loaded: this program ran on the CPU; trace ", sizeof line);
    } else {
        cg_libs_primary(primary, sizeof primary);
        n = cg_strlcpy(line, "convguard: ", sizeof line);
        n = cg_append(line, sizeof line, n, primary);
        n = cg_append(line, sizeof line, n, "; ");
        n = cg_append_u(line, sizeof line, n, fails);
        n = cg_append(line, sizeof line, n, fails == 1 ? " failure; " : " failures; ");
        if (cg_cfg.fallback) {
            uint64_t fb = cg_fallback_count();
            n = cg_append(line, sizeof line, n, "fallback acted ");
            n = cg_append_u(line, sizeof line, n, fb);
            n = cg_append(line, sizeof line, n, fb == 1 ? " time; " : " times; ");
        }
        n = cg_append(line, sizeof line, n, "trace ");
    }
    n = cg_append(line, sizeof line, n, cg.path);
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    cg_term_safe(line, n); /* a library's path or the folder's name may hold controls */
    line[n++] = '\n';
    ssize_t r = write(2, line, n);
    (void)r;
}
