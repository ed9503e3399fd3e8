/* procs.c - one process summed up: its libraries and their versions, its
 * failures, the first of them, and the short texts the outputs show of it. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

/* a list of processes (struct procs) grows by one; here, under group.c,
 * which lists them, so that the two do not call each other */
void procs_add(struct procs *p, size_t i)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 4;
        p->i = realloc(p->i, p->cap * sizeof *p->i);
        if (!p->i)
            exit(2);
    }
    p->i[p->n++] = i;
}

void procs_free(struct procs *p)
{
    free(p->i);
    memset(p, 0, sizeof *p);
}

/* one loaded library: the cuDNN dispatcher or a part, cudart, the driver */
static void add_lib(struct proc_sum *p, json_t *e)
{
    p->nlibs++;
    const char *fam = jstr(e, "family", ""), *path = jstr(e, "path", "?");
    long long v = jint(e, "version", -1);
    if (strcmp(fam, "cudnn") == 0) {
        if (strncmp(jstr(e, "soname", base_name(path)), "libcudnn.so", 11) == 0)
            p->cudnn_path = path;
        else
            p->nparts++;
        if (!p->cudnn_path)
            p->cudnn_path = path;
        if (v > 0 && p->cudnn_ver > 0 && v != p->cudnn_ver)
            p->cudnn_mixed = true;
        if (v > p->cudnn_ver)
            p->cudnn_ver = v;
        if (jint(e, "cuda_built_for", -1) > 0)
            p->cudnn_built_for = jint(e, "cuda_built_for", -1);
    } else if (strcmp(fam, "cudart") == 0) {
        p->cudart_path = path, p->cudart_ver = v;
    } else if (strcmp(fam, "driver") == 0) {
        p->driver_path = path, p->driver_ver = v, p->driver_origin = jstr(e, "origin", NULL);
    }
}

/* versions belong to files: the dispatcher's own, and the parts that differ from it */
static void cudnn_file_versions(struct trace *t, struct proc_sum *p)
{
    long long own = p->cudnn_path ? cudnn_file_version(t, p->cudnn_path) : -1;
    if (own <= 0)
        return;
    struct sbuf mix = {0};
    p->cudnn_ver = own;
    p->cudnn_mixed = false;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        const char *path = jstr(e, "path", "");
        if (strcmp(jstr(e, "ev", ""), "lib") != 0 || strcmp(jstr(e, "family", ""), "cudnn") != 0 ||
            strcmp(path, p->cudnn_path) == 0)
            continue;
        long long v = cudnn_file_version(t, path);
        char vb[32], d[4096];
        if (v > 0 && v != own) {
            p->cudnn_mixed = true;
            if (mix.len < 300)
                sb_printf(&mix, "%s%s %s from %s", mix.len ? ", " : "", base_name(path),
                          fmt_cudnn_ver(v, vb, sizeof vb), dir_name(path, d, sizeof d));
        }
    }
    p->cudnn_mix = mix.len ? sb_take(&mix) : NULL;
}

/* "rank 3 (gpu1:4242)", "gpu1:4242" or "pid 4242"; the command line, cut to 60 */
static void name_process(struct analysis *a, struct trace *t, struct proc_sum *p)
{
    if (t->rank >= 0)
        p->label = xasprintf("rank %lld (%s:%lld)", t->rank, t->host, t->pid);
    else if (a->nhosts > 1)
        p->label = xasprintf("%s:%lld", t->host, t->pid);
    else
        p->label = xasprintf("pid %lld", t->pid);
    json_t *argv = jget(t->start, "argv");
    struct sbuf b = {0};
    for (size_t i = 0; i < json_array_size(argv) && b.len < 50; i++) {
        const char *s = json_string_value(json_array_get(argv, i));
        size_t line = s ? strcspn(s, "\n") : 0; /* `python3 -c` of several lines: its first, then "..." */
        sb_printf(&b, "%s%.*s", i ? " " : "", (int)(i ? (s ? line : 1) : strlen(base_name(s ? s : "?"))),
                  i ? (s ? s : "?") : base_name(s ? s : "?"));
        if (s && s[line]) {
            sb_add(&b, "...");
            break;
        }
    }
    if (b.len > 60) { /* cut at a character's start: a cut sequence is not UTF-8, which JSON cannot hold */
        size_t cut = 57;
        while (cut > 0 && ((unsigned char)b.s[cut] & 0xc0) == 0x80)
            cut--;
        memcpy(b.s + cut, "...", 4);
    }
    p->prog = b.len ? sb_take(&b) : xstrdup(base_name(jstr(t->start, "exe", "?")));
}

