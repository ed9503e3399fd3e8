/* spank_convguard.c - convguard for every Slurm job that asks (srun, sbatch,
 * salloc --convguard[=DIR|off]), or for every job (default=on): a SPANK
 * plugin (slurm/README.md, docs/slurm.md).
 *
 * Where each hook runs (Slurm's spank(8), and ../shared/field-notes.md):
 *   the option's callback   srun/sbatch/salloc (local), slurmstepd (remote)
 *   user_init               slurmstepd, once per step and node, as the job's
 *                           user (effective uid only): the folders are made
 *   task_init               each task, as the user, just before exec: the
 *                           folder checked, the task's environment set
 *   task_post_fork          slurmstepd, root: each task's pid and start
 *   task_exit               slurmstepd, root, with the task's wait status:
 *                           after the node's last task, when one failed, the
 *                           step's report, made by `convguard step-report`
 *                           run as the job's user (never root in a user's
 *                           folder), and its headline on the step's stderr
 * A job that does not ask (and no default=on) is not touched: no variable,
 * no folder, no file.  The plugin never fails a job: a wrong plugstack.conf
 * line is logged and turns the plugin off; an unusable folder leaves the
 * job untraced with one line that says why. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "core/safedir.h"
#include "settings.h"

SPANK_PLUGIN(convguard, 1);

struct task {
    pid_t pid;
    uint32_t rank;
    double start, end;
    int status; /* wait status */
    int exited;
};

static struct {
    struct cgs_settings set;
    int broken;                /* a plugstack argument was wrong: the plugin does nothing */
    int ask;                   /* enum cgs_ask, from --convguard */
    char ask_dir[CGS_PATH];    /* its DIR */
    int active;                /* this step is traced */
    uint32_t job, step;
    char step_name[32];
    char base[CGS_PATH];       /* the folder pattern, expanded */
    char step_dir[CGS_PATH];   /* base/<job>.<step>: the traces' folder */
    char batch_dir[CGS_PATH];  /* base/<job>.batch: what the batch step set, inherited by its steps */
    char why[1536];            /* why this step has no trace, "" */
    struct task *tasks;
    uint32_t ntasks, nexited;
} cg;

static int opt_cb(int val, const char *optarg, int remote);

/* registered in slurm_spank_init: sbatch and salloc know no spank_options table (spank(7)) */
static struct spank_option option = {
    "convguard", "[DIR|off]",
    "trace the job's CUDA and cuDNN calls with convguard, into DIR (%u user, %j job id); a failed step's report "
    "and its headline on stderr",
    2, 0, opt_cb,
};

static int opt_cb(int val, const char *optarg, int remote)
{
    char err[256];
    (void)val;
    int a = cgs_option(optarg, err, sizeof err);
    if (a < 0) {
        if (!remote) /* the user's typo stops their srun, as any wrong option does */
            slurm_error("convguard: --convguard=%s: %s", optarg, err);
        return remote ? 0 : -1;
    }
    cg.ask = a;
    if (a == CGS_DIR)
        snprintf(cg.ask_dir, sizeof cg.ask_dir, "%s", optarg);
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    char err[256];
    spank_context_t ctx = spank_context();
    if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE)
        spank_option_register(sp, &option);
    cgs_defaults(&cg.set);
    for (int i = 0; i < ac; i++)
        if (cgs_arg(&cg.set, av[i], err, sizeof err) != 0) {
            slurm_error("convguard: plugstack.conf: %s: the plugin is off", err);
            cg.broken = 1;
        }
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* ---- the folders (user_init, as the job's user) */

static void set_why(const char *what, const char *text)
{
    size_t n = 0; /* cut to its room */
    for (const char *s = what; *s && n + 1 < sizeof cg.why; s++)
        cg.why[n++] = *s;
    for (const char *s = text; *s && n + 1 < sizeof cg.why; s++)
        cg.why[n++] = *s;
    cg.why[n] = 0;
    for (char *p = cg.why; *p; p++) /* names from the job and the file system: no control characters */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

static void why_safedir(const struct cg_safedir *sd, const char *path)
{
    char text[1400];
    cg_safedir_explain(sd, path, text, sizeof text);
    set_why("", text);
}

/* Each folder of path from `made` on, made one at a time (0700) and checked
 * with the trace folder's rule; what comes before must exist. */
static int make_folders(const char *path, size_t made)
{
    struct cg_safedir sd;
    char prefix[CGS_PATH];
    size_t len = strlen(path);
    for (size_t i = made + 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != 0)
            continue;
        memcpy(prefix, path, i);
        prefix[i] = 0;
        int fd = cg_safedir_open(prefix, 1, &sd);
        if (fd < 0) {
            why_safedir(&sd, prefix);
            return -1;
        }
        close(fd);
    }
    return 0;
}

static void user_name(uid_t uid, char *out, size_t cap)
{
    struct passwd pw, *r = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &r) == 0 && r)
        snprintf(out, cap, "%s", pw.pw_name);
    else
        snprintf(out, cap, "%lu", (unsigned long)uid);
}

