/* shim.c - start, fork and exit of a traced process.
 *
 * At load: read the settings, open this process's trace file, write the
 * `start` event and record the CUDA-family libraries already mapped.  A forked
 * child opens its own file; after exec the preloaded shim starts afresh.  At
 * exit: verdicts, an `exit` event with counts, and one line on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cg.h"
#include "codeimage.h"
#include "fallback.h"
#include "gpuinfo.h"
#include "libs.h"

extern char **environ;
struct cg_state cg = {.fd = -1};
static _Atomic uint64_t failures;

void cg_note_failure(void) { atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed); }

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

static void absolute_dir(void)
{
    /* A relative directory is taken from the cwd at start, so that a process
     * that changes directory (and its children) keep writing to one place. */
    if (cg_cfg.dir[0] == '/')
        return;
    char cwd[2048];
    if (!getcwd(cwd, sizeof cwd))
        return;
    const char *rel = cg_cfg.dir;
    if (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    char abs[sizeof cg_cfg.dir];
    size_t n = cg_strlcpy(abs, cwd, sizeof abs);
    if (n + 1 + strlen(rel) >= sizeof abs)
        return;
    abs[n++] = '/';
    cg_strlcpy(abs + n, rel, sizeof abs - n);
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

static void start_event(pid_t forked_from)
{
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "start");
    cg_ev_str(&e, "convguard", CONVGUARD_VERSION);
    cg_ev_i64(&e, "ppid", getppid());
    if (forked_from)
        cg_ev_i64(&e, "forked_from", forked_from);
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    cg_ev_str(&e, "exe", exe);
    char args[4096];
    size_t alen;
    read_small_file("/proc/self/cmdline", args, sizeof args, &alen);
    cg_ev_open(&e, "argv", '[');
    for (size_t i = 0; i < alen;) {
        size_t k = strnlen(args + i, alen - i);
        cg_ev_strn(&e, NULL, args + i, k);
        i += k + 1;
    }
    cg_ev_close(&e, ']');
    char cwd[2048];
    cg_ev_str(&e, "cwd", getcwd(cwd, sizeof cwd) ? cwd : NULL);
    cg_ev_str(&e, "host", cg.host);
    if (cg.rank[0])
        cg_ev_raw(&e, "rank", cg.rank);
    else
        cg_ev_raw(&e, "rank", "null");
    cg_ev_i64(&e, "uid", getuid());
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    cg_ev_i64(&e, "wall_time", ts.tv_sec);
    cg_ev_i64(&e, "wall_time_ns", ts.tv_nsec);
    cg_ev_open(&e, "env", '{');
    for (char **v = environ; v && *v; v++)
        if (env_matters(*v)) {
            const char *eq = strchr(*v, '=');
            char k[128];
            size_t kn = (size_t)(eq - *v) < sizeof k - 1 ? (size_t)(eq - *v) : sizeof k - 1;
            memcpy(k, *v, kn);
            k[kn] = 0;
            cg_ev_str(&e, k, eq + 1);
        }
    cg_ev_close(&e, '}');
    cg_ev_open(&e, "settings", '{');
    cg_ev_bool(&e, "fallback", cg_cfg.fallback);
    cg_ev_i64(&e, "workspace_limit_mb", cg_cfg.workspace_limit_mb);
    cg_ev_i64(&e, "reserve_mb", cg_cfg.reserve_mb);
    cg_ev_close(&e, '}');
    cg_ev_i64(&e, "max_mb", cg_cfg.max_mb);
    cg_ev_str(&e, "crash_unwinder", cg_cfg.crash ? cg_crash_unwinder() : "off");
    cg_ev_end(&e);
}

/* A forked child gets its own file, opened at its first event: a child that
 * execs at once (a shell running a command) leaves no file behind, since the
 * new image starts its own trace. */
static pid_t forked_from;
static bool is_forked_child;

static void lazy_open(void)
{
    pid_t parent = forked_from;
    forked_from = 0;
    if (cg_trace_open() >= 0)
        start_event(parent);
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
    atomic_store(&failures, 0);
    cg_trace_open_lazily(lazy_open);
}

static atomic_bool inited;

__attribute__((constructor)) static void cg_ctor(void) { cg_shim_init(); }

void cg_shim_init(void)
{
    if (atomic_exchange(&inited, true))
        return;
    int saved = errno;
    cg.t0_ns = cg_now_ns();
    cg.pid = getpid();
    cg_real_dl_init();
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
    if (cg_trace_open() < 0) {
        errno = saved;
        return;
    }
    cg_libs_init();
    atomic_store(&cg.traced, true);
    cg_objsnap_refresh(); /* the copy of the link map the frequent paths read */
    cg_real_promote();
    cg_crash_install();
    start_event(0);
    pthread_atfork(NULL, NULL, after_fork_child);
    cg_loader_scan("(startup)");
    errno = saved;
}

