/* loading.c - the match functions of the loading rows of rules.def: a CUDA
 * library that did not load, and why (absent from the folders searched, in a
 * folder not searched for its caller, a dependency missing, a file the loader
 * refused), with what to do about it. */
#include "rules/match.h"

/* What a missing dependency is usually provided by */
static const char *provider_of(const char *dep)
{
    static const struct {
        const char *prefix, *what;
    } deps[] = {
        {"libz.so", "zlib: `sudo apt-get install zlib1g` (Debian/Ubuntu) or `sudo dnf install zlib`"},
        {"libnvrtc", "NVRTC: `pip install nvidia-cuda-nvrtc-cu{cu}` or the CUDA toolkit"},
        {"libcublas", "cuBLAS: `pip install nvidia-cublas-cu{cu}` or the CUDA toolkit"},
        {"libnvJitLink", "nvJitLink: `pip install nvidia-nvjitlink-cu{cu}` or the CUDA toolkit"},
        {"libcuda.so", "the NVIDIA driver"},
    };
    for (size_t i = 0; i < sizeof deps / sizeof deps[0]; i++)
        if (strncmp(base_name(dep), deps[i].prefix, strlen(deps[i].prefix)) == 0)
            return deps[i].what;
    return NULL;
}

/* {major} and {cu}: the major version of the library asked for, of CUDA */
static void major_facts(struct trace *t, json_t *ev, json_t *vars)
{
    const char *so = strstr(base_name(jstr(ev, "name", "?")), ".so.");
    char major[16] = "?";
    /* the major version: from the name asked, else from the asker (libcudnn.so.9 asking libcudnn_cnn.so) */
    const char *caller_so = strstr(base_name(jstr(ev, "caller", "")), ".so.");
    if (so)
        snprintf(major, sizeof major, "%.*s", (int)strcspn(so + 4, "."), so + 4);
    else if (caller_so)
        snprintf(major, sizeof major, "%.*s", (int)strcspn(caller_so + 4, "."), caller_so + 4);
    set_str(vars, "major", major);
    long long cu = cuda_major(t);
    set_int(vars, "cu", cu);
}

/* what the loader's candidates say of the file asked for: the folders
 * searched, other files found there, the very file in folders not searched */
struct candidates_seen {
    struct sbuf searched, elsewhere, unsearched;
    const char *unsearched_dir, *unsearched_src;
};

static void candidate_files(json_t *c, const char *base, bool not_searched, struct candidates_seen *cs)
{
    json_t *files = jget(c, "files");
    for (size_t k = 0; k < json_array_size(files); k++) {
        json_t *f = json_array_get(files, k);
        const char *fn = jstr(f, "name", "");
        const char *path = jstr(f, "path", NULL);
        char *full = path ? xstrdup(path) : xasprintf("%s/%s", jstr(c, "dir", "?"), fn);
        if (not_searched && strcmp(fn, base) == 0) {
            /* the very file, in a folder the loader does not search for this caller */
            if (!cs->unsearched_dir)
                cs->unsearched_dir = jstr(c, "dir", NULL), cs->unsearched_src = jstr(c, "source", "?");
            if (cs->unsearched.len < 300)
                sb_printf(&cs->unsearched, "%s%s", cs->unsearched.len ? ", " : "", full);
        } else if (strcmp(fn, base) != 0 && cs->elsewhere.len <= 300 &&
                   (!cs->elsewhere.len || !strstr(cs->elsewhere.s, full))) {
            sb_printf(&cs->elsewhere, "%s%s", cs->elsewhere.len ? ", " : "; found instead: ", full);
        }
        free(full);
    }
}

static void scan_candidates(json_t *ev, const char *base, struct candidates_seen *cs)
{
    json_t *cand = jget(ev, "candidates");
    int shown = 0;
    for (size_t i = 0; i < json_array_size(cand); i++) {
        json_t *c = json_array_get(cand, i);
        if (jtrue(c, "missing"))
            continue;
        bool not_searched = json_is_false(jget(c, "searched"));
        if (!not_searched && shown++ < 5)
            sb_printf(&cs->searched, "%s%s (%s)", cs->searched.len ? ", " : "", jstr(c, "dir", "?"),
                      jstr(c, "source", "?"));
        candidate_files(c, base, not_searched, cs);
    }
    if (shown > 5)
        sb_printf(&cs->searched, " and %d more", shown - 5);
}

