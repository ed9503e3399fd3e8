/* outcome.c - what happened to each process of the run comes first (issue 27
 * items 1 and 2).
 *
 * A process's outcome is read from what the run left: the exit status
 * `convguard run` got for the program it started (its capture's header), a
 * fatal `crash` event, the exit line, and the final error line of the output
 * captured for it (the exception line of its last Python traceback).  A
 * process that failed and that no error finding explains gets the plain
 * truth, a finding of its own (process_failed): it failed, how, its final
 * line, and what convguard checked and found in order.  So a failed run is
 * never "no problem found".
 *
 * Then each finding is placed against that end: the one the process died of
 * first (its event is the final line, the crash, or it takes the group of the
 * printed row the final line matched), then its last failure, then the other
 * failures by how close they came to the end; a failure after which the same
 * library went on working is context (a note), and in a process that exited
 * 0 an error is a warning at most. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "model/capture.h"

/* what a process that failed and no rule explains gets */
static const struct rule process_failed_rule = {
    "process_failed", "program", "error", "outcome", "", NULL,
    "the process failed and no rule explains it", "", "", "",
};
static const struct rule unowned_error_rule = {
    "process_failed", "program", "error", "outcome", "", NULL,
    "a process of the run failed and convguard has no trace of it", "", "", "",
};
static const struct rule caught_rule = {
    "caught_exception", "program", "warning", "outcome", "", NULL,
    "an exception was logged and the program went on", "", "", "",
};

static bool is(json_t *e, const char *name) { return e && strcmp(jstr(e, "ev", ""), name) == 0; }

static const char *signal_label(int sig, char *buf, size_t n)
{
    static const char *const names[] = {NULL, "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL",
                                        "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT",
                                        "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF",
                                        "WINCH", "IO", "PWR", "SYS"};
    if (sig > 0 && sig < (int)(sizeof names / sizeof names[0]))
        snprintf(buf, n, "SIG%s", names[sig]);
    else
        snprintf(buf, n, "signal %d", sig);
    return buf;
}

/* the crash the process died of: the last one whose signal went on to kill it */
static json_t *fatal_crash(struct trace *t)
{
    json_t *last = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        const char *next = jstr(e, "next", "default");
        if (is(e, "crash") && strcmp(next, "program_handler") != 0 && strcmp(next, "ignored") != 0)
            last = e;
    }
    return t->exit ? NULL : last; /* an exit line after it: a handler of the program recovered */
}

/* an error line of the output: a known text that is not a warning or evidence only */
static bool error_line(json_t *e)
{
    if (!is(e, "output"))
        return false;
    if (jtrue(e, "exception"))
        return true;
    const char *k = jstr(e, "kind", "");
    return strcmp(k, "warn") != 0 && strcmp(k, "memory") != 0 && strcmp(k, "benign") != 0;
}

/* the stream's exception line, and its final error line (the exception, else the last known error) */
static json_t *final_line(struct trace *t, json_t **exception)
{
    json_t *fin = NULL;
    *exception = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (!error_line(e))
            continue;
        if (jtrue(e, "exception"))
            *exception = e;
        if (!fin || jint(e, "line", 0) >= jint(fin, "line", 0))
            fin = e;
    }
    return *exception ? *exception : fin;
}

/* The exit status a launcher of the run recorded for pid: torchrun prints a
 * line per worker that failed ("exitcode  : 1 (pid: 4057)", negative: killed
 * by that signal), which capture.c keeps on the stream's marker (the tail's
 * are copied to each rank stream's).  False when none names it. */
static bool launcher_status(json_t *m, long long pid, int *status, int *sig)
{
    static const char *const keys[] = {"status_lines", "run_status_lines"};
    char needle[48];
    snprintf(needle, sizeof needle, "(pid: %lld)", pid);
    for (size_t k = 0; k < 2; k++) {
        json_t *lines = jget(m, keys[k]);
        for (size_t i = 0; i < json_array_size(lines); i++) {
            const char *l = json_string_value(json_array_get(lines, i)), *e = l ? strstr(l, "exitcode") : NULL;
            if (!e || !strstr(l, needle))
                continue;
            e += 8;
            while (*e == ' ' || *e == ':')
                e++;
            char *end;
            long v = strtol(e, &end, 10);
            if (end == e)
                continue;
            if (v < 0)
                *sig = (int)-v;
            else
                *status = (int)v;
            return true;
        }
    }
    return false;
}

