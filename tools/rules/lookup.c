/* lookup.c - the headline: a failure that the algorithm lookup before
 * it explains.
 *
 * A framework asks cuDNN which algorithm to use (cudnnGet*Algorithm_v7,
 * cudnnFind*Algorithm(Ex), a graph plan); cuDNN answers with candidates and
 * the workspace each needs; the framework takes the first and allocates its
 * workspace.  When that workspace is more than the GPU had free, the
 * allocation (or the convolution, or the Find itself) fails, while
 * candidates that needed less - often none at all - were in the same list.
 * The report then says which call, which algorithm, the workspace asked
 * against the memory free at the lookup, which candidates would have fitted,
 * and how to make the framework take one of them. */
#include "rules/match.h"

/* allocators round up: PyTorch's caching allocator to 2 MiB blocks, TF's BFC
 * to 256 bytes, XLA to its own; a request this close to a workspace is it */
static bool about(long long bytes, long long ws)
{
    if (ws <= 0 || bytes < ws)
        return false;
    long long slack = ws / 16 > 2 * MIB ? ws / 16 : 2 * MIB;
    return bytes - ws <= slack;
}

static bool ok_status(json_t *a) { return jint(a, "status", 0) == 0; }

/* cuDNN's first choice in a lookup: the first candidate that succeeded (the
 * list is in cuDNN's order of preference, or of time for Find) */
static json_t *first_choice(json_t *lookup)
{
    json_t *algos = jget(lookup, "algos");
    for (size_t i = 0; i < json_array_size(algos); i++)
        if (ok_status(json_array_get(algos, i)))
            return json_array_get(algos, i);
    return json_array_get(algos, 0);
}

static bool alloc_statusish(long long st) { return st == 2 || st == 4003 || st == 4004; }

static const char *algo_label(json_t *a, char *buf, size_t n)
{
    const char *name = jstr(a, "algo_name", NULL);
    if (name)
        return name;
    snprintf(buf, n, "algorithm %lld", jint(a, "algo", -1));
    return buf;
}

/* the lookup this failure follows: the latest conv_algos before it (by seq:
 * lines of threads may interleave) whose candidates explain it */
static json_t *lookup_before(struct trace *t, json_t *fail, json_t **chosen)
{
    long long seq = jint(fail, "seq", -1), best_seq = -1;
    json_t *best = NULL;
    *chosen = NULL;
    bool alloc = is_ev(fail, "alloc_failed") || is_ev(fail, "call_failed");
    long long bytes = jint(fail, "bytes", -1);
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *l = json_array_get(t->events, i);
        if (!is_ev(l, "conv_algos")) /* first: asked of every event, for every failure */
            continue;
        long long ls = jint(l, "seq", -1);
        if (ls >= seq || ls <= best_seq || !jget(l, "algos"))
            continue;
        json_t *algos = jget(l, "algos"), *pick = NULL;
        if (alloc) {
            /* the allocation is one candidate's workspace, the first choice first */
            json_t *first = first_choice(l);
            if (about(bytes, jint(first, "workspace", -1)))
                pick = first;
            for (size_t k = 0; !pick && k < json_array_size(algos); k++)
                if (ok_status(json_array_get(algos, k)) && about(bytes, jint(json_array_get(algos, k), "workspace", -1)))
                    pick = json_array_get(algos, k);
        } else { /* a convolution: its algorithm, of the same direction */
            if (strcmp(jstr(l, "op", "?"), jstr(fail, "op", "!")) != 0)
                continue;
            for (size_t k = 0; !pick && k < json_array_size(algos); k++)
                if (jint(json_array_get(algos, k), "algo", -2) == jint(fail, "algo", -3))
                    pick = json_array_get(algos, k);
        }
        if (pick)
            best = l, best_seq = ls, *chosen = pick;
    }
    return best;
}

