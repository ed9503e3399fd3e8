/* report.c - turns traces into "what you see -> why -> what to do".
 *
 * The rules live in rules.def; this file only applies them (patterns, the
 * groups that keep one failure to one cause, text expansion) and prints the
 * result as text (report), JSON (--json) or HTML (--html, html.c). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "model/capture.h"
#include "report.h"

/* ---- the analysis */
static bool group_taken(json_t *taken, const char *g, size_t n)
{
    char k[64];
    snprintf(k, sizeof k, "%.*s", (int)n, g);
    return json_object_get(taken, k) != NULL;
}

static void take_groups(json_t *taken, const char *groups)
{
    for (const char *g = groups; g && *g;) {
        size_t n = strcspn(g, ",");
        char k[64];
        snprintf(k, sizeof k, "%.*s", (int)n, g);
        json_object_set_new(taken, k, json_true());
        g = g[n] ? g + n + 1 : NULL;
    }
}

static void add_finding(struct analysis *a, const struct rule *r, size_t ti, json_t *ev, json_t *vars, int count)
{
    if (a->nf == a->capf) {
        a->capf = a->capf ? a->capf * 2 : 16;
        a->f = realloc(a->f, a->capf * sizeof *a->f);
        if (!a->f)
            exit(2);
    }
    struct finding *f = &a->f[a->nf++];
    f->r = r, f->ti = ti, f->ev = ev, f->vars = vars, f->count = count;
    f->title = expand(r->title, vars, ev);
    f->symptom = frame_symptom(a->s, ti, expand(r->symptom, vars, ev));
    char *said = capture_symptom(&a->s->t[ti]); /* the program's own words, when captured */
    if (said)
        free(f->symptom), f->symptom = said;
    f->cause = expand(r->cause, vars, ev);
    f->fix = expand(r->fix, vars, ev);
    const char *seen = jstr(vars, "seen", NULL);
    if (seen)
        f->seen = xstrdup(seen);
    else if (ev)
        f->seen = describe_event(ev);
    else
        f->seen = xstrdup("");
    f->driver = driver_words(&a->s->t[ti], ev);
    if (count > 1) {
        char *s = xasprintf("%s (and %d more like it)", f->seen, count - 1);
        free(f->seen);
        f->seen = s;
    }
}

static void apply_rules(struct analysis *a, size_t ti)
{
    struct trace *t = &a->s->t[ti];
    json_t *taken = json_object();
    for (size_t r = 0; r < n_rules; r++) {
        const struct rule *ru = &rules[r];
        if (group_taken(taken, ru->group, strcspn(ru->group, ",")))
            continue;
        json_t *vars = NULL, *first = NULL;
        int count = 0;
        if (!*ru->pattern) {
            vars = json_object();
            if (ru->match(a->s, ti, NULL, vars))
                count = 1;
        } else {
            for (size_t i = 0; i < json_array_size(t->events); i++) {
                json_t *ev = json_array_get(t->events, i);
                if (!rule_pattern_match(ru->pattern, ev, t->events))
                    continue;
                json_t *v = json_object();
                if (ru->match && !ru->match(a->s, ti, ev, v)) {
                    json_decref(v);
                    continue;
                }
                if (!count++)
                    first = ev, vars = v;
                else
                    json_decref(v);
            }
        }
        if (count) {
            add_finding(a, ru, ti, first, vars, count);
            take_groups(taken, ru->group);
        } else {
            json_decref(vars);
        }
    }
    json_decref(taken);
}

static void summarise(struct analysis *a, size_t ti)
{
    struct trace *t = &a->s->t[ti];
    struct proc_sum *p = &a->p[ti];
    memset(p, 0, sizeof *p);
    p->cudnn_ver = p->cudnn_built_for = p->cudart_ver = p->driver_ver = -1;
    p->fail_t = -1;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_failure_event(t, i)) {
            p->nfail++;
            double tt = jnum(e, "t", 0);
            if (p->fail_t < 0 || tt < p->fail_t) /* threads write slightly out of order */
                p->fail_t = tt, p->fail_ev = e;
        }
        if (strcmp(jstr(e, "ev", ""), "lib") != 0)
            continue;
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
            p->driver_path = path, p->driver_ver = v;
        }
    }
    /* versions belong to files: the dispatcher's own, and the parts that differ from it */
    long long own = p->cudnn_path ? cudnn_file_version(t, p->cudnn_path) : -1;
    if (own > 0) {
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
    if (p->driver_ver < 0)
        for (size_t i = 0; i < json_array_size(t->events); i++)
            p->driver_ver = jint(json_array_get(t->events, i), "driver_version", p->driver_ver);
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
        sb_printf(&b, "%s%s", i ? " " : "", i ? (s ? s : "?") : base_name(s ? s : "?"));
    }
    if (b.len > 60)
        b.s[57] = b.s[58] = b.s[59] = '.', b.s[60] = 0;
    p->prog = b.len ? sb_take(&b) : xstrdup(base_name(jstr(t->start, "exe", "?")));
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
    else if (p->nlibs)
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

