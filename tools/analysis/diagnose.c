/* diagnose.c - THE diagnosis of one process's facts, in one place (issue
 * 27).  The shim records facts (the libraries' paths, inodes, versions and
 * builds, the statuses, free and total memory, who holds it); what they mean
 * is said here, once, for every command: report and inspect (through
 * analyse), check() (which runs those two), doctor (the same questions of
 * the files on disk: diag_parts_mixed, diag_driver_older).
 *
 * For each process, before the rules run:
 *  - the compatibility verdicts of its lib events (two copies of a cuDNN
 *    file, a part from another folder or of another version than its
 *    dispatcher, cuDNN built for another CUDA major, a driver older than the
 *    runtime), added as `verdict` events after the lib event that makes them
 *    true; a kind the trace already holds (written by an older shim) is read
 *    as it is, not derived again;
 *  - each `cudnn_sublib_mismatch` verdict told apart: one cuDNN version from
 *    two folders (`parts` "one_version": a warning) or parts of two versions
 *    or builds (`parts` "mixed": an error);
 *  - the likely cause of a failed cudnnCreate, context creation or graph
 *    execution (`likely_cause`), unless an older shim wrote it.
 * The rules (rules.def) read these as they read the facts. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "thresholds.h"

/* ---- the numbers the diagnosis uses, and why.  LOW_FREE_BYTES is the
 * shim's fallback trigger too (shim/thresholds.h says why 1 GiB). */
#define LOW_FREE_BYTES CG_LOW_FREE_BYTES
/* Another process's memory is the cause when it holds at least half of what
 * is in use on the GPU (the rest: this process, the driver's own). */
#define HELD_SHARE_DIVISOR 2

static bool is_ev(json_t *e, const char *name) { return strcmp(jstr(e, "ev", ""), name) == 0; }

bool diag_driver_older(long long driver, long long runtime) { return driver > 0 && runtime > 0 && driver < runtime; }

/* two cuDNN files are parts of different installs when their versions
 * differ, or their builds (the CUDA they were built for); unknown (<= 0)
 * tells nothing */
bool diag_parts_mixed(long long ver_a, long long ver_b, long long built_a, long long built_b)
{
    return (ver_a > 0 && ver_b > 0 && ver_a != ver_b) || (built_a > 0 && built_b > 0 && built_a != built_b);
}

/* cuDNN's files of one process (or one load, doctor's): "mixed" when two
 * differ in version or build, "one_version" when those whose version is
 * known agree, "unknown" when none is known.  A part of unknown version
 * makes no error: it may be a partial copy of the same version (issue 27
 * item 6), and cuDNN 9 itself refuses parts of another version
 * (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH). */
const char *diag_parts(const long long *ver, const long long *built, size_t n)
{
    long long v0 = -1, b0 = -1;
    for (size_t i = 0; i < n; i++) {
        if (diag_parts_mixed(v0, ver[i], b0, built[i]))
            return "mixed";
        if (ver[i] > 0)
            v0 = ver[i];
        if (built[i] > 0)
            b0 = built[i];
    }
    return v0 > 0 ? "one_version" : "unknown";
}

bool diag_low_free(long long free_bytes) { return free_bytes >= 0 && free_bytes < LOW_FREE_BYTES; }

/* ---- each library's file: whose it is (issue 27 item 3), from its path.
 * The driver's libcuda lives in the system's library folder (the driver's
 * package), /usr/local/nvidia (mounted by the NVIDIA container runtime) or
 * /usr/lib/wsl (WSL); a CUDA toolkit ships a link stub in lib64/stubs that
 * answers every call with CUDA_ERROR_STUB_LIBRARY, and the cuda-compat
 * package a newer libcuda in <toolkit>/compat for older drivers. */
static bool has(const char *path, const char *part) { return strstr(path, part) != NULL; }

static bool system_lib_dir(const char *path)
{
    static const char *const sys[] = {"/usr/lib/x86_64-linux-gnu/", "/usr/lib/aarch64-linux-gnu/", "/usr/lib64/",
                                      "/lib/x86_64-linux-gnu/", "/lib/aarch64-linux-gnu/", "/lib64/", "/usr/lib/"};
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        if (strncmp(path, sys[i], strlen(sys[i])) == 0 && !strchr(path + strlen(sys[i]), '/'))
            return true;
    return false;
}

