/* report.c - turns traces into "what you see -> why -> what to do".
 *
 * The rules live in rules.def; this file only applies them (patterns, the
 * groups that keep one failure to one cause, text expansion) and prints the
 * result as text (report), JSON (--json) or HTML (--html, html.c). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "report.h"

/* ---- patterns: "ev[:cond,cond]|ev2..." (syntax in rules.def) */
static bool value_eq(json_t *v, const char *want)
{
    size_t n = strlen(want);
    if (json_is_string(v)) {
        if (n && want[n - 1] == '*')
            return strncmp(json_string_value(v), want, n - 1) == 0;
        return strcmp(json_string_value(v), want) == 0;
    }
    if (json_is_integer(v)) {
        char *end;
        long long w = strtoll(want, &end, 10);
        return *want && !*end && w == json_integer_value(v);
    }
    if (json_is_true(v))
        return strcmp(want, "true") == 0;
    if (json_is_false(v))
        return strcmp(want, "false") == 0;
    if (json_is_null(v))
        return strcmp(want, "null") == 0;
    return false;
}

static bool cond_match(json_t *ev, const char *c, size_t n)
{
    char buf[256];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, c, n);
    buf[n] = 0;
    char *ne = strstr(buf, "!="), *eq = strchr(buf, '=');
    if (ne) {
        *ne = 0;
        json_t *v = jget(ev, buf);
        return v && !value_eq(v, ne + 2);
    }
    if (eq) {
        *eq = 0;
        return value_eq(jget(ev, buf), eq + 1);
    }
    return jhas(ev, buf);
}

bool pattern_match(const char *pattern, json_t *ev)
{
    const char *name = jstr(ev, "ev", "");
    for (const char *alt = pattern; alt && *alt;) {
        const char *end = strchr(alt, '|');
        size_t len = end ? (size_t)(end - alt) : strlen(alt);
        size_t nlen = strcspn(alt, ":|");
        if (nlen > len)
            nlen = len;
        bool ok = strlen(name) == nlen && strncmp(name, alt, nlen) == 0;
        for (const char *c = alt + nlen + 1; ok && c < alt + len;) {
            size_t clen = strcspn(c, ",|");
            if (c + clen > alt + len)
                clen = (size_t)(alt + len - c);
            ok = cond_match(ev, c, clen);
            c += clen + 1;
        }
        if (ok)
            return true;
        alt = end ? end + 1 : NULL;
    }
    return false;
}

/* ---- texts: "{path[:fmt]}" from vars, then from the event */
static void render(struct sbuf *b, json_t *v, const char *fmt)
{
    char buf[64];
    if (strcmp(fmt, "opt") == 0) {
        if (json_is_string(v))
            sb_add(b, json_string_value(v));
        return;
    }
    /* a number written as a string (a verdict's versions) reads as the number */
    char *end = NULL;
    long long num = json_is_string(v) && *fmt && strcmp(fmt, "base") ? strtoll(json_string_value(v), &end, 10) : 0;
    bool numeric_string = end && end != json_string_value(v) && !*end;
    if (!v || json_is_null(v)) {
        sb_add(b, "?");
    } else if ((json_is_number(v) || numeric_string) && *fmt) {
        long long x = numeric_string ? num : (long long)json_number_value(v);
        if (strcmp(fmt, "size") == 0)
            sb_add(b, fmt_size(x, buf, sizeof buf));
        else if (strcmp(fmt, "mib") == 0)
            sb_printf(b, "%lld", x / (1ll << 20));
        else if (strcmp(fmt, "cudnn") == 0)
            sb_add(b, fmt_cudnn_ver(x, buf, sizeof buf));
        else if (strcmp(fmt, "cuda") == 0)
            sb_add(b, fmt_cuda_ver(x, buf, sizeof buf));
        else
            sb_printf(b, "%lld", x);
    } else if (json_is_string(v)) {
        sb_add(b, strcmp(fmt, "base") == 0 ? base_name(json_string_value(v)) : json_string_value(v));
    } else if (json_is_integer(v)) {
        sb_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        sb_printf(b, "%g", json_real_value(v));
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                sb_add(b, ", ");
            render(b, json_array_get(v, i), fmt);
        }
    } else {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        sb_add(b, s ? s : "?");
        free(s);
    }
}

