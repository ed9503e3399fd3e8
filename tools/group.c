/* group.c - a thousand processes told as few: findings shared by many told
 * once with a compact list of who ("ranks 0-999 on node0-node125"), the ones
 * that differ told apart, processes alike in one table line, and across
 * ranks the process whose failure came first and what the others' failures
 * look like next to it (the same cause, or a consequence: killed later,
 * timed out, stopped). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

void procs_add(struct procs *p, size_t i)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 4;
        p->i = realloc(p->i, p->cap * sizeof *p->i);
        if (!p->i)
            exit(2);
    }
    p->i[p->n++] = i;
}

void procs_free(struct procs *p)
{
    free(p->i);
    memset(p, 0, sizeof *p);
}

/* ---- compact lists */
static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static int cmp_host(const void *a, const void *b) { return natural_cmp(*(char *const *)a, *(char *const *)b); }

/* "0-36,38-999" */
static void ranges(struct sbuf *b, long long *v, size_t n)
{
    size_t runs = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        if (runs++ == 8) {
            sb_printf(b, " and %zu more", n - i);
            return;
        }
        if (j == i)
            sb_printf(b, "%s%lld", runs > 1 ? "," : "", v[i]);
        else
            sb_printf(b, "%s%lld-%lld", runs > 1 ? "," : "", v[i], v[j]);
        i = j + 1;
    }
}

/* host = prefix, the last run of digits, suffix */
struct hparts { const char *s; size_t pre, dig; long long num; bool zero_led; };
static struct hparts split_host(const char *h)
{
    struct hparts p = {h, strlen(h), 0, -1, false};
    const char *e = h + strlen(h);
    while (e > h && !isdigit((unsigned char)e[-1]))
        e--;
    const char *d = e;
    while (d > h && isdigit((unsigned char)d[-1]))
        d--;
    if (d < e && e - d < 15) {
        p.pre = (size_t)(d - h);
        p.dig = (size_t)(e - d);
        p.num = strtoll(d, NULL, 10);
        p.zero_led = *d == '0' && e - d > 1;
    }
    return p;
}

static bool next_of(struct hparts a, struct hparts b)
{
    return a.num >= 0 && b.num == a.num + 1 && a.pre == b.pre && strncmp(a.s, b.s, a.pre) == 0 &&
           strcmp(a.s + a.pre + a.dig, b.s + b.pre + b.dig) == 0 &&
           (a.dig == b.dig || (!a.zero_led && !b.zero_led));
}

static char *hosts_of(char **h, size_t n)
{
    struct sbuf b = {0};
    size_t pieces = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && next_of(split_host(h[j]), split_host(h[j + 1])))
            j++;
        if (pieces++ == 6) {
            size_t left = n - i;
            sb_printf(&b, " and %zu more host%s", left, left > 1 ? "s" : "");
            break;
        }
        sb_printf(&b, "%s%s", pieces > 1 ? "," : "", h[i]);
        if (j > i)
            sb_printf(&b, "-%s", h[j]);
        i = j + 1;
    }
    return sb_take(&b);
}

static size_t distinct_hosts(struct analysis *a, const struct procs *p, char ***out)
{
    char **h = malloc((p->n ? p->n : 1) * sizeof *h);
    if (!h)
        exit(2);
    size_t n = 0;
    for (size_t k = 0; k < p->n; k++)
        h[n++] = (char *)a->s->t[p->i[k]].host;
    qsort(h, n, sizeof *h, cmp_host);
    size_t u = 0;
    for (size_t k = 0; k < n; k++)
        if (!u || strcmp(h[u - 1], h[k]) != 0)
            h[u++] = h[k];
    *out = h;
    return u;
}

char *hosts_text(struct analysis *a, const struct procs *p)
{
    char **h;
    size_t n = distinct_hosts(a, p, &h);
    char *r = hosts_of(h, n);
    free(h);
    return r;
}

char *who_text(struct analysis *a, const struct procs *p)
{
    if (p->n == 1)
        return xstrdup(a->p[p->i[0]].label);
    long long *r = malloc((p->n ? p->n : 1) * sizeof *r);
    if (!r)
        exit(2);
    size_t nr = 0, other = 0;
    for (size_t k = 0; k < p->n; k++) {
        long long rank = a->s->t[p->i[k]].rank;
        if (rank >= 0)
            r[nr++] = rank;
        else
            other++;
    }
    qsort(r, nr, sizeof *r, cmp_ll);
    size_t u = 0;
    for (size_t k = 0; k < nr; k++)
        if (!u || r[u - 1] != r[k])
            r[u++] = r[k];
    struct sbuf b = {0};
    if (u) {
        sb_add(&b, u > 1 ? "ranks " : "rank ");
        ranges(&b, r, u);
    }
    if (other)
        sb_printf(&b, "%s%zu %sprocess%s", u ? " and " : "", other, u ? "other " : "", other > 1 ? "es" : "");
    free(r);
    char **h;
    size_t nh = distinct_hosts(a, p, &h);
    if (!(nh == 1 && strcmp(h[0], "?") == 0)) {
        char *hs = hosts_of(h, nh);
        sb_printf(&b, " on %s", hs);
        free(hs);
    }
    free(h);
    return sb_take(&b);
}

