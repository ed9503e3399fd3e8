/* runtime.c - the match functions of the runtime rows of rules.def: a pool of
 * the process took the GPU, GPU code that did not load, the GPU never used,
 * convguard's fallback acted, the process crashed. */
#include "rules/match.h"

static json_t *events_of(struct trace_set *s, size_t ti) { return s->t[ti].events; }

/* A pool of this process took the GPU: its largest allocation is at least half
 * of the memory and little was left when memory ran out (for code, a handle,
 * a workspace).  XLA's preallocation, a pool sized from cudaMemGetInfo. */
bool m_own_pool(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    if (strcmp(jstr(ev, "ev", ""), "alloc_failed") == 0 && !alloc_oom_status(ev))
        return false;
    /* loading code: out of memory, or the INVALID_VALUE / UNKNOWN a driver
     * gives when it has no room left; not the codes of a wrong build */
    long long st = jint(ev, "status", -1);
    if (is_ev(ev, "code_load_failed") && st != 2 && st != 1 && st != 999)
        return false;
    long long total = jint(ev, "mem.total", -1), free_b = jint(ev, "mem.free", -1);
    long long largest = jint(ev, "gpu_mem.largest_ok", jint(ev, "largest_ok", -1));
    long long live = jint(ev, "gpu_mem.live", jint(ev, "live", -1));
    if (total <= 0 || free_b < 0 || largest < total / 2 || free_b > total / 20)
        return false;
    set_int(vars, "pool", largest);
    set_int(vars, "own_live", live);
    char a[32];
    set_own(vars, "what", is_ev(ev, "code_load_failed")
                              ? xasprintf("loading GPU code (%s) failed with %s", jstr(ev, "fn", "?"),
                                          jstr(ev, "status_name", "?"))
                          : is_ev(ev, "cudnn_handle")
                              ? xasprintf("cudnnCreate failed with %s", jstr(ev, "status_name", "?"))
                              : xasprintf("%s of %s failed with %s", jstr(ev, "fn", "?"),
                                          fmt_size(jint(ev, "bytes", 0), a, sizeof a), jstr(ev, "status_name", "?")));
    /* every framework's knob as a part of its own: the report keeps those of
     * the frameworks in this process (fw.c, frame_fix) */
    set_str(vars, "pool_fix",
            "; JAX: `XLA_PYTHON_CLIENT_MEM_FRACTION=.7` (or `XLA_PYTHON_CLIENT_PREALLOCATE=false`); TensorFlow: "
            "`tf.config.experimental.set_memory_growth(gpu, True)` (or `TF_FORCE_GPU_ALLOW_GROWTH=true`); PyTorch: a "
            "pool sized from `torch.cuda.mem_get_info()` needs a lower fraction; a pool sized from the free memory "
            "(vLLM's `gpu_memory_utilization`): a lower fraction");
    return true;
}

/* a CUDA tool a process of the set ran (XLA runs ptxas): "ptxas of CUDA 11.8 (/usr/local/cuda-11.8/bin/ptxas)" */
static char *tool_text(struct trace_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        json_t *tool = jget(s->t[i].start, "cuda_tool");
        if (!tool)
            continue;
        const char *v = jstr(tool, "toolkit_version", NULL);
        return xasprintf("%s of CUDA %s (%s)", jstr(tool, "name", "?"), v ? v : "of unknown version",
                         jstr(s->t[i].start, "exe", "?"));
    }
    return NULL;
}

bool m_code_load(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ti;
    long long st = jint(ev, "status", -1);
    char *tool = tool_text(s);
    set_own(vars, "tool_note", tool && (st == 218 || st == 222 || st == 209)
                                   ? xasprintf("; the GPU code was made by %s, which the framework ran", tool)
                                   : xstrdup(""));
    char a[32], b[32];
    long long free_b = jint(ev, "mem.free", -1);
    set_own(vars, "free_note", free_b >= 0 ? xasprintf("; %s of %s was free", fmt_size(free_b, a, sizeof a),
                                                       fmt_size(jint(ev, "mem.total", -1), b, sizeof b))
                                           : xstrdup(""));
    /* 2 OUT_OF_MEMORY, 209 NO_BINARY_FOR_GPU, 218 INVALID_PTX, 222 UNSUPPORTED_PTX_VERSION */
    set_str(vars, "hint", st == 2 ? "free GPU memory for it: stop what holds the memory (`nvidia-smi`), let the "
                                    "framework's pool leave room (JAX `XLA_PYTHON_CLIENT_MEM_FRACTION=.9`, TensorFlow "
                                    "memory growth) or `convguard run --fallback --reserve 2048 -- ...`"
                          : (st == 218 || st == 222) && tool
                              ? "the ptxas on PATH and the driver must fit the PTX the framework writes: put a ptxas "
                                "as new as the framework's CUDA first on PATH (JAX: `pip install "
                                "nvidia-cuda-nvcc-cu12`, whose ptxas it prefers), or upgrade the NVIDIA driver"
                          : st == 222
                              ? "the PTX was written by a newer CUDA than this driver supports: upgrade the NVIDIA "
                                "driver, or install the framework build for the CUDA the driver supports"
                          : st == 209 || st == 218
                              ? "the code was built for another GPU or a newer CUDA than this driver: update the "
                                "NVIDIA driver, or install the framework build for this GPU and CUDA version "
                                "(`convguard doctor` lists both)"
                              : "rerun with `CUDA_LAUNCH_BLOCKING=1` and `convguard doctor`; check the driver "
                                "version against what the framework was built for");
    free(tool);
    return true;
}

