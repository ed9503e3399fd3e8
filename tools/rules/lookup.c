/* rules_lookup.c - the headline: a failure that the algorithm lookup before
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
        long long ls = jint(l, "seq", -1);
        if (!is_ev(l, "conv_algos") || ls >= seq || ls <= best_seq || !jget(l, "algos"))
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
    char all[600];
    snprintf(all, sizeof all, "%s; %s; %s", tf, torch, jax);
    set_str(vars, "knob", fw_pick(t, jax, tf, torch, all));
    set_int(vars, "limit_mb", mb);
}

bool m_lookup_workspace(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    json_t *lookup = NULL, *chosen = NULL;
    long long ws = -1, free_then = -1, total = -1;
    char what[256] = "";
    if (is_ev(ev, "conv_algos")) {
        /* the lookup failed itself: Find ran out of memory for its trials, or
         * every candidate failed for memory or needed more than was free */
        json_t *algos = jget(ev, "algos");
        bool memory = alloc_statusish(jint(ev, "status", 0)) ||
                      strcmp(jstr(ev, "signature", ""), "all_algos_exceed_free_memory") == 0;
        for (size_t i = 0; !memory && i < json_array_size(algos); i++)
            memory = alloc_statusish(jint(json_array_get(algos, i), "status", 0));
        if (!memory)
            return false;
        lookup = ev;
        chosen = first_choice(ev);
        /* the smallest workspace any candidate needs: even that did not fit */
        for (size_t i = 0; i < json_array_size(algos); i++) {
            long long w = jint(json_array_get(algos, i), "workspace", -1);
            if (w >= 0 && (ws < 0 || w < ws))
                ws = w, chosen = json_array_get(algos, i);
        }
        snprintf(what, sizeof what, "%s",
                 jint(ev, "status", 0) ? "the lookup itself failed" : "every candidate failed for memory");
    } else if (is_ev(ev, "graph_exec_failed")) {
        ws = jint(ev, "workspace", -1);
        free_then = jint(ev, "mem.free", -1);
        bool memory = strcmp(jstr(ev, "likely_cause.kind", ""), "out_of_memory") == 0 ||
                      alloc_statusish(jint(ev, "status", 0)) || (ws > 0 && free_then >= 0 && ws > free_then);
        if (!memory || ws <= 0)
            return false;
    } else {
        if (is_ev(ev, "alloc_failed") || is_ev(ev, "call_failed")) {
            if (jint(ev, "status", -1) != 2)
                return false;
        }
        lookup = lookup_before(t, ev, &chosen);
        if (!lookup || !chosen)
            return false;
        ws = jint(chosen, "workspace", -1);
        if (is_ev(ev, "conv_exec_failed")) {
            long long given = jint(ev, "workspace", -1);
            bool memory = alloc_statusish(jint(ev, "status", 0)) || (given >= 0 && given < ws);
            if (!memory)
                return false;
        }
    }
    if (lookup) {
        free_then = jint(lookup, "mem.free", -1);
        total = jint(lookup, "mem.total", -1);
    }
    if (free_then < 0)
        free_then = jint(ev, "mem.free", -1);
    if (total < 0)
        total = jint(ev, "mem.total", -1);
    long long free_now = jint(ev, "mem.free", free_then);
    /* the workspace explains it only if it did not fit */
    if (ws <= 0 || !((free_then >= 0 && ws > free_then) || (free_now >= 0 && ws > free_now)))
        return false;

    char nb[48], sz[32];
    if (lookup) {
        char *shape = shape_text(lookup);
        json_t *algos = jget(lookup, "algos");
        size_t n = json_array_size(algos);
        size_t rank = 0;
        while (rank < n && json_array_get(algos, rank) != chosen)
            rank++;
        set_own(vars, "call", xasprintf("%s (%s convolution%s, #%lld)", jstr(lookup, "fn", "?"),
                                        jstr(lookup, "op", "?"), shape, jint(lookup, "seq", -1)));
        free(shape);
        if (lookup == ev)
            set_own(vars, "choice", xasprintf("returned %zu candidates; the smallest, %s, needs", n,
                                              algo_label(chosen, nb, sizeof nb)));
        else
            set_own(vars, "choice", xasprintf("chose %s (candidate %zu of %zu), which needs",
                                              algo_label(chosen, nb, sizeof nb), rank + 1, n));
    } else {
        json_t *op = json_array_get(jget(ev, "ops"), 0);
        set_own(vars, "call", xasprintf("the cuDNN graph's execution plan (%s, #%lld)",
                                        jstr(op, "op", "operation graph"), jint(ev, "seq", -1)));
        long long eng = jint(ev, "engine", -1);
        set_own(vars, "choice", eng >= 0 ? xasprintf("used engine %lld, which needs", eng)
                                         : xstrdup("used a plan that needs"));
    }
    set_int(vars, "ws", ws);
    set_int(vars, "free_then", free_then);
    set_int(vars, "total", total);
    /* what failed */
    if (lookup == ev) {
        set_own(vars, "outcome", xasprintf("%s (%s)", what,
                                           jint(ev, "status", 0) ? jstr(ev, "status_name", "?")
                                                                 : jstr(chosen, "status_name", "?")));
    } else if (is_ev(ev, "alloc_failed") || is_ev(ev, "call_failed")) {
        set_own(vars, "outcome", xasprintf("allocating that workspace, %s(%s) failed with %s (#%lld)",
                                           jstr(ev, "fn", "?"), fmt_size(jint(ev, "bytes", -1), sz, sizeof sz),
                                           jstr(ev, "status_name", "?"), jint(ev, "seq", -1)));
    } else {
        set_own(vars, "outcome", xasprintf("%s failed with %s (#%lld)", jstr(ev, "fn", "?"),
                                           jstr(ev, "status_name", "?"), jint(ev, "seq", -1)));
    }
    int nfit = 0;
    json_t *first_fit = NULL;
    char *fits = lookup ? fits_text(lookup, free_then >= 0 ? free_then : free_now, chosen, &nfit, &first_fit)
                        : xstrdup("");
    if (nfit)
        set_own(vars, "fits", xasprintf("; %d other candidate%s fitted: %s", nfit, nfit > 1 ? "s" : "", fits));
    else if (lookup)
        set_str(vars, "fits", "; no candidate needed less than was free");
    else
        set_str(vars, "fits", "");
    free(fits);
    set_own(vars, "fallback_note",
            first_fit ? xasprintf("puts first a candidate that fits (here %s)", algo_label(first_fit, nb, sizeof nb))
                      : xstrdup("asks cuDNN again for every candidate, with less workspace, and puts first one that "
                                "fits"));
    long long top;
    char *h = holders_text(lookup ? lookup : ev, t->pid, &top);
    if (!*h) {
        free(h);
        h = holders_text(ev, t->pid, &top);
    }
    set_own(vars, "holders_note", *h ? xasprintf("; %s", h) : xstrdup(""));
    set_own(vars, "room", top >= 0 ? xasprintf("stop process %lld if it is a leftover (`kill %lld`), or ", top, top)
                                   : xstrdup(""));
    free(h);
    knob_facts(t, vars, free_then >= 0 ? free_then : free_now);
    /* the seen line: the lookup, then the failure */
    char *d = describe_event(ev);
    set_own(vars, "seen", lookup && lookup != ev ? xasprintf("#%lld %s proposed %s first; %s", jint(lookup, "seq", -1),
                                                             jstr(lookup, "fn", "?"), algo_label(chosen, nb, sizeof nb), d)
                                                 : xstrdup(d));
    free(d);
    return true;
}