/* status and signal from the trace and the capture's header */
static void ended(struct trace *t, struct outcome *o)
{
    memset(o, 0, sizeof *o);
    o->status = o->run_status = -1;
    json_t *crash = fatal_crash(t), *m = capture_marker(t);
    if (crash)
        o->signal = (int)jint(crash, "signal", 0);
    json_t *st = jget(m, "status");
    if (json_is_integer(st) && jint(m, "child", -2) == t->pid && !t->execd) {
        int v = (int)json_integer_value(st);
        if (!t->exit && v > 128 && v < 128 + 65 && !o->signal)
            o->signal = v - 128; /* `convguard run` returns 128+signal for a program killed */
        else if (t->exit || !o->signal)
            o->status = v;
    }
    /* a process that left through _exit (a forked worker of multiprocessing, os._exit) wrote the
     * status it passed: the status of every such child, not only of the program `run` started */
    json_t *xs = jget(t->exit, "exit_status");
    if (o->status < 0 && !o->signal && json_is_integer(xs) && strcmp(jstr(t->exit, "via", ""), "_exit") == 0)
        o->status = (int)(json_integer_value(xs) & 0xff);
    if (o->status < 0 && !o->signal)
        launcher_status(m, t->pid, &o->status, &o->signal); /* a rank torchrun saw fail */
    if (o->status > 0 || o->signal)
        o->kind = OC_FAILED;
    else if (o->status == 0)
        o->kind = OC_OK;
    else if (t->exit || t->execd || crash)
        o->kind = OC_ENDED;
    else
        o->kind = OC_UNKNOWN;
}

static bool same_run(json_t *m, json_t *n) { return m && n && strcmp(jstr(m, "file", ""), jstr(n, "file", "")) == 0; }

/* The processes that read one stream of a capture share its lines: its
 * exception belongs to those of them that failed, else to its first process,
 * unless the program `run` started exited 0: then no traced process printed
 * it (a forked child, a worker convguard has no trace of).  Returns that
 * unowned exception, NULL. */
static json_t *own_stream(struct analysis *a, json_t *marker, int status, bool *done)
{
    struct trace_set *s = a->s;
    size_t first = s->n, failed = 0;
    json_t *ex = NULL, *fin = NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (done[i] || capture_marker(&s->t[i]) != marker)
            continue;
        if (first == s->n)
            first = i, fin = final_line(&s->t[i], &ex);
        failed += a->p[i].out.kind == OC_FAILED;
    }
    for (size_t i = first; i < s->n; i++) {
        if (done[i] || capture_marker(&s->t[i]) != marker)
            continue;
        done[i] = true;
        if (a->p[i].out.kind == OC_FAILED)
            a->p[i].out.line = fin;
        else
            a->p[i].out.others_lines = failed > 0;
    }
    if (!ex || failed)
        return NULL;
    if (status == 0)
        return ex;
    a->p[first].out.line = ex, a->p[first].out.kind = OC_FAILED; /* its own, or passed on by a wrapper */
    return NULL;
}

/* One run (one capture): each stream's lines owned; then what no traced
 * process owns is the run's, told once on its first process
 * (outcome_run_findings): an exception while the program `run` started
 * exited 0, the tail's exception no rank read, or that program's failure
 * when it has no trace and none of the processes it started failed. */
static void own_run(struct analysis *a, size_t first, bool *done)
{
    struct trace_set *s = a->s;
    json_t *m0 = capture_marker(&s->t[first]), *st = jget(m0, "status"), *unowned = NULL, *tail_ex = NULL;
    int status = json_is_integer(st) ? (int)json_integer_value(st) : -1;
    bool top_traced = false, tail_read = false;
    for (size_t i = first; i < s->n; i++) {
        json_t *m = capture_marker(&s->t[i]);
        if (!same_run(m, m0))
            continue;
        top_traced |= s->t[i].pid == jint(m, "child", -2) && !s->t[i].execd;
        tail_read |= strcmp(jstr(m, "stream", ""), "tail") == 0;
        tail_ex = tail_ex ? tail_ex : json_object_get(m, "run_exception");
    }
    for (size_t i = first; i < s->n; i++)
        if (!done[i] && same_run(capture_marker(&s->t[i]), m0)) {
            json_t *u = own_stream(a, capture_marker(&s->t[i]), status, done);
            unowned = unowned ? unowned : u;
        }
    size_t failed = 0;
    for (size_t i = first; i < s->n; i++)
        failed += same_run(capture_marker(&s->t[i]), m0) && a->p[i].out.kind == OC_FAILED;
    if (!unowned && !tail_read && !failed)
        unowned = tail_ex;
    if (unowned || (!failed && status > 0 && !top_traced)) {
        struct outcome *o = &a->p[first].out;
        o->run = m0, o->run_line = unowned, o->run_status = top_traced ? -1 : status;
        a->nunowned += !(unowned && jtrue(unowned, "logged") && status == 0 && o->run_status <= 0); /* caught */
    }
}