static bool conda_dir(const char *path)
{
    static const char *const roots[] = {"conda", "miniforge", "mambaforge", "micromamba", "/envs/"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
        if (has(path, roots[i]))
            return true;
    return false;
}

const char *diag_lib_origin(const char *path, const char *family)
{
    bool driver = family && strcmp(family, "driver") == 0;
    if (!path || !*path)
        return "copy";
    if (has(path, "/stubs/"))
        return "toolkit_stub";
    if (driver && has(path, "/compat/"))
        return "forward_compat";
    if (has(path, "-packages/"))
        return "wheel";
    if (conda_dir(path))
        return "conda";
    if (has(path, "/usr/local/cuda") || has(path, "/opt/cuda") || has(path, "/targets/x86_64-linux/") ||
        has(path, "/targets/sbsa-linux/"))
        return "toolkit";
    if (driver && (system_lib_dir(path) || strncmp(path, "/usr/local/nvidia/", 18) == 0 ||
                   strncmp(path, "/usr/lib/wsl/", 13) == 0))
        return "driver";
    return system_lib_dir(path) ? "system_package" : "copy";
}

const char *diag_origin_words(const char *origin)
{
    static const char *const words[][2] = {
        {"driver", "the NVIDIA driver's"},
        {"forward_compat", "a CUDA forward-compatibility package's (cuda-compat)"},
        {"toolkit_stub", "a CUDA toolkit's link stub, not a driver"},
        {"wheel", "a pip wheel's"},
        {"conda", "a conda package's"},
        {"toolkit", "a CUDA toolkit's"},
        {"system_package", "a system package's"},
        {"copy", "a copy in a folder of its own"},
    };
    for (size_t i = 0; origin && i < sizeof words / sizeof words[0]; i++)
        if (strcmp(origin, words[i][0]) == 0)
            return words[i][1];
    return "of unknown origin";
}

/* every lib event gets `origin` (the key) and `origin_words`, for the rules and the outputs; the
 * real file's folder decides where a link led elsewhere */
static void tell_origins(struct trace *t)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (!is_ev(e, "lib") || jget(e, "origin"))
            continue;
        const char *real = jstr(e, "real_dir", NULL);
        char *p = real ? xasprintf("%s/%s", real, base_name(jstr(e, "path", ""))) : xstrdup(jstr(e, "path", ""));
        const char *o = diag_lib_origin(p, jstr(e, "family", ""));
        free(p);
        json_object_set_new(e, "origin", json_string(o));
        json_object_set_new(e, "origin_words", json_string(diag_origin_words(o)));
    }
}

/* ---- the libraries' verdicts */
enum { V_COPIES, V_SUBLIB, V_MAJOR, V_DRIVER, V_KINDS };
static const char *const verdict_kind[V_KINDS] = {"cudnn_multiple_copies", "cudnn_sublib_mismatch",
                                                  "cudnn_cuda_major_mismatch", "driver_older_than_runtime"};

#define MAX_DISP 4
#define MAX_SUB 64
struct libs_seen {
    json_t *disp[MAX_DISP], *sub[MAX_SUB], *cudart, *driver;
    int ndisp, nsub;
};

static bool is_dispatcher(json_t *lib) { return strncmp(jstr(lib, "soname", ""), "libcudnn.so", 11) == 0; }

/* the folder the file really is in: the shim's real_dir where a link led
 * elsewhere, else the path's */
static const char *lib_dir(json_t *lib, char *buf, size_t n)
{
    const char *real = jstr(lib, "real_dir", NULL);
    if (real) {
        snprintf(buf, n, "%s", real);
        return buf;
    }
    return dir_name(jstr(lib, "path", ""), buf, n);
}

static void see_lib(struct libs_seen *c, json_t *lib)
{
    const char *fam = jstr(lib, "family", "");
    if (strcmp(fam, "cudnn") == 0) {
        if (is_dispatcher(lib)) {
            if (c->ndisp < MAX_DISP)
                c->disp[c->ndisp++] = lib;
        } else if (c->nsub < MAX_SUB) {
            c->sub[c->nsub++] = lib;
        }
    } else if (strcmp(fam, "cudart") == 0 && !c->cudart) {
        c->cudart = lib;
    } else if (strcmp(fam, "driver") == 0 && !c->driver) {
        c->driver = lib;
    }
}

static json_t *verdict_after(json_t *lib, int kind, const char *detail)
{
    json_t *v = json_pack("{s:s, s:I, s:f, s:I, s:I, s:s, s:s, s:s, s:b}", "ev", "verdict", "seq",
                          (json_int_t)jint(lib, "seq", -1), "t", jnum(lib, "t", 0), "pid",
                          (json_int_t)jint(lib, "pid", -1), "tid", (json_int_t)jint(lib, "tid", -1), "kind",
                          verdict_kind[kind], "detail", detail, "when", "load", "derived", true);
    return v;
}

static bool same_file(json_t *a, json_t *b)
{
    return strcmp(jstr(a, "soname", "a"), jstr(b, "soname", "b")) == 0 &&
           jint(a, "inode", 0) != jint(b, "inode", 0);
}