/* base: DIR of --convguard, else dir=, else <submit folder>/convguard-logs */
static int find_base(spank_t sp, size_t *made)
{
    uid_t uid = 0;
    char user[256], node[256] = "", submit[CGS_PATH] = "", err[512];
    spank_get_item(sp, S_JOB_UID, &uid);
    user_name(uid, user, sizeof user);
    if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !node[0])
        gethostname(node, sizeof node - 1);
    struct cgs_job j = {user, (unsigned long)uid, cg.job, node};
    const char *pattern = cg.ask == CGS_DIR ? cg.ask_dir : cg.set.dir;
    if (!pattern[0]) {
        if (spank_getenv(sp, "SLURM_SUBMIT_DIR", submit, sizeof submit - 16) != ESPANK_SUCCESS || !submit[0]) {
            set_why("no folder: neither --convguard=DIR nor dir= in plugstack.conf, and no SLURM_SUBMIT_DIR", "");
            return -1;
        }
        strcat(submit, "/convguard-logs");
        for (char *p = submit; *p; p++)
            if (*p == '%') /* a literal folder, not a pattern */
                *p = '_';
        pattern = submit;
    }
    if (cgs_expand(pattern, &j, cg.base, sizeof cg.base, made, err, sizeof err) != 0) {
        set_why("the folder: ", err);
        return -1;
    }
    return 0;
}

static void name_step(void)
{
    if (cg.step == SLURM_BATCH_SCRIPT)
        snprintf(cg.step_name, sizeof cg.step_name, "batch");
    else if (cg.step == SLURM_INTERACTIVE_STEP)
        snprintf(cg.step_name, sizeof cg.step_name, "interactive");
    else
        snprintf(cg.step_name, sizeof cg.step_name, "%lu", (unsigned long)cg.step);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    if (cg.broken || !spank_remote(sp))
        return 0;
    spank_get_item(sp, S_JOB_ID, &cg.job);
    spank_get_item(sp, S_JOB_STEPID, &cg.step);
    if (cg.step == SLURM_EXTERN_CONT || cg.step == SLURM_PENDING_STEP)
        return 0;
    name_step();
    char partition[256] = "";
    int known = spank_getenv(sp, "SLURM_JOB_PARTITION", partition, sizeof partition) == ESPANK_SUCCESS;
    cg.active = cg.ask == CGS_ON || cg.ask == CGS_DIR ||
                (cg.ask == CGS_UNSET && cgs_default_for(&cg.set, known ? partition : NULL));
    if (!cg.active && cg.ask != CGS_OFF)
        return 0;
    size_t made = 0;
    if (find_base(sp, &made) != 0)
        return 0;
    if (cgs_step_dir(cg.step_dir, sizeof cg.step_dir, cg.base, cg.job, cg.step_name) != 0 ||
        cgs_step_dir(cg.batch_dir, sizeof cg.batch_dir, cg.base, cg.job, "batch") != 0) {
        set_why("the folder: too long: ", cg.base);
        return 0;
    }
    if (!cg.active)
        return 0;
    if (access(cg.set.preload, R_OK) != 0) {
        set_why("preload= in plugstack.conf: cannot be read: ", cg.set.preload);
        return 0;
    }
    uint32_t n = 0;
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &n);
    cg.tasks = n ? calloc(n, sizeof *cg.tasks) : NULL;
    cg.ntasks = cg.tasks ? n : 0;
    make_folders(cg.base, made);
    return 0;
}

/* ---- the task's environment (task_init, in the task, as the user) */

static int env_get(spank_t sp, const char *name, char *buf, int len)
{
    return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS;
}

/* the one line that says why this step has no trace: once per node */
static void say_why(spank_t sp)
{
    int local = -1;
    spank_get_item(sp, S_TASK_ID, &local);
    if (local != 0)
        return;
    char line[2048];
    int n = snprintf(line, sizeof line, "convguard: no trace for step %lu.%s: %s\n", (unsigned long)cg.job,
                     cg.step_name, cg.why);
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
        return; /* the task's stderr is gone: nothing to tell it */
}

/* the folder as the task's user sees it: base usable, the step's folder
 * usable or not made yet (the shim makes it with its first trace) */
static int folder_usable(void)
{
    struct cg_safedir sd;
    int fd = cg_safedir_open(cg.step_dir, 0, &sd);
    if (fd >= 0)
        return close(fd), 1;
    if (sd.why == CG_SD_MISSING && strcmp(sd.at, cg.step_dir) == 0) {
        struct cg_safedir sb;
        fd = cg_safedir_open(cg.base, 0, &sb);
        if (fd >= 0)
            return close(fd), 1;
        why_safedir(&sb, cg.base);
        return 0;
    }
    why_safedir(&sd, cg.step_dir);
    return 0;
}