/* ---- across processes: the same thing loaded differently */
typedef char *(*key_fn)(struct analysis *a, size_t ti, char **who);

/* Library paths some process used (a version is known): a process that
 * mapped the same file without using it (torchrun's launcher imports torch)
 * has no version for it, which is no inconsistency. */
static json_t *known_paths;

static bool known_elsewhere(struct analysis *a, size_t ti, bool cudnn)
{
    const char *path = cudnn ? a->p[ti].cudnn_path : a->p[ti].cudart_path;
    return path && json_object_get(json_object_get(known_paths, cudnn ? "cudnn" : "cudart"), path);
}

static void learn_known_paths(struct analysis *a)
{
    json_t *c = json_object(), *r = json_object();
    for (size_t i = 0; i < a->s->n; i++) {
        struct proc_sum *p = &a->p[i];
        if (p->cudnn_path && p->cudnn_ver > 0)
            json_object_set_new(c, p->cudnn_path, json_true());
        if (p->cudart_path && p->cudart_ver > 0)
            json_object_set_new(r, p->cudart_path, json_true());
    }
    known_paths = json_pack("{s:o, s:o}", "cudnn", c, "cudart", r);
}

static char *key_cudnn(struct analysis *a, size_t ti, char **who)
{
    struct proc_sum *p = &a->p[ti];
    char v[32];
    *who = xstrdup(p->label);
    if (p->cudnn_path && p->cudnn_ver <= 0 && known_elsewhere(a, ti, true))
        return NULL;
    return p->cudnn_path ? xasprintf("%s from %s", fmt_cudnn_ver(p->cudnn_ver, v, sizeof v), p->cudnn_path) : NULL;
}

static char *key_cudart(struct analysis *a, size_t ti, char **who)
{
    struct proc_sum *p = &a->p[ti];
    char v[32];
    *who = xstrdup(p->label);
    if (p->cudart_path && p->cudart_ver <= 0 && known_elsewhere(a, ti, false))
        return NULL;
    return p->cudart_path ? xasprintf("%s from %s", fmt_cuda_ver(p->cudart_ver, v, sizeof v), p->cudart_path) : NULL;
}

static char *key_driver(struct analysis *a, size_t ti, char **who)
{
    struct proc_sum *p = &a->p[ti];
    char v[32];
    *who = xasprintf("host %s", a->s->t[ti].host);
    return p->driver_ver > 0 ? xasprintf("driver for CUDA %s", fmt_cuda_ver(p->driver_ver, v, sizeof v)) : NULL;
}

/* one value of a compared library: who has it (labels once each) */
struct cvalue { char *value; json_t *labels, *seen; struct procs p; };

static void compare(struct analysis *a, const char *what, key_fn key)
{
    json_t *index = json_object(); /* value -> position in vals */
    struct cvalue *vals = NULL;
    size_t nv = 0;
    for (size_t i = 0; i < a->s->n; i++) {
        char *who = NULL, *v = key(a, i, &who);
        if (v) {
            json_t *k = json_object_get(index, v);
            struct cvalue *c;
            if (k) {
                c = &vals[json_integer_value(k)];
            } else {
                vals = realloc(vals, (nv + 1) * sizeof *vals);
                if (!vals)
                    exit(2);
                c = &vals[nv];
                *c = (struct cvalue){xstrdup(v), json_array(), json_object(), {0}};
                json_object_set_new(index, v, json_integer((json_int_t)nv++));
            }
            if (!json_object_get(c->seen, who)) {
                json_object_set_new(c->seen, who, json_true());
                json_array_append_new(c->labels, json_string(who));
                procs_add(&c->p, i);
            }
        }
        free(v);
        free(who);
    }
    if (nv >= 2) {
        json_t *values = json_array();
        struct sbuf b = {0};
        sb_printf(&b, "%s differs:", what);
        bool per_host = strcmp(what, "NVIDIA driver") == 0;
        /* the fewest first: the odd one out is what the user wants to see */
        bool *done = calloc(nv, sizeof *done);
        for (size_t shown = 0; shown < nv; shown++) {
            size_t best = nv;
            for (size_t k = 0; k < nv; k++)
                if (!done[k] && (best == nv || json_array_size(vals[k].labels) < json_array_size(vals[best].labels)))
                    best = k;
            done[best] = true;
            struct cvalue *c = &vals[best];
            size_t n = json_array_size(c->labels);
            char *who;
            if (n <= 6) {
                struct sbuf w = {0};
                for (size_t k = 0; k < n; k++)
                    sb_printf(&w, "%s%s", k ? ", " : "", json_string_value(json_array_get(c->labels, k)));
                who = sb_take(&w);
            } else if (per_host) {
                char *h = hosts_text(a, &c->p);
                who = xasprintf("%zu hosts (%s)", n, h);
                free(h);
            } else {
                char *w = who_text(a, &c->p);
                who = shown == nv - 1 ? xasprintf("the %zu others (%s)", n, w) : xasprintf("%zu processes (%s)", n, w);
                free(w);
            }
            sb_printf(&b, "%s %s in %s", shown ? ";" : "", c->value, who);
            json_array_append_new(values, json_pack("{s:s, s:O, s:I, s:s}", "value", c->value, "processes", c->labels,
                                                    "count", (json_int_t)n, "who", who));
            free(who);
        }
        free(done);
        char *text = sb_take(&b);
        json_array_append_new(a->incons, json_pack("{s:s, s:s, s:o}", "what", what, "text", text, "values", values));
        free(text);
    }
    for (size_t k = 0; k < nv; k++) {
        free(vals[k].value);
        json_decref(vals[k].labels);
        json_decref(vals[k].seen);
        procs_free(&vals[k].p);
    }
    free(vals);
    json_decref(index);
}