/* Does the parent process write a trace into the same directory? */
static bool parent_traced(void)
{
    char p[sizeof cg.path], pid[24];
    const char *slash = strrchr(cg.path, '/');
    if (!slash)
        return false;
    size_t n = (size_t)(slash - cg.path) + 1;
    memcpy(p, cg.path, n);
    p[n] = 0;
    n += cg_strlcpy(p + n, cg.host, sizeof p - n);
    if (cg.rank[0] && n < sizeof p) {
        n += cg_strlcpy(p + n, "-r", sizeof p - n);
        n += cg_strlcpy(p + n, cg.rank, sizeof p - n);
    }
    pid[cg_utoa(pid, (unsigned long long)getppid())] = 0;
    if (n < sizeof p)
        n += cg_strlcpy(p + n, "-", sizeof p - n);
    if (n < sizeof p)
        n += cg_strlcpy(p + n, pid, sizeof p - n);
    if (n < sizeof p)
        n += cg_strlcpy(p + n, ".jsonl", sizeof p - n);
    struct stat st;
    return n < sizeof p && stat(p, &st) == 0;
}

static void count_cb(struct cg_lib *l, void *arg)
{
    (void)l;
    ++*(int *)arg;
}

__attribute__((destructor)) static void cg_dtor(void)
{
    if (!atomic_load(&cg.traced) || cg.pid != getpid())
        return;
    cg_loader_scan("(exit)");
    cg_versions_verdicts("exit");
    cg_loader_check_replaced("exit");
    cg_libs_unresolved_events();
    cg_graph_exit_events();
    int nlib = 0;
    cg_libs_each(count_cb, &nlib);
    int unresolved = cg_libs_unresolved_failures();
    uint64_t fails = atomic_load(&failures) + (uint64_t)unresolved;
    char b[CG_EV_BUF];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "exit");
    cg_ev_i64(&e, "libs", nlib);
    cg_ev_u64(&e, "failures", fails);
    cg_ev_i64(&e, "load_failures_unresolved", unresolved);
    cg_ev_open(&e, "calls", '{');
    for (int h = 0; h < CG_NHOOKS; h++) {
        uint64_t c = atomic_load(&cg_count[h].calls);
        if (c)
            cg_ev_u64(&e, cg_hooks[h].name, c);
    }
    cg_ev_close(&e, '}');
    cg_ev_open(&e, "fails", '{');
    for (int h = 0; h < CG_NHOOKS; h++) {
        uint64_t c = atomic_load(&cg_count[h].fails);
        if (c)
            cg_ev_u64(&e, cg_hooks[h].name, c);
    }
    cg_ev_close(&e, '}');
    cg_ev_u64(&e, "dlopen_repeats", cg_libs_repeats());
    cg_ev_u64(&e, "events_dropped", atomic_load(&cg_events_dropped));
    cg_gpumem_exit(&e);
    cg_graph_exit_summary(&e);
    cg_drvlog_exit(&e);
    cg_codeload_exit(&e);
    if (cg_cfg.fallback) {
        cg_ev_u64(&e, "fallbacks", cg_fallback_count());
        cg_ev_u64(&e, "fallback_reserve_reports", cg_fb_reserve_reports());
    }
    cg_ev_end(&e);
    if (nlib == 0 && !is_forked_child && parent_traced()) {
        /* A program the traced program ran (ptxas, a shell) that never
         * touched CUDA: its trace would only be noise.  Forked children keep
         * theirs: they are the program itself. */
        unlink(cg.path);
        return;
    }
    if (cg_cfg.quiet)
        return;
    /* Benign probes were counted as failures when they happened; only the
     * ones no success followed still count. */
    char line[2048], primary[1024];
    size_t n;
    if (nlib == 0) {
        n = cg_strlcpy(line, "convguard: no CUDA library was loaded: this program ran on the CPU; trace ", sizeof line);
    } else {
        cg_loader_primary(primary, sizeof primary);
        n = cg_strlcpy(line, "convguard: ", sizeof line);
        n += cg_strlcpy(line + n, primary, sizeof line - n);
        char d[24];
        d[cg_utoa(d, fails)] = 0;
        n += cg_strlcpy(line + n, "; ", sizeof line - n);
        n += cg_strlcpy(line + n, d, sizeof line - n);
        n += cg_strlcpy(line + n, fails == 1 ? " failure; " : " failures; ", sizeof line - n);
        if (cg_cfg.fallback && n < sizeof line) {
            uint64_t fb = cg_fallback_count();
            d[cg_utoa(d, fb)] = 0;
            n += cg_strlcpy(line + n, "fallback acted ", sizeof line - n);
            if (n < sizeof line)
                n += cg_strlcpy(line + n, d, sizeof line - n);
            if (n < sizeof line)
                n += cg_strlcpy(line + n, fb == 1 ? " time; " : " times; ", sizeof line - n);
        }
        if (n < sizeof line)
            n += cg_strlcpy(line + n, "trace ", sizeof line - n);
    }
    if (n < sizeof line)
        n += cg_strlcpy(line + n, cg.path, sizeof line - n);
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t r = write(2, line, n);
    (void)r;
}