static bool loaded_libs(struct trace *t)
{
    if (jint(t->exit, "libs", 0) > 0)
        return true;
    for (size_t i = 0; i < json_array_size(t->events); i++)
        if (strcmp(jstr(json_array_get(t->events, i), "ev", ""), "lib") == 0)
            return true;
    return false;
}

/* The process "the GPU was never used" is about, -1 when some process of the
 * set loaded a CUDA library; the same for every process of the set, so found
 * once (asked of each, it made the report quadratic in the processes). */
static long never_used_who(struct trace_set *s)
{
    if (s->never_used_known)
        return s->never_used_who;
    long who = -1;
    bool libs = false;
    for (size_t j = 0; j < s->n && !libs; j++)
        libs = loaded_libs(&s->t[j]);
    for (size_t j = 0; j < s->n && who < 0 && !libs; j++)
        if (s->t[j].exit && frameworks_of(&s->t[j]))
            who = (long)j;
    for (size_t j = 0; j < s->n && who < 0 && !libs; j++)
        if (s->t[j].exit && s->t[j].parent < 0)
            who = (long)j;
    s->never_used_who = who, s->never_used_known = true;
    return who;
}

/* "The GPU was never used" is said once per run, about the process that
 * ran the framework: the first that mapped one (the shim writes
 * exit.frameworks), else the first process of the tree. */
bool m_never_used(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    long who = never_used_who(s);
    if (who != (long)ti)
        return false;
    /* a process seen from outside (inspect's snapshot) with no framework is
     * no run that should have used the GPU: a shell, a daemon, a kernel thread */
    if (jtrue(t->exit, "snapshot") && !frameworks_of(t))
        return false;
    set_prog(vars, t);
    unsigned fw = fw_primary(frameworks_of(t));
    set_own(vars, "fw_note", fw ? xasprintf(" (which ran %s)", fw_label(fw)) : xstrdup(""));
    set_str(vars, "install",
            fw_pick(t, "install JAX's CUDA build (`pip install -U \"jax[cuda13]\"` or `jax[cuda12]`) and check with "
                       "`python -c \"import jax; print(jax.devices())\"`",
                    "install the GPU build (`pip install tensorflow[and-cuda]`) and check with `python -c \"import "
                    "tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"`",
                    "install PyTorch's CUDA build (the pip command from pytorch.org with a CUDA index URL, e.g. "
                    "`--index-url https://download.pytorch.org/whl/cu128`) and check with `python -c \"import "
                    "torch; print(torch.cuda.is_available())\"`",
                    "install the GPU build (`pip install tensorflow[and-cuda]`; PyTorch from pytorch.org with a CUDA "
                    "index URL; `pip install -U \"jax[cuda13]\"`) and check with `python -c \"import torch; "
                    "print(torch.cuda.is_available())\"`"));
    set_own(vars, "seen", xasprintf("#%lld exit: %lld CUDA libraries loaded", jint(t->exit, "seq", -1),
                                    jint(t->exit, "libs", 0)));
    return true;
}

static char *value_text(json_t *v)
{
    char sz[32];
    if (json_is_integer(v) && json_integer_value(v) >= MIB)
        return xstrdup(fmt_size(json_integer_value(v), sz, sizeof sz));
    if (json_is_string(v))
        return xstrdup(json_string_value(v));
    return v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : xstrdup("?");
}

bool m_fallback(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    json_t *evs = events_of(s, ti);
    struct sbuf b = {0};
    int n = 0;
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *e = json_array_get(evs, i);
        if (strcmp(jstr(e, "ev", ""), "fallback") != 0)
            continue;
        if (n++ < 4) {
            char *asked = value_text(jget(e, "asked")), *given = value_text(jget(e, "given"));
            char *out = value_text(jget(e, "outcome"));
            sb_printf(&b, "%s%s: %s, asked %s, given %s (%s) -> %s", b.len ? "; " : "", jstr(e, "fn", "?"),
                      jstr(e, "action", "?"), asked, given, jstr(e, "why", "?"), out);
            free(asked), free(given), free(out);
        }
    }
    if (n > 4)
        sb_printf(&b, "; and %d more", n - 4);
    set_int(vars, "count", n);
    set_own(vars, "actions", sb_take(&b));
    return n > 0;
}

