/* first_failure.c - across ranks, the process whose failure came first and
 * what the others' failures look like next to it (the same cause, or a
 * consequence: killed later, timed out, stopped), and how that is said. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"

static const char *const kill_signals[] = {"SIGABRT", "SIGTERM", "SIGKILL", "SIGINT", "SIGHUP", "SIGQUIT", "SIGPIPE",
                                           "SIGUSR1", "SIGUSR2", NULL};

/* its first failure is a signal that ends processes on request: sent by
 * another process (a launcher), or abort() (a watchdog that gave up) */
static const char *killed_by(struct proc_sum *p)
{
    json_t *e = p->fail_ev;
    if (!e || strcmp(jstr(e, "ev", ""), "crash") != 0)
        return NULL;
    const char *sig = jstr(e, "signal_name", "?");
    if (jget(e, "sent_by"))
        return sig;
    for (int i = 0; kill_signals[i]; i++)
        if (strcmp(sig, kill_signals[i]) == 0)
            return sig;
    return NULL;
}

static bool has_word(const char *s)
{
    static const char *const words[] = {"NCCL", "nccl", "timeout", "Timeout", "timed out", "Watchdog", "watchdog", NULL};
    for (int i = 0; s && words[i]; i++)
        if (strstr(s, words[i]))
            return true;
    return false;
}

static bool timed_out(struct analysis *a, size_t i)
{
    struct proc_sum *p = &a->p[i];
    if (p->fail_ev) {
        char *d = describe_event(p->fail_ev);
        bool hit = has_word(d) || has_word(jstr(p->fail_ev, "fn", NULL));
        free(d);
        if (hit)
            return true;
    }
    if (p->first_f >= 0) {
        struct finding *f = &a->f[p->first_f];
        return has_word(f->title) || has_word(f->cause);
    }
    return false;
}

static bool same_failure(struct analysis *a, size_t i, size_t j)
{
    struct proc_sum *p = &a->p[i], *q = &a->p[j];
    if (p->main_group >= 0 || q->main_group >= 0)
        return p->main_group == q->main_group;
    if (!p->fail_ev || !q->fail_ev)
        return false;
    char *x = describe_event(p->fail_ev), *y = describe_event(q->fail_ev);
    bool same = strcmp(strchr(x, ' ') ?: x, strchr(y, ' ') ?: y) == 0; /* without "#seq" */
    free(x), free(y);
    return same;
}

/* the process that failed first by the wall clock (or the only one that failed) */
static void earliest_failure(struct analysis *a, struct first_failure *ff)
{
    size_t nfailed = 0;
    for (size_t i = 0; i < a->s->n; i++) {
        struct proc_sum *p = &a->p[i];
        struct trace *t = &a->s->t[i];
        if (p->fail_t < 0)
            continue;
        nfailed++;
        if (t->wall <= 0)
            continue;
        double w = t->wall + p->fail_t;
        if (ff->proc < 0 || w < ff->wall)
            ff->proc = (int)i, ff->wall = w;
    }
    if (ff->proc < 0 && nfailed == 1) /* one failure, no clock: still the first */
        for (size_t i = 0; i < a->s->n; i++)
            if (a->p[i].fail_t >= 0)
                ff->proc = (int)i, ff->wall = a->s->t[i].wall + a->p[i].fail_t;
}

/* how process j, which failed at WHEN, failed after the first: the same way,
 * killed (its signal counted), timed out, otherwise; the nearest on another
 * host is the rival */
static enum after_kind failed_after(struct analysis *a, size_t first, size_t j, double when)
{
    struct first_failure *ff = &a->ff;
    struct trace *t = &a->s->t[j];
    enum after_kind k;
    const char *sig;
    if (same_failure(a, first, j))
        k = AFTER_SAME;
    else if ((sig = killed_by(&a->p[j]))) {
        k = AFTER_KILLED;
        json_t *sigs = ff->after[k].signals ? ff->after[k].signals : (ff->after[k].signals = json_object());
        json_object_set_new(sigs, sig, json_integer(jint(sigs, sig, 0) + 1));
    } else if (timed_out(a, j))
        k = AFTER_TIMEOUT;
    else
        k = AFTER_OTHER;
    if (t->wall > 0 && strcmp(t->host, a->s->t[first].host) != 0 && (ff->rival < 0 || when - ff->wall < ff->rival_dt))
        ff->rival = (int)j, ff->rival_dt = when - ff->wall;
    return k;
}

void find_first_failure(struct analysis *a)
{
    struct first_failure *ff = &a->ff;
    memset(ff, 0, sizeof *ff);
    ff->proc = ff->rival = -1;
    earliest_failure(a, ff);
    if (ff->proc < 0)
        return;
    size_t first = (size_t)ff->proc;
    for (int k = 0; k < AFTER_KINDS; k++)
        ff->after[k].dt_min = INFINITY, ff->after[k].dt_max = -INFINITY;
    for (size_t j = 0; j < a->s->n; j++) {
        if (j == first)
            continue;
        struct proc_sum *q = &a->p[j];
        struct trace *t = &a->s->t[j];
        enum after_kind k;
        double when;
        if (q->fail_t >= 0) {
            when = t->wall + q->fail_t;
            k = failed_after(a, first, j, when);
        } else if (!t->exit && !t->execd) {
            when = t->wall + t->t_last;
            if (t->wall <= 0 || when < ff->wall) { /* gone before it: not a consequence */
                ff->quiet++;
                continue;
            }
            k = AFTER_STOPPED;
        } else {
            ff->quiet++;
            continue;
        }
        struct after *af = &ff->after[k];
        procs_add(&af->p, j);
        if (t->wall > 0) {
            double dt = when - ff->wall;
            af->dt_min = dt < af->dt_min ? dt : af->dt_min;
            af->dt_max = dt > af->dt_max ? dt : af->dt_max;
        }
    }
}