void judge_outcomes(struct analysis *a)
{
    struct trace_set *s = a->s;
    bool *done = calloc(s->n + 1, sizeof *done);
    if (!done)
        exit(2);
    for (size_t i = 0; i < s->n; i++)
        ended(&s->t[i], &a->p[i].out);
    for (size_t i = 0; i < s->n; i++)
        if (!done[i] && capture_marker(&s->t[i]))
            own_run(a, i, done);
    a->nfailed = 0;
    for (size_t i = 0; i < s->n; i++) {
        struct outcome *o = &a->p[i].out;
        json_t *st = jget(capture_marker(&s->t[i]), "status");
        a->nfailed += o->kind == OC_FAILED;
        o->run_ok = o->kind == OC_ENDED && json_is_integer(st) && json_integer_value(st) == 0;
    }
    free(done);
}

char *outcome_how(struct analysis *a, size_t i)
{
    struct outcome *o = &a->p[i].out;
    char sb[32];
    if (o->signal)
        return xasprintf("killed by %s", signal_label(o->signal, sb, sizeof sb));
    if (o->status >= 0)
        return xasprintf("exit %d", o->status);
    if (o->kind == OC_FAILED)
        return xstrdup("its output ends in an exception; exit status not recorded");
    if (o->kind == OC_ENDED)
        return xstrdup(a->s->t[i].exit ? "ran to exit(), exit status not recorded" : "ended");
    return xstrdup("no exit line");
}

/* ---- the summary every report starts with */
static bool owns_line(struct outcome *o) { return o->line && o->kind == OC_FAILED; }

static char *one_outcome(struct analysis *a, size_t i)
{
    struct outcome *o = &a->p[i].out;
    char *how = outcome_how(a, i), *r;
    const char *l = a->p[i].label;
    if (o->kind == OC_FAILED)
        r = owns_line(o) ? xasprintf("%s failed (%s): \"%s\"", l, how, jstr(o->line, "text", ""))
                         : xasprintf("%s failed (%s)", l, how);
    else if (o->kind == OC_OK)
        r = xasprintf("%s exited 0", l);
    else if (o->kind == OC_ENDED)
        r = xasprintf("%s %s", l, how);
    else
        r = xasprintf("%s ended without an exit line (killed, _exit, or its trace was cut)", l);
    free(how);
    return r;
}

/* failed processes alike (how, final line) told once */
static void failed_groups(struct analysis *a, struct sbuf *b)
{
    json_t *key = json_object(), *order = json_array();
    struct procs *g = calloc(a->s->n + 1, sizeof *g);
    for (size_t i = 0; i < a->s->n; i++) {
        if (a->p[i].out.kind != OC_FAILED)
            continue;
        char *how = outcome_how(a, i);
        char *k = xasprintf("%s\x1f%s", how, owns_line(&a->p[i].out) ? jstr(a->p[i].out.line, "text", "") : "");
        json_t *gi = json_object_get(key, k);
        size_t n = gi ? (size_t)json_integer_value(gi) : json_array_size(order);
        if (!gi) {
            json_object_set_new(key, k, json_integer((json_int_t)n));
            json_array_append_new(order, json_integer((json_int_t)i));
        }
        procs_add(&g[n], i);
        free(k), free(how);
    }
    for (size_t k = 0; k < json_array_size(order); k++) {
        if (k == 4) {
            sb_printf(b, "; and %zu other ways", json_array_size(order) - k);
            break;
        }
        size_t i = (size_t)json_integer_value(json_array_get(order, k));
        char *one = one_outcome(a, i);
        if (g[k].n == 1) {
            sb_printf(b, "%s%s", k ? "; " : "", one);
        } else {
            char *who = who_counted(a, &g[k]), *rest = strstr(one, " failed (");
            sb_printf(b, "%s%s%s", k ? "; " : "", who, rest ? rest : "");
            free(who);
        }
        free(one);
    }
    for (size_t k = 0; k < json_array_size(order); k++)
        procs_free(&g[k]);
    free(g);
    json_decref(key), json_decref(order);
}

