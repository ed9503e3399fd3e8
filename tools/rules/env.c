/* env.c - the machine around the process: the driver's two halves,
 * MIG, the GPU's architecture against the CUDA build, the driver's cache
 * folder, and other processes or frameworks holding the memory. */
#include "model/capture.h"
#include "rules/match.h"

/* "libcuda.so.545.23.08" -> "545.23.08": the user-space driver's version */
static const char *driver_file_version(json_t *lib)
{
    const char *fv = jstr(lib, "file_version", NULL);
    if (fv && strchr(fv, '.'))
        return fv;
    const char *so = strstr(base_name(jstr(lib, "path", "")), ".so.");
    return so && strchr(so + 4, '.') ? so + 4 : NULL;
}

/* ---- the kernel module and libcuda differ (the driver was upgraded, the
 * machine not rebooted): cuInit says 803, nvidia-smi "Driver/library version
 * mismatch" */
bool m_module_mismatch(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    json_t *drv = NULL, *fail = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "lib") && strcmp(jstr(e, "family", ""), "driver") == 0 && !drv)
            drv = e;
        if (!fail && is_failure_event(t, i) &&
            (jint(e, "status", 0) == 803 || strstr(jstr(e, "nvml", ""), "version mismatch")))
            fail = e;
    }
    const char *kmod = jstr(drv, "kernel_module", NULL), *ulib = driver_file_version(drv);
    /* a version has dots: traces of the first shim to record this field can
     * hold "86" (the x86_64 of "Open Kernel Module for x86_64"), not a version */
    if (kmod && !strchr(kmod, '.'))
        kmod = NULL;
    bool differ = kmod && ulib && strcmp(kmod, ulib) != 0;
    if (!differ && !fail)
        return false;
    struct sbuf b = {0};
    if (differ)
        sb_printf(&b, "the loaded kernel module is %s (/proc/driver/nvidia/version) but the user-space driver is %s "
                      "(%s)",
                  kmod, ulib, jstr(drv, "path", "?"));
    else
        sb_printf(&b, "the driver refuses to start: %s", jstr(fail, "status_name", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"));
    if (fail && differ)
        sb_printf(&b, ", so %s failed with %s", jstr(fail, "fn", "cuInit"), jstr(fail, "status_name", "?"));
    set_own(vars, "detail", sb_take(&b));
    const char *llp = llp_of(t);
    set_own(vars, "compat_note", llp && strstr(llp, "compat")
                                     ? xasprintf("; if LD_LIBRARY_PATH holds a cuda-compat folder (%s), take it out: "
                                                 "forward compatibility works on data-center GPUs only",
                                                 llp)
                                     : xstrdup(""));
    char *d = fail ? describe_event(fail) : xasprintf("#%lld lib %s", jint(drv, "seq", -1), jstr(drv, "path", "?"));
    set_own(vars, "seen", d);
    return true;
}

/* ---- CUDA gives a process one MIG instance */
bool m_mig(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    const char *cvd = jstr(t->start, "env.CUDA_VISIBLE_DEVICES", NULL);
    if (!cvd || !strstr(cvd, "MIG-"))
        return false;
    int n = 1;
    for (const char *p = cvd; *p; p++)
        n += *p == ',';
    bool libs = false;
    for (size_t i = 0; i < json_array_size(t->events) && !libs; i++)
        libs = is_ev(json_array_get(t->events, i), "lib");
    if (n < 2 || !libs)
        return false;
    set_str(vars, "value", cvd);
    set_int(vars, "n", n);
    set_own(vars, "seen", xasprintf("#%lld start: CUDA_VISIBLE_DEVICES=\"%s\"", jint(t->start, "seq", 0), cvd));
    return true;
}

/* ---- the GPU is newer (or older) than anything the CUDA build targets */
static const struct cuda_arch {
    long long cuda; /* first CUDA version of the row (12080 = 12.8) */
    int min_cc, max_cc; /* compute capability x10 */
} arch_table[] = {
    {8000, 20, 62},   {9000, 30, 70},   {9020, 30, 72},   {10000, 30, 75},  {11000, 35, 80},
    {11010, 35, 86},  {11080, 35, 90},  {12000, 50, 90},  {12080, 50, 120}, {13000, 75, 121},
};

static const struct cuda_arch *arch_of(long long cuda)
{
    const struct cuda_arch *a = NULL;
    for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
        if (cuda >= arch_table[i].cuda)
            a = &arch_table[i];
    return a;
}

/* the first CUDA version that builds for this compute capability */
static long long cuda_for(int cc)
{
    for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
        if (cc <= arch_table[i].max_cc && cc >= arch_table[i].min_cc)
            return arch_table[i].cuda;
    return -1;
}

bool m_arch(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    const char *cc = NULL, *rt_path = NULL;
    long long rt = -1;
    json_t *fail = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (jstr(e, "compute_capability", NULL))
            cc = jstr(e, "compute_capability", NULL);
        if (is_ev(e, "lib") && strcmp(jstr(e, "family", ""), "cudart") == 0 && jint(e, "version", -1) > 0)
            rt = jint(e, "version", -1), rt_path = jstr(e, "path", "?");
        if (!fail && is_failure_event(t, i) && !is_ev(e, "dlopen"))
            fail = e;
    }
    if (!cc || rt <= 0 || !fail)
        return false;
    int major = 0, minor = 0;
    if (sscanf(cc, "%d.%d", &major, &minor) != 2)
        return false;
    int c = major * 10 + minor;
    const struct cuda_arch *a = arch_of(rt);
    if (!a || (c <= a->max_cc && c >= a->min_cc))
        return false;
    char v[32], need[32];
    set_str(vars, "cc", cc);
    set_str(vars, "how", c > a->max_cc ? "newer" : "older");
    set_str(vars, "cuda", fmt_cuda_ver(rt, v, sizeof v));
    set_str(vars, "cudart_path", rt_path);
    set_own(vars, "range", xasprintf("%d.%d to %d.%d", a->min_cc / 10, a->min_cc % 10, a->max_cc / 10, a->max_cc % 10));
    long long want = cuda_for(c);
    set_own(vars, "need", want > 0 ? xasprintf("CUDA %s", fmt_cuda_ver(want, need, sizeof need))
                                   : xstrdup("a CUDA version that supports it"));
    set_own(vars, "failure", describe_event(fail));
    return true;
}

