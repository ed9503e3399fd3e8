/* complete.c - whether each trace can show how its process ended.
 *
 * A trace that stops without its exit line (the process was killed, left
 * through _exit, or the host closed or reused convguard's descriptor), that
 * lost lines (gaps in seq, events the shim could not write, its trace_gap
 * marker) or whose exit line counts failures none of which it holds cannot
 * say that nothing went wrong: a failure may be in what is missing.  Such a
 * process is "incomplete", and a report with one is never "no problem found"
 * (docs/cli.md).  A crash event or a later image of the same pid (exec)
 * tells how a trace without exit line ended: those are complete. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

static bool has_event(struct trace *t, const char *name)
{
    for (size_t k = 0; k < json_array_size(t->events); k++)
        if (strcmp(jstr(json_array_get(t->events, k), "ev", ""), name) == 0)
            return true;
    return false;
}

/* an error among the process's findings: its failure is told */
static bool has_error(struct analysis *a, size_t i)
{
    for (size_t k = 0; k < a->nf; k++)
        if (a->f[k].ti == i && strcmp(a->f[k].r->severity, "error") == 0)
            return true;
    return false;
}

/* where it stops, when it has no exit line: "it stops after #12 dlopen, 0.100 s after its start" */
static void stops_after(struct sbuf *b, struct trace *t)
{
    if (!t->st.last_ev[0])
        sb_add(b, "; it has no exit line");
    else if (t->st.last_seq >= 0)
        sb_printf(b, "; it stops after #%lld %s, %.3f s after its start, without an exit line", t->st.last_seq,
                  t->st.last_ev, t->st.last_t);
    else
        sb_printf(b, "; it stops after a %s event, %.3f s after its start, without an exit line", t->st.last_ev,
                  t->st.last_t);
    sb_add(b, ": the process may have crashed, been killed, left through _exit, or closed or reused "
              "convguard's file descriptor");
}

/* the shim's own counts of what it could not write */
static void lost_events(struct sbuf *b, struct trace *t)
{
    long long dropped = jint(t->exit, "events_dropped", 0);
    if (t->st.gap_events)
        sb_printf(b, "; the shim lost %lld event%s (%s) and went on writing", t->st.gap_lost,
                  t->st.gap_lost == 1 ? "" : "s", t->st.gap_reason[0] ? t->st.gap_reason : "no reason given");
    if (dropped > 0)
        sb_printf(b, "; the shim could not write %lld event%s (its size cap, a full disk or a lost descriptor)",
                  dropped, dropped == 1 ? "" : "s");
    if (t->st.capped && dropped <= 0)
        sb_printf(b, "; it reached its size cap (CONVGUARD_MAX_MB=%lld): later events were not written",
                  t->st.capped_mb);
}

/* "the trace of pid 77 is incomplete: it stops after ...", NULL when whole */
static char *incomplete_text(struct analysis *a, size_t i)
{
    struct trace *t = &a->s->t[i];
    struct proc_sum *p = &a->p[i];
    struct sbuf b = {0};
    char sz[32];
    if (!t->exit && !t->execd && !has_event(t, "crash"))
        stops_after(&b, t);
    if (t->st.seq_gaps)
        sb_printf(&b, "; %ld line%s of it %s missing (gaps in seq)", t->st.seq_gaps, t->st.seq_gaps > 1 ? "s" : "",
                  t->st.seq_gaps > 1 ? "are" : "is");
    lost_events(&b, t);
    if (t->st.nul_bytes)
        sb_printf(&b, "; it holds %s of NUL bytes where lines should be (a crash of the machine cut it)",
                  fmt_size(t->st.nul_bytes, sz, sizeof sz));
    if (t->st.long_lines)
        sb_printf(&b, "; %ld line%s over 4 MiB %s skipped unread", t->st.long_lines, t->st.long_lines > 1 ? "s" : "",
                  t->st.long_lines > 1 ? "were" : "was");
    long long failures = jint(t->exit, "failures", 0);
    if (failures > 0 && p->nfail == 0 && !has_error(a, i))
        sb_printf(&b, "; its exit line counts %lld failure%s, and none of them is in the trace", failures,
                  failures > 1 ? "s" : "");
    if (!b.len)
        return NULL;
    char *r = xasprintf("the trace of %s is incomplete: %s", p->label, b.s + 2);
    free(b.s);
    return r;
}

void judge_completeness(struct analysis *a)
{
    for (size_t i = 0; i < a->s->n; i++) {
        a->p[i].incomplete = incomplete_text(a, i);
        a->nincomplete += a->p[i].incomplete != NULL;
    }
}

int analysis_incomplete(struct analysis *a) { return a->nincomplete; }