/* What the user saw for a fatal signal: the shell's words for it (bash and
 * zsh print these when a child dies of it) and Python's faulthandler's. */
static const char *signal_says(const char *sig)
{
    static const struct { const char *sig, *says; } said[] = {
        {"SIGSEGV", "\"Segmentation fault (core dumped)\" (Python's faulthandler: \"Fatal Python error: Segmentation "
                    "fault\")"},
        {"SIGBUS", "\"Bus error (core dumped)\" (Python's faulthandler: \"Fatal Python error: Bus error\")"},
        {"SIGABRT", "\"Aborted (core dumped)\" (Python's faulthandler: \"Fatal Python error: Aborted\"), often after a "
                    "C++ \"terminate called after throwing an instance of ...\" or a failed assertion"},
        {"SIGILL", "\"Illegal instruction (core dumped)\""},
        {"SIGFPE", "\"Floating point exception (core dumped)\""},
    };
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
        if (strcmp(sig, said[i].sig) == 0)
            return said[i].says;
    return "its name";
}

/* the event with this seq (a reference of its own), NULL */
static json_t *event_of_seq(json_t *evs, long long seq)
{
    json_t *found = NULL;
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *e = json_array_get(evs, i);
        if (jint(e, "seq", -2) == seq) {
            /* the event itself, once: a trace with two lines of one seq (fuzz_reader's
             * leak) took a second reference it never gave back */
            json_decref(found);
            return json_incref(e);
        }
        if (!found && jint(e, "seq", -2) < seq && jint(e, "repeated.last_seq", -1) >= seq) {
            /* one the shim counted, not wrote (`repeated`): the same event with that seq */
            found = json_deep_copy(e);
            json_object_del(found, "repeated");
            json_object_set_new(found, "seq", json_integer(seq));
        }
    }
    return found;
}

bool m_crash(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    set_str(vars, "signal_says", signal_says(jstr(ev, "signal_name", "")));
    json_t *f = json_array_get(jget(ev, "backtrace"), 0);
    const char *mod = jstr(f, "module", "an unknown module");
    set_own(vars, "where", f ? xasprintf("%s+%s", mod, jstr(f, "offset", "?")) : xstrdup(mod));
    set_str(vars, "where_base", base_name(mod));
    /* inside the dynamic loader: the library this thread was loading */
    json_t *ld = jget(ev, "loading");
    set_str(vars, "loading_note", "");
    set_str(vars, "loading_fix", "");
    if (ld) {
        const char *file = jstr(ld, "file", NULL);
        long long size = jint(ld, "size", -1);
        char sz[32];
        set_own(vars, "loading_note",
                xasprintf(", while this thread was loading %s%s%s%s%s%s", jstr(ld, "name", "?"),
                          file ? " (the file " : "", file ? file : "", size >= 0 ? ", " : "",
                          size >= 0 ? fmt_size(size, sz, sizeof sz) : "", file ? ")" : ""));
        if (file)
            set_own(vars, "loading_fix",
                    xasprintf("check %s: a file cut short (a copy or a download that did not finish) makes the loader "
                              "fault while mapping it; replace it with a whole copy (`pip install --force-reinstall` "
                              "of its package) or remove it; then ",
                              file));
        if (f && strstr(mod, "ld-linux"))
            set_own(vars, "where_base", xstrdup(base_name(file ? file : jstr(ld, "name", "?"))));
    }
    long long last = jint(ev, "last_failure", -1);
    set_str(vars, "after_note", "");
    if (ld) { /* a probe of the library being loaded is no failure it followed */
        for (size_t i = 0; i < json_array_size(events_of(s, ti)); i++) {
            json_t *e = json_array_get(events_of(s, ti), i);
            if (jint(e, "seq", -2) == last && is_ev(e, "dlopen") && load_failure_absent(e) &&
                strncmp(base_name(jstr(ld, "name", "")), jstr(e, "stem", "?"), strlen(jstr(e, "stem", "?"))) == 0)
                last = -1;
        }
    }
    json_t *after = last >= 0 ? event_of_seq(events_of(s, ti), last) : NULL;
    if (after) {
        char *d = describe_event(after);
        set_own(vars, "after_note", xasprintf(", after the failure %s", d));
        free(d);
        json_decref(after);
    }
    return true;
}
