/* analyse.c - a trace set turned into the report's model (struct analysis,
 * analysis.h): every process summed up and its findings, then the findings
 * grouped, the first failure found and the processes compared.  How each
 * process ended is judged first (outcome.c): the findings are placed against
 * it, and a failed process no rule explains gets the plain truth.  The outputs
 * (out/) read the model; nothing here prints. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

static bool boring(struct analysis *a, size_t i) { return !a->p[i].nlibs && !a->p[i].nfail && !a->p[i].nfind; }
bool analysis_in_table(struct analysis *a, size_t i) { return !boring(a, i) || a->s->n == 1; }

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
    for (size_t i = 0; i < s->n; i++) {
        diagnose_trace(&s->t[i]);
        summarise(a, i);
    }
    judge_outcomes(a); /* how each process ended, before the rules: their findings are placed against it */
    for (size_t i = 0; i < s->n; i++) {
        a->p[i].f_begin = (int)a->nf, a->p[i].f_extra = -1;
        apply_rules(a, i);
        outcome_findings(a, i);
    }
    outcome_run_findings(a);
    /* the event of an error a rule found is a failure too, listed or not; a line of the output is one
     * only where it stays an error: a process that exited 0, or read what another one printed and died
     * of, shares the stream's lines but did not fail of them */
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        struct proc_sum *p = &a->p[f->ti];
        bool line = strcmp(jstr(f->ev, "ev", ""), "output") == 0;
        if (f->ev && strcmp(f->r->severity, "error") == 0 && (!line || strcmp(f->severity, "error") == 0) &&
            (p->fail_t < 0 || jnum(f->ev, "t", 0) < p->fail_t))
            p->fail_t = jnum(f->ev, "t", 0), p->fail_ev = f->ev;
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