static char *fits_text(json_t *lookup, long long free_b, json_t *chosen, int *nfit, json_t **first_fit)
{
    json_t *algos = jget(lookup, "algos");
    struct sbuf b = {0};
    *nfit = 0;
    *first_fit = NULL;
    for (size_t i = 0; i < json_array_size(algos); i++) {
        json_t *a = json_array_get(algos, i);
        long long ws = jint(a, "workspace", -1);
        if (a == chosen || !ok_status(a) || ws < 0 || ws > free_b)
            continue;
        if (!*first_fit)
            *first_fit = a;
        if ((*nfit)++ < 4) {
            char n[48], sz[32];
            sb_printf(&b, "%s%s (%s)", b.len ? ", " : "", algo_label(a, n, sizeof n), fmt_size(ws, sz, sizeof sz));
        }
    }
    if (*nfit > 4)
        sb_printf(&b, " and %d more", *nfit - 4);
    return sb_take(&b);
}

static char *shape_text(json_t *ev)
{
    json_t *x = jget(ev, "x.dims"), *w = jget(ev, "w.dims");
    if (!json_is_array(x) && !json_is_array(w))
        return xstrdup("");
    struct sbuf b = {0};
    sb_add(&b, " (");
    for (int k = 0; k < 2; k++) {
        json_t *d = k ? w : x;
        if (!json_is_array(d))
            continue;
        sb_printf(&b, "%s%s [", k && json_is_array(x) ? ", " : "", k ? "w" : "x");
        for (size_t i = 0; i < json_array_size(d); i++)
            sb_printf(&b, "%s%lld", i ? "," : "", (long long)json_integer_value(json_array_get(d, i)));
        sb_add(&b, "]");
    }
    sb_add(&b, ")");
    return sb_take(&b);
}

/* the framework's own cap of cuDNN's workspace */
static void knob_facts(struct trace *t, json_t *vars, long long free_b)
{
    long long mb = free_b > 0 ? free_b / MIB : 0;
    /* leave a little for what the step allocates besides the workspace */
    mb = mb > 64 ? mb - mb / 16 : mb;
    char tf[160], torch[160];
    snprintf(tf, sizeof tf, "TensorFlow: `TF_CUDNN_WORKSPACE_LIMIT_IN_MB=%lld` caps cuDNN's workspace", mb);
    snprintf(torch, sizeof torch, "PyTorch: `CUDNN_CONV_WSCAP_DBG=%lld` caps it (MiB)", mb);
    const char *jax = "JAX: `XLA_FLAGS=--xla_gpu_autotune_level=0` (no autotuning, so no large trial workspaces) "
                      "or a lower `XLA_PYTHON_CLIENT_MEM_FRACTION` to leave them room";
    (void)t; /* the report keeps the parts of the frameworks in the process (fw.c, frame_fix) */
    set_own(vars, "knob", xasprintf("; %s; %s; %s", tf, torch, jax));
    set_int(vars, "limit_mb", mb);
}

/* what a workspace failure is made of: the lookup before it (NULL for a
 * graph's plan), the candidate taken, the workspace it needs, the memory */
struct ws_case {
    json_t *lookup, *chosen;
    long long ws, free_then, total, free_now;
    char what[256];
};

/* the lookup failed itself: Find ran out of memory for its trials, or every
 * candidate failed for memory or needed more than was free */
static bool lookup_failed(json_t *ev, struct ws_case *c)
{
    json_t *algos = jget(ev, "algos");
    bool memory = alloc_statusish(jint(ev, "status", 0)) ||
                  strcmp(jstr(ev, "signature", ""), "all_algos_exceed_free_memory") == 0;
    for (size_t i = 0; !memory && i < json_array_size(algos); i++)
        memory = alloc_statusish(jint(json_array_get(algos, i), "status", 0));
    if (!memory)
        return false;
    c->lookup = ev;
    c->chosen = first_choice(ev);
    /* the smallest workspace any candidate needs: even that did not fit */
    for (size_t i = 0; i < json_array_size(algos); i++) {
        long long w = jint(json_array_get(algos, i), "workspace", -1);
        if (w >= 0 && (c->ws < 0 || w < c->ws))
            c->ws = w, c->chosen = json_array_get(algos, i);
    }
    snprintf(c->what, sizeof c->what, "%s",
             jint(ev, "status", 0) ? "the lookup itself failed" : "every candidate failed for memory");
    return true;
}

