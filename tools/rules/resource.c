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

/* Free memory within this much of the request is a GPU that is full, not
 * fragmented: the driver needs room of its own for an allocation (page
 * tables, its 2 MiB granularity), so cudaMalloc of 32 MiB fails with 33 MiB
 * free (cuBLAS's workspace on a full H200). */
#define FULL_SLACK_BYTES (64 * MIB)

bool m_alloc_fragmented(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti, (void)vars;
    long long free_b = jint(ev, "mem.free", -1), bytes = jint(ev, "bytes", -1);
    return alloc_oom_status(ev) && bytes > 0 && free_b >= bytes + FULL_SLACK_BYTES;
}

/* PyTorch's own numbers for this process, when its message gave them
 * (analysis/diagnose.c adds them to the output event) */
static json_t *torch_oom_numbers(struct trace *t)
{
    for (size_t i = json_array_size(t->events); i-- > 0;) {
        json_t *o = jget(json_array_get(t->events, i), "torch_oom");
        if (jint(o, "torch_allocated", -1) >= 0)
            return o;
    }
    return NULL;
}

/* who asked and what this process holds: "; the allocation was CuPy's (its
 * memory pool); this process holds 136.0 GiB of the 139.8 GiB itself" */
static char *own_note(struct trace *t, json_t *ev)
{
    char a[32], b[32], c[32];
    unsigned fw = fw_of_path(jstr(ev, "caller", ""));
    long long total = jint(ev, "mem.total", -1), live = jint(ev, "live", -1);
    json_t *o = fw == FW_TORCH ? torch_oom_numbers(t) : NULL;
    if (o) {
        long long alloc = jint(o, "torch_allocated", 0), unalloc = jint(o, "torch_reserved_unallocated", 0);
        return xasprintf("; PyTorch holds %s (allocated) / %s reserved of the %s: this process's own tensors "
                         "filled the GPU", fmt_size(alloc, a, sizeof a), fmt_size(alloc + unalloc, b, sizeof b),
                         fmt_size(jint(o, "total", total), c, sizeof c));
    }
    const char *caller = jstr(ev, "caller", NULL);
    char *by = fw ? xasprintf("; the allocation was %s's%s", fw_label(fw), fw == FW_CUPY ? " (its memory pool)" : "")
               : caller ? xasprintf("; the allocation was made by %s, outside any framework's allocator",
                                    base_name(caller))
                        : xstrdup("");
    if (live < 0 || total <= 0)
        return by;
    char *note = xasprintf("%s; this process holds %s of the %s itself%s", by, fmt_size(live, a, sizeof a),
                           fmt_size(total, b, sizeof b), live * 2 >= total ? ": its own allocations filled the GPU" : "");
    free(by);
    return note;
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
    set_own(vars, "own_note", own_note(&s->t[ti], ev));
    long long top;
    char *h = holders_text(ev, s->t[ti].pid, &top);
    set_own(vars, "holders_note", *h ? xasprintf("; %s", h) : xstrdup(""));
    set_own(vars, "kill_note", top >= 0 ? xasprintf("stop the other process if it is a leftover (`kill %lld`); ", top)
                                        : xstrdup(""));
    /* each framework's knob as a part of its own: the report keeps those of
     * the frameworks in this process (fw.c, frame_fix; issue 27 item 5) */
    set_str(vars, "fw_knob",
            "; PyTorch: `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` when its message shows much memory "
            "reserved but unallocated, `del` the tensors no longer needed; TensorFlow: "
            "`tf.config.experimental.set_memory_growth(gpu, True)`; JAX: `XLA_PYTHON_CLIENT_PREALLOCATE=false` when "
            "another library of the process needs memory too; CuPy: `cupy.get_default_memory_pool().free_all_blocks()` "
            "gives back the blocks it keeps, `set_limit(size=...)` caps the pool");
    /* other processes only when NVML did not say there are none */
    json_t *hl = jget(ev, "holders");
    set_str(vars, "nvsmi_note", *h || !json_is_array(hl) ? "; look at `nvidia-smi` for other processes" : "");
    free(h);
    return true;
}

/* ---- one request larger than the whole GPU (analysis/diagnose.c) */
bool m_larger_than_gpu(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    unsigned fws = frameworks_of(&s->t[ti]);
    struct sbuf b = {0};
    sb_add(&b, "make that one tensor smaller: a smaller batch, sequence length or image, or the work split into "
               "chunks; look for a shape that is wrong (a dimension multiplied in twice, a size meant for the CPU); "
               "a model this large needs several GPUs");
    if (fws & FW_TORCH)
        sb_add(&b, " (PyTorch: FSDP or tensor parallelism)");
    if (fws & FW_JAX)
        sb_add(&b, " (JAX: shard the array over devices, `jax.sharding`)");
    if (fws & FW_TF)
        sb_add(&b, " (TensorFlow: `tf.distribute`)");
    sb_add(&b, " or a GPU with more memory");
    set_own(vars, "big_fix", sb_take(&b));
    if (is_ev(ev, "output"))
        set_own(vars, "seen", xasprintf("stderr: %s", jstr(ev, "text", "")));
    return true;
}

