/* run.c - `convguard run`: the program under the shim, then the report.
 *
 * The shim is found next to this binary (build/) or in ../lib (the installed
 * layout), so no path has to be configured.  Settings travel as the
 * CONVGUARD_* variables the shim reads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "relay.h"
#include "run_signals.h"
#include "cli.h"
#include "core/safedir.h"

char *find_shim(void)
{
    const char *env = getenv("CONVGUARD_SHIM");
    if (env && access(env, R_OK) == 0)
        return realpath(env, NULL);
    char exe[PATH_MAX], d[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    dir_name(exe, d, sizeof d);
    static const char *const where[] = {"%s/libconvguard.so", "%s/../lib/libconvguard.so"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char *p = xasprintf(where[i], d);
        char *r = access(p, R_OK) == 0 ? realpath(p, NULL) : NULL;
        free(p);
        if (r)
            return r;
    }
    return NULL;
}

#define NO_SHIM "libconvguard.so is neither next to this program nor in ../lib (set CONVGUARD_SHIM=/path/to/libconvguard.so)"

/* DIR checked and made (its last folder only) by the shim's own rule
 * (shim/core/safedir.c); its absolute, resolved path, or NULL with the
 * reason in why. */
static char *usable_folder(const char *dir, char *why, size_t cap)
{
    char cwd[PATH_MAX], *abs;
    if (dir[0] == '/')
        abs = xstrdup(dir);
    else if (getcwd(cwd, sizeof cwd))
        abs = xasprintf("%s/%s", cwd, strncmp(dir, "./", 2) == 0 ? dir + 2 : dir);
    else
        abs = xstrdup(dir); /* the working folder is gone: refused as relative */
    static struct cg_safedir sd;
    int fd = cg_safedir_open(abs, 1, &sd);
    char *real = fd >= 0 ? realpath(abs, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    if (fd < 0)
        cg_safedir_explain(&sd, dir, why, cap);
    else if (!real)
        snprintf(why, cap, "%s: %s", dir, strerror(errno));
    free(abs);
    return real;
}

/* The run's trace folder: the one asked for; refused or unusable (a
 * read-only working folder, a folder others can change), $TMPDIR/convguard-
 * <uid> (/tmp without TMPDIR), said in one line; that too: NULL, the
 * program runs untraced (why: the reason).  Never a reason to stop the job. */
static char *trace_folder(const char *asked, char *why, size_t cap)
{
    char *dir = usable_folder(asked, why, cap);
    if (dir)
        return dir;
    const char *tmp = getenv("TMPDIR");
    char *alt = xasprintf("%s/convguard-%u", tmp && tmp[0] == '/' ? tmp : "/tmp", (unsigned)geteuid());
    char alt_why[1400] = "";
    dir = strcmp(alt, asked) != 0 ? usable_folder(alt, alt_why, sizeof alt_why) : NULL;
    if (dir)
        fprintf(stderr, "convguard: warning: cannot trace into %s; traces go to %s instead\n", why, dir);
    else if (alt_why[0] && strlen(why) + strlen(alt_why) + 8 < cap)
        strcat(strcat(why, "; and "), alt_why);
    if (!dir)
        fprintf(stderr, "convguard: warning: tracing is off for this run, the program runs untraced: %s\n", why);
    free(alt);
    return dir;
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set_mb(const char *name, long long mb)
{
    if (mb >= 0) {
        char v[32];
        snprintf(v, sizeof v, "%lld", mb);
        setenv(name, v, 1);
    }
}

/* A trace file written since the launch (the shim creates one only for a
 * process that touched a CUDA library). */
static bool traced_since(const char *dir, double since)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    while (d && !found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        struct stat st;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        found = n > 6 && strcmp(e->d_name + n - 6, ".jsonl") == 0 && stat(p, &st) == 0 &&
                (double)st.st_mtime >= (double)(long long)since;
        free(p);
    }
    if (d)
        closedir(d);
    return found;
}

/* In the child: the signal mask as it was, stderr to the relay, the shim
 * preloaded with the settings of `run`'s options, then the program. */
static _Noreturn void exec_traced(const struct run_opts *o, char **argv, const char *pre, struct relay *rl,
                                  const sigset_t *mask, int told)
{
    sigprocmask(SIG_SETMASK, mask, NULL);
    runsig_child();
    relay_child(rl);
    if (pre) { /* untraced (no trace folder, no shim): the environment as it was */
        setenv("LD_PRELOAD", pre, 1);
        setenv("CONVGUARD_DIR", o->dir, 1);
        if (o->fallback)
            setenv("CONVGUARD_FALLBACK", "1", 1);
        if (o->quiet)
            setenv("CONVGUARD_QUIET", "1", 1);
        set_mb("CONVGUARD_WORKSPACE_LIMIT_MB", o->ws_mb);
        set_mb("CONVGUARD_RESERVE_MB", o->reserve_mb);
    }
    execvp(argv[0], argv);
    int e = errno;
    if (told >= 0 && write(told, &e, sizeof e) < 0) /* the parent then knows the program never ran */
        e = errno;
    fprintf(stderr, "convguard run: cannot run %s: %s\n", argv[0], strerror(errno = e));
    _exit(127);
}

/* dir must exist (NULL: the program runs untraced); returns the program's
 * status, 128+signal, or 127 when it could not be started. */
int run_traced(const struct run_opts *o, char **argv, double *started)
{
    char *shim = o->dir ? find_shim() : NULL;
    if (o->dir && !shim) {
        fprintf(stderr, "convguard: %s\n", NO_SHIM);
        return 127;
    }
    const char *old = getenv("LD_PRELOAD");
    char *pre = !shim ? NULL : old && *old ? xasprintf("%s:%s", shim, old) : xstrdup(shim);
    struct relay rl;
    relay_setup(&rl, o->capture);
    /* Blocked until the handlers are in place: a signal sent to convguard just
     * after the fork (the program already running) waits and is passed on,
     * instead of killing convguard and leaving the program behind. */
    sigset_t fwd, mask;
    runsig_mask(&fwd);
    sigprocmask(SIG_BLOCK, &fwd, &mask);
    struct run_signals sg;
    runsig_start(&sg, argv); /* before the program: a group's signal finds it there */
    *started = now_wall();
    fflush(NULL);
    int told[2] = {-1, -1}; /* closed by a successful exec; a failed one writes its errno */
    if (pipe2(told, O_CLOEXEC) != 0)
        told[0] = told[1] = -1;
    pid_t pid = fork();
    if (pid < 0) {
        perror("convguard: fork");
        if (told[0] >= 0)
            close(told[0]), close(told[1]);
        runsig_stop(&sg, 127 << 8, false);
        sigprocmask(SIG_SETMASK, &mask, NULL);
        relay_free(&rl);
        return 127;
    }
    if (pid == 0)
        exec_traced(o, argv, pre, &rl, &mask, told[1]);
    if (told[1] >= 0)
        close(told[1]);
    runsig_attach(&sg, pid);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    int st = relay_wait(&rl, pid, &sg); /* passes stderr through and the signals on while it waits */
    runsig_stop(&sg, st, o->status != NULL);
    if (o->status)
        *o->status = st;
    free(pre);
    free(shim);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 127;
    int exec_err = 0;
    if (told[0] >= 0 && (read(told[0], &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err))
        exec_err = 0;
    if (told[0] >= 0)
        close(told[0]);
    if (o->exec_errno)
        *o->exec_errno = exec_err;
    if (o->dir && traced_since(o->dir, *started)) /* no trace of this run: its output has nothing to explain */
        free(relay_save(&rl, o->dir, pid, *started, now_wall(), rc));
    relay_free(&rl);
    return rc;
}

static bool parse_mb(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !*s || *end || v < 0 || v > (16ll << 20))
        return false;
    *out = v;
    return true;
}

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard run [--fallback] [--dir D] [--workspace-limit MB]\n"
               "                     [--reserve MB] [--quiet] [--no-capture] -- CMD [ARG...]\n"
               "  CMD with libconvguard.so preloaded; the report of this run's traces when\n"
               "  CMD fails or a trace shows a problem\n"
               "  --dir D      the trace folder (default $CONVGUARD_DIR, else ./convguard-logs;\n"
               "               its parent must exist)\n"
               "  --fallback   let convguard retry a convolution with less workspace\n"
               "  --workspace-limit MB  the workspace cap --fallback keeps to\n"
               "  --reserve MB GPU memory --fallback keeps free for cuDNN\n"
               "  --quiet      no line when all went well\n"
               "  --no-capture CMD's stderr passes through unchanged and is not kept\n"
               "               (default: its last 256 KiB kept in D/<host>-<pid>.stderr,\n"
               "               for the report to quote)\n"
               "exit status: CMD's; killed by a signal: convguard dies of the same signal;\n"
               "  127: CMD could not be started\n");
    return rc;
}