/* absent from the folders searched, present in one not searched for this caller */
static void absent_unsearched_facts(json_t *ev, struct candidates_seen *cs, const char *caller, json_t *vars)
{
    bool own = strcmp(cs->unsearched_src, "caller_dir") == 0;
    const char *rp = jstr(ev, "caller_runpath", jstr(ev, "caller_rpath", NULL));
    const char *searched = cs->searched.len ? cs->searched.s : "?";
    if (own)
        set_own(vars, "why", xasprintf("is in %s's own folder (%s), which the loader does not search for it: %s "
                                       "has %s (searched: %s)",
                                       base_name(caller), cs->unsearched_dir, base_name(caller),
                                       rp ? "a RUNPATH without $ORIGIN" : "no RUNPATH", searched));
    else
        set_own(vars, "why", xasprintf("is in %s (a pip wheel's folder), which is not on this library's search "
                                       "path (searched: %s)",
                                       cs->unsearched_dir, searched));
    set_own(vars, "file_fix",
            own ? xasprintf("add %s to LD_LIBRARY_PATH (or give %s a RUNPATH: `patchelf --set-rpath '$ORIGIN' "
                            "%s`); otherwise ",
                            cs->unsearched_dir, base_name(caller), caller)
                : xasprintf("add it to the search path: `export LD_LIBRARY_PATH=%s:$LD_LIBRARY_PATH`; otherwise ",
                            cs->unsearched_dir));
}

/* absent from every folder; an unversioned name asked, versioned files present: a missing link */
static void absent_facts(const char *base, struct candidates_seen *cs, const char *caller, json_t *vars)
{
    set_own(vars, "why", xasprintf("is in no folder the loader searched (%s)", cs->searched.len ? cs->searched.s : "?"));
    if (!strstr(base, ".so.") && cs->elsewhere.len && strstr(base, ".so")) {
        const char *list = cs->elsewhere.s + strlen("; found instead: ");
        char first[4096], dd[4096];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(list, ","), list);
        set_own(vars, "file_fix", xasprintf("%s asks for the unversioned name %s, which only a development "
                                            "package links: `ln -s %s %s/%s`; otherwise ",
                                            base_name(caller), base, first, dir_name(first, dd, sizeof dd), base));
    }
}

/* the file is there, a library it needs is not */
static void dependency_absent_facts(json_t *ev, const char *named, json_t *vars)
{
    const char *prov = provider_of(named);
    set_own(vars, "why", xasprintf("is there, but a library it needs is missing: %s", named));
    char *pv = prov ? expand(prov, vars, ev) : NULL;
    set_own(vars, "dep_fix", pv ? xasprintf("; %s is %s", named, pv)
                                : xasprintf("; make %s loadable (install it, or add its folder to LD_LIBRARY_PATH)",
                                            named));
    if (pv) {
        set_own(vars, "file_fix", xasprintf("install %s: %s; otherwise ", named, pv));
        set_str(vars, "dep_fix", "");
    }
    free(pv);
}

/* The version the names beside a file give it, as the loader's candidates listed its folder
 * (libcudnn_x.so.9 beside libcudnn_x.so.9.14.0: "9.14.0"); NULL unless exactly one does. */
static const char *sibling_version(json_t *ev, const char *file)
{
    char d[4096];
    dir_name(file, d, sizeof d);
    const char *base = base_name(file), *found = NULL;
    size_t bl = strlen(base);
    json_t *cand = jget(ev, "candidates");
    for (size_t i = 0; i < json_array_size(cand); i++) {
        json_t *c = json_array_get(cand, i), *files = jget(c, "files");
        if (strcmp(jstr(c, "dir", ""), d) != 0)
            continue;
        for (size_t k = 0; k < json_array_size(files); k++) {
            const char *n = jstr(json_array_get(files, k), "name", ""), *v = jstr(json_array_get(files, k), "version", "");
            if (strncmp(n, base, bl) != 0 || n[bl] != '.' || !strchr(v, '.'))
                continue;
            if (found && strcmp(found, v) != 0)
                return NULL;
            found = v;
        }
    }
    return found;
}

/* The loader's candidates listed dir and none of its entries holds base */
static bool dir_lacks(json_t *ev, const char *dir, const char *base)
{
    json_t *cand = jget(ev, "candidates");
    bool listed = false;
    for (size_t i = 0; i < json_array_size(cand); i++) {
        json_t *c = json_array_get(cand, i), *files = jget(c, "files");
        if (strcmp(jstr(c, "dir", ""), dir) != 0 || jtrue(c, "missing"))
            continue;
        listed = true;
        for (size_t k = 0; k < json_array_size(files); k++)
            if (strcmp(jstr(json_array_get(files, k), "name", ""), base) == 0)
                return false;
    }
    return listed;
}