static char *utc(double wall)
{
    time_t s = (time_t)wall;
    struct tm tm;
    char b[64];
    if (wall <= 0 || !gmtime_r(&s, &tm))
        return xstrdup("an unknown time");
    strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S", &tm);
    return xasprintf("%s.%03d UTC", b, (int)((wall - (double)s) * 1000));
}

static char *secs(double s)
{
    return s < 1 ? xasprintf("%.3f s", s) : s < 100 ? xasprintf("%.1f s", s) : xasprintf("%.0f s", s);
}

/* "600 s later", "0.003-2.997 s later" */
static char *later(const struct after *af)
{
    if (!isfinite(af->dt_min))
        return xstrdup("later");
    char *lo = secs(af->dt_min), *hi = secs(af->dt_max);
    char *r = strcmp(lo, hi) == 0 ? xasprintf("%s later", lo)
                                  : xasprintf("%.*s-%s later", (int)(strlen(lo) - 2), lo, hi);
    free(lo), free(hi);
    return r;
}

char *first_failure_head(struct analysis *a)
{
    struct first_failure *ff = &a->ff;
    if (ff->proc < 0)
        return NULL;
    struct proc_sum *p = &a->p[ff->proc];
    char *when = utc(ff->wall), *after = secs(p->fail_t), *d = describe_event(p->fail_ev);
    char *r = xasprintf("%s, %s after its start (%s): %s%s%s", p->label, after, when, d,
                        p->first_f >= 0 ? "; problem: " : "", p->first_f >= 0 ? a->f[p->first_f].title : "");
    free(when), free(after), free(d);
    return r;
}

char *after_text(struct analysis *a, enum after_kind k)
{
    struct after *af = &a->ff.after[k];
    if (!af->p.n)
        return NULL;
    const char *first = a->p[a->ff.proc].label;
    char *who = who_text(a, &af->p), *when = later(af), *r = NULL;
    size_t n = af->p.n;
    const char *s = n > 1 ? "s" : "", *es = n > 1 ? "es" : "";
    switch (k) {
    case AFTER_SAME:
        r = xasprintf("%zu other%s failed the same way, %s (%s): the same problem in each process, not a "
                      "consequence of one failure", n, s, when, who);
        break;
    case AFTER_KILLED: {
        struct sbuf sg = {0};
        const char *name;
        json_t *v;
        json_object_foreach(af->signals, name, v)
            sb_printf(&sg, "%s%s %lld", sg.len ? ", " : "", name, (long long)json_integer_value(v));
        r = xasprintf("%zu process%s killed by a signal (%s), %s (%s): most likely consequences of the failure "
                      "of %s (the others wait for it in a collective until a watchdog or the launcher ends them)",
                      n, es, sg.s ? sg.s : "?", when, who, first);
        free(sg.s);
        break;
    }
    case AFTER_TIMEOUT:
        r = xasprintf("%zu process%s reported a timeout or an NCCL error, %s (%s): most likely consequences of "
                      "the failure of %s", n, es, when, who, first);
        break;
    case AFTER_STOPPED:
        r = xasprintf("%zu process%s stopped without an exit line (killed, e.g. by SIGKILL from the launcher), "
                      "%s (%s): most likely consequences of the failure of %s", n, es, when, who, first);
        break;
    case AFTER_OTHER: {
        /* what they failed with: the main finding of the first of them */
        struct proc_sum *q = &a->p[af->p.i[0]];
        char *what = q->first_f >= 0 ? xstrdup(a->f[q->first_f].title)
                                     : q->fail_ev ? describe_event(q->fail_ev) : xstrdup("?");
        r = xasprintf("%zu process%s failed later with another cause, %s (%s; %s): a problem of their own, or a "
                      "consequence: see below", n, es, when, who, what);
        free(what);
        break;
    }
    default:
        break;
    }
    free(who), free(when);
    return r;
}

char *clock_note(struct analysis *a)
{
    struct first_failure *ff = &a->ff;
    if (ff->proc < 0 || a->nhosts < 2)
        return NULL;
    if (ff->rival < 0)
        return xstrdup("the times are each host's own clock");
    char *dt = secs(ff->rival_dt), *r;
    if (ff->rival_dt < 1.0)
        r = xasprintf("the order across hosts is uncertain: %s failed %s later by its own host's clock, and host "
                      "clocks can differ by that much", a->p[ff->rival].label, dt);
    else
        r = xasprintf("the times are each host's own clock; the first failure on another host (%s) came %s later, "
                      "more than host clocks usually differ", a->p[ff->rival].label, dt);
    free(dt);
    return r;
}
