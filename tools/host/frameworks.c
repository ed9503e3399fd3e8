/* frameworks.c - the frameworks of a running process, from the objects it
 * maps (libtorch_cuda.so, xla_cuda_plugin.so, ...), and whether each is its
 * CUDA build: from the object itself, else from the framework's own files
 * beside it. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"

/* the frameworks, from the objects that are theirs; `cuda`: that object
 * exists only in the framework's GPU build */
static const struct fw_marker {
    const char *needle, *name, *label;
    bool cuda;
} fw_markers[] = {
    {"libtorch_cuda.so", "torch", "PyTorch", true},       {"libc10_cuda.so", "torch", "PyTorch", true},
    {"libtorch_cpu.so", "torch", "PyTorch", false},       {"xla_cuda_plugin.so", "jax", "JAX", true},
    {"jax_cuda", "jax", "JAX", true},                     {"xla_extension.so", "jax", "JAX", false},
    {"-packages/jaxlib/", "jax", "JAX", false},           {"libtensorflow_framework.so", "tensorflow", "TensorFlow", false},
    {"_pywrap_tensorflow_internal.so", "tensorflow", "TensorFlow", false},
    {"-packages/cupy", "cupy", "CuPy", true},             {"onnxruntime_providers_cuda", "onnxruntime", "onnxruntime", true},
    {"onnxruntime_pybind11_state", "onnxruntime", "onnxruntime", false},
    {"ctranslate2", "ctranslate2", "CTranslate2", false},
};

/* a mapped file that marks a framework: which one, and whether its CUDA build */
void framework_note(json_t *frameworks, const char *file)
{
    for (size_t i = 0; i < sizeof fw_markers / sizeof fw_markers[0]; i++) {
        if (!strstr(file, fw_markers[i].needle))
            continue;
        json_t *f = NULL, *x;
        size_t j;
        json_array_foreach(frameworks, j, x) if (!strcmp(jstr(x, "name", ""), fw_markers[i].name)) f = x;
        if (!f)
            json_array_append_new(frameworks,
                                  f = json_pack("{s:s, s:s, s:s, s:s}", "name", fw_markers[i].name, "label",
                                                fw_markers[i].label, "build", "?", "path", file));
        if (fw_markers[i].cuda) {
            json_object_set_new(f, "build", json_string("cuda"));
            json_object_set_new(f, "path", json_string(file));
        }
        if (!fw_markers[i].cuda && !strcmp(fw_markers[i].name, "torch") && !strcmp(jstr(f, "build", ""), "?"))
            json_object_set_new(f, "build", json_string("cpu?"));
    }
}

/* The framework's build, from its own files beside the mapped object:
 * TensorFlow's python/platform/build_info.py ('is_cuda_build'), PyTorch's
 * version.py (`cuda = None` in a CPU build), JAX's CUDA plugin installed
 * beside jaxlib.  "unknown" when none says. */
static const char *build_from_files(const char *root, const char *name, const char *path)
{
    static const struct { const char *name, *dir, *file; } where[] = {
        {"tensorflow", "/tensorflow/", "python/platform/build_info.py"},
        {"torch", "/torch/", "version.py"},
    };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        const char *d = strcmp(name, where[i].name) == 0 ? strstr(path, where[i].dir) : NULL;
        if (!d)
            continue;
        char f[PATH_MAX + 64];
        size_t n;
        snprintf(f, sizeof f, "%s%.*s%s", root, (int)(d - path + strlen(where[i].dir)), path, where[i].file);
        char *t = file_read_all(f, &n, 1 << 20);
        const char *b = !t ? "unknown"
                        : strstr(t, "'is_cuda_build': True") ? "cuda"
                        : strstr(t, "'is_cuda_build': False") ? "cpu"
                        : i == 1 && (strstr(t, "\ncuda: Optional[str] = None") || strstr(t, "\ncuda = None")) ? "cpu"
                        : i == 1 && (strstr(t, "\ncuda: Optional[str] = '") || strstr(t, "\ncuda = '")) ? "cuda"
                                                                                                : "unknown";
        free(t);
        return b;
    }
    const char *j = strcmp(name, "jax") == 0 ? strstr(path, "/jaxlib/") : NULL;
    if (j) { /* site-packages/jax_cuda12_plugin, or jax_plugins/xla_cuda12 */
        char site[PATH_MAX + 64];
        snprintf(site, sizeof site, "%s%.*s", root, (int)(j - path), path);
        DIR *dd = opendir(site);
        struct dirent *de;
        bool plugin = false;
        while (dd && !plugin && (de = readdir(dd)))
            plugin = strncmp(de->d_name, "jax_cuda", 8) == 0 && strstr(de->d_name, "_plugin") != NULL;
        if (dd)
            closedir(dd);
        return plugin ? "cuda" : "cpu";
    }
    return "unknown";
}

/* PyTorch's CPU build maps libtorch_cpu.so and no libtorch_cuda.so; the
 * others' builds, where the map did not say, from their files */
void framework_builds(const char *root, json_t *frameworks)
{
    size_t j;
    json_t *x;
    json_array_foreach(frameworks, j, x) {
        if (!strcmp(jstr(x, "build", ""), "cpu?"))
            json_object_set_new(x, "build", json_string("cpu"));
        if (!strcmp(jstr(x, "build", ""), "?"))
            json_object_set_new(x, "build", json_string(build_from_files(root, jstr(x, "name", ""), jstr(x, "path", ""))));
    }
}