static json_t *copies_verdict(json_t *lib, struct libs_seen *c)
{
    json_t *const *set[2] = {c->disp, c->sub};
    int n[2] = {c->ndisp, c->nsub};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < n[s]; i++)
            for (int j = i + 1; j < n[s]; j++)
                if (same_file(set[s][i], set[s][j])) {
                    json_t *v = verdict_after(lib, V_COPIES, s ? "two different files of one cuDNN sub-library are "
                                                                 "mapped"
                                                               : "two different files of one libcudnn soname are "
                                                                 "mapped in this process");
                    json_object_set_new(v, "path_a", json_string(jstr(set[s][i], "path", "?")));
                    json_object_set_new(v, "path_b", json_string(jstr(set[s][j], "path", "?")));
                    return v;
                }
    return NULL;
}

/* a part from another folder than its (one) dispatcher, or of another
 * version than the dispatcher's own (its file's name or wheel: the shim never
 * asks the dispatcher) or than the parts before it */
static json_t *sublib_verdict(json_t *lib, struct libs_seen *c)
{
    if (c->ndisp != 1)
        return NULL;
    char dd[4096], sd[4096];
    lib_dir(c->disp[0], dd, sizeof dd);
    long long v0 = jint(c->disp[0], "version", -1);
    for (int i = 0; i < c->nsub; i++) {
        long long v = jint(c->sub[i], "version", -1);
        bool other_dir = strcmp(lib_dir(c->sub[i], sd, sizeof sd), dd) != 0;
        if (!other_dir && v > 0 && v0 < 0)
            v0 = v;
        if (other_dir || (v > 0 && v != v0)) {
            json_t *r = verdict_after(lib, V_SUBLIB, other_dir ? "a cuDNN sub-library was loaded from another "
                                                                 "directory than libcudnn.so itself (LD_LIBRARY_PATH "
                                                                 "is searched before cuDNN's own RUNPATH)"
                                                               : "cuDNN sub-libraries of different versions are "
                                                                 "mapped");
            json_object_set_new(r, "dispatcher", json_string(jstr(c->disp[0], "path", "?")));
            json_object_set_new(r, "sublib", json_string(jstr(c->sub[i], "path", "?")));
            return r;
        }
    }
    return NULL;
}

static json_t *major_verdict(json_t *lib, struct libs_seen *c)
{
    long long built = -1, rt = jint(c->cudart, "version", -1);
    for (int i = 0; i < c->nsub; i++)
        if (jint(c->sub[i], "cuda_built_for", -1) > 0)
            built = jint(c->sub[i], "cuda_built_for", -1);
    if (built <= 0 || rt <= 0 || built / 1000 == rt / 1000)
        return NULL;
    json_t *v = verdict_after(lib, V_MAJOR, "cuDNN was built for another CUDA major version than the runtime loaded");
    json_object_set_new(v, "cudnn_built_for", json_integer(built));
    json_object_set_new(v, "cudart_version", json_integer(rt));
    return v;
}

static json_t *driver_verdict(json_t *lib, struct libs_seen *c)
{
    long long dv = jint(c->driver, "version", -1), rt = jint(c->cudart, "version", -1);
    if (!c->driver || !c->cudart || !diag_driver_older(dv, rt))
        return NULL;
    json_t *v = verdict_after(lib, V_DRIVER, "the CUDA driver is older than the CUDA runtime this process loaded");
    json_object_set_new(v, "driver_version", json_integer(dv));
    json_object_set_new(v, "runtime_version", json_integer(rt));
    return v;
}

static json_t *(*const verdict_of[V_KINDS])(json_t *, struct libs_seen *) = {copies_verdict, sublib_verdict,
                                                                             major_verdict, driver_verdict};

static void derive_verdicts(struct trace *t)
{
    bool said[V_KINDS] = {false};
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        for (int k = 0; k < V_KINDS; k++)
            if (is_ev(e, "verdict") && strcmp(jstr(e, "kind", ""), verdict_kind[k]) == 0)
                said[k] = true; /* an older shim's: read as it is */
    }
    struct libs_seen c;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (!is_ev(e, "lib"))
            continue;
        see_lib(&c, e);
        for (int k = 0; k < V_KINDS; k++) {
            json_t *v = said[k] ? NULL : verdict_of[k](e, &c);
            if (v) {
                said[k] = true;
                if (json_array_insert_new(t->events, i + 1, v) == 0)
                    i++;
            }
        }
    }
}

/* one cuDNN version from two folders, or two installs mixed: over every
 * cuDNN file of the process, their versions and builds */
