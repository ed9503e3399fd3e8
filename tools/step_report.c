/* step_report.c - `convguard step-report`: what the Slurm plugin
 * (slurm/spank_convguard.c) runs, as the job's user, when a step failed on a
 * node.  It leaves beside the step's traces what Slurm told the plugin, each
 * task's exit status, as capture files of no bytes (docs/trace-format.md,
 * "Captured stderr", mode "none"), so that this report and every later one
 * start from how each task ended; writes the step's report to report.txt in
 * the same folder (the trace folder's rule: tools/util/safedir.c; a new file,
 * renamed into place); and prints its headline, two lines, which the plugin
 * puts on the step's stderr. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/safedir.h"
#include "model/capture.h"
#include "cli.h"
#include "out/out.h"

#define MAX_TASKS 4096

struct step_task { long rank, pid; int status; double start, end; };

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard step-report --step JOB.STEP [--task RANK:PID:STATUS:START:END]... [--] DIR\n"
               "  for the Slurm plugin (convguard(1), SLURM), run as the job's user when a step failed:\n"
               "  each task's exit status kept beside the traces in DIR (STATUS as `convguard run`\n"
               "  returns it, 128+signal when killed; START, END in seconds since the epoch),\n"
               "  the step's report written to DIR/report.txt, its headline (two lines) on stdout\n"
               "exit status: 0 written, 1 no trace in DIR, 2 usage or I/O error\n");
    return rc;
}

static int parse_task(const char *s, struct step_task *t)
{
    char *end;
    t->rank = strtol(s, &end, 10);
    if (*end != ':' || t->rank < 0)
        return -1;
    t->pid = strtol(end + 1, &end, 10);
    if (*end != ':' || t->pid <= 0)
        return -1;
    long st = strtol(end + 1, &end, 10);
    if (*end != ':' || st < 0 || st > 255)
        return -1;
    t->status = (int)st;
    t->start = strtod(end + 1, &end);
    if (*end != ':')
        return -1;
    t->end = strtod(end + 1, &end);
    return *end ? -1 : 0;
}

/* the host as the shim names it in its traces (shim/shim.c), which a capture must match */
static void trace_host(char *h, size_t n)
{
    struct utsname u;
    const char *src = uname(&u) == 0 && u.nodename[0] ? u.nodename : "host";
    size_t len = strnlen(src, n - 1); /* cut as the shim cuts it */
    memcpy(h, src, len);
    h[len] = 0;
    for (char *p = h; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
            *p = '_';
}

/* <host>-<pid>.stderr of each task, unless one is there (the task was
 * `convguard run`, whose own capture says more) */
static void keep_statuses(int dfd, const struct step_task *t, int n)
{
    char host[64];
    trace_host(host, sizeof host);
    for (int i = 0; i < n; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s-%ld.stderr", host, t[i].pid);
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            continue;
        json_t *hdr = json_pack("{s:i, s:s, s:i, s:I, s:f, s:f, s:s, s:i, s:I, s:[{s:s, s:i, s:b}]}",
                                "convguard_capture", 1, "host", host, "pid", 0, "child", (json_int_t)t[i].pid,
                                "start", t[i].start, "end", t[i].end, "mode", "none", "status", t[i].status,
                                "rank", (json_int_t)t[i].rank, "sections", "name", "tail", "bytes", 0, "cut", 1);
        char *line = hdr ? json_dumps(hdr, JSON_COMPACT) : NULL;
        size_t len = line ? strlen(line) : 0;
        bool ok = line && write(fd, line, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
        close(fd);
        if (!ok)
            unlinkat(dfd, name, 0);
        free(line);
        json_decref(hdr);
    }
}

/* the report into report.txt: a new file of ours, renamed over the old one */
static int write_report(int dfd, struct analysis *a)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".report.%ld.tmp", (long)getpid());
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    print_text(a, f, false, false);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || renameat(dfd, tmp, dfd, "report.txt") != 0) {
        unlinkat(dfd, tmp, 0);
        return -1;
    }
    return 0;
}

