/* copies.c - every copy of cuDNN, the CUDA runtime and the driver on this
 * machine (`convguard doctor`): the folders a program's loader and its
 * Python environments would search (LD_LIBRARY_PATH, the loader's cache
 * from `ldconfig -p`, /usr/local/cuda*, the system's, site-packages, other
 * venvs and conda envs), the files there, the version each reports about
 * itself (probe.c: loaded in a child), and what a program loading each bare
 * name gets. */
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host/host.h"

/* ---- where to look */
static void add_dir(json_t *dirs, const char *dir, const char *source)
{
    char real[PATH_MAX];
    if (!dir || !*dir || !realpath(dir, real))
        return;
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    json_t *d = json_object_get(dirs, real);
    if (!d) {
        d = json_pack("{s:s, s:[]}", "dir", dir, "sources");
        json_object_set_new(dirs, real, d);
    }
    json_t *srcs = json_object_get(d, "sources");
    for (size_t i = 0; i < json_array_size(srcs); i++)
        if (strcmp(json_string_value(json_array_get(srcs, i)), source) == 0)
            return;
    json_array_append_new(srcs, json_string(source));
}

static void add_glob(json_t *dirs, const char *pattern, const char *source)
{
    glob_t g;
    if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            add_dir(dirs, g.gl_pathv[i], source);
    globfree(&g);
}

static void add_path_list(json_t *dirs, const char *list, const char *source)
{
    char *copy = xstrdup(list ? list : ""), *save = NULL;
    for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
        add_dir(dirs, p, source);
    free(copy);
}

static bool wanted(const char *n)
{
    return (strncmp(n, "libcudnn", 8) == 0 || strncmp(n, "libcudart.so", 12) == 0 || strncmp(n, "libcuda.so", 10) == 0) &&
           strstr(n, ".so") != NULL;
}

static void from_ldconfig(json_t *dirs)
{
    FILE *f = popen("ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null", "r");
    char line[4096], d[PATH_MAX];
    while (f && fgets(line, sizeof line, f)) {
        char *arrow = strstr(line, "=> ");
        if (!arrow || !wanted(line + strspn(line, " \t")))
            continue;
        arrow[3 + strcspn(arrow + 3, "\n")] = 0;
        add_dir(dirs, dir_name(arrow + 3, d, sizeof d), "ld.so.cache");
    }
    if (f)
        pclose(f);
}

