/* inspect_text.c - `convguard inspect`'s snapshot of a running process as
 * text: the CUDA libraries it maps and their versions, its frameworks, the
 * environment the loader and the frameworks' memory read, its GPU memory,
 * whether convguard is preloaded in it, then the report's findings.  What
 * /proc says is escaped and wrapped at the terminal's width (util/term.c
 * term_wrap). */
#include <stdlib.h>
#include <string.h>

#include "out/out.h"
#include "host/host.h"

/* the settings of the frameworks' GPU memory, shown when set */
static const char *const memory_knobs[] = {
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING", "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_GPU_ALLOCATOR", "TF_CUDNN_WORKSPACE_LIMIT_IN_MB", "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR", "CUDA_MODULE_LOADING",
};

static void print_libs(const struct proc_view *p, FILE *out)
{
    size_t i;
    json_t *l;
    if (!json_array_size(p->libs)) {
        fprintf(out, "  CUDA libraries mapped now: none%s\n", p->kernel_thread ? " (a kernel thread: no memory map)" : "");
        return;
    }
    fprintf(out, "  CUDA libraries mapped now:\n");
    json_array_foreach(p->libs, i, l) {
        const char *vt = jstr(l, "version_text", NULL), *src = jstr(l, "version_source", NULL);
        char *v = !vt ? xstrdup("version unknown")
                  : !strcmp(src, "folder") ? xasprintf("%s (of %s beside it)", vt, jstr(l, "version_from", "?"))
                  : !strcmp(src, "data") ? xasprintf("%s", vt)
                  : xasprintf("%s (%s)", vt, !strcmp(src, "wheel") ? "its wheel" : "its file name");
        /* two lines: what and which version, then where (a folder is often longer than a line) */
        char *raw = xasprintf("    %-13s %-28s ", jstr(l, "label", "?"), jstr(l, "file", "?")), *what = term_text(raw);
        free(raw);
        term_wrap(out, term_width(out), what, v, 18);
        char *dir = path_tidy(jstr(l, "dir", "?"));
        char *where = xasprintf("in %s%s", dir, jtrue(l, "deleted") ? " (deleted on disk)" : jtrue(l, "replaced") ? " (replaced on disk)" : "");
        term_wrap(out, term_width(out), "                  ", where, 21);
        free(what), free(dir), free(where);
        free(v);
    }
}

static void print_frameworks(const struct proc_view *p, FILE *out)
{
    size_t i;
    json_t *f;
    struct sbuf fw = {0};
    json_array_foreach(p->frameworks, i, f) {
        const char *b = jstr(f, "build", "?");
        sb_printf(&fw, "%s%s%s", fw.len ? "; " : "", jstr(f, "label", "?"),
                  !strcmp(b, "cuda") ? " (CUDA build)" : !strcmp(b, "cpu") ? " (CPU-only build)" : "");
        sb_printf(&fw, ", %s", jstr(f, "path", "?"));
    }
    term_wrap(out, term_width(out), "  framework: ", fw.len ? fw.s : "none seen (no PyTorch, TensorFlow, JAX, CuPy or onnxruntime object mapped)", 13);
    free(fw.s);
}

/* the environment the loader and the frameworks' memory read */
static void print_env(const struct proc_view *p, FILE *out)
{
    const char *cvd = jstr(p->env, "CUDA_VISIBLE_DEVICES", NULL), *llp = jstr(p->env, "LD_LIBRARY_PATH", NULL);
    struct sbuf env = {0};
    sb_printf(&env, "CUDA_VISIBLE_DEVICES%s%s%s", cvd ? "=\"" : " unset", cvd ? cvd : "", cvd ? "\"" : "");
    sb_printf(&env, "  LD_LIBRARY_PATH%s%s%s", llp ? "=\"" : " unset", llp ? llp : "", llp ? "\"" : "");
    term_wrap(out, term_width(out), "  environment: ", env.s, 15);
    free(env.s);
    struct sbuf mk = {0};
    for (size_t k = 0; k < sizeof memory_knobs / sizeof memory_knobs[0]; k++)
        if (jstr(p->env, memory_knobs[k], NULL))
            sb_printf(&mk, "%s%s=%s", mk.len ? "  " : "", memory_knobs[k], jstr(p->env, memory_knobs[k], ""));
    term_wrap(out, term_width(out), "  memory settings: ", mk.len ? mk.s : "none set (the frameworks' defaults)", 19);
    free(mk.s);
}