/* ---- the driver's JIT cache folder cannot be written */
bool m_nv_cache(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    json_t *c = jget(t->start, "nv_cache");
    if (!c || jtrue(c, "writable") == true)
        return false;
    set_str(vars, "path", jstr(c, "path", "~/.nv"));
    set_own(vars, "why", jint(c, "owner", -1) != jint(t->start, "uid", -2)
                             ? xasprintf("belongs to user %lld, not to this process's user %lld (made by a run "
                                         "under sudo)",
                                         jint(c, "owner", -1), jint(t->start, "uid", -1))
                             : xstrdup("is not writable"));
    return true;
}

/* how processes that must share one GPU share it, in the knobs of this process's framework */
static const char *share_fix_of(struct trace *t)
{
    return fw_pick(t,
                   "JAX preallocates 75% of the GPU in each process: `XLA_PYTHON_CLIENT_PREALLOCATE=false` (or "
                   "`XLA_PYTHON_CLIENT_MEM_FRACTION=.3` in each)",
                   "TensorFlow takes the whole GPU unless told: `tf.config.experimental.set_memory_growth(gpu, True)` "
                   "(or `TF_FORCE_GPU_ALLOW_GROWTH=true`) in each",
                   "PyTorch: `torch.cuda.set_per_process_memory_fraction(0.5)` in each",
                   "JAX `XLA_PYTHON_CLIENT_PREALLOCATE=false`, TensorFlow `TF_FORCE_GPU_ALLOW_GROWTH=true`, PyTorch "
                   "`torch.cuda.set_per_process_memory_fraction(0.5)`");
}

static json_t *event_by_seq(struct trace *t, long long seq)
{
    for (size_t i = 0; i < json_array_size(t->events); i++)
        if (jint(json_array_get(t->events, i), "seq", -2) == seq && !is_ev(json_array_get(t->events, i), "output"))
            return json_array_get(t->events, i);
    return NULL;
}

/* "process 6102 (python3 two.py holder) held 105.0 GiB": the other traced processes of this host alive
 * with it whose largest allocation took a quarter of the GPU or more */