char *expand(const char *t, json_t *vars, json_t *ev)
{
    struct sbuf b = {0};
    while (*t) {
        const char *o = strchr(t, '{'), *c = o ? strchr(o, '}') : NULL;
        if (!o || !c || c - o > 100) {
            sb_add(&b, t);
            break;
        }
        sb_addn(&b, t, (size_t)(o - t));
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(c - o - 1), o + 1);
        char *colon = strchr(key, ':');
        const char *fmt = "";
        if (colon)
            *colon = 0, fmt = colon + 1;
        json_t *v = jget(vars, key);
        render(&b, v ? v : jget(ev, key), fmt);
        t = c + 1;
    }
    return sb_take(&b);
}

/* ---- failures */
static char *stem_of(const char *name)
{
    const char *b = base_name(name), *so = strstr(b, ".so");
    return so ? xasprintf("%.*s", (int)(so - b) + 3, b) : xstrdup(b);
}

bool load_resolved(struct trace *t, size_t i)
{
    json_t *fail = json_array_get(t->events, i);
    /* only a file that was absent is a probe; a broken one stays a failure */
    if (!load_failure_absent(fail))
        return false;
    const char *stem = jstr(fail, "stem", ""), *name = jstr(fail, "name", "");
    for (size_t j = i + 1; j < json_array_size(t->events); j++) {
        json_t *e = json_array_get(t->events, j);
        if (strcmp(jstr(e, "ev", ""), "dlopen") != 0 || !jtrue(e, "ok"))
            continue;
        char *s = stem_of(jstr(e, "name", ""));
        bool same = strcmp(s, stem) == 0;
        free(s);
        json_t *probes = jget(e, "benign_probes");
        for (size_t k = 0; k < json_array_size(probes) && !same; k++)
            same = strcmp(json_string_value(json_array_get(probes, k)) ?: "", name) == 0;
        if (same)
            return true;
    }
    return false;
}

static const char *failure_text(json_t *ev)
{
    for (size_t i = 0; i < n_failure_texts; i++)
        if (pattern_match(failure_texts[i].pattern, ev))
            return failure_texts[i].text;
    return NULL;
}

bool is_failure_event(struct trace *t, size_t i)
{
    json_t *ev = json_array_get(t->events, i);
    if (!failure_text(ev))
        return false;
    return strcmp(jstr(ev, "ev", ""), "dlopen") != 0 || !load_resolved(t, i);
}

char *describe_event(json_t *ev)
{
    const char *txt = failure_text(ev);
    /* dlerror starts with the name the program passed: say it once */
    json_t *vars = json_object();
    const char *err = jstr(ev, "error", NULL), *name = jstr(ev, "name", "");
    size_t n0 = strlen(name);
    if (err && n0 && strncmp(err, name, n0) == 0 && strncmp(err + n0, ": ", 2) == 0)
        err += n0 + 2;
    if (err)
        json_object_set_new(vars, "error_short", json_string(err));
    char *body = expand(txt ? txt : "{ev}", vars, ev);
    json_decref(vars);
    size_t n = strlen(body);
    while (n && body[n - 1] == ' ')
        body[--n] = 0;
    char *r = xasprintf("#%lld %s", jint(ev, "seq", -1), body);
    free(body);
    return r;
}

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
    a->f = realloc(a->f, (a->nf + 1) * sizeof *a->f);
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
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_failure_event(t, i))
            p->nfail++;
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
static char *lib_short(struct proc_sum *p)
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

/* A process that mapped a library but never used it has no version for it
 * (torchrun's launcher imports torch); when another process used the same
 * file, the unknown version is no inconsistency. */