void summarise(struct analysis *a, size_t ti, struct procs *fails)
{
    struct trace *t = &a->s->t[ti];
    struct proc_sum *p = &a->p[ti];
    memset(p, 0, sizeof *p);
    p->cudnn_ver = p->cudnn_built_for = p->cudart_ver = p->driver_ver = -1;
    p->fail_t = -1;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_failure_event(t, i)) {
            if (fails)
                procs_add(fails, i);
            p->nfail += (int)jint(e, "repeated.count", 1); /* the shim's `repeated`: that many */
            double tt = trace_event_t(t, e);
            if (p->fail_t < 0 || tt < p->fail_t) /* threads write slightly out of order */
                p->fail_t = tt, p->fail_ev = e;
        }
        if (strcmp(jstr(e, "ev", ""), "lib") == 0)
            add_lib(p, e);
    }
    cudnn_file_versions(t, p);
    if (p->driver_ver < 0)
        for (size_t i = 0; i < json_array_size(t->events); i++)
            p->driver_ver = jint(json_array_get(t->events, i), "driver_version", p->driver_ver);
    name_process(a, t, p);
}

void summarise_alike(struct analysis *a, size_t ti, size_t like, const struct procs *fails)
{
    struct trace *t = &a->s->t[ti];
    struct proc_sum *p = &a->p[ti], *q = &a->p[like];
    *p = *q;
    p->cudnn_mix = q->cudnn_mix ? xstrdup(q->cudnn_mix) : NULL;
    p->fail_t = -1, p->fail_ev = NULL;
    for (size_t k = 0; k < fails->n; k++) { /* the first by its own clock, as summarise takes it */
        json_t *e = json_array_get(t->events, fails->i[k]);
        double tt = trace_event_t(t, e);
        if (p->fail_t < 0 || tt < p->fail_t)
            p->fail_t = tt, p->fail_ev = e;
    }
    name_process(a, t, p);
}

char *lib_summary(struct proc_sum *p)
{
    struct sbuf b = {0};
    char v1[32], v2[32];
    if (p->cudnn_path) {
        sb_printf(&b, "cuDNN%s%s%s%s%s at %s", p->cudnn_ver > 0 ? " " : "",
                  p->cudnn_ver > 0 ? fmt_cudnn_ver(p->cudnn_ver, v1, sizeof v1) : "",
                  p->cudnn_mixed ? " (mixed versions)" : "", p->cudnn_built_for > 0 ? " for CUDA " : "",
                  p->cudnn_built_for > 0 ? fmt_cuda_ver(p->cudnn_built_for, v2, sizeof v2) : "", p->cudnn_path);
        if (p->nparts)
            sb_printf(&b, " (+%d part%s)", p->nparts, p->nparts > 1 ? "s" : "");
        if (p->cudnn_mix)
            sb_printf(&b, ", mixed with %s", p->cudnn_mix);
    }
    if (p->cudart_path)
        sb_printf(&b, "%scudart %s at %s", b.len ? "; " : "", fmt_cuda_ver(p->cudart_ver, v1, sizeof v1), p->cudart_path);
    if (p->driver_path)
        sb_printf(&b, "%sdriver %s at %s", b.len ? "; " : "", fmt_cuda_ver(p->driver_ver, v1, sizeof v1), p->driver_path);
    if (p->driver_path && p->driver_origin && strcmp(p->driver_origin, "driver") != 0) /* not the driver's own */
        sb_printf(&b, " (%s)", diag_origin_words(p->driver_origin));
    else if (!p->driver_path && p->nlibs)
        sb_printf(&b, "%sdriver (libcuda.so.1) not loaded", b.len ? "; " : "");
    if (!p->nlibs)
        sb_add(&b, "no CUDA library loaded");
    return sb_take(&b);
}

/* "cuDNN 9.19.0  cudart 13.0  driver 13.0": one process per line */
char *lib_short(struct proc_sum *p)
{
    struct sbuf b = {0};
    char v[32];
    if (p->cudnn_path)
        sb_printf(&b, "cuDNN %s%s  ", fmt_cudnn_ver(p->cudnn_ver, v, sizeof v), p->cudnn_mixed ? " (mixed)" : "");
    if (p->cudart_path)
        sb_printf(&b, "cudart %s  ", fmt_cuda_ver(p->cudart_ver, v, sizeof v));
    if (p->driver_path)
        sb_printf(&b, "driver %s  ", fmt_cuda_ver(p->driver_ver, v, sizeof v));
    else if (p->nlibs)
        sb_add(&b, "no driver  ");
    if (!p->nlibs)
        sb_add(&b, "no CUDA library  ");
    return sb_take(&b);
}