static const char *parts_of(struct trace *t)
{
    long long ver[256], built[256];
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(t->events) && n < 256; i++) {
        json_t *e = json_array_get(t->events, i);
        if (!is_ev(e, "lib") || strcmp(jstr(e, "family", ""), "cudnn") != 0)
            continue;
        ver[n] = cudnn_file_version(t, jstr(e, "path", ""));
        built[n++] = jint(e, "cuda_built_for", -1);
    }
    return diag_parts(ver, built, n);
}

/* cuDNN or the framework said the versions of the parts differ (cuDNN 9's
 * SUBLIBRARY_VERSION_MISMATCH, PyTorch's and XLA's version checks): the files
 * whose version could not be read were of another version */
static bool said_mixed(struct trace *t)
{
    static const char *const rows[] = {"cudnn_sublib_version", "torch_cudnn_version", "xla_cudnn_version"};
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        for (size_t k = 0; is_ev(e, "output") && k < sizeof rows / sizeof rows[0]; k++)
            if (strcmp(jstr(e, "pattern", ""), rows[k]) == 0)
                return true;
    }
    return false;
}

static void tell_parts(struct trace *t)
{
    const char *parts = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "verdict") && strcmp(jstr(e, "kind", ""), "cudnn_sublib_mismatch") == 0) {
            parts = parts ? parts : parts_of(t);
            if (strcmp(parts, "one_version") == 0 && said_mixed(t))
                parts = "mixed";
            json_object_set_new(e, "parts", json_string(parts));
        }
    }
}

/* ---- the causes of failures */
static json_t *cause_new(const char *kind, const char *detail)
{
    return json_pack("{s:s, s:s?, s:n}", "kind", kind, "detail", detail, "seq");
}

/* the largest holder that is not this process (the shim lists them largest first) */
static json_t *top_other(json_t *ev, long long own_pid)
{
    json_t *h = jget(ev, "holders");
    for (size_t i = 0; i < json_array_size(h); i++) {
        json_t *x = json_array_get(h, i);
        if (!jtrue(x, "self") && jint(x, "pid", -1) != own_pid && jint(x, "bytes", 0) > 0)
            return x;
    }
    return NULL;
}

static long long others_bytes(json_t *ev, long long own_pid)
{
    if (jget(ev, "others_bytes"))
        return jint(ev, "others_bytes", 0);
    long long sum = 0;
    json_t *h = jget(ev, "holders");
    for (size_t i = 0; i < json_array_size(h); i++) {
        json_t *x = json_array_get(h, i);
        if (!jtrue(x, "self") && jint(x, "pid", -1) != own_pid)
            sum += jint(x, "bytes", 0);
    }
    return sum;
}

/* short of memory: another process's, or none left */
static json_t *memory_cause(json_t *ev, long long own_pid)
{
    long long fr = jint(ev, "mem.free", -1), total = jint(ev, "mem.total", -1);
    bool known = fr >= 0 && total > 0;
    json_t *top = top_other(ev, own_pid);
    if (top && (!known || others_bytes(ev, own_pid) * HELD_SHARE_DIVISOR >= total - fr)) {
        json_t *c = cause_new("memory_held_by_other_process", NULL);
        json_object_set_new(c, "pid", json_integer(jint(top, "pid", -1)));
        return c;
    }
    return cause_new("out_of_memory", NULL);
}

static bool name_starts(json_t *ev, const char *prefix)
{
    return strncmp(jstr(ev, "status_name", ""), prefix, strlen(prefix)) == 0;
}

/* the failed libcuda.so load the handle's "no driver" points at */
static long long driver_load_seq(struct trace *t, json_t *ev)
{
    if (jget(ev, "driver_load_seq"))
        return jint(ev, "driver_load_seq", -1);
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "dlopen") && !jtrue(e, "ok") && strncmp(base_name(jstr(e, "name", "")), "libcuda.so", 10) == 0)
            return jint(e, "seq", -1);
    }
    return -1;
}