static bool known_elsewhere(struct analysis *a, size_t ti, bool cudnn)
{
    const char *path = cudnn ? a->p[ti].cudnn_path : a->p[ti].cudart_path;
    for (size_t i = 0; path && i < a->s->n; i++) {
        const char *other = cudnn ? a->p[i].cudnn_path : a->p[i].cudart_path;
        if (i != ti && other && strcmp(other, path) == 0 && (cudnn ? a->p[i].cudnn_ver : a->p[i].cudart_ver) > 0)
            return true;
    }
    return false;
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

static void compare(struct analysis *a, const char *what, key_fn key)
{
    json_t *groups = json_object(); /* value -> [who] */
    for (size_t i = 0; i < a->s->n; i++) {
        char *who = NULL, *v = key(a, i, &who);
        if (v) {
            json_t *l = json_object_get(groups, v);
            if (!l)
                json_object_set_new(groups, v, l = json_array());
            bool dup = false;
            for (size_t k = 0; k < json_array_size(l); k++)
                dup |= strcmp(json_string_value(json_array_get(l, k)), who) == 0;
            if (!dup)
                json_array_append_new(l, json_string(who));
        }
        free(v);
        free(who);
    }
    if (json_object_size(groups) < 2) {
        json_decref(groups);
        return;
    }
    json_t *values = json_array();
    struct sbuf b = {0};
    sb_printf(&b, "%s differs:", what);
    /* the fewest first: the odd one out is what the user wants to see */
    for (size_t want = 1; json_array_size(values) < json_object_size(groups); want++) {
        const char *v;
        json_t *l;
        json_object_foreach(groups, v, l) {
            if (json_array_size(l) != want)
                continue;
            json_array_append_new(values, json_pack("{s:s, s:O}", "value", v, "processes", l));
            sb_printf(&b, "%s %s in ", json_array_size(values) > 1 ? ";" : "", v);
            for (size_t k = 0; k < json_array_size(l); k++) {
                if (k == 6) {
                    sb_printf(&b, " and %zu more", json_array_size(l) - 6);
                    break;
                }
                sb_printf(&b, "%s%s", k ? ", " : "", json_string_value(json_array_get(l, k)));
            }
        }
    }
    char *text = sb_take(&b);
    json_array_append_new(a->incons, json_pack("{s:s, s:s, s:o}", "what", what, "text", text, "values", values));
    free(text);
    json_decref(groups);
}

struct analysis *analyse(struct trace_set *s)
{
    struct analysis *a = calloc(1, sizeof *a);
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
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        a->p[f->ti].nfind++;
        f->block = (int)i;
        for (size_t j = 0; j < i; j++)
            if (a->f[j].r == f->r && strcmp(a->f[j].cause, f->cause) == 0) {
                f->block = a->f[j].block;
                break;
            }
        if (f->block == (int)i)
            a->nblocks++;
    }
    compare(a, "cuDNN", key_cudnn);
    compare(a, "CUDA runtime", key_cudart);
    compare(a, "NVIDIA driver", key_driver);
    return a;
}

int analysis_problems(struct analysis *a) { return a->nblocks + (int)json_array_size(a->incons); }

void analysis_free(struct analysis *a)
{
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        json_decref(f->vars);
        free(f->title), free(f->symptom), free(f->seen), free(f->cause), free(f->fix), free(f->driver);
    }
    for (size_t i = 0; i < a->s->n; i++)
        free(a->p[i].label), free(a->p[i].prog), free(a->p[i].cudnn_mix);
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

