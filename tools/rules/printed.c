/* printed.c - the match functions of the rules.def rows that read what the
 * program printed: the `output` events capture.c adds from the stderr
 * `convguard run` kept (one per quotable line: pattern, kind, framework, text),
 * and the `printed_*` rows, which make a row of patterns.def (its cause, its
 * fix, the trace event that agrees with it) a finding when no rule before them
 * gave a cause from the trace. */
#include <ctype.h>

#include "model/capture.h"
#include "rules/match.h"

/* OOM in the words of the framework, while the process allocated GPU memory
 * and no allocation failed: the framework's own pool or limit was used up, not
 * the GPU.  A trace without allocation counts (no gpu_mem) cannot tell: then
 * the message's own row speaks (printed_oom). */
bool m_pool_exhausted(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    long long allocs = jint(t->exit, "gpu_mem.allocs", -1), fails = jint(t->exit, "gpu_mem.alloc_failures", 0);
    if (fails > 0 || allocs <= 0) /* without gpu_mem the trace cannot say that none failed */
        return false;
    const char *fw = jstr(ev, "framework", "the framework");
    char a[32];
    long long largest = jint(t->exit, "gpu_mem.largest_ok", -1);
    set_own(vars, "pool_note",
            allocs > 0 && largest > 0
                ? xasprintf("%lld allocation%s of this process succeeded, the largest %s", allocs,
                            allocs > 1 ? "s" : "", fmt_size(largest, a, sizeof a))
                : xstrdup("every allocation of this process the shim saw succeeded"));
    set_str(vars, "framework", strcmp(fw, "CUDA") == 0 ? "the framework" : fw);
    /* the limit the process gave the pool itself (the start event's env) */
    const char *frac = strstr(fw, "JAX") ? jstr(t->start, "env.XLA_PYTHON_CLIENT_MEM_FRACTION", NULL) : NULL;
    double share = frac ? strtod(frac, NULL) : 0;
    set_own(vars, "limit_note", frac ? xasprintf("; this process set XLA_PYTHON_CLIENT_MEM_FRACTION=%s: a pool of "
                                                 "%.0f%% of the GPU", frac, share * 100)
                                     : xstrdup(""));
    if (frac)
        set_own(vars, "fw_fix", xasprintf("JAX: raise `XLA_PYTHON_CLIENT_MEM_FRACTION` (%s now; `.95` gives the pool "
                                          "nearly the whole GPU) or unset it, or let the pool grow "
                                          "(`XLA_PYTHON_CLIENT_PREALLOCATE=false`); ", frac));
    else
        set_str(vars, "fw_fix",
                strstr(fw, "JAX") ? "JAX: give the pool more (`XLA_PYTHON_CLIENT_MEM_FRACTION=.95`) or let it grow "
                                    "(`XLA_PYTHON_CLIENT_PREALLOCATE=false`); "
                : strstr(fw, "PyTorch") ? "PyTorch: raise or drop `torch.cuda.set_per_process_memory_fraction` and the "
                                          "limits in `PYTORCH_CUDA_ALLOC_CONF`; "
                : strstr(fw, "TensorFlow") ? "TensorFlow: raise the `memory_limit` of the logical GPU or use "
                                             "`tf.config.experimental.set_memory_growth(gpu, True)`; "
                                           : "");
    set_own(vars, "seen", xasprintf("stderr: %s", jstr(ev, "text", "")));
    return true;
}

/* "(9, 19, 0)" or "9.19.0" -> "9.19.0" */
static char *version_at(const char *p)
{
    if (!p)
        return NULL;
    while (*p == ' ' || *p == '(')
        p++;
    int v[3] = {0, 0, 0}, k = 0;
    while (k < 3 && isdigit((unsigned char)*p)) {
        char *end;
        v[k++] = (int)strtol(p, &end, 10);
        p = end;
        while (*p == ',' || *p == ' ' || *p == '.')
            p++;
    }
    return k ? xasprintf("%d.%d.%d", v[0], v[1], v[2]) : NULL;
}

/* The framework names the cuDNN version it was built with and the one it
 * found; the trace says which file that was. */
bool m_cudnn_older_than_build(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    const char *text = jstr(ev, "text", "");
    char *built = NULL, *runtime = NULL;
    const char *p;
    if ((p = strcasestr(text, "Loaded runtime CuDNN library:"))) {
        runtime = version_at(p + 29);
        const char *q = strstr(p, "compiled with:");
        built = version_at(q ? q + 14 : NULL);
    } else if ((p = strstr(text, "against"))) {
        built = version_at(p + 7);
        const char *q = strstr(p, "runtime version");
        runtime = version_at(q ? q + 15 : NULL);
    }
    const char *path = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "lib") && strcmp(jstr(e, "family", ""), "cudnn") == 0 &&
            (!path || strncmp(jstr(e, "soname", ""), "libcudnn.so", 11) == 0))
            path = jstr(e, "path", NULL);
    }
    if (!path || !built || !runtime || strcmp(built, runtime) == 0) { /* the process that loaded cuDNN */
        free(built), free(runtime);
        return false;
    }
    char d[4096];
    dir_name(path, d, sizeof d);
    bool in_llp = dir_in_path_list(d, llp_of(t));
    set_own(vars, "major", xasprintf("%.*s", (int)strcspn(built, "."), built));
    set_own(vars, "built", built);
    set_own(vars, "runtime", runtime);
    set_str(vars, "framework", jstr(ev, "framework", "the framework"));
    set_own(vars, "path_note", xasprintf(", from %s", path));
    set_own(vars, "llp_fix", in_llp ? xasprintf("; or take %s out of LD_LIBRARY_PATH so that the framework finds the "
                                                "cuDNN it ships with", d)
                                    : xstrdup(""));
    set_own(vars, "cu", xasprintf("%lld", cuda_major(t)));
    set_own(vars, "seen", xasprintf("stderr: %s", text));
    return true;
}