/* a graph's plan failed to execute for want of its workspace */
static bool graph_failed(json_t *ev, struct ws_case *c)
{
    c->ws = jint(ev, "workspace", -1);
    c->free_then = jint(ev, "mem.free", -1);
    bool memory = strcmp(jstr(ev, "likely_cause.kind", ""), "out_of_memory") == 0 ||
                  alloc_statusish(jint(ev, "status", 0)) || (c->ws > 0 && c->free_then >= 0 && c->ws > c->free_then);
    return memory && c->ws > 0;
}

/* an allocation or a convolution failed after a lookup whose choice explains it */
static bool failed_after_lookup(struct trace *t, json_t *ev, struct ws_case *c)
{
    if (is_ev(ev, "alloc_failed") || is_ev(ev, "call_failed")) {
        if (jint(ev, "status", -1) != 2)
            return false;
    }
    c->lookup = lookup_before(t, ev, &c->chosen);
    if (!c->lookup || !c->chosen)
        return false;
    c->ws = jint(c->chosen, "workspace", -1);
    if (is_ev(ev, "conv_exec_failed")) {
        long long given = jint(ev, "workspace", -1);
        bool memory = alloc_statusish(jint(ev, "status", 0)) || (given >= 0 && given < c->ws);
        if (!memory)
            return false;
    }
    return true;
}

/* the case of this failure, if a workspace that did not fit explains it */
static bool ws_case_of(struct trace *t, json_t *ev, struct ws_case *c)
{
    *c = (struct ws_case){.ws = -1, .free_then = -1, .total = -1};
    bool found = is_ev(ev, "conv_algos")          ? lookup_failed(ev, c)
                 : is_ev(ev, "graph_exec_failed") ? graph_failed(ev, c)
                                                  : failed_after_lookup(t, ev, c);
    if (!found)
        return false;
    if (c->lookup) {
        c->free_then = jint(c->lookup, "mem.free", -1);
        c->total = jint(c->lookup, "mem.total", -1);
    }
    if (c->free_then < 0)
        c->free_then = jint(ev, "mem.free", -1);
    if (c->total < 0)
        c->total = jint(ev, "mem.total", -1);
    c->free_now = jint(ev, "mem.free", c->free_then);
    /* the workspace explains it only if it did not fit */
    return c->ws > 0 && ((c->free_then >= 0 && c->ws > c->free_then) || (c->free_now >= 0 && c->ws > c->free_now));
}

/* {call} and {choice}: the lookup (or plan) and the candidate it took */
static void call_facts(json_t *ev, struct ws_case *c, json_t *vars)
{
    char nb[48];
    if (c->lookup) {
        char *shape = shape_text(c->lookup);
        json_t *algos = jget(c->lookup, "algos");
        size_t n = json_array_size(algos);
        size_t rank = 0;
        while (rank < n && json_array_get(algos, rank) != c->chosen)
            rank++;
        set_own(vars, "call", xasprintf("%s (%s convolution%s, #%lld)", jstr(c->lookup, "fn", "?"),
                                        jstr(c->lookup, "op", "?"), shape, jint(c->lookup, "seq", -1)));
        free(shape);
        if (c->lookup == ev)
            set_own(vars, "choice", xasprintf("returned %zu candidates; the smallest, %s, needs", n,
                                              algo_label(c->chosen, nb, sizeof nb)));
        else
            set_own(vars, "choice", xasprintf("chose %s (candidate %zu of %zu), which needs",
                                              algo_label(c->chosen, nb, sizeof nb), rank + 1, n));
    } else {
        json_t *op = json_array_get(jget(ev, "ops"), 0);
        set_own(vars, "call", xasprintf("the cuDNN graph's execution plan (%s, #%lld)",
                                        jstr(op, "op", "operation graph"), jint(ev, "seq", -1)));
        long long eng = jint(ev, "engine", -1);
        set_own(vars, "choice", eng >= 0 ? xasprintf("used engine %lld, which needs", eng)
                                         : xstrdup("used a plan that needs"));
    }
}