static void trace_notes(struct analysis *a, FILE *out)
{
    for (size_t i = 0; i < a->s->n; i++) {
        struct trace *t = &a->s->t[i];
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
        if (!t->start)
            sb_add(&b, ", no start line");
        bool crashed = false;
        for (size_t k = 0; k < json_array_size(t->events); k++)
            crashed |= strcmp(jstr(json_array_get(t->events, k), "ev", ""), "crash") == 0;
        /* The same pid in a later file of the same host is the program it
         * exec'd: the image ended by exec, not by a kill. */
        bool execd = false;
        for (size_t k = 0; k < a->s->n && !t->exit; k++) {
            struct trace *o = &a->s->t[k];
            execd |= k != i && o->pid == t->pid && strcmp(o->host, t->host) == 0 && o->start &&
                     t->start && o->wall >= t->wall;
        }
        if (!t->exit && !crashed && !execd)
            sb_add(&b, ", no exit line (killed, or still running)");
        if (b.len)
            fprintf(out, "note: %s: %s\n", t->file, b.s + 2);
        free(b.s);
    }
    for (size_t i = 0; i < json_array_size(a->s->unreadable); i++) {
        json_t *u = json_array_get(a->s->unreadable, i);
        fprintf(out, "note: %s: %s\n", jstr(u, "path", "?"), jstr(u, "error", "?"));
    }
}

static bool boring(struct analysis *a, size_t i) { return !a->p[i].nlibs && !a->p[i].nfail && !a->p[i].nfind; }

void print_text(struct analysis *a, FILE *out, bool verbose)
{
    size_t n = a->s->n, shown = 0, quiet = 0;
    for (size_t i = 0; i < n; i++)
        shown += !boring(a, i) || n == 1;
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
    for (size_t i = 0; i < n; i++) {
        struct proc_sum *p = &a->p[i];
        if (boring(a, i) && n > 1 && !verbose)
            continue;
        if (!blocks) {
            const char *first = "";
            for (size_t k = 0; k < a->nf; k++)
                if (a->f[k].ti == i) {
                    first = a->f[k].title;
                    break;
                }
            char *libs = lib_short(p);
            fprintf(out, "  %-22s %-22s %s", p->label, p->prog, libs);
            if (p->nfind)
                fprintf(out, "-> %s\n", first);
            else if (p->nfail)
                fprintf(out, "%d failure%s\n", p->nfail, p->nfail > 1 ? "s" : "");
            else
                fprintf(out, "ok\n");
            free(libs);
            continue;
        }
        char *libs = lib_summary(p);
        if (n > 1)
            fprintf(out, "%s  %s  (trace %s)\n", p->label, p->prog, a->s->t[i].file);
        wrap(out, "  libraries: ", libs, 13);
        free(libs);
        if (verbose) {
            json_t *evs = a->s->t[i].events;
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
            json_t *evs = a->s->t[i].events;
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
    if (quiet && !verbose)
        fprintf(out, "  (%zu more process%s loaded no CUDA library and had no failure)\n", quiet, quiet > 1 ? "es" : "");
    if (json_array_size(a->incons)) {
        fprintf(out, "inconsistent across processes:\n");
        for (size_t i = 0; i < json_array_size(a->incons); i++)
            wrap(out, "  ", jstr(json_array_get(a->incons, i), "text", "?"), 4);
    }
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        if (f->block != (int)i)
            continue;
        struct sbuf who = {0};
        int nwho = 0;
        for (size_t j = i; j < a->nf; j++)
            if (a->f[j].block == (int)i && nwho++ < 6)
                sb_printf(&who, "%s%s", who.len ? ", " : "", a->p[a->f[j].ti].label);
        if (nwho > 6)
            sb_printf(&who, " and %d more", nwho - 6);
        char *h = xasprintf("[%s] %s%s%s%s", f->r->layer, f->title, n > 1 ? " (" : "", n > 1 ? who.s : "",
                            n > 1 ? ")" : "");
        wrap(out, "", h, 4);
        free(h);
        free(who.s);
        wrap(out, "    you see: ", f->symptom, 13);
        if (*f->seen && !blocks)
            wrap(out, "    trace:   ", f->seen, 13);
        if (f->driver)
            wrap(out, "    driver:  ", f->driver, 13);
        wrap(out, "    cause:   ", f->cause, 13);
        wrap(out, "    fix:     ", f->fix, 13);
    }
    trace_notes(a, out);
}

/* ---- JSON (schema: docs/report-json.md) */
static json_t *read_stats_json(struct trace *t)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "lines", (json_int_t)t->st.lines, "events",
                     (json_int_t)t->st.events, "bad_lines", (json_int_t)t->st.bad_lines, "huge_lines",
                     (json_int_t)t->st.huge_lines, "cut_lines", (json_int_t)t->st.cut_lines, "fixed_utf8",
                     (json_int_t)t->st.fixed_utf8, "seq_gaps", (json_int_t)t->st.seq_gaps, "last_line_cut",
                     t->st.last_line_cut);
}

