/* copies.c - the match functions of the versions-and-copies rows of
 * rules.def: cuDNN's parts of two versions, a cuDNN major built for another
 * CUDA, several copies of a library in one process, a file replaced on disk. */
#include "rules/match.h"

/* The version a library path was recorded with; for the cuDNN dispatcher
 * (never asked) the version of a cuDNN part mapped from the same folder. */
static long long version_of_path(struct trace *t, const char *path)
{
    long long own = cudnn_file_version(t, path);
    if (own > 0)
        return own;
    char want[4096], d[4096];
    dir_name(path, want, sizeof want);
    long long same_dir = -1;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (strcmp(jstr(e, "ev", ""), "lib") != 0 || jint(e, "version", -1) < 0)
            continue;
        const char *p = jstr(e, "path", "");
        if (strcmp(p, path) == 0)
            return jint(e, "version", -1);
        if (same_dir < 0 && strcmp(jstr(e, "family", ""), "cudnn") == 0 && strcmp(dir_name(p, d, sizeof d), want) == 0)
            same_dir = jint(e, "version", -1);
    }
    return same_dir;
}

/* " (9.14.0), a system package's file,": the file's version and whose file it is (diagnose.c's origin;
 * nothing for a copy in a folder of its own, which the path says) */
static char *ver_note(struct trace *t, const char *path)
{
    char v[32];
    long long ver = version_of_path(t, path);
    const char *o = jstr(lib_event(t, path), "origin", "copy");
    const char *whose = strcmp(o, "copy") == 0 ? NULL : jstr(lib_event(t, path), "origin_words", NULL);
    char *vs = ver > 0 ? xasprintf(" (%s)", fmt_cudnn_ver(ver, v, sizeof v)) : xstrdup("");
    if (!whose)
        return vs;
    char *r = xasprintf("%s, %s file,", vs, whose);
    free(vs);
    return r;
}

static void llp_facts(struct trace *t, const char *other_path, const char *keep_path, json_t *vars)
{
    char d[4096], k[4096];
    dir_name(other_path, d, sizeof d);
    dir_name(keep_path, k, sizeof k);
    const char *llp = llp_of(t);
    if (dir_in_path_list(d, llp)) {
        set_own(vars, "llp_note", xasprintf(": %s is in LD_LIBRARY_PATH, which the loader searches before a "
                                            "library's own RUNPATH", d));
        set_own(vars, "fix_first", xasprintf("take %s out of LD_LIBRARY_PATH (now %s)", d, llp));
    } else if (dir_in_path_list(k, llp)) {
        /* a partial copy first in LD_LIBRARY_PATH: what it lacks was found by name elsewhere */
        set_own(vars, "llp_note", xasprintf(": %s, first in LD_LIBRARY_PATH, holds a copy of cuDNN without %s, so "
                                            "the loader found that part by its name in %s", k, base_name(other_path), d));
        set_own(vars, "fix_first", xasprintf("take %s out of LD_LIBRARY_PATH (now %s), so that the framework's own "
                                             "cuDNN serves every part, or complete that copy with the %s of its own "
                                             "version", k, llp, base_name(other_path)));
    } else {
        set_str(vars, "llp_note", "");
        set_own(vars, "fix_first", xasprintf("put every libcudnn*.so file of one version in %s and remove the "
                                             "other copy from the loader's search (%s)", k, d));
    }
}