char *outcome_summary(struct analysis *a)
{
    size_t n = a->s->n, by[4] = {0};
    struct sbuf b = {0};
    for (size_t i = 0; i < n; i++)
        by[a->p[i].out.kind]++;
    if (n == 1) {
        char *one = one_outcome(a, 0);
        sb_add(&b, one);
        free(one);
    } else {
        if (by[OC_FAILED]) {
            sb_printf(&b, "%zu of %zu processes failed: ", by[OC_FAILED], n);
            failed_groups(a, &b);
        }
        if (by[OC_OK])
            sb_printf(&b, "%s%zu exited 0", b.len ? "; " : "", by[OC_OK]);
        if (by[OC_ENDED])
            sb_printf(&b, "%s%zu ran to exit(), exit status not recorded", b.len ? "; " : "", by[OC_ENDED]);
        if (by[OC_UNKNOWN])
            sb_printf(&b, "%s%zu ended without an exit line", b.len ? "; " : "", by[OC_UNKNOWN]);
    }
    for (size_t i = 0; i < n; i++) {
        struct outcome *o = &a->p[i].out;
        if (!o->run)
            continue;
        long long child = jint(o->run, "child", -1);
        if (o->run_status > 0)
            sb_printf(&b, "; the program `convguard run` started (pid %lld, no trace of its own) failed (exit %d)", child,
                      o->run_status);
        if (o->run_line && jtrue(o->run_line, "logged") && o->run_status <= 0)
            sb_printf(&b, "; an exception was logged and the program went on: \"%s\"", jstr(o->run_line, "text", ""));
        else if (o->run_line)
            sb_printf(&b, "; the run's output holds an error no traced process owns: \"%s\"", jstr(o->run_line, "text", ""));
    }
    bool captured = false;
    for (size_t i = 0; i < n && !captured; i++)
        captured = capture_marker(&a->s->t[i]) != NULL;
    if (!captured && !by[OC_FAILED] && !by[OC_OK])
        sb_add(&b, " (not run under `convguard run`)");
    return sb_take(&b);
}

/* ---- the plain truth: what convguard checked in a process */
static long long calls_with(json_t *calls, const char *prefix)
{
    long long n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(calls, k, v)
        if (strncmp(k, prefix, strlen(prefix)) == 0)
            n += json_integer_value(v);
    return n;
}

static void checked(struct analysis *a, size_t i, struct sbuf *b)
{
    struct trace *t = &a->s->t[i];
    struct proc_sum *p = &a->p[i];
    json_t *calls = jget(t->exit, "calls");
    sb_printf(b, "it checked: libraries (%d loaded)", p->nlibs);
    sb_printf(b, ", the driver (%s)", p->driver_path ? "libcuda.so.1 loaded" : "libcuda.so.1 not loaded");
    if (calls) {
        long long ctx = calls_with(calls, "cuInit") + calls_with(calls, "cuDevicePrimaryCtx") + calls_with(calls, "cuCtxCreate");
        sb_printf(b, ", devices and contexts (%lld calls)", ctx);
        if (jget(t->exit, "gpu_mem"))
            sb_printf(b, ", GPU memory (%lld allocations, %lld failed)", jint(t->exit, "gpu_mem.allocs", 0),
                      jint(t->exit, "gpu_mem.alloc_failures", 0));
        sb_printf(b, ", cuDNN (%lld calls)", calls_with(calls, "cudnn"));
        sb_printf(b, ", GPU code loads (%lld)", calls_with(calls, "cuModuleLoad") + calls_with(calls, "cuLibraryLoad"));
    } else {
        sb_add(b, "; its trace has no exit line, so how many calls it made is not known");
    }
    if (jget(t->exit, "driver_log"))
        sb_printf(b, ", the driver's log (%lld messages)", jint(t->exit, "driver_log.messages", 0));
    json_t *m = capture_marker(t);
    if (m)
        sb_printf(b, ", its captured output (%lld lines)", jint(m, "lines", 0));
}

