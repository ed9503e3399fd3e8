/* analyse.c - a trace set turned into the report's model (struct analysis,
 * analysis.h): every process summed up and its findings, then the findings
 * grouped, the first failure found and the processes compared.  How each
 * process ended is judged first (outcome.c): the findings are placed against
 * it, and a failed process no rule explains gets the plain truth.  The outputs
 * (out/) read the model; nothing here prints. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

static bool boring(struct analysis *a, size_t i) { return !a->p[i].nlibs && !a->p[i].nfail && !a->p[i].nfind; }
bool analysis_in_table(struct analysis *a, size_t i) { return !boring(a, i) || a->s->n == 1; }

/* ---- alike processes (model.h: a trace that shares another's events)
 * take the findings of the first of them, not the rules' time again: the
 * same events give the same findings.  What a rule may read beyond the
 * events differs between them only in whether the process has a traced
 * parent (gpu_never_used names the first without one) and ended by exec:
 * those are part of what makes two of them alike here.  Its own times, end
 * and outcome each still has (outcome.c places the findings against them). */
struct leaders { struct { const struct trace_share *sh; int ctx; size_t i; } *slot; size_t cap; };

static int leader_ctx(const struct trace *t) { return (t->parent < 0) | t->execd << 1; }

/* the first process alike to i in context ctx (-1: its own), or i itself if it is the first */
static size_t leader_of(struct leaders *l, struct trace_set *s, size_t i, int ctx)
{
    const struct trace *t = &s->t[i];
    if (!t->share)
        return i;
    if (!l->slot) {
        for (l->cap = 64; l->cap < 2 * s->n; l->cap *= 2)
            ;
        l->slot = calloc(l->cap, sizeof *l->slot);
        if (!l->slot)
            exit(2);
    }
    if (ctx < 0)
        ctx = leader_ctx(t);
    size_t h = ((uintptr_t)t->share >> 4) * 0x9e3779b97f4a7c15ull + (size_t)ctx;
    for (size_t j = h & (l->cap - 1);; j = (j + 1) & (l->cap - 1)) {
        if (!l->slot[j].sh) {
            l->slot[j].sh = t->share, l->slot[j].ctx = ctx, l->slot[j].i = i;
            return i;
        }
        if (l->slot[j].sh == t->share && l->slot[j].ctx == ctx)
            return l->slot[j].i;
    }
}

/* process i gets the rules' findings of its leader: the same events, facts and texts (borrowed) */
static void copy_findings(struct analysis *a, size_t leader, size_t i)
{
    for (int k = a->p[leader].f_begin; k < a->p[leader].f_rules; k++) {
        struct finding *f = finding_new(a), *from = &a->f[k]; /* after finding_new: it may move a->f */
        *f = *from;
        f->ti = i, f->borrowed = true, f->went_on = NULL, f->block = 0;
        json_incref(f->vars);
    }
}

/* The rules and the diagnosis read a process's events with its pid (a holder
 * of GPU memory that is the process itself is no other process): shared
 * events are read with the pid that wrote them. */
static long long events_pid(struct trace *t)
{
    long long own = t->pid;
    if (t->share)
        t->pid = t->share->pid;
    return own;
}

/* each process diagnosed (shared events once) and summed up (alike ones from the first of them) */
static void diagnose_all(struct analysis *a)
{
    struct trace_set *s = a->s;
    struct leaders alike = {0};
    struct procs *fails = calloc(s->n ? s->n : 1, sizeof *fails);
    if (!fails)
        exit(2);
    for (size_t i = 0; i < s->n; i++) {
        struct trace_share *sh = s->t[i].share;
        if (!sh || !sh->diagnosed) {
            long long own = events_pid(&s->t[i]);
            diagnose_trace(&s->t[i]);
            s->t[i].pid = own;
        }
        if (sh)
            sh->diagnosed = true;
        size_t l = leader_of(&alike, s, i, 4);
        if (l == i)
            summarise(a, i, sh ? &fails[i] : NULL);
        else
            summarise_alike(a, i, l, &fails[l]);
    }
    for (size_t i = 0; i < s->n; i++)
        procs_free(&fails[i]);
    free(fails);
    free(alike.slot);
}

/* each process's rules (alike ones: the first one's findings), placed against its end */
static void rule_all(struct analysis *a)
{
    struct trace_set *s = a->s;
    struct leaders lead = {0};
    for (size_t i = 0; i < s->n; i++) {
        a->p[i].f_begin = (int)a->nf, a->p[i].f_extra = -1;
        size_t l = leader_of(&lead, s, i, -1);
        if (l == i) {
            long long own = events_pid(&s->t[i]);
            apply_rules(a, i);
            s->t[i].pid = own;
        } else {
            copy_findings(a, l, i);
        }
        a->p[i].f_rules = (int)a->nf;
        outcome_findings(a, i);
    }
    free(lead.slot);
}

struct analysis *analyse(struct trace_set *s)
{
    struct analysis *a = calloc(1, sizeof *a);
    if (!a)
        exit(2);
    a->s = s;
    a->p = calloc(s->n ? s->n : 1, sizeof *a->p);
    a->incons = json_array();
    json_t *hosts = json_object();
    for (size_t i = 0; i < s->n; i++)
        json_object_set_new(hosts, s->t[i].host, json_true());
    a->nhosts = (int)json_object_size(hosts);
    json_decref(hosts);
    diagnose_all(a);
    judge_outcomes(a); /* how each process ended, before the rules: their findings are placed against it */
    rule_all(a);
    outcome_run_findings(a);
    /* the event of an error a rule found is a failure too, listed or not; a line of the output is one
     * only where it stays an error: a process that exited 0, or read what another one printed and died
     * of, shares the stream's lines but did not fail of them */
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        struct proc_sum *p = &a->p[f->ti];
        bool line = strcmp(jstr(f->ev, "ev", ""), "output") == 0;
        double ft = f->ev ? trace_event_t(&s->t[f->ti], f->ev) : 0;
        if (f->ev && strcmp(f->r->severity, "error") == 0 && (!line || strcmp(f->severity, "error") == 0) &&
            (p->fail_t < 0 || ft < p->fail_t))
            p->fail_t = ft, p->fail_ev = f->ev;
    }
    judge_completeness(a);
    group_findings(a);
    group_processes(a, analysis_in_table);
    memory_pictures(a);
    find_first_failure(a);
    compare_processes(a);
    return a;
}

/* distinct problems: findings told once (a group) but notes, and inconsistencies */
int analysis_problems(struct analysis *a)
{
    int n = 0;
    for (int g = 0; g < a->ngroups; g++)
        n += finding_counts(&a->f[a->blocks[a->groups[g].blocks[0]].head]);
    return n + (int)json_array_size(a->incons);
}

void analysis_free(struct analysis *a)
{
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        json_decref(f->vars);
        if (!f->borrowed)
            free(f->title), free(f->symptom), free(f->seen), free(f->cause), free(f->fix), free(f->driver);
        free(f->went_on);
    }
    for (size_t i = 0; i < a->s->n; i++)
        free(a->p[i].label), free(a->p[i].prog), free(a->p[i].cudnn_mix), free(a->p[i].incomplete);
    analysis_groups_free(a);
    for (int k = 0; k < a->npics; k++)
        mem_picture_free(&a->pics[k]);
    free(a->pics);
    free(a->f);
    free(a->p);
    json_decref(a->incons);
    free(a);
}
