/* ranks.c - the match function of the rule about the ranks of one job on
 * one GPU (rules.def ranks_share_gpu): NCCL's "Duplicate GPU detected" told
 * with the processes of the trace set that ran the job's ranks on the same
 * host, what each was given (LOCAL_RANK, CUDA_VISIBLE_DEVICES) and how many
 * GPUs the host showed. */
#include "rules/match.h"

/* the rank a process ran as: its trace's (RANK and the like), else LOCAL_RANK */
static long long rank_of(struct trace *t)
{
    if (t->rank >= 0)
        return t->rank;
    const char *lr = jstr(t->start, "env.LOCAL_RANK", NULL);
    return lr && *lr ? strtoll(lr, NULL, 10) : -1;
}

/* GPUs this host showed a process: NVML's list or the driver's count, in any event of the set there */
static long long gpus_on(struct trace_set *s, const char *host)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->t[i].host, host) != 0)
            continue;
        for (size_t k = 0; k < json_array_size(s->t[i].events); k++) {
            json_t *e = json_array_get(s->t[i].events, k);
            long long n = jint(e, "nvml_gpus.count", jint(e, "device_count", -1));
            if (n > 0)
                return n;
        }
    }
    return -1;
}

bool m_ranks_share_gpu(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    struct sbuf r = {0}, v = {0};
    int nranks = 0, unset = 0;
    const char *same = NULL;
    bool differ = false;
    for (size_t i = 0; i < s->n; i++) {
        struct trace *o = &s->t[i];
        long long rk = rank_of(o);
        if (rk < 0 || strcmp(o->host, t->host) != 0 || o->execd)
            continue;
        if (nranks < 8)
            sb_printf(&r, "%srank %lld (pid %lld)", nranks ? ", " : "", rk, o->pid);
        nranks++;
        const char *cvd = jstr(o->start, "env.CUDA_VISIBLE_DEVICES", NULL);
        if (!cvd)
            unset++;
        else if (!same)
            same = cvd;
        else if (strcmp(same, cvd) != 0)
            differ = true;
    }
    if (nranks >= 2)
        set_own(vars, "ranks", xasprintf("%d ranks of this job ran on %s: %s", nranks, t->host, r.s));
    else
        set_own(vars, "ranks", xasprintf("two ranks on %s used one GPU (only %s is traced here)", t->host,
                                         nranks ? r.s : "this process"));
    if (unset == nranks || nranks < 2)
        sb_add(&v, "CUDA_VISIBLE_DEVICES was not set for them");
    else if (!differ && !unset)
        sb_printf(&v, "each was given CUDA_VISIBLE_DEVICES=\"%s\"", same);
    else
        sb_add(&v, "their CUDA_VISIBLE_DEVICES did not give each its own GPU");
    long long g = gpus_on(s, t->host);
    if (g > 0)
        sb_printf(&v, "; the host shows %lld GPU%s", g, g > 1 ? "s" : "");
    set_own(vars, "visible", sb_take(&v));
    set_own(vars, "gpus", g > 0 ? xasprintf("%lld", g) : xstrdup("<GPUs on the host>"));
    free(r.s);
    set_own(vars, "seen", xasprintf("stderr: %s", jstr(ev, "text", "")));
    return true;
}