/* the cause of a run-level failure: whose it is */
static void run_cause(struct analysis *a, size_t i, struct sbuf *c, const char *line)
{
    struct outcome *o = &a->p[i].out;
    long long child = jint(o->run, "child", -1);
    if (o->run_status > 0)
        sb_printf(c, "the program `convguard run` started (pid %lld) failed (exit %d) and has no trace (it loaded no "
                     "CUDA library itself); ", child, o->run_status);
    if (line && o->run_status > 0)
        sb_add(c, "its output ends in this exception, which none of the traced processes printed; ");
    else if (line)
        sb_printf(c, "the program `convguard run` started (pid %lld) exited 0, so another process of the run printed "
                     "this: one convguard has no trace of (a forked child or a worker that loaded no CUDA library), "
                     "or one whose exit status is not recorded; or the program caught the exception and printed "
                     "it; ", child);
}

/* A run-level exception a logger wrote while the program `run` started
 * exited 0: caught, the program went on (capture.c marks it `logged`).
 * Context, told after everything else of the run. */
static void caught_exception(struct analysis *a, size_t i, struct finding *f, const struct message *m)
{
    const char *line = jstr(a->p[i].out.run_line, "text", "");
    struct sbuf c = {0};
    f->r = &caught_rule;
    f->severity = "note";
    f->title = xasprintf("an exception was logged and the program went on: \"%s\"", line);
    const char *in = jstr(a->p[i].out.run_line, "caught_in", NULL);
    if (in) /* capture.c: the traceback starts below the program's top */
        sb_printf(&c, "the traceback starts in %s, not at the program's top (<module>), so the code that caught the "
                      "exception there printed it, and the program `convguard run` started exited 0", in);
    else
        sb_add(&c, "a logger wrote this traceback (a log record stands right before it), so the exception was "
                   "caught and the program `convguard run` started exited 0");
    if (m && *m->cause)
        sb_printf(&c, "; what the line says (%s): %s", m->framework, m->cause);
    f->cause = sb_take(&c);
    f->fix = m && *m->fix ? fix_for_frameworks(m->fix, frameworks_of(&a->s->t[i]) | fw_of_printed_row(&a->s->t[i], m->framework))
                          : xstrdup("nothing, if the run did what it should: the lines around the traceback say what "
                                    "the program did instead (a CPU fallback, a retry)");
    f->symptom = xasprintf("\"%s\" in the output of a run that exited 0", line);
    f->seen = xstrdup("");
    f->tier = 2, f->dist = 1e9; /* after the findings of the processes */
}

static char *truth_title(struct proc_sum *p, bool run, const char *how, const char *line)
{
    if (run && p->out.run_status > 0)
        return line ? xasprintf("the program `convguard run` started failed (exit %d): \"%s\"", p->out.run_status, line)
                    : xasprintf("the program `convguard run` started failed (exit %d)", p->out.run_status);
    if (run)
        return xasprintf("a process of this run failed: \"%s\"", line);
    return line ? xasprintf("%s failed (%s): \"%s\"", p->label, how, line) : xasprintf("%s failed (%s)", p->label, how);
}

