/* run_signals.c - `convguard run`'s signals.
 *
 * Each signal meant for the program reaches it once.  The program stays in
 * convguard's process group (job control and the terminal's signals reach it
 * as before), so a sender that signals the whole group (the terminal's Ctrl-C,
 * `kill -- -PGID`, a shell's `kill %1`, Slurm's proctrack/pgid) or every
 * process of a job (Slurm's proctrack/cgroup, systemd's control-group kill,
 * `pkill -f train.py`) has reached the program already, while one that
 * signals convguard's pid alone (`kill $!`, `docker stop` of PID 1, a
 * launcher killing its child) has not.  siginfo cannot tell them apart (both
 * are SI_USER from the same pid), so a witness does: the sentinel, a child of
 * convguard in the same group that blocks every signal and reports each it
 * takes (signal, sender) through the event pipe.  A signal that reached
 * convguard is passed on unless the sentinel got the same one from the same
 * sender within FWD_WAIT_MS (or has it pending then: it was slow to run).
 * The sentinel's command line is `cg-signals` and the program's argv, so a
 * pattern that picks the program (pkill -f) picks it too and one that picks
 * convguard alone (pkill -f convguard) does not.  Never passed on: the
 * terminal's (SI_KERNEL: the foreground group has it) and the program's own
 * (sent by the program to its parent or its group).  Without a sentinel (no
 * fork): the terminal's are not passed on, all others are.
 *
 * The handlers only write a record to a pipe (no malloc, stdio or locks);
 * the decisions are made in the wait loop (relay.c), which alone reaps the
 * program: a signal is never sent to a pid that could have been reused. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_signals.h"

#define FWD_WAIT_MS 100  /* a signal to convguard waits this long for the sentinel's copy */
#define FWD_MAX_MS 2000  /* ... and, while the sentinel has it pending, at most this long */

static const int forwarded[RUNSIG_N] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT};

struct sig_event {
    int sig, pid, code, from_sentinel;
};

static int event_fd = -1;           /* the event pipe's write end, for the handler */
static struct sigaction pipe_found; /* SIGPIPE as convguard found it */
static bool pipe_changed;
static volatile sig_atomic_t end_status_set;
static int end_status;

void runsig_ignore_sigpipe(void)
{
    struct sigaction ign = {0};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    pipe_changed = sigaction(SIGPIPE, &ign, &pipe_found) == 0;
}

void runsig_child(void)
{
    if (pipe_changed)
        sigaction(SIGPIPE, &pipe_found, NULL);
}

void runsig_mask(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < RUNSIG_N; i++)
        sigaddset(set, forwarded[i]);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the sentinel */

/* fd 0-2 on /dev/null, keep as fd 3, nothing else open: the sentinel must not
 * hold the program's stderr pipe (the relay waits for its end) or our stdout */
static void only_fd(int keep)
{
    if (dup2(keep, 3) < 0)
        _exit(0);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2(null, fd);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 4u, ~0u, 0u) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX); /* an older kernel: one by one */
    for (long fd = 4; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        close((int)fd);
}

/* Shown as `cg-signals ARGV` (the area the kernel shows as our command line,
 * from /proc/self/stat's arg_start/arg_end, written over) and named cg-signals. */
static void rename_self(char **argv)
{
    char st[4096];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, st, sizeof st - 1) : -1;
    if (fd >= 0)
        close(fd);
    prctl(PR_SET_NAME, "cg-signals", 0, 0, 0);
    char *p = n > 0 ? (st[n] = 0, strrchr(st, ')')) : NULL;
    unsigned long start = 0, end = 0;
    for (int field = 2; p && field < 49; field++) { /* fields 48, 49: arg_start, arg_end */
        p = strchr(p + 1, ' ');
        if (p && field == 47)
            start = strtoul(p + 1, NULL, 10);
        if (p && field == 48)
            end = strtoul(p + 1, NULL, 10);
    }
    if (!start || end <= start)
        return;
    /* built aside first: argv points into the area written over */
    char line[4096];
    size_t len = end - start, room = len < sizeof line ? len : sizeof line, o = 0;
    memset(line, 0, sizeof line);
    for (size_t i = 0; o + 1 < room; i++) {
        const char *a = i == 0 ? "cg-signals" : argv[i - 1];
        if (!a)
            break;
        size_t k = strlen(a) < room - 1 - o ? strlen(a) : room - 1 - o;
        memcpy(line + o, a, k);
        o += k + 1;
    }
    memset((char *)start, 0, len);
    memcpy((char *)start, line, o < room ? o : room - 1);
}

static _Noreturn void sentinel_main(int wfd, pid_t parent, char **argv)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent)
        _exit(0);
    only_fd(wfd);
    rename_self(argv);
    for (;;) {
        siginfo_t si;
        int s = sigwaitinfo(&all, &si);
        if (s <= 0)
            continue;
        struct sig_event ev = {s, si.si_pid, si.si_code, 1};
        if (write(3, &ev, sizeof ev) < 0 && errno == EPIPE)
            _exit(0);
    }
}

void runsig_start(struct run_signals *g, char **argv)
{
    memset(g, 0, sizeof *g);
    g->ev[0] = g->ev[1] = -1;
    if (pipe2(g->ev, O_CLOEXEC | O_NONBLOCK) != 0) {
        g->ev[0] = g->ev[1] = -1;
        return;
    }
    pid_t parent = getpid();
    pid_t p = fork();
    if (p == 0)
        sentinel_main(g->ev[1], parent, argv);
    g->sentinel = p > 0 ? p : 0;
}