static bool boring(struct analysis *a, size_t i) { return !a->p[i].nlibs && !a->p[i].nfail && !a->p[i].nfind; }
static bool in_table(struct analysis *a, size_t i) { return !boring(a, i) || a->s->n == 1; }

struct analysis *analyse(struct trace_set *s)
{
    struct analysis *a = calloc(1, sizeof *a);
    if (!a)
        exit(2);
    a->s = s;
    a->p = calloc(s->n ? s->n : 1, sizeof *a->p);
    a->incons = json_array();
    json_t *hosts = json_object();
    for (size_t i = 0; i < s->n; i++)
        json_object_set_new(hosts, s->t[i].host, json_true());
    a->nhosts = (int)json_object_size(hosts);
    json_decref(hosts);
    for (size_t i = 0; i < s->n; i++) {
        summarise(a, i);
        apply_rules(a, i);
    }
    /* the event of an error a rule found is a failure too, listed or not */
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        struct proc_sum *p = &a->p[f->ti];
        if (f->ev && strcmp(f->r->severity, "error") == 0 && (p->fail_t < 0 || jnum(f->ev, "t", 0) < p->fail_t))
            p->fail_t = jnum(f->ev, "t", 0), p->fail_ev = f->ev;
    }
    group_findings(a);
    group_processes(a, in_table);
    find_first_failure(a);
    learn_known_paths(a);
    compare(a, "cuDNN", key_cudnn);
    compare(a, "CUDA runtime", key_cudart);
    compare(a, "NVIDIA driver", key_driver);
    json_decref(known_paths);
    known_paths = NULL;
    return a;
}

/* distinct problems: findings told once (a group), and inconsistencies */
int analysis_problems(struct analysis *a) { return a->ngroups + (int)json_array_size(a->incons); }

void analysis_free(struct analysis *a)
{
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        json_decref(f->vars);
        free(f->title), free(f->symptom), free(f->seen), free(f->cause), free(f->fix), free(f->driver);
    }
    for (size_t i = 0; i < a->s->n; i++)
        free(a->p[i].label), free(a->p[i].prog), free(a->p[i].cudnn_mix);
    analysis_groups_free(a);
    free(a->f);
    free(a->p);
    json_decref(a->incons);
    free(a);
}

/* ---- text */
/* Prints `text` after `head`, wrapped at 100 columns with a hanging indent. */
static void wrap(FILE *out, const char *head, const char *text, int indent)
{
    int col = fprintf(out, "%s", head);
    const char *p = text;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (col > indent && col + 1 + (int)w > 100) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (p != text) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)w, p);
        col += (int)w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
}

/* What is wrong with a trace file itself, "" when nothing. */
static char *trace_note(struct trace *t)
{
    struct sbuf b = {0};
    if (t->st.bad_lines)
        sb_printf(&b, ", %ld unreadable line%s skipped", t->st.bad_lines, t->st.bad_lines > 1 ? "s" : "");
    if (t->st.last_line_cut)
        sb_add(&b, ", the last line was cut off");
    if (t->st.seq_gaps)
        sb_printf(&b, ", %ld line%s lost (gaps in seq)", t->st.seq_gaps, t->st.seq_gaps > 1 ? "s" : "");
    if (jint(t->exit, "events_dropped", 0) > 0)
        sb_printf(&b, ", %lld events dropped by the shim", jint(t->exit, "events_dropped", 0));
    if (t->st.fixed_utf8)
        sb_printf(&b, ", %ld line%s with bytes that are not UTF-8", t->st.fixed_utf8, t->st.fixed_utf8 > 1 ? "s" : "");
    if (t->st.elided) {
        sb_printf(&b, ", %ld event%s only counted (past the first and last ones of their kind:", t->st.elided,
                  t->st.elided > 1 ? "s" : "");
        const char *k;
        json_t *v;
        int n = 0;
        json_object_foreach(t->elided, k, v)
            sb_printf(&b, "%s %s %lld", n++ ? "," : "", k, (long long)json_integer_value(v));
        sb_add(&b, ")");
    }
    if (!t->start)
        sb_add(&b, ", no start line");
    bool crashed = false;
    for (size_t k = 0; k < json_array_size(t->events); k++)
        crashed |= strcmp(jstr(json_array_get(t->events, k), "ev", ""), "crash") == 0;
    if (!t->exit && !crashed && !t->execd)
        sb_add(&b, ", no exit line (killed, or still running)");
    char *r = xstrdup(b.len ? b.s + 2 : "");
    free(b.s);
    return r;
}