static void plain_truth(struct analysis *a, size_t i, bool run)
{
    struct trace *t = &a->s->t[i];
    struct proc_sum *p = &a->p[i];
    struct outcome *o = &p->out;
    struct finding *f = finding_new(a);
    char *how = outcome_how(a, i);
    json_t *ln = run ? o->run_line : o->line;
    const char *line = ln ? jstr(ln, "text", "") : NULL;
    /* the final line's message family, when patterns.def knows it: what it means and what to do */
    const struct message *m = ln ? message_by_id(jstr(ln, "pattern", NULL)) : NULL;
    if (m && !*m->cause)
        m = NULL;
    struct sbuf c = {0};
    f->r = run ? &unowned_error_rule : &process_failed_rule;
    f->ti = i, f->count = 1, f->ev = ln;
    f->severity = "error";
    f->vars = json_pack("{s:s, s:s}", "how", how, "outcome", run ? "run" : "failed");
    if (run && o->run_line && jtrue(o->run_line, "logged") && o->run_status <= 0) {
        caught_exception(a, i, f, m);
        free(how);
        return;
    }
    f->title = truth_title(p, run, how, line);
    if (m)
        sb_printf(&c, "%s: %s; ", m->title, m->cause);
    if (run) {
        run_cause(a, i, &c, line);
        sb_printf(&c, "in %s, the traced process that read the same output, ", p->label);
    }
    if (p->nfail) {
        char *d = describe_event(p->fail_ev);
        sb_printf(&c, "convguard saw %d failing call%s (the first: %s), and no rule names their cause; ", p->nfail,
                  p->nfail > 1 ? "s" : "", d);
        free(d);
    } else {
        sb_add(&c, run ? "convguard saw no failing CUDA or cuDNN call; " : "convguard saw no failing CUDA or cuDNN call in it; ");
    }
    checked(a, i, &c);
    f->cause = sb_take(&c);
    if (m) /* the message's own fix, for the frameworks of the process and the message's */
        f->fix = fix_for_frameworks(m->fix, frameworks_of(t) | fw_of_printed_row(t, m->framework));
    else
    f->fix = xstrdup(p->nfail ? "start from the program's own error (its final line above) and the failing calls "
                                "listed under the process (`convguard report -v` lists them all): their status "
                                "names the layer"
                              : "start from the program's own error (its final line above): convguard found "
                                "nothing in the CUDA libraries, the driver or GPU memory of this process that "
                                "explains it");
    char *said = capture_symptom(t);
    f->symptom = said ? said : xasprintf("the process ended: %s", how);
    f->seen = p->fail_ev ? describe_event(p->fail_ev) : xstrdup("");
    f->tier = 0, f->dist = 0;
    free(how);
}

/* ---- each finding against the end of its process */

/* the rule's groups, every `,` and `+` part, hold one of own's `+` parts but "printed" */
static bool takes_any(const char *groups, const char *own, size_t own_len)
{
    for (size_t at = 0; at < own_len;) {
        size_t n = strcspn(own + at, "+");
        if (n > own_len - at)
            n = own_len - at;
        if (!(n == 7 && strncmp(own + at, "printed", 7) == 0))
            for (const char *g = groups; *g;) {
                size_t m = strcspn(g, ",+");
                if (m == n && strncmp(g, own + at, n) == 0)
                    return true;
                g += m + (g[m] ? 1 : 0);
            }
        at += n + 1;
    }
    return false;
}

/* f is what the process died of: its event is the final line or the fatal
 * crash, or it took the group of the printed row the final line matches (a
 * cause found in the trace for what the program printed last) */
static bool explains_end(struct trace *t, struct outcome *o, struct finding *f)
{
    if (f->ev && (f->ev == o->line || (is(f->ev, "output") && jtrue(f->ev, "exception"))))
        return true;
    /* a line of the same family as the final one: the framework's exception says "invalid usage" and
     * the line that makes the finding, printed with it, says which ("Duplicate GPU detected") */
    if (o->line && is(f->ev, "output") &&
        (strcmp(jstr(f->ev, "kind", "a"), jstr(o->line, "kind", "b")) == 0 ||
         (strncmp(f->r->id, "printed_", 8) == 0 && rule_pattern_match(f->r->pattern, o->line, t->events))))
        return true;
    if (!o->line || is(f->ev, "output"))
        return false;
    for (size_t r = 0; r < n_rules; r++)
        if (strncmp(rules[r].id, "printed_", 8) == 0 && rule_pattern_match(rules[r].pattern, o->line, t->events))
            return takes_any(f->r->group, rules[r].group, strcspn(rules[r].group, ","));
    return false;
}

/* the process went on past a failure of fn (called by caller) at `at`: a
 * later failure of another call, by another library when both are known */
static bool later_other_failure(struct trace *t, const char *fn, const char *caller, double at)
{
    for (size_t k = 0; k < json_array_size(t->events); k++) {
        json_t *e = json_array_get(t->events, k);
        const char *c = jstr(e, "caller", NULL);
        if (is_failure_event(t, k) && jnum(e, "t", 0) > at && strcmp(jstr(e, "fn", jstr(e, "ev", "")), fn) != 0 &&
            !(caller && c && strcmp(caller, c) == 0))
            return true;
    }
    return false;
}