char *who_counted(struct analysis *a, const struct procs *p)
{
    if (p->n == 1)
        return xstrdup(a->p[p->i[0]].label);
    char *w = who_text(a, p);
    char *r = xasprintf("%zu processes: %s", p->n, w);
    free(w);
    return r;
}

/* ---- findings: blocks (same rule, cause, fix) and groups (the same but for numbers) */
static void mask_digits(struct sbuf *b, const char *s)
{
    for (; *s; s++) {
        if (isdigit((unsigned char)*s)) {
            sb_add(b, "#");
            while (isdigit((unsigned char)s[1]))
                s++;
        } else {
            sb_addn(b, s, 1);
        }
    }
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static struct analysis *sort_a;
static int cmp_group(const void *x, const void *y)
{
    const struct fgroup *g = x, *h = y;
    const struct finding *f = &sort_a->f[sort_a->blocks[g->blocks[0]].head];
    const struct finding *e = &sort_a->f[sort_a->blocks[h->blocks[0]].head];
    if (f->r != e->r)
        return f->r < e->r ? -1 : 1;
    return f->block < e->block ? -1 : f->block > e->block;
}

static int cmp_block_size(const void *x, const void *y)
{
    const struct block *b = &sort_a->blocks[*(const int *)x], *c = &sort_a->blocks[*(const int *)y];
    if (b->p.n != c->p.n)
        return b->p.n > c->p.n ? -1 : 1;
    return b->head < c->head ? -1 : b->head > c->head;
}

void group_findings(struct analysis *a)
{
    json_t *bkey = json_object(), *gkey = json_object();
    a->blocks = calloc(a->nf ? a->nf : 1, sizeof *a->blocks);
    a->groups = calloc(a->nf ? a->nf : 1, sizeof *a->groups);
    if (!a->blocks || !a->groups)
        exit(2);
    int *fblock = malloc((a->nf ? a->nf : 1) * sizeof *fblock);
    if (!fblock)
        exit(2);
    a->nblocks = a->ngroups = 0;
    for (size_t i = 0; i < a->s->n; i++)
        a->p[i].main_group = a->p[i].first_f = -1;
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        struct sbuf k = {0};
        sb_printf(&k, "%s\x1f%s\x1f%s", f->r->id, f->cause, f->fix);
        json_t *bi = json_object_get(bkey, k.s);
        int b;
        if (bi) {
            b = (int)json_integer_value(bi);
        } else {
            b = a->nblocks++;
            a->blocks[b].head = (int)i;
            json_object_set_new(bkey, k.s, json_integer(b));
            struct sbuf g = {0};
            sb_printf(&g, "%s\x1f", f->r->id);
            mask_digits(&g, f->title), sb_add(&g, "\x1f");
            mask_digits(&g, f->cause), sb_add(&g, "\x1f");
            mask_digits(&g, f->fix);
            json_t *gi = json_object_get(gkey, g.s);
            int gr;
            if (gi) {
                gr = (int)json_integer_value(gi);
            } else {
                gr = a->ngroups++;
                json_object_set_new(gkey, g.s, json_integer(gr));
                a->groups[gr].blocks = malloc(sizeof(int));
            }
            struct fgroup *G = &a->groups[gr];
            if (G->nb && (G->nb & (G->nb - 1)) == 0)
                G->blocks = realloc(G->blocks, (size_t)G->nb * 2 * sizeof(int));
            G->blocks[G->nb++] = b;
            a->blocks[b].group = gr;
            free(g.s);
        }
        free(k.s);
        fblock[i] = b;
        f->block = a->blocks[b].head;
        procs_add(&a->blocks[b].p, f->ti);
        procs_add(&a->groups[a->blocks[b].group].p, f->ti);
        a->p[f->ti].nfind++;
    }
    json_decref(bkey);
    json_decref(gkey);
    /* groups in rule-table order (root causes first), variants largest first */
    sort_a = a;
    for (int g = 0; g < a->ngroups; g++)
        qsort(a->groups[g].blocks, (size_t)a->groups[g].nb, sizeof(int), cmp_block_size);
    qsort(a->groups, (size_t)a->ngroups, sizeof *a->groups, cmp_group);
    for (int g = 0; g < a->ngroups; g++) {
        struct fgroup *G = &a->groups[g];
        for (int k = 0; k < G->nb; k++)
            a->blocks[G->blocks[k]].group = g;
        /* a group's processes in set order: its blocks were appended in finding order */
        qsort(G->p.i, G->p.n, sizeof *G->p.i, cmp_size);
    }
    /* a process's main finding: its first, the rule highest in the table */
    for (size_t i = 0; i < a->nf; i++) {
        struct proc_sum *p = &a->p[a->f[i].ti];
        if (p->main_group < 0)
            p->main_group = a->blocks[fblock[i]].group, p->first_f = (int)i;
    }
    free(fblock);
}