/* "FILE1, FILE2, FILE3 and 997 more" */
static char *files_text(json_t *files, bool all)
{
    struct sbuf b = {0};
    size_t n = json_array_size(files);
    for (size_t k = 0; k < n; k++) {
        if (k == 3 && !all) {
            sb_printf(&b, " and %zu more", n - 3);
            break;
        }
        sb_printf(&b, "%s%s", k ? ", " : "", json_string_value(json_array_get(files, k)));
    }
    return sb_take(&b);
}

/* Notes: per file when few, else once per kind of damage with the count. */
static void trace_notes(struct analysis *a, FILE *out, bool all)
{
    json_t *by_note = json_object(), *order = json_array();
    struct procs *who = NULL;
    for (size_t i = 0; i < a->s->n; i++) {
        char *note = trace_note(&a->s->t[i]);
        if (*note) {
            json_t *k = json_object_get(by_note, note);
            if (!k) {
                k = json_integer((json_int_t)json_array_size(order));
                json_object_set_new(by_note, note, k);
                json_array_append_new(order, json_pack("{s:s, s:[]}", "note", note, "files"));
                who = realloc(who, json_array_size(order) * sizeof *who);
                memset(&who[json_array_size(order) - 1], 0, sizeof *who);
            }
            json_t *o = json_array_get(order, (size_t)json_integer_value(k));
            json_array_append_new(json_object_get(o, "files"), json_string(a->s->t[i].file));
            procs_add(&who[json_integer_value(k)], i);
        }
        free(note);
    }
    for (size_t k = 0; k < json_array_size(order); k++) {
        json_t *o = json_array_get(order, k), *files = json_object_get(o, "files");
        const char *note = jstr(o, "note", "?");
        if (json_array_size(files) <= 3 || all) {
            for (size_t j = 0; j < json_array_size(files); j++)
                fprintf(out, "note: %s: %s\n", json_string_value(json_array_get(files, j)), note);
        } else {
            char *w = who_counted(a, &who[k]), *f = files_text(files, false);
            fprintf(out, "note: %s: %s (%s)\n", w, note, f);
            free(w), free(f);
        }
        procs_free(&who[k]);
    }
    free(who);
    json_decref(by_note);
    json_decref(order);
    /* files that could not be read, by reason */
    json_t *by_err = json_object(), *errs = json_array();
    for (size_t i = 0; i < json_array_size(a->s->unreadable); i++) {
        json_t *u = json_array_get(a->s->unreadable, i);
        const char *e = jstr(u, "error", "?");
        json_t *l = json_object_get(by_err, e);
        if (!l) {
            json_object_set_new(by_err, e, l = json_array());
            json_array_append_new(errs, json_string(e));
        }
        json_array_append_new(l, json_string(jstr(u, "path", "?")));
    }
    for (size_t k = 0; k < json_array_size(errs); k++) {
        const char *e = json_string_value(json_array_get(errs, k));
        json_t *l = json_object_get(by_err, e);
        if (json_array_size(l) <= 3 || all) {
            for (size_t j = 0; j < json_array_size(l); j++)
                fprintf(out, "note: %s: %s\n", json_string_value(json_array_get(l, j)), e);
        } else {
            char *f = files_text(l, false);
            fprintf(out, "note: %zu files: %s (%s)\n", json_array_size(l), e, f);
            free(f);
        }
    }
    json_decref(by_err);
    json_decref(errs);
}

/* more processes in the table than this: alike ones share a line */
#define TABLE_MAX 16

static void process_line(struct analysis *a, FILE *out, size_t i)
{
    struct proc_sum *p = &a->p[i];
    char *libs = lib_short(p);
    fprintf(out, "  %-22s %-22s %s", p->label, p->prog, libs);
    if (p->first_f >= 0)
        fprintf(out, "-> %s\n", a->f[p->first_f].title);
    else if (p->nfail)
        fprintf(out, "%d failure%s\n", p->nfail, p->nfail > 1 ? "s" : "");
    else
        fprintf(out, "ok\n");
    free(libs);
}