static bool alloc_event(json_t *e)
{
    const char *fn = jstr(e, "fn", "");
    return is(e, "alloc_failed") || strncmp(fn, "cuMemAlloc", 10) == 0 || strncmp(fn, "cudaMalloc", 10) == 0 ||
           strcmp(fn, "cuMemCreate") == 0;
}

/* Evidence that the library whose call failed went on working after it: a
 * larger allocation than any before it succeeded later (a pool that shrank
 * and was made), a later cuDNN handle was made, or some calls of the same
 * function succeeded while the process went on past the failure (a probe, an
 * engine that fell back).  NULL when none. */
/* A kernel looked up that answered "no binary for this GPU" (209, seen in the driver's log) while
 * every code image the process loaded holds code for this GPU: a library asking for each of its
 * kernels, some built for other GPU generations only, as NCCL's start does (ncclInitKernelsForDevice
 * calls cudaFuncGetAttributes on every kernel and clears the error).  Code built for other GPUs
 * altogether leaves an image that fits nothing (`code_no_fit`, exit.code_images.no_fit). */
static bool kernel_probe(struct trace *t, json_t *ev)
{
    return is(ev, "driver_log") && jint(ev, "status", 0) == 209 && !jtrue(ev, "hooked") &&
           json_array_size(jget(ev, "code_no_fit")) == 0 && jint(t->exit, "code_images.described", 0) > 0 &&
           jint(t->exit, "code_images.no_fit", -1) == 0;
}

/* the final line names another failure than GPU code or a kernel */
static bool died_of_other(json_t *final)
{
    static const char *const code_kinds[] = {"code", "kernel", "launch", "cuda"};
    if (!final)
        return false;
    for (size_t i = 0; i < sizeof code_kinds / sizeof code_kinds[0]; i++)
        if (strcmp(jstr(final, "kind", ""), code_kinds[i]) == 0)
            return false;
    return true;
}

static char *went_on(struct trace *t, json_t *ev, bool process_ok, json_t *final)
{
    if (kernel_probe(t, ev) && (process_ok || died_of_other(final)))
        return xstrdup("then the library went on: every code image this process loaded has code for this GPU, "
                       "so only a kernel built for other GPU generations was asked for and answered \"no\" (a "
                       "library probing its kernels, as NCCL does when it starts)");
    if (!ev || is(ev, "output") || is(ev, "crash") || !jstr(ev, "fn", NULL))
        return NULL;
    const char *fn = jstr(ev, "fn", ""), *caller = jstr(ev, "caller", NULL);
    const char *who = caller ? base_name(caller) : fn;
    char a[32];
    long long before = jint(ev, "largest_ok", -1), after = jint(t->exit, "gpu_mem.largest_ok", -1);
    if (alloc_event(ev) && before >= 0 && after > before)
        return xasprintf("then %s went on: a later allocation of %s succeeded (the largest that worked); the pool "
                         "it asked for was made smaller", who, fmt_size(after, a, sizeof a));
    double at = jnum(ev, "t", 0);
    for (size_t k = 0; is(ev, "cudnn_handle") && k < json_array_size(t->events); k++) {
        json_t *e = json_array_get(t->events, k);
        if (is(e, "cudnn_handle") && jtrue(e, "ok") && jnum(e, "t", 0) > at)
            return xasprintf("then a cuDNN handle was made (#%lld)", jint(e, "seq", -1));
    }
    char key[160];
    snprintf(key, sizeof key, "calls.%s", fn);
    long long calls = jint(t->exit, key, 0);
    snprintf(key, sizeof key, "fails.%s", fn);
    long long fails = jint(t->exit, key, 0);
    /* an allocation is told by the sizes above; otherwise most calls of fn worked and the process went on
     * past it, to a failure of another call of another library (not one that follows from it) */
    if (!alloc_event(ev) && calls - fails > fails && fails > 0 &&
        (process_ok || later_other_failure(t, fn, caller, at)))
        return xasprintf("then %s went on: %lld of %lld %s calls succeeded", who, calls - fails, calls, fn);
    return NULL;
}