/* run's options into o; -1, or the exit status of a usage error (or --help) */
static int run_options(int argc, char **argv, struct run_opts *o)
{
    static const struct option longopts[] = {
        {"fallback", no_argument, 0, 'f'}, {"dir", required_argument, 0, 'd'},
        {"workspace-limit", required_argument, 0, 'w'}, {"reserve", required_argument, 0, 'r'},
        {"quiet", no_argument, 0, 'q'}, {"no-capture", no_argument, 0, 'n'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+fd:w:r:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': o->fallback = true; break;
        case 'd': o->dir = optarg; break;
        case 'q': o->quiet = true; break;
        case 'n': o->capture = false; break;
        case 'w':
        case 'r':
            if (!parse_mb(optarg, c == 'w' ? &o->ws_mb : &o->reserve_mb)) {
                fprintf(stderr, "convguard run: %s is not a whole number of MiB\n", optarg);
                return 2;
            }
            break;
        case 'h': return usage(stdout, 0);
        default: return usage(stderr, 2);
        }
    }
    return -1;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o = {.ws_mb = -1, .reserve_mb = -1, .capture = true};
    int st = 0;
    runsig_ignore_sigpipe(); /* a closed stderr fails our writes, never ends us (the program gets it back) */
    int bad = run_options(argc, argv, &o);
    if (bad >= 0)
        return bad;
    if (optind >= argc)
        return usage(stderr, 2);
    if (!o.dir)
        o.dir = getenv("CONVGUARD_DIR") && *getenv("CONVGUARD_DIR") ? getenv("CONVGUARD_DIR") : "./convguard-logs";
    /* absolute, so that a program that changes directory still writes here;
     * NULL: untraced, why says why (a wrapper never stops the job) */
    struct stat before;
    bool existed = stat(o.dir, &before) == 0;
    char why[1400] = "", *shim = find_shim(), *abs = shim ? trace_folder(o.dir, why, sizeof why) : NULL;
    char *asked = abs && !existed ? realpath(o.dir, NULL) : NULL;
    bool made_here = asked && strcmp(asked, abs) == 0; /* the folder asked for, made by this run */
    free(asked);
    if (!shim)
        fprintf(stderr, "convguard: warning: tracing is off for this run, the program runs untraced: %s\n",
                strcpy(why, NO_SHIM));
    free(shim);
    o.dir = abs;
    o.capture &= abs != NULL;
    double started = 0;
    int exec_err = 0;
    o.status = &st;
    o.exec_errno = &exec_err;
    int rc = run_traced(&o, argv + optind, &started);
    if (abs && made_here && !traced_since(abs, started))
        rmdir(abs); /* a run that traced nothing leaves no empty folder behind (rmdir: only when empty) */
    if ((rc == 127 && !started) || exec_err) { /* never ran: the line above said why; nothing to report */
        free(abs);
        return rc;
    }
    if (rc == 127)
        fprintf(stderr, "convguard: %s exited with status 127: a command it ran could not be started (not found, "
                        "or not executable)\n",
                argv[optind]);
    if (!abs) { /* no trace to read: never "the GPU was never used", never "no problem found" */
        fprintf(stderr, "convguard: no report: tracing was off because %s\n", why);
        return rc;
    }
    int problems = report_recent(o.dir, started, stderr, rc != 0 && rc != 127);
    if (problems == 0 && rc == 0 && !o.quiet)
        fprintf(stderr, "convguard: no problem found (traces in %s)\n", o.dir);
    free(abs);
    if (WIFSIGNALED(st)) { /* its parent sees what it would have seen: death by that signal */
        fflush(NULL);
        runsig_end_as(st);
    }
    return rc;
}
