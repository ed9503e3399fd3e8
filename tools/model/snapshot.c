/* snapshot.c - a running process read from outside (host/proc.c) as a trace
 * set of one process, for analyse(): a `start`, one `lib` per CUDA file it
 * maps (the facts a shim's lib event holds), a `lib_changed` per file
 * replaced on disk, and an `exit` marked `snapshot`.  One diagnosis
 * (analysis/diagnose.c) and one rule table (rules.def) then serve report,
 * inspect and the Python check(). */
#include <stdlib.h>
#include <sys/utsname.h>

#include "model/model.h"
#include "host/host.h"

static json_t *ev_new(json_t *evs, const char *name, const struct proc_view *p)
{
    json_t *e = json_pack("{s:s, s:I, s:i, s:I, s:I}", "ev", name, "seq", (json_int_t)json_array_size(evs), "t", 0,
                          "pid", (json_int_t)p->pid, "tid", (json_int_t)p->pid);
    json_array_append_new(evs, e);
    return e;
}

/* a mapped file that is not the one on disk any more: a fact, as the shim's
 * lib_changed event; what it means, and every verdict about the libraries,
 * is analysis/diagnose.c's, as for a trace */
static void add_changed(json_t *evs, const struct proc_view *p)
{
    size_t i;
    json_t *a;
    json_array_foreach(p->libs, i, a) {
        if (!jtrue(a, "deleted") && !jtrue(a, "replaced"))
            continue;
        json_t *v = ev_new(evs, "lib_changed", p);
        json_object_set_new(v, "path", json_string(jstr(a, "path", "?")));
        json_object_set_new(v, "when", json_string("inspect"));
        json_object_set_new(v, "deleted", json_boolean(jtrue(a, "deleted")));
    }
}

static json_t *snapshot_events(const struct proc_view *p, const char *host)
{
    json_t *evs = json_array();
    json_t *s = ev_new(evs, "start", p);
    json_object_set_new(s, "convguard", json_string(CONVGUARD_VERSION));
    json_object_set_new(s, "ppid", json_integer(p->ppid));
    json_object_set_new(s, "exe", json_string(p->exe ? p->exe : "?"));
    json_object_set(s, "argv", p->argv);
    json_object_set_new(s, "cwd", json_string(p->cwd ? p->cwd : "?"));
    json_object_set_new(s, "host", json_string(host));
    json_object_set_new(s, "rank", json_null());
    json_object_set_new(s, "uid", json_integer(p->uid));
    json_object_set(s, "env", p->env);
    size_t i;
    json_t *l;
    json_array_foreach(p->libs, i, l) {
        json_t *e = ev_new(evs, "lib", p);
        static const char *const keep[] = {"path",           "soname",       "family",        "version",
                                           "version_source", "file_version", "cuda_built_for"};
        for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++)
            if (jget(l, keep[k]) && !json_is_null(jget(l, keep[k])))
                json_object_set(e, keep[k], jget(l, keep[k]));
        json_object_set_new(e, "inode", json_integer(jint(l, "inode", 0)));
        json_object_set_new(e, "via", json_string("(mapped)"));
    }
    add_changed(evs, p);
    json_t *x = ev_new(evs, "exit", p);
    json_object_set_new(x, "snapshot", json_true());
    json_object_set_new(x, "libs", json_integer((json_int_t)json_array_size(p->libs)));
    json_t *names = json_array(), *f;
    json_array_foreach(p->frameworks, i, f) json_array_append_new(names, json_string(jstr(f, "name", "?")));
    json_object_set_new(x, "frameworks", names);
    if (jtrue(p->gpu, "known"))
        json_object_set_new(x, "gpu_memory_held", json_integer(jint(p->gpu, "bytes_held", 0)));
    if (jstr(p->gpu, "no_driver", NULL)) /* a fact of the machine, for the rules' fix */
        json_object_set_new(x, "machine_driver", json_pack("{s:b, s:s}", "loadable", false, "error",
                                                          jstr(p->gpu, "no_driver", "?")));
    json_t *builds = json_object();
    json_array_foreach(p->frameworks, i, f) json_object_set_new(builds, jstr(f, "name", "?"),
                                                                json_string(jstr(f, "build", "unknown")));
    json_object_set_new(x, "framework_builds", builds);
    return evs;
}

/* the snapshot as a trace set of one process, for analyse() */
void snapshot_trace_set(const struct proc_view *p, struct trace_set *s)
{
    struct utsname u;
    char host[256];
    snprintf(host, sizeof host, "%s", uname(&u) == 0 ? u.nodename : "host");
    *s = (struct trace_set){0};
    s->t = calloc(1, sizeof *s->t);
    s->n = s->cap = 1;
    s->unreadable = json_array();
    struct trace *t = &s->t[0];
    t->file = xasprintf("/proc/%lld", p->pid);
    t->events = snapshot_events(p, host);
    t->start = json_array_get(t->events, 0);
    t->exit = json_array_get(t->events, json_array_size(t->events) - 1);
    t->pid = p->pid, t->ppid = jint(t->start, "ppid", -1), t->forked_from = -1, t->rank = -1;
    t->host = jstr(t->start, "host", "?");
    t->parent = -1;
}