/* A part of cuDNN the loader found by its name in another folder than the part that asked for it:
 * the asker's folder lacks it (a partial copy, often first in LD_LIBRARY_PATH), and the file found
 * belongs to another cuDNN install (the system's).  The cause and the fix are the asker's folder,
 * not that other install.  False when the file is in the asker's own folder. */
static bool part_elsewhere_facts(struct trace *t, json_t *ev, const char *file, const char *err, const char *what,
                                 json_t *vars)
{
    const char *caller = jstr(ev, "caller", NULL);
    if (!caller || !strchr(file, '/') || strncmp(jstr(ev, "stem", ""), "libcudnn", 8) != 0)
        return false;
    char fd[4096], cd[4096], v[32];
    dir_name(file, fd, sizeof fd);
    dir_name(caller, cd, sizeof cd);
    const char *base = base_name(file);
    if (strcmp(fd, cd) == 0 || !dir_lacks(ev, cd, base)) /* a copy in the asker's folder: the file found is the cause */
        return false;
    long long cv = cudnn_file_version(t, caller);
    const char *sv = sibling_version(ev, file), *llp = llp_of(t);
    char *own = cv > 0 ? xasprintf(" (%s)", fmt_cudnn_ver(cv, v, sizeof v)) : xstrdup("");
    bool first_in_llp = dir_in_path_list(cd, llp);
    struct sbuf w = {0};
    sb_printf(&w, "is not in %s beside it%s%s%s: the loader found %s by its name, in %s", cd, cv > 0 ? " (cuDNN " : "",
              cv > 0 ? v : "", cv > 0 ? ")" : "", file, fd);
    if (system_lib_dir(fd))
        sb_printf(&w, ", a system folder (the system package's cuDNN%s%s)", sv ? " " : "", sv ? sv : "");
    else if (sv)
        sb_printf(&w, " (cuDNN %s)", sv);
    sb_printf(&w, ", another cuDNN install, and refused it: \"%s\" (%s)", err, what);
    if (first_in_llp)
        sb_printf(&w, "; %s, first in LD_LIBRARY_PATH, holds a copy of cuDNN without %s", cd, base);
    set_own(vars, "why", sb_take(&w));
    if (first_in_llp)
        set_own(vars, "file_fix", xasprintf("take %s out of LD_LIBRARY_PATH (now %s), so that the framework's own "
                                            "cuDNN serves every part, or complete that copy with the %s of its own "
                                            "version%s; leave %s alone: it is the other install's; otherwise ",
                                            cd, llp, base, own, file));
    else
        set_own(vars, "file_fix", xasprintf("put the %s of cuDNN%s in %s, beside the rest of that cuDNN; leave %s "
                                            "alone: it is the other install's; otherwise ",
                                            base, own, cd, file));
    free(own);
    return true;
}

/* the file is there and the loader refused it: it is the cause */
static void refused_facts(struct trace *t, json_t *ev, const char *kind, const char *named, json_t *vars)
{
    static const struct {
        const char *kind, *what;
    } says[] = {{"too_short", "it is empty or truncated"},
                {"bad_elf", "it is not a shared library (damaged, or a text file)"},
                {"wrong_class", "it is built for another architecture (32-bit, or another CPU)"},
                {"undefined_symbol", "it is from another build than the libraries it is loaded with"},
                {"version_not_found", "it was built for a newer C library (glibc) than this system's"},
                {"permission", "the user cannot read it"}};
    const char *what = "the loader refused it";
    for (size_t i = 0; i < sizeof says / sizeof says[0]; i++)
        if (strcmp(kind, says[i].kind) == 0)
            what = says[i].what;
    const char *err = jstr(ev, "error", "");
    const char *file = *named && strchr(named, '/') ? named : jstr(ev, "name", "?");
    long long size = jint(ev, "error_file_size", -1);
    char sz[32], dd[4096];
    const char *colon = strstr(err, ": ");
    if (part_elsewhere_facts(t, ev, file, colon ? colon + 2 : err, what, vars))
        return;
    set_own(vars, "why", xasprintf("was found, but the loader refused %s%s%s%s: \"%s\" (%s)", file,
                                   size >= 0 ? " (" : "", size >= 0 ? fmt_size(size, sz, sizeof sz) : "",
                                   size >= 0 ? ")" : "", colon ? colon + 2 : err, what));
    const char *dir = dir_name(file, dd, sizeof dd);
    if (strchr(file, '/') && dir_in_path_list(dir, llp_of(t)))
        set_own(vars, "file_fix", xasprintf("take %s out of LD_LIBRARY_PATH (it holds %s, found before the good "
                                            "copy), or remove or replace that file; otherwise ",
                                            dir, base_name(file)));
    else
        set_own(vars, "file_fix", xasprintf("remove or replace %s (%s); otherwise ", file, what));
}