static void process_block(struct analysis *a, FILE *out, size_t i, bool verbose)
{
    struct proc_sum *p = &a->p[i];
    size_t n = a->s->n;
    char *libs = lib_summary(p);
    if (n > 1)
        fprintf(out, "%s  %s  (trace %s)\n", p->label, p->prog, a->s->t[i].file);
    wrap(out, "  libraries: ", libs, 13);
    free(libs);
    json_t *evs = a->s->t[i].events;
    if (verbose) {
        for (size_t k = 0; k < json_array_size(evs); k++) {
            json_t *e = json_array_get(evs, k);
            if (strcmp(jstr(e, "ev", ""), "lib") == 0) {
                char v[32];
                long long ver = jint(e, "version", -1);
                fprintf(out, "    %s %s %s\n", jstr(e, "path", "?"),
                        strcmp(jstr(e, "family", ""), "cudnn") == 0 ? fmt_cudnn_ver(ver, v, sizeof v)
                                                                    : fmt_cuda_ver(ver, v, sizeof v),
                        jstr(e, "via", ""));
            }
        }
    }
    if (p->nfail) {
        fprintf(out, "  failures:\n");
        int k = 0;
        for (size_t j = 0; j < json_array_size(evs); j++) {
            if (!is_failure_event(&a->s->t[i], j))
                continue;
            if (k++ == 8 && !verbose) {
                fprintf(out, "    ... and %d more\n", p->nfail - 8);
                break;
            }
            char *d = describe_event(json_array_get(evs, j));
            wrap(out, "    ", d, 6);
            free(d);
        }
    }
}

static void first_failure_text(struct analysis *a, FILE *out)
{
    char *head = first_failure_head(a);
    if (!head)
        return;
    wrap(out, "first failure: ", head, 4);
    free(head);
    for (int k = 0; k < AFTER_KINDS; k++) {
        char *t = after_text(a, (enum after_kind)k);
        if (t)
            wrap(out, "  ", t, 4);
        free(t);
    }
    char *c = clock_note(a);
    if (c) {
        char *t = xasprintf("(%s)", c);
        wrap(out, "  ", t, 4);
        free(t);
        free(c);
    }
}

/* A group of findings: told once, with who; its variants (other numbers,
 * another library) told apart below the cause. */
static void finding_group(struct analysis *a, FILE *out, struct fgroup *g, bool blocks, bool all)
{
    size_t n = a->s->n;
    struct block *b0 = &a->blocks[g->blocks[0]];
    struct finding *f = &a->f[b0->head];
    char *who = NULL;
    if (g->p.n <= 6) {
        struct sbuf w = {0};
        for (size_t k = 0; k < g->p.n; k++)
            sb_printf(&w, "%s%s", k ? ", " : "", a->p[g->p.i[k]].label);
        who = sb_take(&w);
    } else {
        who = who_counted(a, &g->p);
    }
    char *h = xasprintf("[%s] %s%s%s%s", f->r->layer, f->title, n > 1 ? " (" : "", n > 1 ? who : "", n > 1 ? ")" : "");
    wrap(out, "", h, 4);
    free(h);
    free(who);
    wrap(out, "    you see: ", f->symptom, 13);
    if (*f->seen && !blocks) {
        char *t = n > 1 ? xasprintf("%s, in %s", f->seen, a->p[f->ti].label) : xstrdup(f->seen);
        wrap(out, "    trace:   ", t, 13);
        free(t);
    }
    if (f->driver)
        wrap(out, "    driver:  ", f->driver, 13);
    if (g->nb == 1) {
        wrap(out, "    cause:   ", f->cause, 13);
    } else {
        char *w = who_counted(a, &b0->p), *t = xasprintf("%s (%s)", f->cause, w);
        wrap(out, "    cause:   ", t, 13);
        free(w), free(t);
        int shown = 0;
        for (int k = 1; k < g->nb; k++) {
            if (shown++ == 3 && !all) {
                char *m = xasprintf("and %d more variants (--all lists them)", g->nb - k);
                wrap(out, "    also:    ", m, 13);
                free(m);
                break;
            }
            struct block *b = &a->blocks[g->blocks[k]];
            struct finding *e = &a->f[b->head];
            char *bw = who_counted(a, &b->p);
            char *t2 = strcmp(e->fix, f->fix) == 0 ? xasprintf("%s: %s", bw, e->cause)
                                                  : xasprintf("%s: %s; fix: %s", bw, e->cause, e->fix);
            wrap(out, "    also:    ", t2, 13);
            free(bw), free(t2);
        }
    }
    wrap(out, "    fix:     ", f->fix, 13);
}

