/* versions.c - versions belong to files: each cuDNN file's own
 * version, the copies that LD_LIBRARY_PATH shadowed, and one version of
 * cuDNN split over two folders. */
#include "rules/match.h"
#include "cudnn_version.h" /* the one encoder, the shim's too */

/* cuDNN's dispatcher probes "<part>.so.<major>.<minor>.<patch>" of its own
 * version before "<part>.so.<major>": the names it asked say which version
 * it is, whatever the parts it then found answer to cudnnGetVersion. */
long long cudnn_version_from_probes(struct trace *t, const char *caller)
{
    for (size_t i = 0; caller && i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (!is_ev(e, "dlopen") || strcmp(jstr(e, "caller", ""), caller) != 0)
            continue;
        const char *name = base_name(jstr(e, "name", ""));
        const char *so = strncmp(name, "libcudnn", 8) == 0 ? strstr(name, ".so.") : NULL;
        long long v = so ? cg_cudnn_version_parse(so + 4) : -1;
        if (v > 0)
            return v;
        json_t *probes = jget(e, "benign_probes");
        for (size_t k = 0; k < json_array_size(probes); k++) {
            const char *pn = base_name(json_string_value(json_array_get(probes, k)));
            so = pn && strncmp(pn, "libcudnn", 8) == 0 ? strstr(pn, ".so.") : NULL;
            v = so ? cg_cudnn_version_parse(so + 4) : -1;
            if (v > 0)
                return v;
        }
    }
    return -1;
}

long long cudnn_file_version(struct trace *t, const char *path)
{
    json_t *l = lib_event(t, path);
    long long v = jint(l, "version", -1);
    if (v > 0)
        return v;
    if (l && (v = cg_cudnn_version_parse(jstr(l, "file_version", ""))) > 0)
        return v;
    return cudnn_version_from_probes(t, path);
}

/* ---- a copy in LD_LIBRARY_PATH won over the framework's own */
bool m_shadowed(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    const char *fam = jstr(ev, "family", "");
    json_t *sh = json_array_get(jget(ev, "shadowed"), 0);
    if (!sh || (strcmp(fam, "cudnn") != 0 && strcmp(fam, "cudart") != 0 && strcmp(fam, "other") != 0))
        return false;
    const char *path = jstr(ev, "path", "?"), *other = jstr(sh, "path", "?");
    char d[4096], od[4096], v1[32], v2[32];
    dir_name(path, d, sizeof d);
    dir_name(other, od, sizeof od);
    bool cudnn = strcmp(fam, "cudnn") == 0;
    long long va = cudnn ? cudnn_file_version(t, path) : jint(ev, "version", -1);
    json_t *ol = lib_event(t, other);
    long long vb = cudnn && ol ? cudnn_file_version(t, other) : jint(ol, "version", -1);
    set_own(vars, "ver", va > 0 ? xasprintf(" (%s)", cudnn ? fmt_cudnn_ver(va, v1, sizeof v1)
                                                           : fmt_cuda_ver(va, v1, sizeof v1))
                                : xstrdup(""));
    set_own(vars, "other_ver", vb > 0 ? xasprintf(" (%s)", cudnn ? fmt_cudnn_ver(vb, v2, sizeof v2)
                                                                 : fmt_cuda_ver(vb, v2, sizeof v2))
                                      : xstrdup(""));
    set_str(vars, "dir", d);
    set_str(vars, "other", other);
    set_str(vars, "other_dir", od);
    const char *needer = jstr(ev, "needed_by", NULL);
    set_str(vars, "asker", needer ? base_name(needer) : "the library that loaded it");
    set_str(vars, "llp", llp_of(t) ? llp_of(t) : "");
    set_own(vars, "seen", xasprintf("#%lld lib %s, found in LD_LIBRARY_PATH; %s not used", jint(ev, "seq", -1), path,
                                    other));
    return true;
}

/* ---- one cuDNN version, its parts from two folders */
struct part_dirs {
    char dir[2][4096];
    struct sbuf names[2];
    long long ver;
    bool same;
    int ndirs;
};

static void collect_parts(struct trace *t, struct part_dirs *p)
{
    memset(p, 0, sizeof *p);
    p->same = true;
    p->ver = -1;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (!is_ev(e, "lib") || strcmp(jstr(e, "family", ""), "cudnn") != 0)
            continue;
        const char *path = jstr(e, "path", "?");
        char d[4096];
        /* the folder the file really is in, where a link led elsewhere */
        if (jget(e, "real_dir"))
            snprintf(d, sizeof d, "%s", jstr(e, "real_dir", ""));
        else
            dir_name(path, d, sizeof d);
        int k = 0;
        while (k < p->ndirs && strcmp(p->dir[k], d) != 0)
            k++;
        if (k == p->ndirs) {
            if (k == 2) {
                p->ndirs = 3; /* three folders: not this rule's case */
                return;
            }
            snprintf(p->dir[k], sizeof p->dir[k], "%s", d);
            p->ndirs++;
        }
        sb_printf(&p->names[k], "%s%s", p->names[k].len ? ", " : "", base_name(path));
        /* a part whose version is not known tells nothing (whether the
         * versions differ is diagnose.c's: the verdict's `parts`) */
        long long v = cudnn_file_version(t, path);
        if (v > 0 && p->ver < 0)
            p->ver = v;
        else if (v > 0 && v != p->ver)
            p->same = false;
    }
}

bool m_parts_split(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    struct part_dirs p;
    collect_parts(t, &p);
    /* one version (the pattern's parts=one_version, analysis/diagnose.c)
     * in exactly two folders: the texts name both */
    bool ok = p.ndirs == 2 && p.same && p.ver > 0;
    if (ok) {
        /* the partial copy: the folder LD_LIBRARY_PATH put first, else the dispatcher's */
        const char *llp = llp_of(t);
        int partial = dir_in_path_list(p.dir[1], llp) && !dir_in_path_list(p.dir[0], llp) ? 1 : 0;
        char v[32];
        set_str(vars, "version", fmt_cudnn_ver(p.ver, v, sizeof v));
        set_str(vars, "partial_dir", p.dir[partial]);
        set_str(vars, "partial_has", p.names[partial].s ? p.names[partial].s : "");
        set_str(vars, "other_dir", p.dir[!partial]);
        set_str(vars, "missing", p.names[!partial].s ? p.names[!partial].s : "");
        set_own(vars, "llp_note", dir_in_path_list(p.dir[partial], llp)
                                      ? xasprintf(" (%s is in LD_LIBRARY_PATH)", p.dir[partial])
                                      : xstrdup(""));
        set_own(vars, "fix_first", dir_in_path_list(p.dir[partial], llp)
                                       ? xasprintf("take %s out of LD_LIBRARY_PATH", p.dir[partial])
                                       : xasprintf("remove the partial copy in %s", p.dir[partial]));
    }
    free(p.names[0].s);
    free(p.names[1].s);
    return ok;
}
