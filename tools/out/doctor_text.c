/* doctor_text.c - what `convguard doctor` found, as text: the copies on
 * disk, what a bare name gets, the driver and the GPUs, where it looked,
 * and the verdict (analysis/machine.c).  Paths, process names and variables
 * are shown as found, escaped (util/term.c). */
#include <string.h>

#include "out/out.h"
#include "host/host.h"

/* the copies of cuDNN, the CUDA runtime and the driver found on disk */
static void print_copies(json_t *r)
{
    char v[32], w[32];
    static const char *const fams[][2] = {{"cudnn", "cuDNN"}, {"cudart", "CUDA runtime"}, {"driver", "driver (libcuda)"}};
    json_t *copies = json_object_get(r, "copies"), *f;
    size_t i;
    for (size_t k = 0; k < 3; k++) {
        term_printf(stdout, "%s copies:\n", fams[k][1]);
        int shown = 0, parts = 0;
        json_array_foreach(copies, i, f) {
            if (strcmp(jstr(f, "family", ""), fams[k][0]) != 0)
                continue;
            const char *n = base_name(jstr(f, "path", ""));
            if (k == 0 && !copies_asks_version(n)) {
                parts++;
                continue;
            }
            long long ver = jint(f, "version", -1);
            const char *vs = ver < 0 ? "?" : k == 0 ? fmt_cudnn_ver(ver, v, sizeof v) : fmt_cuda_ver(ver, v, sizeof v);
            struct sbuf line = {0};
            sb_printf(&line, "  %-8s %s", vs, jstr(f, "path", "?"));
            if (jint(f, "cuda_built_for", -1) > 0)
                sb_printf(&line, "  (for CUDA %s)", fmt_cuda_ver(jint(f, "cuda_built_for", -1), w, sizeof w));
            if (jget(f, "graph_from"))
                sb_printf(&line, "  (loaded here it runs as %s: its graph part comes from %s)",
                          fmt_cudnn_ver(jint(f, "runs_as", -1), w, sizeof w), jstr(f, "graph_from", "?"));
            if (jget(f, "error"))
                sb_printf(&line, "  (does not load: %s)", jstr(f, "error", "?"));
            json_t *src = jget(f, "sources");
            sb_add(&line, "  [");
            for (size_t s = 0; s < json_array_size(src); s++)
                sb_printf(&line, "%s%s", s ? ", " : "", json_string_value(json_array_get(src, s)));
            sb_add(&line, "]");
            term_wrapf(stdout, 11, "%s", line.s);
            free(line.s);
            shown++;
        }
        if (parts)
            term_printf(stdout, "  (+%d other cuDNN parts: cnn, ops, engines, heuristic, adv)\n", parts);
        if (!shown && !parts)
            term_printf(stdout, "  none found\n");
    }
}

static void print_picks(json_t *r)
{
    char v[32];
    term_printf(stdout, "a program that loads by bare name gets:\n");
    const char *key;
    json_t *p;
    json_object_foreach(json_object_get(r, "picks"), key, p) {
        if (jget(p, "error")) {
            term_printf(stdout, "  %-16s not found\n", key);
            continue;
        }
        long long ver = jint(p, "version", -1);
        char *graph = jstr(p, "graph", NULL) ? xasprintf(", its graph part %s", jstr(p, "graph", "")) : xstrdup("");
        term_wrapf(stdout, 19, "  %-16s %s%s%s%s (%s)%s", key, jstr(p, "path", "?"), jget(p, "file") ? " (= " : "",
                   jstr(p, "file", ""), jget(p, "file") ? ")" : "",
                   ver < 0 ? "?" : strncmp(key, "libcudnn", 8) == 0 ? fmt_cudnn_ver(ver, v, sizeof v) : fmt_cuda_ver(ver, v, sizeof v),
                   graph);
        free(graph);
    }
}

static void print_gpus(json_t *r)
{
    char v[32], w[32];
    json_t *f;
    size_t i;
    json_t *nv = json_object_get(r, "nvml");
    if (jget(nv, "error")) {
        term_wrapf(stdout, 2, "GPUs: unknown: %s", jstr(nv, "error", "?"));
        return;
    }
    term_printf(stdout, "driver %s (CUDA %s), %zu GPU%s\n", jstr(nv, "driver", "?"), fmt_cuda_ver(jint(nv, "cuda", -1), v, sizeof v),
           json_array_size(jget(nv, "gpus")), json_array_size(jget(nv, "gpus")) == 1 ? "" : "s");
    json_array_foreach(jget(nv, "gpus"), i, f) {
        struct sbuf line = {0};
        sb_printf(&line, "  GPU %lld %s: %s free of %s", jint(f, "index", 0), jstr(f, "name", "?"),
                  fmt_size(jint(f, "mem.free", -1), v, sizeof v), fmt_size(jint(f, "mem.total", -1), w, sizeof w));
        json_t *h;
        size_t k;
        json_array_foreach(jget(f, "holders"), k, h)
            sb_printf(&line, "%s pid %lld (%s) %s", k ? "," : "; held by", jint(h, "pid", -1), jstr(h, "name", "?"),
                      fmt_size(jint(h, "bytes", -1), v, sizeof v));
        term_wrapf(stdout, 4, "%s", line.s);
        free(line.s);
    }
}

void doctor_print(json_t *r)
{
    term_printf(stdout, "convguard doctor\n");
    print_copies(r);
    print_picks(r);
    print_gpus(r);
    term_wrapf(stdout, 2, "looked in %zu folders: LD_LIBRARY_PATH, ld.so.cache, /usr/local/cuda*, the system's, the active "
               "python3's site-packages, venvs and conda envs under $HOME, ./ and /opt; not in other users' homes, "
               "container images or other folders (put one in LD_LIBRARY_PATH to include it)",
               json_array_size(json_object_get(r, "searched")));
    term_wrapf(stdout, 2, "environment: LD_LIBRARY_PATH=%s CUDA_VISIBLE_DEVICES=%s", jstr(r, "env.LD_LIBRARY_PATH", "(unset)"),
               jstr(r, "env.CUDA_VISIBLE_DEVICES", "(unset)"));
    json_t *ps = json_object_get(r, "problems"), *f;
    size_t i;
    if (!json_array_size(ps))
        term_printf(stdout, "verdict: no problem found\n");
    else
        term_printf(stdout, "verdict: %zu problem%s\n", json_array_size(ps), json_array_size(ps) > 1 ? "s" : "");
    json_array_foreach(ps, i, f) {
        term_wrapf(stdout, 6, "  [%s] %s", jstr(f, "severity", "?"), jstr(f, "problem", "?"));
        term_wrapf(stdout, 11, "      fix: %s", jstr(f, "fix", "?"));
    }
}