static json_t *create_cause(struct trace *t, json_t *ev)
{
    const char *drv = jstr(ev, "driver", "");
    if (name_starts(ev, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED") ||
        name_starts(ev, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"))
        return cause_new("cudnn_library", "cuDNN could not load or match its own sub-libraries");
    if (strcmp(drv, "not_loaded") == 0) {
        long long seq = driver_load_seq(t, ev);
        json_t *c = cause_new("no_driver", seq >= 0 ? "libcuda.so.1 (the NVIDIA driver) could not be loaded"
                                                    : "libcuda.so.1 (the NVIDIA driver) is not loaded in this "
                                                      "process");
        if (seq >= 0)
            json_object_set_new(c, "seq", json_integer(seq));
        return c;
    }
    if (strcmp(drv, "no_device") == 0)
        return cause_new("no_device", "the driver sees no CUDA device");
    if (strcmp(drv, "not_initialized") == 0)
        return cause_new("driver_not_initialized", "libcuda.so.1 is loaded but cuInit has not succeeded");
    json_t *af = jget(ev, "alloc_failure");
    if (af) {
        json_t *c = memory_cause(ev, t->pid);
        json_object_set(c, "seq", jget(af, "seq") ? jget(af, "seq") : json_null());
        return c;
    }
    /* a parameter the call refused or a feature the GPU lacks is no memory problem */
    if (diag_low_free(jint(ev, "mem.free", -1)) && jint(ev, "mem.total", -1) > 0 &&
        !name_starts(ev, "CUDNN_STATUS_BAD_PARAM") && !name_starts(ev, "CUDNN_STATUS_NOT_SUPPORTED"))
        return memory_cause(ev, t->pid);
    return cause_new("unknown", NULL);
}

/* ---- a driver that shows no GPU: its device files and the GPU selection
 * (the shim's dev_nodes, creds and nvml_gpus of a failed cuInit) */
static bool is_gpu_node(const char *path)
{
    const char *p = strncmp(path, "/dev/nvidia", 11) == 0 ? path + 11 : "";
    if (!*p)
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return !*p;
}

/* the nodes CUDA opens: the control node, UVM's, the GPUs' */
static bool node_needed(const char *path)
{
    return strcmp(path, "/dev/nvidiactl") == 0 || strcmp(path, "/dev/nvidia-uvm") == 0 || is_gpu_node(path);
}

static bool in_group(json_t *creds, long long gid)
{
    if (jint(creds, "egid", -1) == gid)
        return true;
    json_t *g = jget(creds, "groups");
    for (size_t i = 0; i < json_array_size(g); i++)
        if (json_integer_value(json_array_get(g, i)) == gid)
            return true;
    return false;
}

static json_t *node_fact(json_t *c, json_t *node, json_t *creds)
{
    static const char *const keys[] = {"path", "access", "mode", "owner", "group", "uid", "gid"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (jget(node, keys[i]))
            json_object_set(c, keys[i], jget(node, keys[i]));
    if (creds) {
        json_object_set_new(c, "in_group", json_boolean(in_group(creds, jint(node, "gid", -1))));
        json_object_set_new(c, "euid", json_integer(jint(creds, "euid", -1)));
    }
    return c;
}

/* statuses a driver gives when it cannot reach the GPU: no device, invalid
 * device, the OS refused, not permitted, unknown */
static bool no_gpu_status(long long st) { return st == 100 || st == 101 || st == 304 || st == 800 || st == 999; }

static json_t *devnode_cause(json_t *ev)
{
    json_t *nodes = jget(ev, "dev_nodes"), *denied = NULL, *uvm = NULL;
    if (!json_is_array(nodes) || !no_gpu_status(jint(ev, "status", 0)))
        return NULL;
    int gpus = 0;
    bool ctl = false;
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        json_t *n = json_array_get(nodes, i);
        const char *path = jstr(n, "path", "");
        bool exists = jtrue(n, "exists");
        gpus += exists && is_gpu_node(path);
        ctl |= exists && strcmp(path, "/dev/nvidiactl") == 0;
        if (!exists && strcmp(path, "/dev/nvidia-uvm") == 0)
            uvm = n;
        if (exists && !denied && node_needed(path) && strcmp(jstr(n, "access", "ok"), "ok") != 0)
            denied = n;
    }
    if (denied)
        return node_fact(cause_new("device_files_denied", "a device file of the GPU exists but this process may "
                                                          "not open it"),
                         denied, jget(ev, "creds"));
    if (!gpus)
        return json_pack("{s:s, s:s, s:b, s:n}", "kind", "no_device_files", "detail",
                         ctl ? "/dev/nvidiactl exists but no /dev/nvidiaN: no GPU is passed to this process"
                             : "no NVIDIA device file (/dev/nvidia*) exists",
                         "ctl", ctl, "seq");
    if (uvm)
        return cause_new("uvm_missing", "/dev/nvidia-uvm does not exist: the nvidia-uvm kernel module is not "
                                        "loaded");
    return NULL;
}

/* a CUDA_VISIBLE_DEVICES entry NVML knows: an index below its count, a
 * GPU- or MIG- UUID (or the unique prefix CUDA accepts) it lists */
static bool visible_entry_known(const char *e, size_t n, json_t *list)
{
    json_t *gpus = jget(list, "gpus");
    if (n && e[0] >= '0' && e[0] <= '9') {
        long long idx = 0;
        for (size_t k = 0; k < n; k++) {
            if (e[k] < '0' || e[k] > '9')
                return false;
            idx = idx * 10 + (e[k] - '0');
        }
        return idx < jint(list, "count", 0);
    }
    for (size_t i = 0; i < json_array_size(gpus); i++) {
        json_t *g = json_array_get(gpus, i);
        if (strncmp(jstr(g, "uuid", ""), e, n) == 0)
            return true;
        json_t *mig = jget(g, "mig");
        for (size_t m = 0; m < json_array_size(mig); m++)
            if (strncmp(json_string_value(json_array_get(mig, m)) ? json_string_value(json_array_get(mig, m)) : "",
                        e, n) == 0)
                return true;
    }
    return false;
}

/* "0 (GPU-...), 1 (GPU-...)": what NVML lists */
static char *gpus_have(json_t *list)
{
    struct sbuf b = {0};
    json_t *gpus = jget(list, "gpus");
    for (size_t i = 0; i < json_array_size(gpus); i++) {
        json_t *g = json_array_get(gpus, i);
        sb_printf(&b, "%s%lld", i ? ", " : "", jint(g, "index", (long long)i));
        if (jstr(g, "uuid", NULL))
            sb_printf(&b, " (%s)", jstr(g, "uuid", ""));
        json_t *mig = jget(g, "mig");
        for (size_t m = 0; m < json_array_size(mig); m++)
            sb_printf(&b, "%s%s", m ? ", " : " with MIG instances ", json_string_value(json_array_get(mig, m)));
    }
    return sb_take(&b);
}

/* CUDA takes the entries of CUDA_VISIBLE_DEVICES in order and stops at the
 * first it cannot match: when that is the first, no GPU is visible.  NVIDIA_
 * VISIBLE_DEVICES is the container runtime's, read when the container was
 * made: inside it NVML numbers what it got from 0, so only its own "none"
 * or "void" can be judged (rules/driver.c m_gpu_hidden). */
static json_t *visible_cause(struct trace *t, json_t *ev)
{
    const char *cvd = jstr(t->start, "env.CUDA_VISIBLE_DEVICES", NULL);
    json_t *list = jget(ev, "nvml_gpus");
    if (!cvd || jint(ev, "status", 0) != 100 || !list || jint(list, "count", -1) < 0)
        return NULL;
    const char *e = cvd;
    while (*e == ' ')
        e++;
    size_t n = strcspn(e, ",");
    while (n && e[n - 1] == ' ')
        n--;
    if (!n || visible_entry_known(e, n, list))
        return NULL; /* empty or "-1" hides all: gpu_hidden's */
    if (e[0] == '-' || ((e[0] < '0' || e[0] > '9') && strncmp(e, "GPU-", 4) != 0 && strncmp(e, "MIG-", 4) != 0))
        return NULL;
    char *have = gpus_have(list);
    json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s%, s:I, s:s, s:n}", "kind", "visible_devices_unknown", "detail",
                          "CUDA_VISIBLE_DEVICES names a GPU NVML does not list", "var", "CUDA_VISIBLE_DEVICES",
                          "value", cvd, "entry", e, n, "count", (json_int_t)jint(list, "count", 0), "have",
                          *have ? have : "none", "seq");
    free(have);
    return c;
}

static json_t *context_cause(struct trace *t, json_t *ev)
{
    if (jint(ev, "status", 0) != 2) { /* CUDA_ERROR_OUT_OF_MEMORY */
        json_t *c = devnode_cause(ev);
        return c ? c : visible_cause(t, ev);
    }
    json_t *top = top_other(ev, t->pid);
    json_t *c = cause_new(top ? "memory_held_by_other_process" : "out_of_memory", NULL);
    if (top)
        json_object_set_new(c, "pid", json_integer(jint(top, "pid", -1)));
    return c;
}

static json_t *exec_cause(json_t *ev)
{
    long long ws = jint(ev, "workspace", -1), fr = jint(ev, "mem.free", -1);
    json_t *given = jget(ev, "workspace_given");
    if (ws > 0 && json_is_boolean(given) && !json_is_true(given))
        return cause_new("workspace_missing", "the plan needs a workspace and the variant pack gave none");
    if (ws > 0 && fr >= 0 && ws > fr)
        return cause_new("out_of_memory", "the plan needs more workspace than was free");
    if (strcmp(jstr(ev, "status_name", ""), "CUDNN_STATUS_ALLOC_FAILED") == 0 ||
        strcmp(jstr(ev, "status_name", ""), "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED") == 0)
        return cause_new("out_of_memory", "cuDNN could not allocate GPU memory while running the plan");
    return cause_new("unknown", NULL);
}

/* ---- out of memory: the request against the whole GPU, and the pools of
 * this process's frameworks.  PyTorch's message says what PyTorch itself
 * holds (allocated, reserved but unallocated) and what the whole process
 * has in use; the rest of the process's memory is another library's. */

/* Memory a process holds beyond its frameworks' own: the CUDA context and
 * the libraries' handles and workspaces (cuBLAS, cuDNN), some hundreds of
 * MiB on an H100/H200.  Beyond this another pool is in the process. */
#define NON_FW_SLACK_BYTES (2ll << 30)

/* "150.00 GiB" -> bytes; -1 when p holds no size */
static long long size_at(const char *p)
{
    if (!p)
        return -1;
    while (*p == ' ')
        p++;
    char *end;
    double v = strtod(p, &end);
    if (end == p)
        return -1;
    while (*end == ' ')
        end++;
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0},
                 {"KiB", 1024.0},          {"bytes", 1.0},        {"B", 1.0}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strncmp(end, units[i].unit, strlen(units[i].unit)) == 0)
            return (long long)(v * units[i].mult);
    return -1;
}