static json_t *int_or_null(long long v) { return v >= 0 ? json_integer(v) : json_null(); }

json_t *analysis_json(struct analysis *a)
{
    json_t *procs = json_array(), *finds = json_array();
    for (size_t i = 0; i < a->s->n; i++) {
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
        for (size_t k = 0; k < a->nf; k++)
            if (a->f[k].ti == i)
                json_array_append_new(ids, json_string(a->f[k].r->id));
        json_array_append_new(procs, json_pack(
            "{s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:O, s:f, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
            "file", t->file, "label", p->label, "program", p->prog, "pid", int_or_null(t->pid), "host", t->host,
            "rank", int_or_null(t->rank), "ppid", int_or_null(t->ppid), "parent",
            t->parent >= 0 ? json_integer(t->parent) : json_null(), "argv", jget(t->start, "argv") ?: json_null(),
            "wall_time", t->wall, "exited", t->exit != NULL, "cudnn_version", int_or_null(p->cudnn_ver),
            "cudart_version", int_or_null(p->cudart_ver), "driver_version", int_or_null(p->driver_ver), "libs", libs,
            "failures", fails, "rules", ids, "read", read_stats_json(t)));
    }
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        if (f->block != (int)i)
            continue;
        json_t *who = json_array();
        for (size_t j = i; j < a->nf; j++)
            if (a->f[j].block == (int)i)
                json_array_append_new(who, json_integer((json_int_t)a->f[j].ti));
        json_array_append_new(finds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:O, s:o}",
                                               "rule", f->r->id, "layer", f->r->layer, "severity", f->r->severity,
                                               "title", f->title, "symptom", f->symptom, "seen", f->seen, "cause",
                                               f->cause, "fix", f->fix, "processes", who, "seq",
                                               f->ev ? json_integer(jint(f->ev, "seq", -1)) : json_null(), "facts",
                                               f->vars, "driver_said", f->driver ? json_string(f->driver) : json_null()));
    }
    /* "o" for unreadable: a new empty array must not get a second reference (found by tests/fuzz/fuzz_reader) */
    return json_pack("{s:i, s:i, s:o, s:o, s:O, s:o}", "convguard_report", 1, "problems", analysis_problems(a),
                     "processes", procs, "findings", finds, "inconsistencies", a->incons, "unreadable",
                     a->s->unreadable ? json_incref(a->s->unreadable) : json_array());
}

/* ---- the command */
static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard report [--json] [--html FILE] [-v] [PATH...]\n"
               "  PATH: trace files (*.jsonl) or directories of them (several processes, ranks, hosts);\n"
               "        none: $CONVGUARD_DIR, else ./convguard-logs (where `convguard run` writes)\n"
               "  exit status: 0 no problem found, 1 problems found, 2 usage or I/O error\n");
    return rc;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"html", required_argument, 0, 'H'},
                                             {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    bool as_json = false, verbose = false;
    const char *html = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jH:vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = true; break;
        case 'H': html = optarg; break;
        case 'v': verbose = true; break;
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
        json_t *j = analysis_json(a);
        capture_json(j, &s);
        json_dumpf(j, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(j);
    } else {
        print_text(a, stdout, verbose);
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
        print_text(a, out, false);
    analysis_free(a);
    trace_set_free(&s);
    return problems;
}