/* "step 42.0 failed (ranks 0-1 on n1: exit 1): [library] cuDNN could not create its handle",
 * and where the whole of it is */
static void headline(struct analysis *a, const char *step, const char *dir)
{
    struct procs failed = {0};
    char *how = NULL, *who = NULL, *what = NULL;
    bool alike = true;
    for (size_t i = 0; i < a->s->n; i++) {
        if (a->p[i].out.kind != OC_FAILED)
            continue;
        char *h = outcome_how(a, i);
        if (!how)
            how = h;
        else
            alike = alike && strcmp(h, how) == 0, free(h);
        procs_add(&failed, i);
    }
    if (failed.n)
        who = who_text(a, &failed);
    if (a->ngroups) {
        struct finding *f = &a->f[a->blocks[a->groups[0].blocks[0]].head];
        what = xasprintf("[%s] %s", f->r->layer, f->title);
    } else {
        what = outcome_summary(a);
    }
    char job[64];
    snprintf(job, sizeof job, "%.*s", (int)strcspn(step, "."), step);
    if (who)
        term_printf(stdout, "convguard: step %s failed (%s: %s%s): %s\n", step, who, how, alike ? "" : ", ...", what);
    else
        term_printf(stdout, "convguard: step %s failed: %s\n", step, what);
    term_printf(stdout, "convguard: the report: %s/report.txt; the whole job: convguard report --job %s\n", dir,
                job);
    free(how), free(who), free(what);
    procs_free(&failed);
}

static int report_step(int dfd, const char *dir, const char *step)
{
    struct trace_set s = {0};
    rules_keep_events();
    trace_set_add(&s, dir);
    if (s.n == 0) {
        term_printf(stdout, "convguard: step %s failed; no process of it loaded a CUDA library or a deep-learning "
                            "framework: no trace in %s\n", step, dir);
        trace_set_free(&s);
        return 1;
    }
    trace_set_link(&s); /* a step is one run: every process of it */
    capture_attach(&s, (char *[]){(char *)dir}, 1, 0);
    struct analysis *a = analyse(&s);
    int rc = write_report(dfd, a);
    if (rc == 0)
        headline(a, step, dir);
    else
        term_printf(stdout, "convguard: step %s failed; its report could not be written in %s: %s\n", step, dir,
                    strerror(errno));
    analysis_free(a);
    trace_set_free(&s);
    return rc == 0 ? 0 : 2;
}

int cmd_step_report(int argc, char **argv)
{
    static struct step_task tasks[MAX_TASKS];
    const char *step = NULL;
    int n = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        if (i + 1 >= argc)
            return usage(stderr, 2);
        if (strcmp(argv[i], "--step") == 0)
            step = argv[++i];
        else if (strcmp(argv[i], "--task") == 0 && n < MAX_TASKS && parse_task(argv[i + 1], &tasks[n]) == 0)
            n++, i++;
        else
            return usage(stderr, 2);
    }
    if (!step || i + 1 != argc)
        return usage(stderr, 2);
    const char *dir = argv[i];
    struct cg_safedir sd;
    int dfd = cg_safedir_open(dir, 0, &sd);
    if (dfd < 0 && sd.why == CG_SD_MISSING && strcmp(sd.at, dir) == 0) {
        term_printf(stdout, "convguard: step %s failed; no process of it loaded a CUDA library or a deep-learning "
                            "framework: no trace (%s was never made)\n", step, dir);
        return 1;
    }
    if (dfd < 0) {
        char why[2048];
        cg_safedir_explain(&sd, dir, why, sizeof why);
        term_printf(stdout, "convguard: step %s failed; no report: %s\n", step, why);
        return 2;
    }
    keep_statuses(dfd, tasks, n);
    int rc = report_step(dfd, dir, step);
    close(dfd);
    return rc;
}