static void print_gpu_memory(const struct proc_view *p, FILE *out)
{
    char sz[32], sz2[32], sz3[32];
    if (!jtrue(p->gpu, "known")) {
        term_wrap(out, term_width(out), "  GPU memory: ", "unknown", 14);
        char *why = xasprintf("(%s)", jstr(p->gpu, "why", "?"));
        term_wrap(out, term_width(out), "              ", why, 14);
        free(why);
        return;
    }
    struct sbuf g = {0};
    json_t *gpu, *h;
    size_t i, k;
    sb_printf(&g, "this process holds %s", fmt_size(jint(p->gpu, "bytes_held", 0), sz, sizeof sz));
    json_array_foreach(jget(p->gpu, "gpus"), i, gpu) {
        const char *gname = jstr(gpu, "name", "");
        sb_printf(&g, "; GPU %lld%s%s: %s of %s free, this process %s", jint(gpu, "index", -1),
                  *gname ? " " : "", gname, fmt_size(jint(gpu, "mem.free", 0), sz, sizeof sz),
                  fmt_size(jint(gpu, "mem.total", 0), sz2, sizeof sz2),
                  fmt_size(jint(gpu, "this_process_bytes", 0), sz3, sizeof sz3));
        json_array_foreach(jget(gpu, "other_holders"), k, h)
            sb_printf(&g, ", pid %lld (%s) %s", jint(h, "pid", -1), jstr(h, "name", "?"),
                      fmt_size(jint(h, "bytes", 0), sz, sizeof sz));
    }
    term_wrap(out, term_width(out), "  GPU memory: ", g.s, 14);
    free(g.s);
}

static void print_shim(const struct proc_view *p, FILE *out)
{
    if (!jtrue(p->shim, "preloaded")) {
        term_wrap(out, term_width(out), "  convguard: ", "not preloaded (to trace it from its start: `convguard run -- CMD`)", 13);
        return;
    }
    const char *t = jstr(p->shim, "trace", NULL);
    char *s = t ? xasprintf("preloaded (%s); its trace: %s (`convguard report %s`)", jstr(p->shim, "path", "?"), t, t)
                : xasprintf("preloaded (%s); no trace yet in %s", jstr(p->shim, "path", "?"),
                            jstr(p->shim, "trace_dir", "?"));
    term_wrap(out, term_width(out), "  convguard: ", s, 13);
    free(s);
}

void inspect_print(const struct proc_view *p, struct analysis *a, FILE *out)
{
    int problems = analysis_problems(a);
    char verdict[64];
    snprintf(verdict, sizeof verdict, "%d problem%s", problems, problems > 1 ? "s" : "");
    char *head = xasprintf("pid %lld (%s), running now: %s", p->pid, a->p[0].prog,
                           problems ? verdict : !json_array_size(p->libs) ? "no CUDA library mapped" : "no problem found");
    term_wrap(out, term_width(out), "convguard inspect: ", head, 4);
    free(head);
    print_libs(p, out);
    print_frameworks(p, out);
    print_env(p, out);
    print_gpu_memory(p, out);
    print_shim(p, out);
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *fd = &a->f[i];
        char *h = xasprintf("[%s] %s", fd->r->layer, fd->title);
        term_wrap(out, term_width(out), "", h, 4);
        free(h);
        term_wrap(out, term_width(out), "    you see: ", fd->symptom, 13);
        term_wrap(out, term_width(out), "    cause:   ", fd->cause, 13);
        term_wrap(out, term_width(out), "    fix:     ", fd->fix, 13);
    }
}

