/* rules.c - the match functions of the loader, device, resource and runtime
 * rows of rules.def (the other rules/ files hold one concern each).
 *
 * A match function gets the process (s->t[ti]) and the event the rule's
 * pattern matched (NULL for rules without a pattern); it says whether the
 * rule applies and adds the facts its texts need to `vars`. */
#include "rules/match.h"

static json_t *events_of(struct trace_set *s, size_t ti) { return s->t[ti].events; }

static long index_of(struct trace *t, json_t *ev)
{
    for (size_t i = 0; i < json_array_size(t->events); i++)
        if (json_array_get(t->events, i) == ev)
            return (long)i;
    return -1;
}

/* The first dlopen failure of `stem` that nothing later resolved. */
static json_t *unresolved_load(struct trace *t, const char *stem)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (pattern_match("dlopen:ok=false", e) && strcmp(jstr(e, "stem", ""), stem) == 0 && !load_resolved(t, i))
            return e;
    }
    return NULL;
}

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

static char *ver_note(struct trace *t, const char *path)
{
    char v[32];
    long long ver = version_of_path(t, path);
    return ver > 0 ? xasprintf(" (%s)", fmt_cudnn_ver(ver, v, sizeof v)) : xstrdup("");
}

static long long own_bytes(json_t *ev, long long own_pid)
{
    json_t *h = jget(ev, "holders");
    for (size_t i = 0; i < json_array_size(h); i++)
        if (jint(json_array_get(h, i), "pid", -1) == own_pid)
            return jint(json_array_get(h, i), "bytes", -1);
    return -1;
}

/* ---- driver and device */
/* a container started without the GPU: no device nodes, no libcuda mounted */
static void container_facts(struct trace *t, json_t *vars)
{
    json_t *ct = jget(t->start, "container");
    if (ct && !jtrue(ct, "nvidia_devices")) {
        set_own(vars, "container_note",
                xasprintf("; this process runs in a %s container that has no NVIDIA device nodes (/dev/nvidia*): "
                          "the container was started without GPU access, or the host has no GPU",
                          jstr(ct, "kind", "?")));
        set_str(vars, "container_fix", "start the container with the GPU: `docker run --gpus all ...` (NVIDIA "
                                       "Container Toolkit; Kubernetes: a `nvidia.com/gpu` resource limit); on the "
                                       "host, ");
        set_str(vars, "container_clause", "");
    } else {
        set_str(vars, "container_note", "");
        set_str(vars, "container_fix", "");
        set_str(vars, "container_clause", "; in a container add `--gpus all` (NVIDIA Container Toolkit)");
    }
}

/* what the trace shows, in order: the failed call, the failed load, the
 * runtime calls that answered "insufficient driver" */
static char *no_driver_seen(struct trace *t, json_t *ev, json_t *drv)
{
    struct sbuf b = {0};
    char *d = describe_event(ev);
    sb_add(&b, d);
    free(d);
    if (drv && drv != ev) {
        d = describe_event(drv);
        sb_printf(&b, "; %s", d);
        free(d);
    }
    int more = 0;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (e != ev && jint(e, "status", 0) == 35 && is_failure_event(t, i) && more++ < 3) {
            d = describe_event(e);
            sb_printf(&b, "; %s", d);
            free(d);
        }
    }
    return sb_take(&b);
}

bool m_no_driver(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    json_t *drv = unresolved_load(t, "libcuda.so");
    bool handle = strcmp(jstr(ev, "ev", ""), "cudnn_handle") == 0;
    if (handle && strcmp(jstr(ev, "driver", ""), "loaded") == 0)
        return false;
    if (!drv && !(handle && (strcmp(jstr(ev, "likely_cause.kind", ""), "no_driver") == 0 ||
                             strcmp(jstr(ev, "driver", ""), "not_loaded") == 0)))
        return false;
    /* cuDNN's own parts did not load: the driver was never asked for (the shim says so first) */
    if (!drv && strcmp(jstr(ev, "likely_cause.kind", ""), "cudnn_library") == 0)
        return false;
    /* a driver was loaded (and maybe unloaded again by a library that refused it): not "no driver" */
    for (size_t i = 0; !drv && i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "lib") && strcmp(jstr(e, "family", ""), "driver") == 0)
            return false;
    }
    if (drv == ev && load_resolved(t, (size_t)index_of(t, ev)))
        return false;
    const char *err = drv ? jstr(drv, "error", "?") : jstr(ev, "likely_cause.detail", "the driver is not loaded");
    const char *colon = drv ? strstr(err, ": ") : NULL;
    set_str(vars, "driver_error", colon ? colon + 2 : err);
    container_facts(t, vars);
    set_own(vars, "seen", no_driver_seen(t, ev, drv));
    return true;
}