/* {outcome}: what failed */
static void outcome_facts(json_t *ev, struct ws_case *c, json_t *vars)
{
    char sz[32];
    if (c->lookup == ev) {
        set_own(vars, "outcome", xasprintf("%s (%s)", c->what,
                                           jint(ev, "status", 0) ? jstr(ev, "status_name", "?")
                                                                 : jstr(c->chosen, "status_name", "?")));
    } else if (is_ev(ev, "alloc_failed") || is_ev(ev, "call_failed")) {
        set_own(vars, "outcome", xasprintf("allocating that workspace, %s(%s) failed with %s (#%lld)",
                                           jstr(ev, "fn", "?"), fmt_size(jint(ev, "bytes", -1), sz, sizeof sz),
                                           jstr(ev, "status_name", "?"), jint(ev, "seq", -1)));
    } else {
        set_own(vars, "outcome", xasprintf("%s failed with %s (#%lld)", jstr(ev, "fn", "?"),
                                           jstr(ev, "status_name", "?"), jint(ev, "seq", -1)));
    }
}

/* {fits} and {fallback_note}: the candidates that would have fitted */
static void fits_facts(struct ws_case *c, json_t *vars)
{
    char nb[48];
    int nfit = 0;
    json_t *first_fit = NULL;
    char *fits = c->lookup ? fits_text(c->lookup, c->free_then >= 0 ? c->free_then : c->free_now, c->chosen, &nfit,
                                       &first_fit)
                           : xstrdup("");
    if (nfit)
        set_own(vars, "fits", xasprintf("; %d other candidate%s fitted: %s", nfit, nfit > 1 ? "s" : "", fits));
    else if (c->lookup)
        set_str(vars, "fits", "; no candidate needed less than was free");
    else
        set_str(vars, "fits", "");
    free(fits);
    set_own(vars, "fallback_note",
            first_fit ? xasprintf("puts first a candidate that fits (here %s)", algo_label(first_fit, nb, sizeof nb))
                      : xstrdup("asks cuDNN again for every candidate, with less workspace, and puts first one that "
                                "fits"));
}

/* {holders_note} and {room}: the other processes holding the GPU's memory */
static void holders_facts(struct trace *t, json_t *ev, struct ws_case *c, json_t *vars)
{
    long long top;
    char *h = holders_text(c->lookup ? c->lookup : ev, t->pid, &top);
    if (!*h) {
        free(h);
        h = holders_text(ev, t->pid, &top);
    }
    set_own(vars, "holders_note", *h ? xasprintf("; %s", h) : xstrdup(""));
    set_own(vars, "room", top >= 0 ? xasprintf("stop process %lld if it is a leftover (`kill %lld`), or ", top, top)
                                   : xstrdup(""));
    free(h);
}

bool m_lookup_workspace(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    struct ws_case c;
    if (!ws_case_of(t, ev, &c))
        return false;
    call_facts(ev, &c, vars);
    set_int(vars, "ws", c.ws);
    set_int(vars, "free_then", c.free_then);
    set_int(vars, "total", c.total);
    outcome_facts(ev, &c, vars);
    fits_facts(&c, vars);
    holders_facts(t, ev, &c, vars);
    knob_facts(t, vars, c.free_then >= 0 ? c.free_then : c.free_now);
    /* the seen line: the lookup, then the failure */
    char nb[48];
    char *d = describe_event(ev);
    set_own(vars, "seen", c.lookup && c.lookup != ev
                              ? xasprintf("#%lld %s proposed %s first; %s", jint(c.lookup, "seq", -1),
                                          jstr(c.lookup, "fn", "?"), algo_label(c.chosen, nb, sizeof nb), d)
                              : xstrdup(d));
    free(d);
    return true;
}
