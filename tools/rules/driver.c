/* driver.c - the match functions of the driver and device rows of rules.def:
 * no NVIDIA driver (libcuda.so.1 not loaded, or a container started without
 * the GPU), every GPU hidden by CUDA_VISIBLE_DEVICES. */
#include "rules/match.h"

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
    if (drv == ev && load_resolved(t, (size_t)event_index(t, ev)))
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
    set_own(vars, "printed_fix", printed_fix_of_kinds(t, "usage,device"));
    set_own(vars, "seen", xasprintf("#%lld start: %s=\"%s\" in the environment", jint(t->start, "seq", 0), var, val));
    return true;
}

/* ---- a GPU device file this process may not open (analysis/diagnose.c
 * devnode_cause): who may, who this process is, and what would let it */
static bool group_may(const char *mode) /* the group's rw bits of "0660" */
{
    return strlen(mode) == 4 && (mode[2] == '6' || mode[2] == '7');
}

bool m_device_denied(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    const char *owner = jstr(ev, "likely_cause.owner", NULL), *group = jstr(ev, "likely_cause.group", NULL);
    const char *mode = jstr(ev, "likely_cause.mode", ""), *path = jstr(ev, "likely_cause.path", "?");
    const char *access = jstr(ev, "likely_cause.access", "");
    long long gid = jint(ev, "likely_cause.gid", -1), uid = jint(ev, "likely_cause.uid", -1);
    long long euid = jint(ev, "likely_cause.euid", -1);
    char *g = group ? xasprintf("%s", group) : xasprintf("gid %lld", gid);
    set_own(vars, "owner_group", owner ? xasprintf("%s:%s", owner, g) : xasprintf("uid %lld:%s", uid, g));
    json_t *in = jget(ev, "likely_cause.in_group");
    bool member = json_is_true(in);
    if (strcmp(access, "EACCES") == 0 && group_may(mode) && json_is_boolean(in) && !member) {
        set_own(vars, "membership", xasprintf("this process (uid %lld) is not in group %s", euid, g));
        set_own(vars, "access_fix",
                xasprintf("add the user to group %s: `sudo usermod -aG %s $USER`, then log in again (`id` must list "
                          "%s; a running shell keeps its old groups); in a container add the group "
                          "(`docker run --group-add %s ...`) or start it with `--gpus all`",
                          g, group ? group : "<group>", g, group ? group : "<gid>"));
    } else if (strcmp(access, "EACCES") == 0) {
        set_own(vars, "membership",
                member ? xasprintf("this process is in group %s, but the mode does not let the group read and write",
                                   g)
                       : xasprintf("the mode lets neither this process (uid %lld) nor its groups read and write", euid));
        set_own(vars, "access_fix",
                xasprintf("the NVIDIA driver makes its device files 0666 unless told otherwise: look for "
                          "NVreg_DeviceFileMode / NVreg_DeviceFileGID / NVreg_DeviceFileUID in /etc/modprobe.d and "
                          "for a udev rule that changes %s; `sudo chmod 0666 /dev/nvidia*` lasts until the next boot",
                          path));
    } else {
        set_own(vars, "membership", xasprintf("the check said %s", access));
        set_own(vars, "access_fix",
                xasprintf("check %s with `ls -l /dev/nvidia*` and `id` as this user; a read-only or nodev mount of "
                          "/dev, or a container's device rules, refuse it even when the mode allows",
                          path));
    }
    free(g);
    return true;
}

bool m_no_device_files(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    json_t *ct = jget(t->start, "container");
    bool ctl = jtrue(ev, "likely_cause.ctl");
    set_str(vars, "nodes_fix",
            ct || ctl ? "start the container with the GPU: `docker run --gpus all ...` (NVIDIA Container Toolkit; "
                        "Kubernetes: a `nvidia.com/gpu` resource limit; Slurm: `--gres=gpu:1`); on a machine of your "
                        "own, check `nvidia-smi -L`"
                      : "load the driver's kernel module and make its device files: `sudo modprobe nvidia` and `sudo "
                        "nvidia-modprobe -c=0 -u` (or reboot after installing the driver); `nvidia-smi -L` must list "
                        "the GPU; in a container: `docker run --gpus all ...`");
    return true;
}