/* ---- another framework's pool in this process (analysis/diagnose.c) */
static const char *pool_fix_of(const char *fw, const char *victim)
{
    if (strcmp(fw, "JAX") == 0)
        return "stop JAX from preallocating before it starts: `XLA_PYTHON_CLIENT_PREALLOCATE=false` (it allocates "
               "on demand) or a smaller pool, `XLA_PYTHON_CLIENT_MEM_FRACTION=.3`; or run the JAX part and the "
               "other part in separate processes";
    if (strcmp(fw, "TensorFlow") == 0)
        return "let TensorFlow grow on demand before it touches the GPU: "
               "`tf.config.experimental.set_memory_growth(gpu, True)` (or `TF_FORCE_GPU_ALLOW_GROWTH=true`), or hide "
               "the GPU from it (`tf.config.set_visible_devices([], 'GPU')`); or separate processes";
    if (strcmp(fw, "CuPy") == 0)
        return "give CuPy's cached blocks back before the other library runs "
               "(`cupy.get_default_memory_pool().free_all_blocks()`) or cap the pool "
               "(`cupy.get_default_memory_pool().set_limit(size=...)`)";
    (void)victim;
    return "release that framework's cached memory before the other one runs (PyTorch: "
           "`torch.cuda.empty_cache()`), or cap it (`torch.cuda.set_per_process_memory_fraction`)";
}

bool m_framework_pool(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    const char *fw = jstr(ev, "likely_cause.framework", "?"), *victim = jstr(ev, "likely_cause.victim", "?");
    long long pool = jint(ev, "likely_cause.pool", -1), total = jint(ev, "likely_cause.total", -1);
    bool msg = is_ev(ev, "output");
    const char *dflt = strcmp(fw, "JAX") == 0 ? "; JAX takes 75% of the GPU at start unless told otherwise"
                       : strcmp(fw, "TensorFlow") == 0 ? "; TensorFlow takes nearly the whole GPU unless told otherwise"
                                                       : "";
    set_str(vars, "how", strcmp(fw, "JAX") == 0 || strcmp(fw, "TensorFlow") == 0 ? "preallocated" : "holds");
    char tb[32];
    set_own(vars, "share", total > 0 && pool > 0 ? xasprintf(" (%lld%% of the GPU's %s%s)", (pool * 100 + total / 2) / total,
                                                             fmt_size(total, tb, sizeof tb), dflt)
                                                 : xstrdup(""));
    char a[32], b[32], c[32], d[32];
    json_t *o = msg ? jget(ev, "torch_oom") : NULL;
    if (msg)
        set_own(vars, "asked", xasprintf("asked for %s with %s free", fmt_size(jint(o, "request", -1), a, sizeof a),
                                         fmt_size(jint(o, "free", -1), b, sizeof b)));
    else
        set_own(vars, "asked", xasprintf("asked for %s (%s) with %s free", fmt_size(jint(ev, "bytes", -1), a, sizeof a),
                                         jstr(ev, "fn", "?"), fmt_size(jint(ev, "mem.free", -1), b, sizeof b)));
    /* PyTorch's own words agree: the process holds much, PyTorch little */
    json_t *t = o;
    for (size_t i = json_array_size(s->t[ti].events); !t && i-- > 0;)
        t = jget(json_array_get(s->t[ti].events, i), "torch_oom");
    if (t && jint(t, "process_in_use", -1) >= 0)
        set_own(vars, "torch_note",
                xasprintf("; PyTorch's message: this process has %s in use, of which PyTorch holds %s (%s allocated)",
                          fmt_size(jint(t, "process_in_use", 0), a, sizeof a),
                          fmt_size(jint(t, "torch_allocated", 0) + jint(t, "torch_reserved_unallocated", 0), c, sizeof c),
                          fmt_size(jint(t, "torch_allocated", 0), d, sizeof d)));
    else
        set_str(vars, "torch_note", "");
    set_str(vars, "pool_fix", pool_fix_of(fw, victim));
    if (msg)
        set_own(vars, "seen", xasprintf("stderr: %s", jstr(ev, "text", "")));
    return true;
}