void print_text(struct analysis *a, FILE *out, bool verbose, bool all)
{
    size_t n = a->s->n, shown = 0, quiet = 0;
    all |= verbose;
    for (size_t i = 0; i < n; i++)
        shown += in_table(a, i);
    quiet = n - shown;
    int problems = analysis_problems(a);
    char head[256];
    if (n == 1)
        snprintf(head, sizeof head, "%s (%s) on %s, %s", a->p[0].label, a->p[0].prog, a->s->t[0].host,
                 a->s->t[0].file);
    else
        snprintf(head, sizeof head, "%zu processes on %d host%s", n, a->nhosts, a->nhosts > 1 ? "s" : "");
    fprintf(out, "convguard report: %s: ", head);
    if (problems)
        fprintf(out, "%d problem%s\n", problems, problems > 1 ? "s" : "");
    else
        fprintf(out, "no problem found\n");

    bool blocks = verbose || shown <= 3;
    if (blocks) {
        for (size_t i = 0; i < n; i++)
            if (in_table(a, i) || verbose)
                process_block(a, out, i, verbose);
    } else if (shown <= TABLE_MAX || all) {
        for (size_t i = 0; i < n; i++)
            if (in_table(a, i))
                process_line(a, out, i);
    } else {
        /* processes alike share a line, the most common first */
        int *order = malloc((size_t)(a->npgroups ? a->npgroups : 1) * sizeof *order);
        for (int g = 0; g < a->npgroups; g++)
            order[g] = g;
        for (int x = 1; x < a->npgroups; x++) /* insertion sort: stable, by size */
            for (int y = x; y > 0 && a->pgroups[order[y]].p.n > a->pgroups[order[y - 1]].p.n; y--) {
                int z = order[y];
                order[y] = order[y - 1], order[y - 1] = z;
            }
        for (int g = 0; g < a->npgroups; g++) {
            struct pgroup *pg = &a->pgroups[order[g]];
            if (g == 12) {
                size_t rest = 0;
                for (int k = g; k < a->npgroups; k++)
                    rest += a->pgroups[order[k]].p.n;
                fprintf(out, "  (%d more kinds of process, %zu processes: --all lists every process)\n",
                        a->npgroups - g, rest);
                break;
            }
            char *w = who_counted(a, &pg->p), *t = xasprintf("%s: %s", w, pg->line);
            wrap(out, "  ", t, 6);
            free(w), free(t);
        }
        free(order);
    }
    if (quiet && !verbose)
        fprintf(out, "  (%zu more process%s loaded no CUDA library and had no failure)\n", quiet, quiet > 1 ? "es" : "");
    if (n > 1)
        first_failure_text(a, out);
    if (json_array_size(a->incons)) {
        fprintf(out, "inconsistent across processes:\n");
        for (size_t i = 0; i < json_array_size(a->incons); i++)
            wrap(out, "  ", jstr(json_array_get(a->incons, i), "text", "?"), 4);
    }
    for (int g = 0; g < a->ngroups; g++)
        finding_group(a, out, &a->groups[g], blocks, all);
    trace_notes(a, out, all);
}

/* ---- JSON (schema: docs/report-json.md) */
static json_t *read_stats_json(struct trace *t)
{
    json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I}", "lines", (json_int_t)t->st.lines,
                          "events", (json_int_t)t->st.events, "bad_lines", (json_int_t)t->st.bad_lines, "huge_lines",
                          (json_int_t)t->st.huge_lines, "cut_lines", (json_int_t)t->st.cut_lines, "fixed_utf8",
                          (json_int_t)t->st.fixed_utf8, "seq_gaps", (json_int_t)t->st.seq_gaps, "last_line_cut",
                          t->st.last_line_cut, "elided", (json_int_t)t->st.elided);
    if (t->elided)
        json_object_set(j, "elided_by_event", t->elided);
    return j;
}

static json_t *int_or_null(long long v) { return v >= 0 ? json_integer(v) : json_null(); }

static json_t *procs_json(const struct procs *p)
{
    json_t *j = json_array();
    for (size_t k = 0; k < p->n; k++)
        json_array_append_new(j, json_integer((json_int_t)p->i[k]));
    return j;
}

/* capture_json (capture.c) adds what was captured of stderr to a report
 * document; here it is given one process at a time (a set of one) or the
 * findings alone, as the document is written piece by piece. */
static void add_capture_process(json_t *p, struct trace_set *s, size_t i)
{
    struct trace_set one = {.t = &s->t[i], .n = 1};
    json_t *doc = json_pack("{s:[O]}", "processes", p);
    capture_json(doc, &one);
    json_decref(doc);
}

static void add_capture_findings(json_t *finds, struct trace_set *s)
{
    json_t *doc = json_pack("{s:[], s:O}", "processes", "findings", finds);
    capture_json(doc, s);
    json_decref(doc);
}