/* CUDA stops at the first entry it cannot parse, so "-1,0" hides all too. */
static bool hides_all(const char *v)
{
    while (*v == ' ')
        v++;
    if (!*v)
        return true;
    if (strncmp(v, "GPU-", 4) == 0 || strncmp(v, "MIG-", 4) == 0)
        return false;
    return !(*v >= '0' && *v <= '9');
}

bool m_gpu_hidden(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    const char *cvd = jstr(t->start, "env.CUDA_VISIBLE_DEVICES", NULL);
    const char *nvd = jstr(t->start, "env.NVIDIA_VISIBLE_DEVICES", NULL);
    const char *var = NULL, *val = NULL;
    if (cvd && hides_all(cvd))
        var = "CUDA_VISIBLE_DEVICES", val = cvd;
    else if (nvd && (!*nvd || strcmp(nvd, "none") == 0 || strcmp(nvd, "void") == 0))
        var = "NVIDIA_VISIBLE_DEVICES", val = nvd;
    if (!var)
        return false;
    set_str(vars, "var", var);
    set_str(vars, "value", val);
    set_own(vars, "seen", xasprintf("#%lld start: %s=\"%s\" in the environment", jint(t->start, "seq", 0), var, val));
    return true;
}

/* ---- loading */

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
    long i = index_of(t, ev);
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

/* ---- versions and copies */
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
    } else {
        set_str(vars, "llp_note", "");
        set_own(vars, "fix_first", xasprintf("put every libcudnn*.so file of one version in %s and remove the "
                                             "other copy from the loader's search (%s)", k, d));
    }
}

/* A file in a system folder came from the distribution's package manager:
 * removing the other copy means removing that package. */