static char *traced_holders(struct trace_set *s, size_t ti, long long *top)
{
    struct trace *t = &s->t[ti];
    struct sbuf b = {0};
    long long best = 0;
    *top = -1;
    for (size_t i = 0; i < s->n; i++) {
        struct trace *o = &s->t[i];
        long long held = jint(o->exit, "gpu_mem.largest_ok", -1), total = -1;
        for (size_t k = 0; k < json_array_size(t->events) && total < 0; k++)
            total = jint(json_array_get(t->events, k), "mem.total", -1);
        bool overlap = o->wall <= 0 || t->wall <= 0 || (o->wall <= t->wall + t->t_last && t->wall <= o->wall + o->t_last);
        if (i == ti || strcmp(o->host, t->host) != 0 || !overlap || held <= 0 || total <= 0 || held * 4 < total)
            continue;
        char sz[32];
        sb_printf(&b, "%sprocess %lld (%s) held %s (its largest allocation)", b.len ? ", " : "", o->pid,
                  base_name(jstr(o->start, "exe", "?")), fmt_size(held, sz, sizeof sz));
        if (held > best)
            best = held, *top = o->pid;
    }
    return b.len ? sb_take(&b) : xstrdup("");
}

/* ---- the framework ran out after another process had taken the GPU */
bool m_oom_held(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    json_t *by = jint(ev, "likely_cause.in_pid", -1) == t->pid ? event_by_seq(t, jint(ev, "likely_cause.seq", -1))
                                                                : NULL;
    if (!by)
        return false; /* another process of the stream's cause */
    /* what the program died of, not the log line of a failure the pool went on from */
    json_t *st = jget(capture_marker(t), "status");
    if (!jtrue(ev, "exception") && !(json_is_integer(st) && json_integer_value(st) != 0))
        return false;
    long long top;
    char *h = holders_text(by, t->pid, &top);
    if (!*h) { /* NVML named none: the traced processes of this host that held a pool then */
        free(h);
        h = traced_holders(s, ti, &top);
    }
    set_own(vars, "holders", *h ? xasprintf("another process holds the GPU's memory: %s", h)
                                : xstrdup("the GPU's memory was in use outside this process (NVML named no holder; "
                                          "`nvidia-smi` lists them)"));
    free(h);
    if (top >= 0)
        set_int(vars, "top_pid", top);
    else
        set_str(vars, "top_pid", "<pid>");
    char a[32], b[32], c[32], d[32];
    long long asked = jint(by, "bytes", -1), later = jint(t->exit, "gpu_mem.largest_ok", -1);
    const char *fn = jstr(by, "fn", jstr(by, "ev", "?"));
    if (asked > 0 && later > jint(by, "largest_ok", -1) && later > 0)
        set_own(vars, "when", xasprintf("%s of %s failed with %s of %s free, and a smaller pool of %s was all it got", fn,
                                        fmt_size(asked, a, sizeof a), fmt_size(jint(by, "mem.free", -1), b, sizeof b),
                                        fmt_size(jint(by, "mem.total", -1), c, sizeof c), fmt_size(later, d, sizeof d)));
    else
        set_own(vars, "when", xasprintf("%s failed with %s of %s free", fn, fmt_size(jint(by, "mem.free", -1), a, sizeof a),
                                        fmt_size(jint(by, "mem.total", -1), b, sizeof b)));
    const char *fw = jstr(ev, "framework", "the framework");
    set_str(vars, "framework", strcmp(fw, "CUDA") == 0 ? "the program" : fw);
    set_str(vars, "share_fix", share_fix_of(t));
    char *said = describe_event(by);
    set_own(vars, "seen", xasprintf("stderr: %s; %s", jstr(ev, "text", ""), said));
    free(said);
    return true;
}