/* One element of "processes" */
static json_t *process_json(struct analysis *a, size_t i)
{
    {
        struct trace *t = &a->s->t[i];
        struct proc_sum *p = &a->p[i];
        json_t *libs = json_array(), *fails = json_array();
        for (size_t k = 0; k < json_array_size(t->events); k++) {
            json_t *e = json_array_get(t->events, k);
            if (strcmp(jstr(e, "ev", ""), "lib") == 0)
                json_array_append_new(libs, json_pack("{s:s, s:s, s:s, s:o, s:o}", "path", jstr(e, "path", "?"),
                                                      "soname", jstr(e, "soname", "?"), "family", jstr(e, "family", "?"),
                                                      "version", int_or_null(jint(e, "version", -1)),
                                                      "cuda_built_for", int_or_null(jint(e, "cuda_built_for", -1))));
            if (is_failure_event(t, k)) {
                char *d = describe_event(e);
                json_array_append_new(fails, json_pack("{s:I, s:f, s:s, s:s}", "seq", (json_int_t)jint(e, "seq", -1),
                                                       "t", jnum(e, "t", 0), "ev", jstr(e, "ev", "?"), "text", d));
                free(d);
            }
        }
        json_t *ids = json_array();
        for (size_t k = p->first_f >= 0 ? (size_t)p->first_f : a->nf; k < a->nf && a->f[k].ti == i; k++)
            json_array_append_new(ids, json_string(a->f[k].r->id));
        json_t *j = json_pack(
            "{s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:O, s:f, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
            "file", t->file, "label", p->label, "program", p->prog, "pid", int_or_null(t->pid), "host", t->host,
            "rank", int_or_null(t->rank), "ppid", int_or_null(t->ppid), "parent",
            t->parent >= 0 ? json_integer(t->parent) : json_null(), "argv", jget(t->start, "argv") ?: json_null(),
            "wall_time", t->wall, "exited", t->exit != NULL, "cudnn_version", int_or_null(p->cudnn_ver),
            "cudart_version", int_or_null(p->cudart_ver), "driver_version", int_or_null(p->driver_ver), "libs", libs,
            "failures", fails, "rules", ids, "read", read_stats_json(t));
        add_capture_process(j, a->s, i);
        return j;
    }
}

/* Everything but "processes", in the order of the document */
static json_t *rest_json(struct analysis *a)
{
    json_t *finds = json_array();
    /* findings: one per block (rule, cause, fix), a group's blocks together */
    json_t *groups = json_array();
    for (int g = 0; g < a->ngroups; g++) {
        struct fgroup *G = &a->groups[g];
        json_t *fl = json_array();
        for (int k = 0; k < G->nb; k++) {
            struct block *b = &a->blocks[G->blocks[k]];
            struct finding *f = &a->f[b->head];
            char *who = who_text(a, &b->p);
            json_array_append_new(fl, json_integer((json_int_t)json_array_size(finds)));
            json_array_append_new(finds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:O, s:I, s:s, "
                                                   "s:i}",
                                                   "rule", f->r->id, "layer", f->r->layer, "severity", f->r->severity,
                                                   "title", f->title, "symptom", f->symptom, "seen", f->seen, "cause",
                                                   f->cause, "fix", f->fix, "processes", procs_json(&b->p), "seq",
                                                   f->ev ? json_integer(jint(f->ev, "seq", -1)) : json_null(), "facts",
                                                   f->vars, "count", (json_int_t)b->p.n, "who", who, "group", g));
            json_object_set_new(json_array_get(finds, json_array_size(finds) - 1), "driver_said",
                                f->driver ? json_string(f->driver) : json_null());
            free(who);
        }
        struct finding *f = &a->f[a->blocks[G->blocks[0]].head];
        char *who = who_text(a, &G->p);
        json_array_append_new(groups, json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:o}", "rule", f->r->id, "layer",
                                                f->r->layer, "severity", f->r->severity, "title", f->title, "count",
                                                (json_int_t)G->p.n, "who", who, "processes", procs_json(&G->p),
                                                "findings", fl));
        free(who);
    }
    json_t *pgroups = json_array();
    for (int g = 0; g < a->npgroups; g++) {
        struct pgroup *pg = &a->pgroups[g];
        char *who = who_text(a, &pg->p);
        json_array_append_new(pgroups, json_pack("{s:s, s:I, s:s, s:o}", "line", pg->line, "count",
                                                 (json_int_t)pg->p.n, "who", who, "processes", procs_json(&pg->p)));
        free(who);
    }
    /* "o" for unreadable: a new empty array must not get a second reference (found by tests/fuzz/fuzz_reader) */
    add_capture_findings(finds, a->s);
    return json_pack("{s:o, s:o, s:o, s:o, s:O, s:o}", "findings", finds, "groups", groups, "process_groups", pgroups,
                     "first_failure", first_failure_json(a), "inconsistencies", a->incons, "unreadable",
                     a->s->unreadable ? json_incref(a->s->unreadable) : json_array());
}

