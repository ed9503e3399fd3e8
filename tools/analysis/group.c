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

#include "analysis/analysis.h"

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

/* a rule's place in the table; rules made by the analysis (process_failed) after it */
static size_t table_pos(const struct rule *r) { return r >= rules && r < rules + n_rules ? (size_t)(r - rules) : n_rules; }

/* Groups by how close they came to the end of their processes (outcome.c):
 * what a process died of first, then the failures before it that nothing
 * recovered from, in the table's order (root causes first), then context (a
 * failure the library went on from, a process that exited 0) by its distance
 * to the end.  A group stands where its best finding does. */
static struct analysis *sort_a;
static int cmp_group(const void *x, const void *y)
{
    const struct fgroup *g = x, *h = y;
    const struct finding *f = &sort_a->f[sort_a->blocks[g->blocks[0]].head];
    const struct finding *e = &sort_a->f[sort_a->blocks[h->blocks[0]].head];
    if (g->tier != h->tier)
        return g->tier < h->tier ? -1 : 1;
    if (g->tier == 2 && g->dist != h->dist)
        return g->dist < h->dist ? -1 : 1;
    if (f->r != e->r)
        return table_pos(f->r) < table_pos(e->r) ? -1 : 1;
    return f->block < e->block ? -1 : f->block > e->block;
}

static int cmp_block_size(const void *x, const void *y)
{
    const struct block *b = &sort_a->blocks[*(const int *)x], *c = &sort_a->blocks[*(const int *)y];
    if (b->p.n != c->p.n)
        return b->p.n > c->p.n ? -1 : 1;
    return b->head < c->head ? -1 : b->head > c->head;
}

/* a new block's group: the findings of one rule whose texts differ only in numbers */
static void add_to_group(struct analysis *a, json_t *gkey, struct finding *f, int b)
{
    struct sbuf g = {0};
    sb_printf(&g, "%s\x1f%s\x1f", f->r->id, f->severity);
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

/* finding i's block: the findings of one rule with the same cause and fix */
static int block_of(struct analysis *a, json_t *bkey, json_t *gkey, size_t i)
{
    struct finding *f = &a->f[i];
    struct sbuf k = {0};
    sb_printf(&k, "%s\x1f%s\x1f%s\x1f%s", f->r->id, f->severity, f->cause, f->fix);
    json_t *bi = json_object_get(bkey, k.s);
    int b;
    if (bi) {
        b = (int)json_integer_value(bi);
    } else {
        b = a->nblocks++;
        a->blocks[b].head = (int)i;
        json_object_set_new(bkey, k.s, json_integer(b));
        add_to_group(a, gkey, f, b);
    }
    free(k.s);
    return b;
}

/* groups by closeness to the end (cmp_group), variants largest first */
static void sort_groups(struct analysis *a)
{
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
        int b = block_of(a, bkey, gkey, i);
        fblock[i] = b;
        f->block = a->blocks[b].head;
        procs_add(&a->blocks[b].p, f->ti);
        struct fgroup *G = &a->groups[a->blocks[b].group];
        procs_add(&G->p, f->ti);
        if (G->p.n == 1 || f->tier < G->tier || (f->tier == G->tier && f->dist < G->dist))
            G->tier = f->tier, G->dist = f->dist;
        a->p[f->ti].nfind++;
    }
    json_decref(bkey);
    json_decref(gkey);
    sort_groups(a);
    /* a process's main finding: the one of its first group (what it died of, else the closest to its end) */
    for (size_t i = 0; i < a->nf; i++) {
        struct proc_sum *p = &a->p[a->f[i].ti];
        int g = a->blocks[fblock[i]].group;
        if (p->main_group < 0 || g < p->main_group)
            p->main_group = g, p->first_f = (int)i;
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