static long long size_after(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    return p ? size_at(p + strlen(needle)) : -1;
}

/* the size just before `needle` ("386.50 KiB is allocated by PyTorch") */
static long long size_before(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    if (!p)
        return -1;
    const char *q = p;
    int spaces = 0;
    while (q > text && spaces < 3) /* back over "<number> <unit> " */
        if (*--q == ' ')
            spaces++;
    return size_at(q);
}

/* PyTorch's OutOfMemoryError (c10/cuda/CUDACachingAllocator.cpp), today's
 * words and those before 2.1; "torch_oom" facts on the output event */
static json_t *torch_oom_facts(const char *text)
{
    long long req = size_after(text, "Tried to allocate ");
    if (req < 0)
        return NULL;
    long long total = size_after(text, "has a total capacity of ");
    if (total < 0)
        total = size_before(text, "total capacity");
    long long fr = size_after(text, " of which ");
    if (fr < 0)
        fr = size_before(text, "free;");
    long long in_use = size_after(text, "this process has ");
    long long alloc = size_before(text, "is allocated by PyTorch");
    if (alloc < 0)
        alloc = size_before(text, "already allocated");
    long long unalloc = size_before(text, "is reserved by PyTorch but unallocated");
    json_t *o = json_pack("{s:I}", "request", (json_int_t)req);
    const char *keys[] = {"total", "free", "process_in_use", "torch_allocated", "torch_reserved_unallocated"};
    long long vals[] = {total, fr, in_use, alloc, unalloc};
    for (size_t i = 0; i < 5; i++)
        if (vals[i] >= 0)
            json_object_set_new(o, keys[i], json_integer(vals[i]));
    return o;
}