static void add_load_facts(struct trace *t, json_t *ev, json_t *vars)
{
    const char *base = base_name(jstr(ev, "name", "?"));
    major_facts(t, ev, vars);
    struct candidates_seen cs = {0};
    scan_candidates(ev, base, &cs);
    const char *named;
    char nbuf[1024];
    const char *kind = load_error_kind(ev, &named, nbuf, sizeof nbuf);
    set_str(vars, "dep_fix", "");
    set_str(vars, "file_fix", "");
    const char *caller = jstr(ev, "caller", "(main program)");
    char d[4096];
    if (strcmp(kind, "absent") == 0 && cs.unsearched_dir)
        absent_unsearched_facts(ev, &cs, caller, vars);
    else if (strcmp(kind, "absent") == 0)
        absent_facts(base, &cs, caller, vars);
    else if (strcmp(kind, "dependency_absent") == 0)
        dependency_absent_facts(ev, named, vars);
    else
        refused_facts(t, ev, kind, named, vars);
    if (cs.unsearched.len && strcmp(kind, "absent") != 0)
        sb_printf(&cs.elsewhere, "%s%s", cs.elsewhere.len ? ", " : "; found instead: ", cs.unsearched.s);
    free(sb_take(&cs.searched));
    free(sb_take(&cs.unsearched));
    set_own(vars, "elsewhere", sb_take(&cs.elsewhere));
    set_str(vars, "caller_base", base_name(caller));
    set_str(vars, "caller_dir", dir_name(caller, d, sizeof d));
    set_own(vars, "asked_by", strcmp(caller, "(main program)") ? xasprintf(" (asked for by %s)", base_name(caller))
                                                               : xstrdup(""));
}

/* The process died while loading this library (a crash inside ld.so): its
 * earlier probes were not "unresolved", the load was still going on. */
static bool crashed_loading(struct trace *t, const char *stem)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        const char *n = jstr(e, "loading.name", NULL);
        if (is_ev(e, "crash") && n) {
            size_t k = strlen(stem);
            const char *b = base_name(n);
            if (k && strncmp(b, stem, k) == 0)
                return true;
        }
    }
    return false;
}

bool m_load_failed(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    long i = event_index(t, ev);
    if (i < 0 || load_resolved(t, (size_t)i))
        return false;
    if (load_failure_absent(ev) && crashed_loading(t, jstr(ev, "stem", "")))
        return false;
    /* cuDNN tries name.so.9.19.0, .so.9.19, then .so.9: speak of the last;
     * but a file the loader refused is the cause, whatever was tried after */
    bool absent = load_failure_absent(ev);
    for (size_t j = 0; j < json_array_size(t->events); j++) {
        json_t *e = json_array_get(t->events, j);
        if (e == ev || !pattern_match("dlopen:ok=false", e) || strcmp(jstr(e, "stem", ""), jstr(ev, "stem", "?")) != 0 ||
            strcmp(jstr(e, "caller", ""), jstr(ev, "caller", "")) != 0)
            continue;
        bool e_absent = load_failure_absent(e);
        /* of failures of one kind, the last one that carries a version (.so.9, not the bare .so) */
        bool e_versioned = strstr(base_name(jstr(e, "name", "")), ".so.") != NULL;
        bool versioned = strstr(base_name(jstr(ev, "name", "")), ".so.") != NULL;
        if ((absent && !e_absent) ||
            (absent == e_absent && (e_versioned > versioned || (e_versioned == versioned && j > (size_t)i))))
            return false;
    }
    add_load_facts(t, ev, vars);
    return true;
}

bool m_load_other(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    const char *stem = jstr(ev, "stem", "");
    if (strcmp(stem, "libcuda.so") == 0 || strncmp(stem, "libcudart", 9) == 0 || strncmp(stem, "libcudnn", 8) == 0)
        return false;
    /* a load of a non-CUDA name shows up only when it brought one in */
    static const char *const fam[] = {"libcu", "libnv", "libnccl"};
    bool cuda = false;
    for (size_t k = 0; k < sizeof fam / sizeof fam[0]; k++)
        cuda |= strncmp(stem, fam[k], strlen(fam[k])) == 0;
    return cuda && m_load_failed(s, ti, ev, vars);
}