/* ---- a known error text of patterns.def as a finding of its own (the
 * `printed_*` rows of rules.def: one per group of kinds) */


/* "; " and the fix of the first framework's row of one of `kinds` the
 * process printed ("usage,device"), "" when none: a trace rule that explains
 * the failure adds what the framework's own message asks of the program
 * (torch.load's map_location when the GPU is hidden).  The report keeps the
 * parts of the frameworks the process ran (fw.c, frame_fix). */
char *printed_fix_of_kinds(struct trace *t, const char *kinds)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        const struct message *m = is_ev(e, "output") ? message_by_id(jstr(e, "pattern", NULL)) : NULL;
        size_t n = m ? strlen(m->kind) : 0;
        const char *k = m ? strstr(kinds, m->kind) : NULL;
        if (m && *m->fix && *m->framework && strcmp(m->framework, "CUDA") && k && (k == kinds || k[-1] == ',') && (!k[n] || k[n] == ','))
            return xasprintf("; %s", m->fix);
    }
    return xstrdup("");
}

/* A row said by another line of the same kind that comes earlier in the
 * table is more specific: that line makes the finding, not this one. */
static bool more_specific_line(struct trace *t, const struct message *m)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        const struct message *o = is_ev(e, "output") ? message_by_id(jstr(e, "pattern", NULL)) : NULL;
        if (o && o < m && strcmp(o->kind, m->kind) == 0 && *o->cause)
            return true;
    }
    return false;
}

/* /dev/shm as the processes of the run saw it (shim: start when small, a SIGBUS crash, a failing
 * _exit), the least free: " (/dev/shm here: 16 MiB, 0 bytes free at the crash of pid 812)", "" when
 * none said */
static char *shm_note(struct trace_set *s, size_t ti)
{
    json_t *best = NULL;
    const char *when = "";
    long long who = -1;
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->t[i].host, s->t[ti].host) != 0)
            continue;
        json_t *evs = s->t[i].events;
        for (size_t k = 0; k < json_array_size(evs); k++) {
            json_t *e = json_array_get(evs, k), *sh = jget(e, "shm");
            if (json_is_object(sh) && (!best || jint(sh, "free", 0) < jint(best, "free", 0)))
                best = sh, who = s->t[i].pid, when = jstr(e, "ev", "");
        }
        json_t *xs = jget(s->t[i].exit, "shm");
        if (json_is_object(xs) && (!best || jint(xs, "free", 0) < jint(best, "free", 0)))
            best = xs, who = s->t[i].pid, when = "exit";
    }
    if (!best)
        return xstrdup("");
    /* free space at a start is before the batches were written: said as such, not as the failure's */
    char a[32], b[32], at[64];
    if (strcmp(when, "start") == 0)
        snprintf(at, sizeof at, "when pid %lld started", who);
    else if (strcmp(when, "crash") == 0)
        snprintf(at, sizeof at, "at the crash of pid %lld", who);
    else
        snprintf(at, sizeof at, "as pid %lld saw it at its exit", who);
    return xasprintf(" (/dev/shm here: %s, %s free %s)", fmt_size(jint(best, "total", -1), a, sizeof a),
                     fmt_size(jint(best, "free", -1), b, sizeof b), at);
}

/* the settings the message's cause or fix names that the process ran with:
 * "; this process ran with PYTORCH_CUDA_ALLOC_CONF=\"expandable_segment:True\"" */
static char *env_note(struct trace *t, const struct message *m)
{
    struct sbuf b = {0};
    const char *k;
    json_t *v;
    json_object_foreach(jget(t->start, "env"), k, v) {
        size_t n = strlen(k);
        const char *at = strstr(m->cause, k) ? strstr(m->cause, k) : strstr(m->fix, k);
        if (!at || n < 4 || !json_is_string(v) || (at[n] == '_' || (at[n] >= 'A' && at[n] <= 'Z')))
            continue; /* a longer name that starts with it */
        sb_printf(&b, "%s%s=\"%s\"", b.len ? ", " : "; this process ran with ", k, json_string_value(v));
    }
    return b.len ? sb_take(&b) : xstrdup("");
}

bool m_printed(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    const struct message *m = message_by_id(jstr(ev, "pattern", NULL));
    if (!m || !*m->cause || more_specific_line(t, m))
        return false;
    set_str(vars, "msg_title", m->title);
    set_str(vars, "msg_cause", m->cause);
    set_own(vars, "msg_fix", fix_for_frameworks(m->fix, frameworks_of(t) | fw_of_printed_row(t, m->framework)));
    set_own(vars, "source_note", xasprintf("; the same failure, reported: %s", m->source));
    set_own(vars, "seen", xasprintf("stderr: %s", jstr(ev, "text", "")));
    json_t *agree = NULL;
    for (size_t i = 0; *m->confirm && i < json_array_size(t->events) && !agree; i++)
        if (rule_pattern_match(m->confirm, json_array_get(t->events, i), t->events))
            agree = json_array_get(t->events, i);
    char *said = agree ? describe_event(agree) : NULL;
    char *shm = strcmp(m->kind, "host") == 0 ? shm_note(s, ti) : xstrdup(""), *env = env_note(t, m);
    char *agrees = said ? xasprintf(" (the trace agrees: %s)", said) : xstrdup("");
    set_own(vars, "confirm_note", xasprintf("%s%s%s", shm, agrees, env));
    free(said), free(shm), free(env), free(agrees);
    return true;
}