/* --convguard=off in a step of a batch job that asked: what the batch step
 * set, and the step inherited, taken back */
static void undo_inherited(spank_t sp, const char *preload)
{
    char out[8192];
    if (cgs_preload_remove(preload, cg.set.preload, out, sizeof out) == 0) {
        if (out[0])
            spank_setenv(sp, "LD_PRELOAD", out, 1);
        else
            spank_unsetenv(sp, "LD_PRELOAD");
    }
    spank_unsetenv(sp, "CONVGUARD_DIR");
    if (cg.set.fallback)
        spank_unsetenv(sp, "CONVGUARD_FALLBACK");
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    char preload[8192] = "", dir[CGS_PATH] = "", out[8192];
    if (cg.broken || !cg.step_dir[0])
        return 0;
    int has_preload = env_get(sp, "LD_PRELOAD", preload, sizeof preload);
    int inherited = cg.step != SLURM_BATCH_SCRIPT && env_get(sp, "CONVGUARD_DIR", dir, sizeof dir) &&
                    strcmp(dir, cg.batch_dir) == 0;
    if (cg.ask == CGS_OFF) {
        if (inherited)
            undo_inherited(sp, preload);
        return 0;
    }
    if (!cg.active)
        return 0;
    /* default=on and the user traces the job their own way (README "On a cluster"): theirs */
    if (cg.ask == CGS_UNSET && !inherited && cgs_preload_has_convguard(preload))
        return 0;
    if (cg.why[0] || !folder_usable()) {
        say_why(sp);
        return 0;
    }
    int r = cgs_preload_add(has_preload ? preload : NULL, cg.set.preload, out, sizeof out);
    if (r < 0) {
        set_why("LD_PRELOAD is too long to add the shim to", "");
        say_why(sp);
        return 0;
    }
    if (r == 0)
        spank_setenv(sp, "LD_PRELOAD", out, 1);
    spank_setenv(sp, "CONVGUARD_DIR", cg.step_dir, 1);
    if (cg.set.fallback)
        spank_setenv(sp, "CONVGUARD_FALLBACK", "1", 1);
    if (cg.set.report) /* the step's headline says it once: no summary line per process (a user's own setting kept) */
        spank_setenv(sp, "CONVGUARD_QUIET", "1", 0);
    return 0;
}

/* ---- the step's end (slurmstepd, root) */

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    int local = -1;
    if (!cg.active || spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local < 0 ||
        (uint32_t)local >= cg.ntasks)
        return 0;
    struct task *t = &cg.tasks[local];
    spank_get_item(sp, S_TASK_PID, &t->pid);
    spank_get_item(sp, S_TASK_GLOBAL_ID, &t->rank);
    t->start = now();
    return 0;
}

/* each line of what the report command printed (at most two), as a line of
 * the step's stderr, control characters replaced */
static void relay_headline(char *text)
{
    int lines = 0;
    for (char *line = strtok(text, "\n"); line && lines < 2; line = strtok(NULL, "\n"), lines++) {
        for (char *p = line; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        slurm_spank_log("%s", line);
    }
}

/* "--task" arguments: rank:pid:status:start:end, status as `convguard run`
 * returns it (128+signal for a task killed) */
static char **report_argv(const char *cmd)
{
    char **argv = calloc(2 * cg.ntasks + 8, sizeof *argv);
    int k = 0;
    if (!argv)
        return NULL;
    argv[k++] = strdup(cmd);
    argv[k++] = strdup("step-report");
    argv[k++] = strdup("--step");
    if (asprintf(&argv[k++], "%lu.%s", (unsigned long)cg.job, cg.step_name) < 0)
        argv[k - 1] = NULL;
    for (uint32_t i = 0; i < cg.ntasks; i++) {
        struct task *t = &cg.tasks[i];
        if (!t->exited || t->pid <= 0)
            continue;
        int st = WIFSIGNALED(t->status) ? 128 + WTERMSIG(t->status) : WEXITSTATUS(t->status);
        argv[k++] = strdup("--task");
        if (asprintf(&argv[k++], "%lu:%ld:%d:%.3f:%.3f", (unsigned long)t->rank, (long)t->pid, st, t->start,
                     t->end) < 0)
            argv[k - 1] = NULL;
    }
    argv[k++] = strdup("--");
    argv[k++] = strdup(cg.step_dir);
    for (int i = 0; i < k; i++)
        if (!argv[i]) {
            for (int m = 0; m < k; m++)
                free(argv[m]);
            free(argv);
            return NULL;
        }
    return argv;
}

static void free_argv(char **argv)
{
    for (int i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* who the report runs as: the job's user, asked of Slurm before the fork */
struct who {
    uid_t uid;
    gid_t gid, *gids;
    int ngids;
};

static void job_user(spank_t sp, struct who *w)
{
    memset(w, 0, sizeof *w);
    spank_get_item(sp, S_JOB_UID, &w->uid);
    spank_get_item(sp, S_JOB_GID, &w->gid);
    if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &w->gids, &w->ngids) != ESPANK_SUCCESS)
        w->gids = NULL, w->ngids = 0;
}

/* In the child, between fork and exec (async-signal-safe calls only): the
 * job's user for good, and nothing of slurmstepd's but the pipe. */
static void become_user(const struct who *w, int out)
{
    setpgid(0, 0); /* a group of its own: a report past its time is killed whole */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int s = 1; s < 65; s++)
        sigaction(s, &dfl, NULL);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(null, 2) < 0)
        _exit(126);
    if (syscall(SYS_close_range, 3U, ~0U, 0) != 0)
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
    if (setgroups((size_t)w->ngids, w->gids) != 0 && w->uid != 0)
        _exit(126);
    if (setgid(w->gid) != 0 || setuid(w->uid) != 0 || getuid() != w->uid || geteuid() != w->uid)
        _exit(126);
    if (w->uid != 0 && setuid(0) == 0) /* the drop must be for good */
        _exit(126);
    if (chdir("/") != 0)
        _exit(126);
}