/* ---- another process holds the memory an allocation needed */
bool m_alloc_held(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    if (jint(ev, "status", -1) != 2)
        return false;
    long long top = -1, others = 0, total = jint(ev, "mem.total", -1);
    json_t *h = jget(ev, "holders");
    for (size_t i = 0; i < json_array_size(h); i++) {
        json_t *x = json_array_get(h, i);
        if (jint(x, "pid", -1) != t->pid && !jtrue(x, "self"))
            others += jint(x, "bytes", 0) > 0 ? jint(x, "bytes", 0) : 0;
    }
    if (total <= 0 || others < total / 2)
        return false;
    char *txt = holders_text(ev, t->pid, &top);
    set_own(vars, "holders", xasprintf("another process holds the GPU's memory: %s", txt));
    free(txt);
    set_int(vars, "top_pid", top);
    set_str(vars, "share_fix", share_fix_of(t));
    return true;
}

/* ---- two frameworks in one process, one of them took the GPU */
bool m_two_frameworks(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    unsigned fws = frameworks_of(t) & (FW_TF | FW_JAX | FW_TORCH);
    if (!fws || (fws & (fws - 1)) == 0) /* fewer than two */
        return false;
    if (jint(ev, "status", -1) != 2 && !(is_ev(ev, "cudnn_handle") && jhas(ev, "likely_cause")))
        return false;
    long long total = jint(ev, "mem.total", -1), free_b = jint(ev, "mem.free", -1);
    long long largest = jint(ev, "gpu_mem.largest_ok", jint(ev, "largest_ok", -1));
    long long live = jint(ev, "gpu_mem.live", jint(ev, "live", -1));
    if (total <= 0 || free_b < 0 || free_b > total / 10 || (live < total / 2 && largest < total / 3))
        return false;
    struct sbuf b = {0};
    for (unsigned f = 1; f <= FW_CT2; f <<= 1)
        if (fws & f)
            sb_printf(&b, "%s%s", b.len ? " and " : "", fw_label(f));
    set_own(vars, "fws", sb_take(&b));
    set_int(vars, "live", live > largest ? live : largest);
    set_str(vars, "grabber", fws & FW_TF ? "TensorFlow" : fws & FW_JAX ? "JAX" : "PyTorch");
    /* the knobs of the framework that took the GPU, not another's (issue 27 item 5) */
    set_str(vars, "grab_fix",
            fws & FW_TF ? "give the GPU to one of them: hide it from TensorFlow before the other uses it "
                          "(`tf.config.set_visible_devices([], 'GPU')`) or let TensorFlow grow on demand "
                          "(`tf.config.experimental.set_memory_growth(gpu, True)`)"
            : fws & FW_JAX ? "stop JAX from preallocating: `XLA_PYTHON_CLIENT_PREALLOCATE=false`, or a smaller pool "
                             "(`XLA_PYTHON_CLIENT_MEM_FRACTION=.3`), set before JAX starts; or separate processes"
                           : "release PyTorch's cached memory before the other one runs (`torch.cuda.empty_cache()`) "
                             "or cap it (`torch.cuda.set_per_process_memory_fraction`)");
    return true;
}

/* ---- the framework ran a CUDA tool (XLA runs ptxas from PATH) of another
 * CUDA than the PTX it compiles or the driver that then gets the code */
bool m_ptxas(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    long st = (long)jint(ev, "status", -1);
    if (st != 222 && st != 218 && st != 209)
        return false;
    json_t *tool = NULL, *tstart = NULL;
    for (size_t i = 0; i < s->n && !tool; i++)
        if ((tool = jget(s->t[i].start, "cuda_tool")) && strcmp(jstr(tool, "name", ""), "ptxas") == 0)
            tstart = s->t[i].start;
        else
            tool = NULL;
    if (!tool)
        return false;
    struct trace *t = &s->t[ti];
    long long drv = -1;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "lib") && strcmp(jstr(e, "family", ""), "driver") == 0 && jint(e, "version", -1) > 0)
            drv = jint(e, "version", -1);
    }
    char v[32], d[4096];
    const char *exe = jstr(tstart, "exe", "ptxas");
    set_str(vars, "tool", exe);
    set_str(vars, "tool_dir", dir_name(exe, d, sizeof d));
    set_str(vars, "tool_version", jstr(tool, "toolkit_version", "of unknown version"));
    set_own(vars, "driver_cuda", drv > 0 ? xasprintf("CUDA %s", fmt_cuda_ver(drv, v, sizeof v)) : xstrdup("?"));
    set_str(vars, "fn", jstr(ev, "fn", "?"));
    return true;
}