bool m_sublib_mismatch(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    const char *disp = jstr(ev, "dispatcher", "?"), *sub = jstr(ev, "sublib", "?");
    set_own(vars, "sub_ver", ver_note(t, sub));
    /* the dispatcher's own version, never the one its borrowed part answers */
    long long dv = cudnn_file_version(t, disp);
    char v[32];
    set_own(vars, "disp_ver", dv > 0 ? xasprintf(" (%s)", fmt_cudnn_ver(dv, v, sizeof v)) : xstrdup(""));
    llp_facts(t, sub, disp, vars);
    char d[4096];
    dir_name(sub, d, sizeof d);
    if (system_lib_dir(d)) {
        set_own(vars, "owner_note", xasprintf("; %s is a system folder: that copy was installed by the system's "
                                              "package manager (`dpkg -S %s` names the package: libcudnn8, "
                                              "libcudnn9-cuda-12, ...)",
                                              d, sub));
        set_own(vars, "pkg_fix", xasprintf(": `sudo apt-get remove --allow-change-held-packages $(dpkg -S %s | cut "
                                           "-d: -f1)`",
                                           sub));
    } else {
        set_str(vars, "owner_note", "");
        set_str(vars, "pkg_fix", "");
    }
    return true;
}

bool m_major_mismatch(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    long long built = jint(ev, "cudnn_built_for", 0) / 1000;
    set_int(vars, "rt_major", jint(ev, "cudart_version", 0) / 1000);
    set_int(vars, "built_major", built);
    /* the loads of CUDA libraries of the other major that failed because of it */
    struct sbuf b = {0};
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".so.%lld", built % 1000);
    for (size_t i = 0; i < json_array_size(t->events) && b.len < 200; i++) {
        json_t *e = json_array_get(t->events, i);
        const char *n = base_name(jstr(e, "name", ""));
        if (pattern_match("dlopen:ok=false", e) && is_failure_event(t, i) && strstr(n, suffix))
            sb_printf(&b, "%s%s", b.len ? ", " : "", n);
    }
    set_own(vars, "load_note", b.len ? xasprintf("; so it asks for CUDA %lld libraries this machine lacks (%s)", built,
                                                 b.s)
                                     : xstrdup(""));
    free(b.s);
    return true;
}

/* How a library came in: "by name (libcudnn.so.9) from LD_LIBRARY_PATH". */
static char *how_loaded(struct trace *t, const char *path)
{
    char d[4096];
    dir_name(path, d, sizeof d);
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (strcmp(jstr(e, "ev", ""), "lib") != 0 || strcmp(jstr(e, "path", ""), path) != 0)
            continue;
        const char *via = jstr(e, "via", "?"), *needed = jstr(e, "needed_by", NULL);
        if (needed)
            return xasprintf("as a dependency of %s (#%lld)", base_name(needed), jint(e, "seq", -1));
        if (strchr(via, '/'))
            return xasprintf("by its full path (#%lld)", jint(e, "seq", -1));
        return xasprintf("by name (%s) from %s (#%lld)", via,
                         dir_in_path_list(d, llp_of(t)) ? "LD_LIBRARY_PATH" : "the caller's RUNPATH or ld.so.cache",
                         jint(e, "seq", -1));
    }
    return xstrdup("(how is not recorded)");
}

bool m_copies(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    const char *a = jstr(ev, "path_a", "?"), *b = jstr(ev, "path_b", "?");
    set_own(vars, "ver_a", ver_note(t, a));
    set_own(vars, "ver_b", ver_note(t, b));
    char *ha = how_loaded(t, a), *hb = how_loaded(t, b);
    set_own(vars, "picked", xasprintf("the first came in %s, the second %s", ha, hb));
    free(ha);
    free(hb);
    char da[4096], db[4096];
    dir_name(a, da, sizeof da);
    dir_name(b, db, sizeof db);
    const char *llp = llp_of(t);
    if (dir_in_path_list(db, llp))
        set_own(vars, "fix_first", xasprintf("take %s out of LD_LIBRARY_PATH (now %s)", db, llp));
    else if (dir_in_path_list(da, llp))
        set_own(vars, "fix_first", xasprintf("take %s out of LD_LIBRARY_PATH (now %s)", da, llp));
    else
        set_own(vars, "fix_first", xasprintf("uninstall the copy the program should not use (%s or %s)", a, b));
    return true;
}

bool m_replaced(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    set_str(vars, "how", jtrue(ev, "deleted") ? "deleted" : "replaced");
    return true;
}
