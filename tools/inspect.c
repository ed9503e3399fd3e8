/* inspect.c - `convguard inspect PID`: what a process that is running now
 * has mapped of CUDA, read from outside (host/proc.c: /proc/PID and the
 * files it mapped; no ptrace, no signal, nothing runs inside the target, and
 * no CUDA library is loaded here).  The picture becomes a one-process trace
 * (model/snapshot.c) and analyse() reads it as it reads a trace: one
 * diagnosis (analysis/diagnose.c) and one rule table (rules.def) for report,
 * inspect and the Python check().  Shown by out/inspect_text.c, --json by
 * out/json.c, --html by out/html.c. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "host/host.h"
#include "out/out.h"

/* exit statuses of `convguard inspect` (docs/cli.md) */
enum {
    INSPECT_OK = 0,
    INSPECT_PROBLEMS = 1,
    INSPECT_USAGE = 2,
    INSPECT_NOT_A_PID = 3,
    INSPECT_NO_PROCESS = 4,
    INSPECT_PERMISSION = 5,
    INSPECT_NO_CUDA = 6,
};

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

/* all that is read of the running process; 0, or the exit code (told) */
static int read_process(struct proc_view *p, const char *me)
{
    char why[256];
    switch (proc_view_read(p)) {
    case PROC_READ_OK:
        return 0;
    case PROC_READ_NO_PROCESS:
        fprintf(stderr, "%s: no process %lld (it does not exist, or it exited)\n", me, p->pid);
        return INSPECT_NO_PROCESS;
    case PROC_READ_DENIED:
        fprintf(stderr,
                "%s: process %lld %s: its memory map can be read only by its user or a process with "
                "CAP_SYS_PTRACE; run `convguard inspect %lld` as that user, with sudo, or in a container started "
                "with --cap-add=SYS_PTRACE\n",
                me, p->pid, proc_denial_reason(p->pid, why, sizeof why), p->pid);
        return INSPECT_PERMISSION;
    case PROC_READ_FAILED:
        fprintf(stderr, "%s: /proc/%lld/maps: %s\n", me, p->pid, strerror(p->error));
        return INSPECT_NO_PROCESS;
    case PROC_READ_EXITED:
        break;
    }
    fprintf(stderr, "%s: process %lld exited while it was being read\n", me, p->pid);
    return INSPECT_NO_PROCESS;
}

/* one process inspected and shown; its exit code */
static int inspect_one(long long pid, bool as_json, const char *html, json_t *all)
{
    const char *me = "convguard inspect";
    struct proc_view p = {.pid = pid};
    int rc = read_process(&p, me);
    if (rc)
        return rc;
    struct trace_set s;
    snapshot_trace_set(&p, &s);
    struct analysis *a = analyse(&s);
    rc = analysis_problems(a) ? INSPECT_PROBLEMS : json_array_size(p.libs) == 0 ? INSPECT_NO_CUDA : INSPECT_OK;
    if (as_json) {
        json_t *j = snapshot_json(&p, a, rc);
        if (all)
            json_array_append_new(all, j);
        else
            json_dumpf(j, stdout, JSON_INDENT(2)), fputc('\n', stdout), json_decref(j);
    } else {
        inspect_print(&p, a, stdout);
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
    proc_view_free(&p);
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
        } else if (n > 1 && (pid == (long long)getpid() || (own = proc_convguard_own(pid)))) {
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