static void from_python(json_t *dirs)
{
    FILE *f = popen("python3 -c 'import site,sys; print(\"\\n\".join(site.getsitepackages()+[site.getusersitepackages()]))' "
                    "2>/dev/null", "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *pat = xasprintf("%s/nvidia/*/lib", line);
        add_glob(dirs, pat, "python site-packages");
        free(pat);
    }
    if (f)
        pclose(f);
}

/* Environments that are not the active one: a copy there is what another
 * shell, job or notebook kernel loads (works in one, fails in another). */
static void envs_under(json_t *dirs, const char *prefix_glob, const char *source)
{
    /* a venv or conda env: <prefix>/lib/python3.X/site-packages/{nvidia/<part>/lib,torch/lib}, and conda's <prefix>/lib */
    char *a = xasprintf("%s/lib/python3*/site-packages/nvidia/*/lib", prefix_glob);
    char *b = xasprintf("%s/lib/python3*/site-packages/torch/lib", prefix_glob);
    add_glob(dirs, a, source);
    add_glob(dirs, b, source);
    free(a), free(b);
}

static void other_envs(json_t *dirs, const char *home)
{
    static const char *const venvs[] = {"%s/.venv", "%s/venv", "%s/.virtualenvs/*", "%s/.pyenv/versions/*",
                                        "%s/.local/share/virtualenvs/*", "%s/*/.venv", "%s/*/venv"};
    for (size_t i = 0; home && i < sizeof venvs / sizeof venvs[0]; i++) {
        char *g = xasprintf(venvs[i], home);
        envs_under(dirs, g, "venv (not active)");
        free(g);
    }
    envs_under(dirs, "./.venv", "venv (not active)");
    envs_under(dirs, "./venv", "venv (not active)");
    static const char *const condas[] = {"%s/miniconda3", "%s/anaconda3", "%s/miniforge3", "%s/mambaforge",
                                         "%s/.conda"};
    for (size_t i = 0; home && i < sizeof condas / sizeof condas[0]; i++) {
        char *base = xasprintf(condas[i], home), *envs = xasprintf("%s/envs/*", base);
        envs_under(dirs, base, "conda env (not active)");
        envs_under(dirs, envs, "conda env (not active)");
        char *libs = xasprintf("%s/envs/*/lib", base);
        add_glob(dirs, libs, "conda env (not active)");
        free(base), free(envs), free(libs);
    }
    add_dir(dirs, "/opt/conda/lib", "conda env (not active)");
    add_glob(dirs, "/opt/conda/envs/*/lib", "conda env (not active)");
    envs_under(dirs, "/opt/conda", "conda env (not active)");
    envs_under(dirs, "/opt/*/.venv", "venv (not active)");
    envs_under(dirs, "/opt/*/venv", "venv (not active)");
    envs_under(dirs, "/opt/*venv", "venv (not active)");
}

json_t *copies_dirs(void)
{
    json_t *dirs = json_object();
    const char *home = getenv("HOME");
    add_path_list(dirs, getenv("LD_LIBRARY_PATH"), "LD_LIBRARY_PATH");
    from_ldconfig(dirs);
    add_glob(dirs, "/usr/local/cuda*/lib*", "/usr/local/cuda*");
    add_glob(dirs, "/usr/local/cuda*/targets/*/lib", "/usr/local/cuda*");
    static const char *const sys[] = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib"};
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        add_dir(dirs, sys[i], "system");
    if (getenv("CONDA_PREFIX")) {
        char *p = xasprintf("%s/lib", getenv("CONDA_PREFIX"));
        add_dir(dirs, p, "conda ($CONDA_PREFIX)");
        free(p);
    }
    static const char *const conda[] = {"miniconda3", "anaconda3", "miniforge3", "mambaforge"};
    for (size_t i = 0; home && i < sizeof conda / sizeof conda[0]; i++) {
        char *p = xasprintf("%s/%s/lib", home, conda[i]);
        add_dir(dirs, p, "conda base");
        free(p);
    }
    from_python(dirs);
    other_envs(dirs, home);
    return dirs;
}

/* ---- the copies on disk */
static const char *family_of(const char *n)
{
    return strncmp(n, "libcudnn", 8) == 0 ? "cudnn" : strncmp(n, "libcudart", 9) == 0 ? "cudart" : "driver";
}

/* the libraries whose version we ask: cuDNN's dispatcher and graph part,
 * cudart, the driver; cuDNN's other parts are only listed */
bool copies_asks_version(const char *n)
{
    return (strncmp(n, "libcudnn.so.", 12) == 0 || strncmp(n, "libcudnn_graph.so.", 18) == 0 ||
            strncmp(n, "libcudnn_ops_infer.so.", 22) == 0 || strncmp(n, "libcudart.so.", 13) == 0 ||
            strcmp(n, "libcuda.so.1") == 0);
}

static int cmp_keys(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* A dispatcher loaded by its path took its graph part from another folder
 * (LD_LIBRARY_PATH is searched before its own): the version it answered is
 * that part's, not its install's.  Its own comes from the part beside it, read
 * from the file; both are kept, and the verdict names the mix. */
static void parts_from_elsewhere(json_t *d)
{
    const char *graph = jstr(d, "graph", NULL), *file = jstr(d, "file", "");
    char gd[PATH_MAX], fd[PATH_MAX], greal[PATH_MAX];
    if (!graph || strncmp(base_name(file), "libcudnn.so", 11) != 0)
        return;
    if (!realpath(graph, greal) || strcmp(dir_name(greal, gd, sizeof gd), dir_name(file, fd, sizeof fd)) == 0)
        return;
    long long own = libfile_cudnn_own_version(file);
    json_object_set_new(d, "runs_as", json_integer(jint(d, "version", -1)));
    json_object_set_new(d, "graph_from", json_string(greal));
    json_object_del(d, "cuda_built_for"); /* the other part's answer too */
    json_object_set_new(d, "version", own > 0 ? json_integer(own) : json_null());
}

json_t *copies_scan(json_t *dirs)
{
    json_t *files = json_object(); /* realpath -> entry */
    const char *key;
    json_t *d;
    json_object_foreach(dirs, key, d) {
        DIR *dd = opendir(key);
        struct dirent *e;
        while (dd && (e = readdir(dd))) {
            if (!wanted(e->d_name))
                continue;
            char *p = xasprintf("%s/%s", key, e->d_name), real[PATH_MAX];
            if (!realpath(p, real)) {
                free(p);
                continue;
            }
            json_t *f = json_object_get(files, real);
            if (!f) {
                f = json_pack("{s:s, s:s, s:[], s:O}", "path", p, "family", family_of(e->d_name), "names",
                              "sources", json_object_get(d, "sources"));
                json_object_set_new(files, real, f);
            }
            json_array_append_new(json_object_get(f, "names"), json_string(e->d_name));
            /* the name to load it by: the shortest versioned one (libcudnn.so.9) */
            const char *cur = base_name(jstr(f, "path", ""));
            if (strstr(e->d_name, ".so.") && (!strstr(cur, ".so.") || strlen(e->d_name) < strlen(cur)))
                json_object_set_new(f, "path", json_string(p));
            free(p);
        }
        if (dd)
            closedir(dd);
    }
    json_t *list = json_array();
    /* by path: a folder's copies together, the dispatcher before its parts */
    const char **keys = calloc(json_object_size(files) + 1, sizeof *keys);
    size_t nk = 0;
    json_object_foreach(files, key, d)
        keys[nk++] = key;
    qsort(keys, nk, sizeof *keys, cmp_keys);
    for (size_t ki = 0; ki < nk; ki++) {
        key = keys[ki];
        d = json_object_get(files, key);
        json_object_set_new(d, "file", json_string(key));
        const char *n = base_name(jstr(d, "path", ""));
        if (copies_asks_version(n)) {
            json_t *v = probe_run(probe_lib_version, jstr(d, "path", ""));
            json_object_update(d, v);
            json_object_del(d, "path");
            json_object_set_new(d, "path", json_string(jstr(d, "file", "")));
            json_decref(v);
            parts_from_elsewhere(d);
        }
        json_array_append(list, d);
    }
    free(keys);
    json_decref(files);
    return list;
}

/* the bare names to probe: every major found on disk, plus the usual ones, the driver last */
static json_t *bare_names(json_t *copies)
{
    json_t *names = json_pack("[s, s, s, s]", "libcudnn.so.9", "libcudnn.so.8", "libcudart.so.13", "libcudart.so.12");
    size_t i;
    json_t *f;
    json_array_foreach(copies, i, f) {
        const char *n = base_name(jstr(f, "path", ""));
        if (strncmp(n, "libcudnn.so.", 12) == 0 || strncmp(n, "libcudart.so.", 13) == 0) {
            char *soname = xasprintf("%.*s", (int)(strstr(n, ".so.") + 4 + strcspn(strstr(n, ".so.") + 4, ".") - n), n);
            bool have = false;
            json_t *x;
            size_t k;
            json_array_foreach(names, k, x) have |= strcmp(json_string_value(x), soname) == 0;
            if (!have)
                json_array_append_new(names, json_string(soname));
            free(soname);
        }
    }
    json_array_append_new(names, json_string("libcuda.so.1"));
    return names;
}

/* what a program loading each bare name gets (in a child each) */
json_t *copies_picks(json_t *copies)
{
    json_t *picks = json_object(), *names = bare_names(copies), *f;
    size_t i;
    json_array_foreach(names, i, f) {
        json_t *p = probe_run(probe_lib_version, json_string_value(f));
        /* a missing optional major is noise; keep misses of the driver and of majors on disk */
        bool optional = strcmp(json_string_value(f), "libcuda.so.1") != 0 && jget(p, "error") && i < 4;
        if (!optional)
            json_object_set_new(picks, json_string_value(f), p);
        else
            json_decref(p);
    }
    json_decref(names);
    return picks;
}