json_t *analysis_json(struct analysis *a)
{
    json_t *procs = json_array();
    for (size_t i = 0; i < a->s->n; i++)
        json_array_append_new(procs, process_json(a, i));
    json_t *j = json_pack("{s:i, s:i, s:o}", "convguard_report", 1, "problems", analysis_problems(a), "processes",
                          procs);
    json_t *rest = rest_json(a);
    json_object_update(j, rest);
    json_decref(rest);
    return j;
}

/* `v` as JSON_INDENT(2) writes it `depth` levels down */
static void dump_at(FILE *out, json_t *v, int depth)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
    for (const char *c = s ? s : "null"; *c; c++) {
        fputc(*c, out);
        if (*c == '\n')
            fprintf(out, "%*s", 2 * depth, "");
    }
    free(s);
}

/* The same document as analysis_json, written as it is built: one process
 * at a time, so that the output is never all in memory. */
void analysis_json_write(struct analysis *a, FILE *out)
{
    fprintf(out, "{\n  \"convguard_report\": 1,\n  \"problems\": %d,\n  \"processes\": [", analysis_problems(a));
    for (size_t i = 0; i < a->s->n; i++) {
        json_t *p = process_json(a, i);
        fputs(i ? ",\n    " : "\n    ", out);
        dump_at(out, p, 2);
        json_decref(p);
    }
    fputs(a->s->n ? "\n  ]" : "]", out);
    json_t *rest = rest_json(a);
    const char *k;
    json_t *v;
    json_object_foreach(rest, k, v) {
        fprintf(out, ",\n  \"%s\": ", k);
        dump_at(out, v, 1);
    }
    json_decref(rest);
    fputs("\n}\n", out);
}

/* ---- the command */
static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard report [--json] [--html FILE] [--all] [-v] [PATH...]\n"
               "  PATH: trace files (*.jsonl) or directories of them (several processes, ranks, hosts);\n"
               "        none: $CONVGUARD_DIR, else ./convguard-logs (where `convguard run` writes)\n"
               "  --all: one line per process, every variant and note (alike processes share a line otherwise)\n"
               "  exit status: 0 no problem found, 1 problems found, 2 usage or I/O error\n");
    return rc;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"html", required_argument, 0, 'H'},
                                             {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'},
                                             {"all", no_argument, 0, 'a'},
                                             {0, 0, 0, 0}};
    bool as_json = false, verbose = false, all = false;
    const char *html = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jH:vha", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = true; break;
        case 'H': html = optarg; break;
        case 'v': verbose = true; break;
        case 'a': all = true; break;
        case 'h': return usage(stdout, 0);
        default: return usage(stderr, 2);
        }
    }
    char *dflt[2] = {NULL, NULL};
    if (optind >= argc) {
        const char *d = getenv("CONVGUARD_DIR");
        dflt[0] = (char *)(d && *d ? d : "./convguard-logs");
        argv = dflt;
        argc = 1;
        optind = 0;
    }
    struct trace_set s = {0};
    rules_keep_events();
    for (int i = optind; i < argc; i++)
        trace_set_add(&s, argv[i]);
    if (s.n == 0) {
        fprintf(stderr, "convguard report: no readable trace in");
        for (int i = optind; i < argc; i++)
            fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
        for (size_t i = 0; i < json_array_size(s.unreadable); i++)
            fprintf(stderr, "  %s: %s\n", jstr(json_array_get(s.unreadable, i), "path", "?"),
                    jstr(json_array_get(s.unreadable, i), "error", "?"));
        trace_set_free(&s);
        return 2;
    }
    trace_set_link(&s);
    capture_attach(&s, argv + optind, argc - optind, 0);
    struct analysis *a = analyse(&s);
    if (as_json) {
        analysis_json_write(a, stdout);
    } else {
        print_text(a, stdout, verbose, all);
    }
    int rc = analysis_problems(a) ? 1 : 0;
    if (html && write_html(a, html) != 0) {
        perror(html);
        rc = 2;
    }
    analysis_free(a);
    trace_set_free(&s);
    return rc;
}

int report_recent(const char *dir, double since, FILE *out, bool force)
{
    struct trace_set s = {0};
    rules_keep_events();
    trace_set_add(&s, dir);
    trace_set_keep_since(&s, since);
    if (s.n == 0) {
        /* only a process that touched a CUDA library or ran a framework makes a file */
        (void)force;
        fprintf(out, "convguard: no process of this run loaded a CUDA library or a deep-learning framework: the "
                     "GPU was never used (no trace in %s; a static or setuid program is not traced either)\n",
                dir);
        trace_set_free(&s);
        return -1;
    }
    trace_set_link(&s);
    capture_attach(&s, (char *[]){(char *)dir}, 1, since);
    struct analysis *a = analyse(&s);
    int problems = analysis_problems(a);
    if (problems || force)
        print_text(a, out, false, false);
    analysis_free(a);
    trace_set_free(&s);
    return problems;
}