/* ---- the handlers */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int e = errno;
    struct sig_event ev = {sig, si->si_pid, si->si_code, 0};
    if (event_fd >= 0 && write(event_fd, &ev, sizeof ev) < 0) {
        /* full: thousands wait already */
    }
    errno = e;
}

void runsig_attach(struct run_signals *g, pid_t child)
{
    g->child = child;
    event_fd = g->ev[1];
    struct sigaction sa = {0};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < RUNSIG_N; i++)
        sigaction(forwarded[i], &sa, &g->saved[i]);
    g->fwd_saved = true;
}

int runsig_fd(const struct run_signals *g)
{
    return g->ev[0];
}

/* ---- the decisions */

/* sig waits in the sentinel's queue (it has not run since it was sent) */
static bool sentinel_pending(pid_t sentinel, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)sentinel);
    FILE *f = fopen(path, "re");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "SigPnd:", 7) == 0 || strncmp(line, "ShdPnd:", 7) == 0)
            found = (strtoull(line + 7, NULL, 16) >> (sig - 1)) & 1;
    }
    if (f)
        fclose(f);
    return found;
}

static void drop(struct run_signals *g, unsigned i)
{
    g->q[i] = g->q[--g->nq];
}

static void pass_on(struct run_signals *g, int sig, bool alive)
{
    if (alive && g->child > 0)
        kill(g->child, sig); /* not reaped: the pid is still the program's */
}

/* A record read: one of the sentinel's cancels a waiting one of convguard's
 * with the same signal and sender, and the other way round. */
static void take(struct run_signals *g, const struct sig_event *ev, bool alive, double t)
{
    bool mine = !ev->from_sentinel;
    if (mine && (ev->code == SI_KERNEL || (g->child > 0 && ev->pid == g->child)))
        return; /* the terminal's (the group has it) or the program's own: never passed on */
    if (mine && !g->sentinel) {
        pass_on(g, ev->sig, alive);
        return;
    }
    for (unsigned i = 0; i < g->nq; i++)
        if (g->q[i].mine != mine && g->q[i].sig == ev->sig && g->q[i].pid == ev->pid) {
            drop(g, i);
            return;
        }
    if (g->nq == sizeof g->q / sizeof g->q[0]) { /* full: the oldest decided now */
        if (g->q[0].mine)
            pass_on(g, g->q[0].sig, alive);
        drop(g, 0);
    }
    g->q[g->nq++] = (struct runsig_rec){ev->sig, ev->pid, mine, t};
}

/* the sentinel ended (killed by someone): from now on without it */
static void check_sentinel(struct run_signals *g)
{
    if (g->sentinel > 0 && waitpid(g->sentinel, NULL, WNOHANG) == g->sentinel)
        g->sentinel = 0;
}

int runsig_step(struct run_signals *g, bool alive)
{
    if (g->ev[0] < 0)
        return -1;
    check_sentinel(g);
    struct sig_event ev[64];
    ssize_t n;
    double t = now_ms();
    while ((n = read(g->ev[0], ev, sizeof ev)) > 0)
        for (size_t i = 0; i < (size_t)n / sizeof ev[0]; i++)
            take(g, &ev[i], alive, t);
    int next = -1;
    for (unsigned i = 0; i < g->nq;) {
        double age = t - g->q[i].at;
        int left = (int)(FWD_WAIT_MS - age) + 1;
        if (age < FWD_WAIT_MS) {
            next = next < 0 || left < next ? left : next;
            i++;
        } else if (g->q[i].mine && g->sentinel && age < FWD_MAX_MS && sentinel_pending(g->sentinel, g->q[i].sig)) {
            next = next < 0 || next > 10 ? 10 : next; /* it comes: its record cancels this one */
            i++;
        } else {
            if (g->q[i].mine)
                pass_on(g, g->q[i].sig, alive);
            drop(g, i);
        }
    }
    return next;
}

/* ---- the end */

_Noreturn void runsig_end_as(int st)
{
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        /* no core of convguard's own: it would take the program's core file's name */
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        struct sigaction dfl = {0};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        kill(getpid(), sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        _exit(128 + sig); /* not reached for a signal that ends a process */
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 127);
}

static void on_signal_after(int sig)
{
    if (sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGCONT || !end_status_set)
        return; /* the program is gone: nothing of it to tell */
    runsig_end_as(end_status);
}

void runsig_stop(struct run_signals *g, int st, bool keep_status)
{
    g->child = 0;
    if (g->sentinel > 0) {
        kill(g->sentinel, SIGKILL);
        while (waitpid(g->sentinel, NULL, 0) < 0 && errno == EINTR)
            ;
        g->sentinel = 0;
    }
    end_status = st;
    end_status_set = 1;
    struct sigaction after = {0};
    after.sa_handler = on_signal_after;
    after.sa_flags = SA_RESTART;
    sigemptyset(&after.sa_mask);
    for (size_t i = 0; g->fwd_saved && i < RUNSIG_N; i++)
        sigaction(forwarded[i], keep_status ? &after : &g->saved[i], NULL);
    event_fd = -1;
    if (g->ev[0] >= 0)
        close(g->ev[0]), close(g->ev[1]);
    g->ev[0] = g->ev[1] = -1;
}
