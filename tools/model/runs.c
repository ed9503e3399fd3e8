/* runs.c - the runs of a trace set, and the latest one kept.
 *
 * A trace folder outlives a run: the failing run, then the fixed one, write
 * into the same ./convguard-logs, and a report of both says "2 problems"
 * about a job that now works.  No run id travels with a process (a process
 * traced by hand, or each task of an srun under its own `convguard run`,
 * shares none with the others), so a run is told from the traces alone:
 *
 *   - a process belongs to the run of its traced parent (a DataLoader
 *     worker forked an hour in, a torchrun worker);
 *   - processes that ran at the same time belong to one run: sorted by
 *     start, a process that starts before the ones before it ended (their
 *     last event), or less than RUN_GAP_S after, joins them (the ranks of
 *     a job; `python prep.py; python train.py` in one job script).
 *
 * The latest run is the one of the process that started last; a trace with
 * no start time (an old or cut trace) is kept with it: it cannot be placed.
 * The report says when it left a run out, and `--all-runs` keeps every one. */
#include <stdlib.h>

#include "model/model.h"

/* two commands typed one after the other are further apart than this;
 * two processes of one script are not */
#define RUN_GAP_S 1.0

static size_t root_of(size_t *up, size_t i)
{
    while (up[i] != i) {
        up[i] = up[up[i]];
        i = up[i];
    }
    return i;
}

static void join(size_t *up, size_t a, size_t b)
{
    a = root_of(up, a), b = root_of(up, b);
    if (a != b)
        up[a < b ? b : a] = a < b ? a : b;
}

static const struct trace_set *by_start_set;

static int cmp_start(const void *x, const void *y)
{
    double a = by_start_set->t[*(const size_t *)x].wall, b = by_start_set->t[*(const size_t *)y].wall;
    return a < b ? -1 : a > b;
}

/* up[i]: the run of trace i, as a union-find forest over the set (parents
 * from trace_set_link); order: the traces with a start time, by start */
static size_t runs_of(const struct trace_set *s, size_t *up, size_t *order)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        up[i] = i;
        if (s->t[i].wall > 0)
            order[n++] = i;
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i].parent >= 0 && (size_t)s->t[i].parent < s->n)
            join(up, i, (size_t)s->t[i].parent);
    by_start_set = s;
    qsort(order, n, sizeof *order, cmp_start);
    double end = 0;
    for (size_t k = 0; k < n; k++) {
        const struct trace *t = &s->t[order[k]];
        if (k > 0 && t->wall <= end + RUN_GAP_S)
            join(up, order[k], order[k - 1]);
        if (t->wall + (t->t_last > 0 ? t->t_last : 0) > end)
            end = t->wall + (t->t_last > 0 ? t->t_last : 0);
    }
    return n;
}

/* the runs, counted at their roots (each set's smallest index) */
static size_t count_runs(const struct trace_set *s, size_t *up)
{
    size_t runs = 0;
    for (size_t i = 0; i < s->n; i++)
        runs += root_of(up, i) == i;
    return runs;
}

int trace_set_keep_latest_run(struct trace_set *s, struct run_choice *rc)
{
    *rc = (struct run_choice){0};
    size_t cap = s->n ? s->n : 1, *up = malloc(cap * 2 * sizeof *up);
    if (!up)
        return -1;
    size_t *order = up + cap, timed = runs_of(s, up, order);
    if (timed == 0) { /* nothing to place in time: all of it is one run */
        rc->runs = s->n ? 1 : 0;
        free(up);
        return 0;
    }
    size_t latest = root_of(up, order[timed - 1]), keep = 0;
    rc->runs = count_runs(s, up);
    rc->started = s->t[order[timed - 1]].wall;
    for (size_t i = 0; i < s->n; i++) {
        bool mine = s->t[i].wall <= 0 || root_of(up, i) == latest;
        if (!mine) {
            rc->left_out++;
            trace_free(&s->t[i]);
            continue;
        }
        if (s->t[i].wall > 0 && s->t[i].wall < rc->started)
            rc->started = s->t[i].wall;
        s->t[keep++] = s->t[i];
    }
    s->n = keep;
    free(up);
    return 0;
}