/* the framework of a process other than the one that failed whose pool may
 * hold the GPU: JAX/XLA preallocates 75% at start, TensorFlow nearly all of
 * it, CuPy keeps what it freed */
static unsigned pool_framework(struct trace *t, unsigned victim)
{
    static const unsigned order[] = {FW_JAX, FW_TF, FW_CUPY, FW_TORCH};
    unsigned fws = frameworks_of(t) & ~victim;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (fws & order[i])
            return order[i];
    return 0;
}

static json_t *pool_cause(unsigned fw, unsigned victim, long long bytes, long long total)
{
    json_t *c = json_pack("{s:s, s:s, s:s, s:I, s:n}", "kind", "other_framework_pool", "framework", fw_label(fw),
                          "victim", victim ? fw_label(victim) : "the failing library", "pool", (json_int_t)bytes, "seq");
    if (total > 0)
        json_object_set_new(c, "total", json_integer(total));
    return c;
}

static json_t *torch_oom_cause(struct trace *t, json_t *ev)
{
    json_t *o = jget(ev, "torch_oom");
    long long req = jint(o, "request", -1), total = jint(o, "total", -1), in_use = jint(o, "process_in_use", -1);
    if (req > 0 && total > 0 && req > total)
        return json_pack("{s:s, s:I, s:I, s:n}", "kind", "request_larger_than_gpu", "bytes", (json_int_t)req,
                         "total", (json_int_t)total, "seq");
    long long torch = jint(o, "torch_allocated", 0) + jint(o, "torch_reserved_unallocated", 0);
    unsigned fw = pool_framework(t, FW_TORCH);
    if (in_use >= 0 && fw && in_use - torch > NON_FW_SLACK_BYTES) {
        json_t *c = pool_cause(fw, FW_TORCH, in_use - torch, total);
        json_object_set_new(c, "from", json_string("message"));
        return c;
    }
    return NULL;
}

static void torch_oom_read(struct trace *t)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (!is_ev(e, "output") || strcmp(jstr(e, "kind", ""), "oom") != 0 || jget(e, "torch_oom"))
            continue;
        json_t *o = torch_oom_facts(jstr(e, "text", ""));
        if (o)
            json_object_set_new(e, "torch_oom", o);
    }
}

/* PyTorch's numbers for this process, when it printed them */
static json_t *torch_oom_of(struct trace *t)
{
    for (size_t i = json_array_size(t->events); i-- > 0;) {
        json_t *o = jget(json_array_get(t->events, i), "torch_oom");
        if (o)
            return o;
    }
    return NULL;
}