/* what the child printed, read until it ends or the deadline; killed then */
static int collect(pid_t pid, int fd, char *buf, size_t cap, int *status)
{
    size_t n = 0;
    double deadline = now() + cg.set.report_timeout;
    int late = 0;
    for (;;) {
        int ms = (int)((deadline - now()) * 1000);
        struct pollfd p = {fd, POLLIN, 0};
        if (ms <= 0) {
            late = 1;
            break;
        }
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            late = r == 0;
            break;
        }
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
        if (n == cap - 1) /* the headline is short: the rest is not read */
            break;
    }
    buf[n] = 0;
    if (late)
        kill(-pid, SIGKILL);
    close(fd);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return late;
}

static void run_report(spank_t sp)
{
    char cmd[CGS_PATH], text[4096];
    cgs_command(&cg.set, cmd, sizeof cmd);
    if (access(cmd, X_OK) != 0) {
        slurm_spank_log("convguard: step %lu.%s failed; no report: %s cannot be run (convguard= in plugstack.conf)",
                        (unsigned long)cg.job, cg.step_name, cmd);
        return;
    }
    char **argv = report_argv(cmd);
    char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL};
    struct who w;
    job_user(sp, &w);
    int pfd[2];
    if (!argv || pipe2(pfd, O_CLOEXEC) != 0) {
        free_argv(argv);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        become_user(&w, pfd[1]);
        execve(cmd, argv, envp);
        _exit(127);
    }
    close(pfd[1]);
    free_argv(argv);
    if (pid > 0)
        setpgid(pid, pid); /* as the child does itself: whichever runs first */
    if (pid < 0) {
        close(pfd[0]);
        return;
    }
    int status = 0;
    if (collect(pid, pfd[0], text, sizeof text, &status)) {
        slurm_spank_log("convguard: step %lu.%s failed; its report took more than %u s (report_timeout=), "
                        "`convguard report --job %lu` makes it",
                        (unsigned long)cg.job, cg.step_name, cg.set.report_timeout, (unsigned long)cg.job);
        return;
    }
    /* 0: the headline; 1: no trace, said only when the job asked, and not for the batch script
     * around its steps; 2: why there is no report */
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 0 || code == 2 || (code == 1 && cg.ask != CGS_UNSET && cg.step != SLURM_BATCH_SCRIPT))
        relay_headline(text);
    else if (code != 1)
        slurm_spank_log("convguard: step %lu.%s failed; no report: %s step-report ended with %s %d",
                        (unsigned long)cg.job, cg.step_name, cmd, WIFEXITED(status) ? "status" : "signal",
                        WIFEXITED(status) ? code : WTERMSIG(status));
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    int local = -1, status = 0;
    if (!cg.active || spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local < 0 ||
        (uint32_t)local >= cg.ntasks || cg.tasks[local].exited)
        return 0;
    spank_get_item(sp, S_TASK_EXIT_STATUS, &status);
    struct task *t = &cg.tasks[local];
    t->status = status, t->exited = 1, t->end = now();
    if (++cg.nexited < cg.ntasks || !cg.set.report || cg.why[0])
        return 0;
    for (uint32_t i = 0; i < cg.ntasks; i++)
        if (cg.tasks[i].status != 0) {
            run_report(sp);
            break;
        }
    return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)sp, (void)ac, (void)av;
    free(cg.tasks);
    cg.tasks = NULL;
    cg.ntasks = 0;
    return 0;
}