static bool system_dir(const char *dir)
{
    static const char *const sys[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu",
                                      "/lib64", "/usr/lib/aarch64-linux-gnu"};
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        if (strcmp(dir, sys[i]) == 0)
            return true;
    return false;
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
    if (system_dir(d)) {
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

/* ---- resource */
bool m_handle_held(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    long long top;
    char *h = holders_text(ev, s->t[ti].pid, &top);
    bool held = strcmp(jstr(ev, "likely_cause.kind", ""), "memory_held_by_other_process") == 0 ||
                (*h && jint(ev, "mem.free", 1ll << 62) < 1024 * MIB && !jget(ev, "likely_cause.kind"));
    if (!held || !*h) {
        if (held)
            set_str(vars, "holders", "another process holds the memory");
        else {
            free(h);
            return false;
        }
    } else {
        set_own(vars, "holders", xasprintf("another process holds the GPU's memory: %s", h));
    }
    free(h);
    if (top >= 0)
        set_int(vars, "top_pid", top);
    else
        set_str(vars, "top_pid", "<pid>");
    return true;
}

bool m_handle_oom(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    bool oom = strcmp(jstr(ev, "likely_cause.kind", ""), "out_of_memory") == 0 ||
               (!jget(ev, "likely_cause.kind") && strcmp(jstr(ev, "mem.source", "unknown"), "unknown") != 0 &&
                jint(ev, "mem.free", 1ll << 62) < 512 * MIB);
    if (!oom)
        return false;
    long long own = own_bytes(ev, s->t[ti].pid);
    char sz[32];
    set_own(vars, "own_note", own > 0 ? xasprintf("; this process itself holds %s (a framework that preallocated "
                                                  "the GPU)", fmt_size(own, sz, sizeof sz))
                                      : xstrdup(""));
    return true;
}

bool m_handle_other(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    const char *r = jstr(ev, "reason", NULL);
    set_own(vars, "reason_note", r && *r ? xasprintf(" (cuDNN says: \"%s\")", r) : xstrdup(""));
    return true;
}

static char *dims_text(json_t *ev, const char *key)
{
    json_t *d = jget(ev, key);
    if (!json_is_array(d))
        return xstrdup("");
    struct sbuf b = {0};
    sb_printf(&b, "%.*s [", (int)strcspn(key, "."), key);
    for (size_t i = 0; i < json_array_size(d); i++)
        sb_printf(&b, "%s%lld", i ? "," : "", (long long)json_integer_value(json_array_get(d, i)));
    sb_add(&b, "]");
    return sb_take(&b);
}

/* "the forward convolution (x [32,3,224,224], w [64,3,7,7])" */
static char *what_conv(json_t *ev)
{
    const char *name = jstr(ev, "ev", "");
    if (strcmp(name, "conv_algos") == 0 || strcmp(name, "conv_exec_failed") == 0) {
        char *x = dims_text(ev, "x.dims"), *w = dims_text(ev, "w.dims");
        char *r = xasprintf("the %s convolution%s%s%s%s%s", jstr(ev, "op", jstr(ev, "fn", "?")), *x || *w ? " (" : "",
                            x, *x && *w ? ", " : "", w, *x || *w ? ")" : "");
        free(x);
        free(w);
        return r;
    }
    return xasprintf("the cuDNN graph (%s)", jstr(json_array_get(jget(ev, "ops"), 0), "op", "operation graph"));
}

bool m_workspace(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    const char *name = jstr(ev, "ev", "");
    long long need = -1, free_b = jint(ev, "mem.free", -1), total = jint(ev, "mem.total", -1);
    if (strcmp(name, "conv_algos") == 0) {
        json_t *a = jget(ev, "algos");
        for (size_t i = 0; i < json_array_size(a); i++) {
            long long w = jint(json_array_get(a, i), "workspace", -1);
            if (w > 0 && (need < 0 || w < need))
                need = w;
        }
    } else {
        need = jint(ev, "workspace", jint(ev, "likely_cause.workspace", -1));
        free_b = jint(ev, "mem.free", jint(ev, "likely_cause.free", -1));
        if (strcmp(name, "conv_exec_failed") == 0 && !(free_b >= 0 && need > free_b))
            return false;
    }
    set_int(vars, "need", need);
    set_int(vars, "free", free_b);
    set_int(vars, "total", total);
    set_int(vars, "free_mb", free_b > 0 ? free_b / MIB : 0);
    set_own(vars, "what", what_conv(ev));
    long long top;
    char *h = holders_text(ev, s->t[ti].pid, &top);
    set_own(vars, "holders_note", *h ? xasprintf("; %s", h) : xstrdup(""));
    free(h);
    return true;
}

bool m_no_algo(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    set_own(vars, "what", what_conv(ev));
    if (strcmp(jstr(ev, "ev", ""), "conv_algos") == 0) {
        json_t *a = jget(ev, "algos");
        struct sbuf b = {0};
        for (size_t i = 0; i < json_array_size(a) && b.len < 200; i++) {
            const char *st = jstr(json_array_get(a, i), "status_name", NULL);
            if (st && (!b.s || !strstr(b.s, st)))
                sb_printf(&b, "%s%s", b.len ? ", " : "", st);
        }
        char *st = sb_take(&b);
        set_own(vars, "detail", xasprintf("all %lld algorithms returned an error (%s)",
                                          jint(ev, "returned", (long long)json_array_size(a)), *st ? st : "?"));
        free(st);
    } else {
        set_own(vars, "detail", xasprintf("%lld plans from the heuristics: %lld not supported, %lld failed otherwise",
                                          jint(ev, "heuristics_returned", -1), jint(ev, "plans_not_supported", -1),
                                          jint(ev, "plans_failed_other", -1)));
    }
    return true;
}

static bool alloc_oom_status(json_t *ev)
{
    /* 2 is cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY alike */
    return jint(ev, "status", -1) == 2;
}

bool m_alloc_fragmented(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti, (void)vars;
    long long free_b = jint(ev, "mem.free", -1), bytes = jint(ev, "bytes", -1);
    return alloc_oom_status(ev) && bytes > 0 && free_b >= bytes;
}

bool m_alloc_oom(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    if (!alloc_oom_status(ev))
        return false;
    char a[32], b[32];
    long long free_b = jint(ev, "mem.free", -1);
    set_own(vars, "free_note", free_b >= 0 ? xasprintf("%s of %s was free", fmt_size(free_b, a, sizeof a),
                                                       fmt_size(jint(ev, "mem.total", -1), b, sizeof b))
                                           : xstrdup("free memory was not measured"));
    long long top;
    char *h = holders_text(ev, s->t[ti].pid, &top);
    set_own(vars, "holders_note", *h ? xasprintf("; %s", h) : xstrdup(""));
    set_own(vars, "kill_note", top >= 0 ? xasprintf("stop the other process if it is a leftover (`kill %lld`); ", top)
                                        : xstrdup(""));
    free(h);
    return true;
}

/* ---- runtime */
/* A pool of this process took the GPU: its largest allocation is at least half
 * of the memory and little was left when memory ran out (for code, a handle,
 * a workspace).  XLA's preallocation, a pool sized from cudaMemGetInfo. */
bool m_own_pool(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
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
    set_str(vars, "pool_fix",
            fw_pick(t, "JAX `XLA_PYTHON_CLIENT_MEM_FRACTION=.7` (or `XLA_PYTHON_CLIENT_PREALLOCATE=false`)",
                    "TensorFlow `tf.config.experimental.set_memory_growth(gpu, True)` (or "
                    "`TF_FORCE_GPU_ALLOW_GROWTH=true`)",
                    "a pool sized from `torch.cuda.mem_get_info()`: a lower fraction",
                    "JAX `XLA_PYTHON_CLIENT_MEM_FRACTION=.7` or `XLA_PYTHON_CLIENT_PREALLOCATE=false`; TensorFlow "
                    "`TF_FORCE_GPU_ALLOW_GROWTH=true`; a pool sized from `torch.cuda.mem_get_info()` / vLLM "
                    "`gpu_memory_utilization`: a lower fraction"));
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

static bool tree_loaded_libs(struct trace_set *s, size_t ti, int depth)
{
    struct trace *t = &s->t[ti];
    if (jint(t->exit, "libs", 0) > 0)
        return true;
    for (size_t i = 0; i < json_array_size(t->events); i++)
        if (strcmp(jstr(json_array_get(t->events, i), "ev", ""), "lib") == 0)
            return true;
    for (size_t j = 0; j < s->n && depth < 32; j++)
        if (s->t[j].parent == (int)ti && tree_loaded_libs(s, j, depth + 1))
            return true;
    return false;
}

/* "The GPU was never used" is said once per run, about the process that
 * ran the framework: the first that mapped one (the shim writes
 * exit.frameworks), else the first process of the tree. */
bool m_never_used(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    for (size_t j = 0; j < s->n; j++)
        if (tree_loaded_libs(s, j, 31))
            return false;
    long who = -1;
    for (size_t j = 0; j < s->n && who < 0; j++)
        if (s->t[j].exit && frameworks_of(&s->t[j]))
            who = (long)j;
    for (size_t j = 0; j < s->n && who < 0; j++)
        if (s->t[j].exit && s->t[j].parent < 0)
            who = (long)j;
    if (who != (long)ti)
        return false;
    json_t *argv = jget(t->start, "argv");
    struct sbuf b = {0};
    for (size_t i = 0; i < json_array_size(argv) && b.len < 60; i++)
        sb_printf(&b, "%s%s", i ? " " : "", json_string_value(json_array_get(argv, i)) ?: "?");
    set_own(vars, "prog", b.len ? sb_take(&b) : xasprintf("process %lld", t->pid));
    free(b.s);
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
    json_t *evs = events_of(s, ti);
    for (size_t i = 0; i < json_array_size(evs) && last >= 0; i++) {
        json_t *e = json_array_get(evs, i);
        if (jint(e, "seq", -2) == last) {
            char *d = describe_event(e);
            set_own(vars, "after_note", xasprintf(", after the failure %s", d));
            free(d);
        }
    }
    return true;
}