static json_t *alloc_cause(struct trace *t, json_t *ev)
{
    long long bytes = jint(ev, "bytes", -1), total = jint(ev, "mem.total", -1);
    /* CUDA_ERROR_OUT_OF_MEMORY and cudaErrorMemoryAllocation are both 2 */
    if (jint(ev, "status", 0) != 2 && jint(ev, "driver_status", 0) != 2)
        return NULL;
    /* cuDNN's own allocations are workspaces of an algorithm it chose: the
     * workspace rules say that (another algorithm needs less) */
    bool cudnn = strncmp(base_name(jstr(ev, "caller", "")), "libcudnn", 8) == 0;
    if (bytes > 0 && total > 0 && bytes > total && !cudnn)
        return json_pack("{s:s, s:I, s:I, s:n}", "kind", "request_larger_than_gpu", "bytes", (json_int_t)bytes,
                         "total", (json_int_t)total, "seq");
    unsigned victim = fw_of_path(jstr(ev, "caller", ""));
    unsigned fw = pool_framework(t, victim);
    long long largest = jint(ev, "largest_ok", -1);
    json_t *o = torch_oom_of(t);
    long long in_use = jint(o, "process_in_use", -1);
    long long torch = jint(o, "torch_allocated", 0) + jint(o, "torch_reserved_unallocated", 0);
    if (!fw || !victim)
        return NULL;
    /* one block of half the GPU or more (a preallocated pool), or PyTorch's
     * own count of memory in this process that is not PyTorch's */
    if (total > 0 && largest * 2 >= total)
        return pool_cause(fw, victim, largest, total);
    if (victim == FW_TORCH && in_use >= 0 && in_use - torch > NON_FW_SLACK_BYTES)
        return pool_cause(fw, victim, in_use - torch, total);
    return NULL;
}

/* A framework's own out-of-memory message in a process whose GPU memory
 * another process held: the last failed allocation, context or load of the
 * process before it (its NVML holders) says who, even when the framework went
 * on from that failure with a smaller pool (XLA's allocator backs off and
 * takes what is left) and ran out within it later.  The output event is read
 * by every process of its stream: `in_pid` says whose cause it is. */
static json_t *held_oom_cause(struct trace *t, json_t *ev)
{
    if (strcmp(jstr(ev, "kind", ""), "oom") != 0)
        return NULL;
    json_t *by = NULL, *oom = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "output"))
            continue;
        if (json_is_array(jget(e, "holders")) && json_array_size(jget(e, "holders")))
            by = e;
        if (is_ev(e, "alloc_failed") && jint(e, "status", 0) == 2 && jint(e, "mem.total", -1) > 0)
            oom = e;
    }
    json_t *c = by ? memory_cause(by, t->pid) : NULL;
    if (c && strcmp(jstr(c, "kind", ""), "memory_held_by_other_process") != 0)
        json_decref(c), c = NULL;
    /* NVML named no holder: most of the GPU was in use, little of it by this process */
    long long total = jint(oom, "mem.total", -1), fr = jint(oom, "mem.free", -1), live = jint(oom, "live", -1);
    if (!c && !by && oom && fr >= 0 && live >= 0 && fr * 2 < total && live * HELD_SHARE_DIVISOR < total - fr)
        c = cause_new("memory_held_elsewhere", NULL), by = oom;
    if (!c)
        return NULL;
    json_object_set_new(c, "seq", json_integer(jint(by, "seq", -1)));
    json_object_set_new(c, "in_pid", json_integer(t->pid));
    return c;
}

static void tell_causes(struct trace *t)
{
    torch_oom_read(t);
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i), *c = NULL;
        if (jget(e, "likely_cause"))
            continue; /* an older shim's: read as it is */
        if (is_ev(e, "cudnn_handle") && json_is_false(jget(e, "ok")) && strcmp(jstr(e, "fn", ""), "cudnnCreate") == 0)
            c = create_cause(t, e);
        else if (is_ev(e, "context_failed"))
            c = context_cause(t, e);
        else if (is_ev(e, "graph_exec_failed"))
            c = exec_cause(e);
        else if (is_ev(e, "alloc_failed"))
            c = alloc_cause(t, e);
        else if (is_ev(e, "output") && jget(e, "torch_oom"))
            c = torch_oom_cause(t, e);
        if (!c && is_ev(e, "output"))
            c = held_oom_cause(t, e);
        if (c)
            json_object_set_new(e, "likely_cause", c);
    }
}

void diagnose_trace(struct trace *t)
{
    tell_origins(t);
    derive_verdicts(t);
    tell_parts(t);
    tell_causes(t);
}
