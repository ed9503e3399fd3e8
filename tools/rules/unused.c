/* unused.c - "the GPU is not used" when CUDA libraries are there: a
 * framework mapped cudart / cuDNN (PyTorch's CUDA build links them) but the
 * driver was never opened, so no CUDA context exists; or, in a live process
 * (`convguard inspect`, exit.snapshot), the driver is mapped and NVML lists
 * no GPU memory of it. */
#include "rules/match.h"

static bool maps_driver(struct trace *t)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if ((is_ev(e, "lib") && strcmp(jstr(e, "family", ""), "driver") == 0) ||
            (is_ev(e, "dlopen") && strncmp(base_name(jstr(e, "name", "")), "libcuda.so", 10) == 0))
            return true;
    }
    return false;
}

/* {detail} and {fix} of gpu_not_used: a fix that can work where the process
 * runs (inspect says whether this machine has a driver, and the
 * framework's build) */
static void fix_that_works(struct trace *t, unsigned fw, bool driver, json_t *vars)
{
    const char *no_driver = jstr(t->exit, "machine_driver.error", NULL);
    const char *build = jstr(jget(t->exit, "framework_builds"), fw == FW_TORCH ? "torch" : fw == FW_TF ? "tensorflow" : fw == FW_JAX ? "jax" : "-", "");
    if (!driver && no_driver) {
        set_own(vars, "detail", xasprintf("libcuda.so.1, the driver, is not mapped, and this machine has none "
                                          "(libcuda.so.1 cannot be loaded: %s)", no_driver));
        set_str(vars, "fix", "install the NVIDIA driver and check that `nvidia-smi` lists the GPU (`convguard "
                             "doctor`: \"no NVIDIA driver\"); in a container add `--gpus all` (NVIDIA Container "
                             "Toolkit); until then the framework can only use the CPU");
    } else if (!strcmp(build, "cpu")) {
        set_str(vars, "detail", "its build here is a CPU-only one");
        set_str(vars, "fix", fw_pick(t, "install JAX's CUDA build (`pip install \"jax[cuda12]\"`)",
                                     "install TensorFlow's CUDA build (`pip install \"tensorflow[and-cuda]\"`)",
                                     "install PyTorch's CUDA build (the CUDA index of https://pytorch.org)",
                                     "install the framework's CUDA build"));
    } else {
        set_str(vars, "detail", driver ? "NVML lists no GPU memory held by it on any GPU"
                                       : "libcuda.so.1, the driver, is not mapped (the framework never initialised CUDA)");
        set_str(vars, "fix",
            fw_pick(t, "check that JAX sees the GPU (`python -c \"import jax; print(jax.devices())\"`); "
                       "JAX_PLATFORMS=cpu forces the CPU",
                    "check `tf.config.list_physical_devices('GPU')`; run the model under `with tf.device('/GPU:0')`",
                    "move the model and the batches to the GPU (`model.to(\"cuda\")`, `x.to(\"cuda\")`) and check "
                    "`torch.cuda.is_available()`; a process that only imports torch (a launcher, a data loader "
                    "worker) is expected to show this",
                    "make the program put its work on the GPU, and check that the framework sees one"));
    }
}

bool m_gpu_not_used(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)ev;
    struct trace *t = &s->t[ti];
    unsigned fw = fw_primary(frameworks_of(t));
    if (!t->exit || !fw)
        return false;
    struct sbuf libs = {0};
    int nlibs = 0;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_failure_event(t, i))
            return free(libs.s), false; /* a failure has its own rule */
        if (is_ev(e, "lib") && nlibs++ < 3)
            sb_printf(&libs, "%s%s", libs.len ? ", " : "", base_name(jstr(e, "path", "?")));
    }
    if (!nlibs)
        return false; /* gpu_never_used */
    if (nlibs > 3)
        sb_printf(&libs, " and %d more", nlibs - 3);
    bool snapshot = jtrue(t->exit, "snapshot");
    bool driver = maps_driver(t);
    /* a run: said once, and only when no process of it opened the driver
     * (torchrun's launcher maps torch and leaves the GPU to its workers) */
    for (size_t j = 0; j < s->n && !snapshot; j++)
        if (maps_driver(&s->t[j]))
            return free(libs.s), false;
    if (driver && !(snapshot && jget(t->exit, "gpu_memory_held") && jint(t->exit, "gpu_memory_held", 1) == 0))
        return free(libs.s), false;
    set_prog(vars, t);
    set_str(vars, "fw", fw_label(fw));
    set_own(vars, "libs", sb_take(&libs));
    set_str(vars, "what", driver ? "holds no GPU memory" : "not the driver");
    set_str(vars, "when", snapshot ? " at this moment" : "");
    fix_that_works(t, fw, driver, vars);
    set_own(vars, "seen", xasprintf("#%lld exit: %d CUDA librar%s mapped, %s", jint(t->exit, "seq", -1), nlibs,
                                    nlibs > 1 ? "ies" : "y", driver ? "no GPU memory held" : "no driver"));
    return true;
}
