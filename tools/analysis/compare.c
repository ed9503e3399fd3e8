/* compare.c - across processes: the same library loaded from different
 * paths or of different versions (the report's "inconsistencies"). */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

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

/* who has one value: up to 6 by name, else counted (hosts for the driver) */
static char *value_who(struct analysis *a, struct cvalue *c, bool per_host, bool last)
{
    size_t n = json_array_size(c->labels);
    if (n <= 6) {
        struct sbuf w = {0};
        for (size_t k = 0; k < n; k++)
            sb_printf(&w, "%s%s", k ? ", " : "", json_string_value(json_array_get(c->labels, k)));
        return sb_take(&w);
    }
    if (per_host) {
        char *h = hosts_text(a, &c->p);
        char *who = xasprintf("%zu hosts (%s)", n, h);
        free(h);
        return who;
    }
    char *w = who_text(a, &c->p);
    char *who = last ? xasprintf("the %zu others (%s)", n, w) : xasprintf("%zu processes (%s)", n, w);
    free(w);
    return who;
}

/* the values of one library that differ across processes, as an inconsistency */
static void add_inconsistency(struct analysis *a, const char *what, struct cvalue *vals, size_t nv)
{
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
        char *who = value_who(a, c, per_host, shown == nv - 1);
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

/* Each process's value, grouped; who has each is made into labels only when
 * values differ (a job of 100,000 alike processes held a label string and a
 * set entry per process and value here, for nothing). */
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
                *c = (struct cvalue){xstrdup(v), NULL, NULL, {0}};
                json_object_set_new(index, v, json_integer((json_int_t)nv++));
            }
            procs_add(&c->p, i);
        }
        free(v);
        free(who);
    }
    for (size_t k = 0; nv >= 2 && k < nv; k++) { /* who has it, each once */
        struct cvalue *c = &vals[k];
        struct procs all = c->p;
        c->p = (struct procs){0};
        c->labels = json_array(), c->seen = json_object();
        for (size_t j = 0; j < all.n; j++) {
            char *who = NULL, *v = key(a, all.i[j], &who);
            if (!json_object_get(c->seen, who)) {
                json_object_set_new(c->seen, who, json_true());
                json_array_append_new(c->labels, json_string(who));
                procs_add(&c->p, all.i[j]);
            }
            free(v);
            free(who);
        }
        procs_free(&all);
    }
    if (nv >= 2)
        add_inconsistency(a, what, vals, nv);
    for (size_t k = 0; k < nv; k++) {
        free(vals[k].value);
        json_decref(vals[k].labels);
        json_decref(vals[k].seen);
        procs_free(&vals[k].p);
    }
    free(vals);
    json_decref(index);
}

void compare_processes(struct analysis *a)
{
    learn_known_paths(a);
    compare(a, "cuDNN", key_cudnn);
    compare(a, "CUDA runtime", key_cudart);
    compare(a, "NVIDIA driver", key_driver);
    json_decref(known_paths);
    known_paths = NULL;
}