static void place(struct analysis *a, size_t i, struct finding *f)
{
    struct trace *t = &a->s->t[i];
    struct outcome *o = &a->p[i].out;
    bool error = strcmp(f->r->severity, "error") == 0;
    f->severity = f->r->severity;
    f->went_on = NULL;
    double end = t->t_last;
    f->dist = !f->ev || is(f->ev, "output") ? (f->ev ? 0 : end - (a->p[i].fail_t >= 0 ? a->p[i].fail_t : 0))
                                            : end - trace_event_t(t, f->ev);
    if (f->dist < 0)
        f->dist = 0;
    f->went_on = error ? went_on(t, f->ev, o->kind == OC_OK || o->run_ok, o->line) : NULL; /* before all: not what it died of */
    if (!f->went_on && o->others_lines && is(f->ev, "output")) {
        f->severity = "note", f->tier = 2; /* what another process of its stream printed, and died of */
        return;
    }
    if (!f->went_on && o->kind != OC_OK && !o->run_ok && explains_end(t, o, f)) {
        f->tier = 0;
        return;
    }
    if (f->went_on)
        f->severity = "note", f->tier = 2;
    else if (o->kind == OC_OK || o->run_ok)
        f->severity = error ? "warning" : f->severity, f->tier = 2;
    else
        f->tier = 1; /* before the end, never recovered from: what led to it (the table orders them) */
}

/* one of the rule's groups is g */
static bool in_group(const struct rule *r, const char *g)
{
    size_t n = strlen(g);
    for (const char *p = r->group; *p;) {
        size_t m = strcspn(p, ",+");
        if (m == n && strncmp(p, g, n) == 0)
            return true;
        p += m + (p[m] ? 1 : 0);
    }
    return false;
}

/* A process that exited 0 after the driver gave it no GPU went on without one: a framework that
 * falls back (JAX, TensorFlow, a PyTorch program that picks "cpu" when CUDA is not available) ran
 * its work on the CPU.  Said with the finding, which is then a warning (issue 27 item 5: a silent
 * CPU run says what the user sees). */
static void ran_on_cpu(struct trace *t, struct finding *f)
{
    bool no_gpu = in_group(f->r, "device") || in_group(f->r, "driver");
    if (!no_gpu || strcmp(f->r->severity, "error") != 0 || jint(t->exit, "gpu_mem.allocs", 0) > 0)
        return;
    char *c = xasprintf("%s; the process went on and exited 0 without the GPU: its work ran on the CPU, slowly (the "
                        "GPU was never used)", f->cause);
    char *ti = xasprintf("the GPU was never used: %s", f->title);
    free(f->cause), free(f->title);
    f->cause = c, f->title = ti;
}

void outcome_findings(struct analysis *a, size_t i)
{
    struct proc_sum *p = &a->p[i];
    bool error = false, ok = p->out.kind == OC_OK || p->out.run_ok;
    for (size_t k = (size_t)p->f_begin; k < a->nf; k++) {
        place(a, i, &a->f[k]);
        if (ok && !a->f[k].went_on)
            ran_on_cpu(&a->s->t[i], &a->f[k]);
        error |= strcmp(a->f[k].severity, "error") == 0;
    }
    p->out.explained = error;
    if (p->out.kind == OC_FAILED && !error)
        plain_truth(a, i, false);
    p->f_end = (int)a->nf;
}

/* A run-level failure (own_lines) is told when no traced process of the run
 * explains it: an exception no traced process owns always; an untraced
 * program's failure when no process read its output with an error finding. */
void outcome_run_findings(struct analysis *a)
{
    for (size_t i = 0; i < a->s->n; i++) {
        struct outcome *o = &a->p[i].out;
        if (!o->run)
            continue;
        bool explained = false;
        for (size_t k = 0; k < a->s->n && !o->run_line; k++)
            explained |= capture_marker(&a->s->t[k]) == o->run && a->p[k].out.explained;
        if (explained)
            continue;
        a->p[i].f_extra = (int)a->nf;
        plain_truth(a, i, true);
    }
}

bool went_on_from(struct analysis *a, size_t ti, const struct rule *r, json_t *ev)
{
    struct outcome *o = &a->p[ti].out;
    char *w = strcmp(r->severity, "error") == 0 ? went_on(&a->s->t[ti], ev, o->kind == OC_OK || o->run_ok, o->line)
                                                : NULL;
    free(w);
    return w != NULL;
}
