/* resource.c - the match functions of the resource rows of rules.def: the
 * GPU's memory taken when cuDNN made its handle, a workspace larger than was
 * free, no algorithm, an allocation that failed. */
#include "rules/match.h"

static long long own_bytes(json_t *ev, long long own_pid)
{
    json_t *h = jget(ev, "holders");
    for (size_t i = 0; i < json_array_size(h); i++)
        if (jint(json_array_get(h, i), "pid", -1) == own_pid)
            return jint(json_array_get(h, i), "bytes", -1);
    return -1;
}

bool m_handle_held(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    long long top;
    char *h = holders_text(ev, s->t[ti].pid, &top);
    /* the cause is analysis/diagnose.c's (or an older shim's likely_cause) */
    bool held = strcmp(jstr(ev, "likely_cause.kind", ""), "memory_held_by_other_process") == 0;
    if (!held || !*h) {
        if (held)
            set_str(vars, "holders", "another process holds the memory");
        else {
            free(h);
            return false;
        }
    } else {
        set_own(vars, "holders", xasprintf("another process holds the GPU's memory: %s", h));
    }
    free(h);
    if (top >= 0)
        set_int(vars, "top_pid", top);
    else
        set_str(vars, "top_pid", "<pid>");
    return true;
}

bool m_handle_oom(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    bool oom = strcmp(jstr(ev, "likely_cause.kind", ""), "out_of_memory") == 0;
    if (!oom)
        return false;
    long long own = own_bytes(ev, s->t[ti].pid);
    char sz[32];
    set_own(vars, "own_note", own > 0 ? xasprintf("; this process itself holds %s (a framework that preallocated "
                                                  "the GPU)", fmt_size(own, sz, sizeof sz))
                                      : xstrdup(""));
    return true;
}

bool m_handle_other(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    const char *r = jstr(ev, "reason", NULL);
    set_own(vars, "reason_note", r && *r ? xasprintf(" (cuDNN says: \"%s\")", r) : xstrdup(""));
    return true;
}

static char *dims_text(json_t *ev, const char *key)
{
    json_t *d = jget(ev, key);
    if (!json_is_array(d))
        return xstrdup("");
    struct sbuf b = {0};
    sb_printf(&b, "%.*s [", (int)strcspn(key, "."), key);
    for (size_t i = 0; i < json_array_size(d); i++)
        sb_printf(&b, "%s%lld", i ? "," : "", (long long)json_integer_value(json_array_get(d, i)));
    sb_add(&b, "]");
    return sb_take(&b);
}

/* "the forward convolution (x [32,3,224,224], w [64,3,7,7])" */
static char *what_conv(json_t *ev)
{
    const char *name = jstr(ev, "ev", "");
    if (strcmp(name, "conv_algos") == 0 || strcmp(name, "conv_exec_failed") == 0) {
        char *x = dims_text(ev, "x.dims"), *w = dims_text(ev, "w.dims");
        char *r = xasprintf("the %s convolution%s%s%s%s%s", jstr(ev, "op", jstr(ev, "fn", "?")), *x || *w ? " (" : "",
                            x, *x && *w ? ", " : "", w, *x || *w ? ")" : "");
        free(x);
        free(w);
        return r;
    }
    return xasprintf("the cuDNN graph (%s)", jstr(json_array_get(jget(ev, "ops"), 0), "op", "operation graph"));
}

bool m_workspace(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    const char *name = jstr(ev, "ev", "");
    long long need = -1, free_b = jint(ev, "mem.free", -1), total = jint(ev, "mem.total", -1);
    if (strcmp(name, "conv_algos") == 0) {
        json_t *a = jget(ev, "algos");
        for (size_t i = 0; i < json_array_size(a); i++) {
            long long w = jint(json_array_get(a, i), "workspace", -1);
            if (w > 0 && (need < 0 || w < need))
                need = w;
        }
    } else {
        need = jint(ev, "workspace", jint(ev, "likely_cause.workspace", -1));
        free_b = jint(ev, "mem.free", jint(ev, "likely_cause.free", -1));
        if (strcmp(name, "conv_exec_failed") == 0 && !(free_b >= 0 && need > free_b))
            return false;
    }
    set_int(vars, "need", need);
    set_int(vars, "free", free_b);
    set_int(vars, "total", total);
    set_int(vars, "free_mb", free_b > 0 ? free_b / MIB : 0);
    set_own(vars, "what", what_conv(ev));
    long long top;
    char *h = holders_text(ev, s->t[ti].pid, &top);
    set_own(vars, "holders_note", *h ? xasprintf("; %s", h) : xstrdup(""));
    free(h);
    return true;
}

/* {what} and {given}: which convolution or graph ran, and the workspace it
 * was handed, in words (never the event's name) */
bool m_conv_exec(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    char sz[32];
    set_own(vars, "what", what_conv(ev));
    if (jget(ev, "workspace") && !json_is_null(jget(ev, "workspace")))
        set_own(vars, "given", xasprintf("%s with algorithm %lld and a %s workspace", jstr(ev, "fn", "it"),
                                         jint(ev, "algo", -1), fmt_size(jint(ev, "workspace", 0), sz, sizeof sz)));
    else if (json_is_boolean(jget(ev, "workspace_given")))
        set_own(vars, "given", xasprintf("%s %s", jstr(ev, "fn", "it"),
                                         jtrue(ev, "workspace_given") ? "with a workspace" : "without a workspace"));
    else
        set_str(vars, "given", jstr(ev, "fn", "it"));
    return true;
}

bool m_no_algo(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    set_own(vars, "what", what_conv(ev));
    if (strcmp(jstr(ev, "ev", ""), "conv_algos") == 0) {
        json_t *a = jget(ev, "algos");
        struct sbuf b = {0};
        for (size_t i = 0; i < json_array_size(a) && b.len < 200; i++) {
            const char *st = jstr(json_array_get(a, i), "status_name", NULL);
            if (st && (!b.s || !strstr(b.s, st)))
                sb_printf(&b, "%s%s", b.len ? ", " : "", st);
        }
        char *st = sb_take(&b);
        set_own(vars, "detail", xasprintf("all %lld algorithms returned an error (%s)",
                                          jint(ev, "returned", (long long)json_array_size(a)), *st ? st : "?"));
        free(st);
    } else {
        set_own(vars, "detail", xasprintf("%lld plans from the heuristics: %lld not supported, %lld failed otherwise",
                                          jint(ev, "heuristics_returned", -1), jint(ev, "plans_not_supported", -1),
                                          jint(ev, "plans_failed_other", -1)));
    }
    return true;
}

bool m_alloc_fragmented(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti, (void)vars;
    long long free_b = jint(ev, "mem.free", -1), bytes = jint(ev, "bytes", -1);
    return alloc_oom_status(ev) && bytes > 0 && free_b >= bytes;
}

bool m_alloc_oom(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    if (!alloc_oom_status(ev))
        return false;
    char a[32], b[32];
    long long free_b = jint(ev, "mem.free", -1);
    set_own(vars, "free_note", free_b >= 0 ? xasprintf("%s of %s was free", fmt_size(free_b, a, sizeof a),
                                                       fmt_size(jint(ev, "mem.total", -1), b, sizeof b))
                                           : xstrdup("free memory was not measured"));
    long long top;
    char *h = holders_text(ev, s->t[ti].pid, &top);
    set_own(vars, "holders_note", *h ? xasprintf("; %s", h) : xstrdup(""));
    set_own(vars, "kill_note", top >= 0 ? xasprintf("stop the other process if it is a leftover (`kill %lld`); ", top)
                                        : xstrdup(""));
    free(h);
    return true;
}