/* ---- the process table: one line for processes alike */
void group_processes(struct analysis *a, bool (*shown)(struct analysis *, size_t))
{
    json_t *key = json_object();
    a->pgroups = calloc(a->s->n ? a->s->n : 1, sizeof *a->pgroups);
    if (!a->pgroups)
        exit(2);
    a->npgroups = 0;
    for (size_t i = 0; i < a->s->n; i++) {
        if (!shown(a, i))
            continue;
        struct proc_sum *p = &a->p[i];
        char *libs = lib_short(p);
        struct sbuf l = {0};
        sb_printf(&l, "%s  %s", p->prog, libs);
        if (p->first_f >= 0)
            sb_printf(&l, "-> %s", a->f[p->first_f].title);
        else if (p->nfail)
            sb_printf(&l, "%d failure%s", p->nfail, p->nfail > 1 ? "s" : "");
        else if (!a->s->t[i].exit && !a->s->t[i].execd)
            sb_add(&l, "no failure, no exit line");
        else
            sb_add(&l, "ok");
        free(libs);
        json_t *gi = json_object_get(key, l.s);
        int g;
        if (gi) {
            g = (int)json_integer_value(gi);
            free(l.s);
        } else {
            g = a->npgroups++;
            json_object_set_new(key, l.s, json_integer(g));
            a->pgroups[g].line = l.s;
        }
        procs_add(&a->pgroups[g].p, i);
    }
    json_decref(key);
}

/* ---- the first failure across processes */
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

void find_first_failure(struct analysis *a)
{
    struct first_failure *ff = &a->ff;
    memset(ff, 0, sizeof *ff);
    ff->proc = ff->rival = -1;
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
    if (ff->proc < 0)
        return;
    size_t first = (size_t)ff->proc;
    const char *host = a->s->t[first].host;
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
            const char *sig;
            if (same_failure(a, first, j))
                k = AFTER_SAME;
            else if ((sig = killed_by(q))) {
                k = AFTER_KILLED;
                json_t *sigs = ff->after[k].signals ? ff->after[k].signals : (ff->after[k].signals = json_object());
                json_object_set_new(sigs, sig, json_integer(jint(sigs, sig, 0) + 1));
            } else if (timed_out(a, j))
                k = AFTER_TIMEOUT;
            else
                k = AFTER_OTHER;
            if (t->wall > 0 && strcmp(t->host, host) != 0 && (ff->rival < 0 || when - ff->wall < ff->rival_dt))
                ff->rival = (int)j, ff->rival_dt = when - ff->wall;
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

static json_t *procs_json(const struct procs *p)
{
    json_t *j = json_array();
    for (size_t k = 0; k < p->n; k++)
        json_array_append_new(j, json_integer((json_int_t)p->i[k]));
    return j;
}

json_t *first_failure_json(struct analysis *a)
{
    struct first_failure *ff = &a->ff;
    if (ff->proc < 0)
        return json_null();
    static const char *const kinds[] = {"same_cause", "killed", "timeout", "stopped", "other_cause"};
    struct proc_sum *p = &a->p[ff->proc];
    json_t *after = json_array();
    for (int k = 0; k < AFTER_KINDS; k++) {
        struct after *af = &ff->after[k];
        if (!af->p.n)
            continue;
        char *who = who_text(a, &af->p), *text = after_text(a, (enum after_kind)k);
        json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:o}", "kind", kinds[k], "count", (json_int_t)af->p.n, "who", who,
                              "text", text, "processes", procs_json(&af->p));
        if (isfinite(af->dt_min)) {
            json_object_set_new(o, "after_min_s", json_real(af->dt_min));
            json_object_set_new(o, "after_max_s", json_real(af->dt_max));
        }
        if (af->signals)
            json_object_set(o, "signals", af->signals);
        json_array_append_new(after, o);
        free(who), free(text);
    }
    char *head = first_failure_head(a), *d = describe_event(p->fail_ev), *note = clock_note(a);
    json_t *j = json_pack("{s:i, s:s, s:f, s:f, s:I, s:s, s:o, s:s, s:o, s:o, s:I}", "process", ff->proc, "label",
                          p->label, "wall_time", ff->wall, "t", p->fail_t, "seq",
                          (json_int_t)jint(p->fail_ev, "seq", -1), "failure", d, "rule",
                          p->first_f >= 0 ? json_string(a->f[p->first_f].r->id) : json_null(), "text", head,
                          "clock_note", note ? json_string(note) : json_null(), "after", after, "quiet",
                          (json_int_t)ff->quiet);
    free(head), free(d), free(note);
    return j;
}

void analysis_groups_free(struct analysis *a)
{
    for (int i = 0; i < a->nblocks; i++)
        procs_free(&a->blocks[i].p);
    for (int i = 0; i < a->ngroups; i++) {
        free(a->groups[i].blocks);
        procs_free(&a->groups[i].p);
    }
    for (int i = 0; i < a->npgroups; i++) {
        free(a->pgroups[i].line);
        procs_free(&a->pgroups[i].p);
    }
    for (int k = 0; k < AFTER_KINDS; k++) {
        procs_free(&a->ff.after[k].p);
        json_decref(a->ff.after[k].signals);
    }
    free(a->blocks), free(a->groups), free(a->pgroups);
}
