/* memory.c - where the GPU's memory was when a memory failure happened: the
 * whole GPU split into the other processes that held it (NVML's holders),
 * this process (by framework pool where the trace or the framework's own
 * message says), memory in use that nobody in the trace owns, and free; the
 * request that failed beside it.  One picture per problem whose finding is of
 * the resource layer and whose event (or the process's failure before it)
 * carries `mem` (docs/trace-format.md, "Events of the resource layer").
 * The outputs draw it (out/html.c, out/json.c, the notebook from the JSON). */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

#define MAX_PICTURES 4
#define MAX_OTHERS 8 /* holders drawn one by one; the rest are one segment */

static bool is_kind(json_t *e, const char *name) { return strcmp(jstr(e, "ev", ""), name) == 0; }

static void add_part(struct mem_picture *m, enum mem_part_kind kind, long long bytes, long long pid, char *label)
{
    struct mem_part *p = realloc(m->parts, (size_t)(m->nparts + 1) * sizeof *p);
    if (!p)
        exit(2);
    m->parts = p;
    m->parts[m->nparts++] = (struct mem_part){.kind = kind, .bytes = bytes, .pid = pid, .label = label};
}

/* the event that says what memory looked like: the finding's own, else the
 * process's last failure with `mem` at or before it */
static json_t *memory_event(struct trace *t, json_t *ev)
{
    if (jint(ev, "mem.total", -1) > 0)
        return ev;
    double until = ev ? jnum(ev, "t", 1e300) : 1e300;
    json_t *best = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (jint(e, "mem.total", -1) > 0 && jnum(e, "t", 0) <= until && is_failure_event(t, i))
            best = e;
    }
    return best;
}

/* PyTorch's OutOfMemoryError, read by diagnose.c (torch_oom): the finding's own event or the process's */
static json_t *torch_message(struct trace *t, json_t *ev)
{
    if (jget(ev, "torch_oom"))
        return jget(ev, "torch_oom");
    json_t *last = NULL;
    for (size_t i = 0; i < json_array_size(t->events); i++)
        if (jget(json_array_get(t->events, i), "torch_oom"))
            last = jget(json_array_get(t->events, i), "torch_oom");
    return last;
}

/* a lookup's candidates: the smallest workspace one of them asked for, -1 */
static long long smallest_workspace(json_t *e)
{
    long long least = -1;
    json_t *algos = jget(e, "algos");
    for (size_t i = 0; i < json_array_size(algos); i++) {
        long long w = jint(json_array_get(algos, i), "workspace", -1);
        if (w > 0 && (least < 0 || w < least))
            least = w;
    }
    return least;
}

/* what was asked for and did not fit: bytes (-1 when the event does not say) and how it is told */
static long long request_of(struct finding *f, json_t *e, json_t *torch, char **text)
{
    char sz[32];
    const char *fn = jstr(e, "fn", "?");
    long long b = -1;
    if (is_kind(e, "alloc_failed")) {
        b = jint(e, "bytes", -1);
        *text = xasprintf("%s of %s", fn, fmt_size(b, sz, sizeof sz));
    } else if (jget(e, "alloc_failure")) { /* a failed cudnnCreate: the allocation inside it */
        b = jint(e, "alloc_failure.bytes", -1);
        *text = xasprintf("%s: its %s of %s", fn, jstr(e, "alloc_failure.fn", "allocation"), fmt_size(b, sz, sizeof sz));
    } else if (jint(f->vars, "need", -1) > 0) { /* the workspace rules' smallest workspace */
        b = jint(f->vars, "need", -1);
        *text = xasprintf("%s: a workspace of at least %s", fn, fmt_size(b, sz, sizeof sz));
    } else if (is_kind(e, "conv_algos") && (b = smallest_workspace(e)) > 0) {
        *text = xasprintf("%s: its algorithms' workspaces, the smallest %s", fn, fmt_size(b, sz, sizeof sz));
    } else if (jint(e, "workspace", -1) > 0) {
        b = jint(e, "workspace", -1);
        *text = xasprintf("%s: a workspace of %s", fn, fmt_size(b, sz, sizeof sz));
    } else if (torch && jint(torch, "request", -1) > 0) {
        b = jint(torch, "request", -1);
        *text = xasprintf("PyTorch: %s (\"Tried to allocate\")", fmt_size(b, sz, sizeof sz));
    } else {
        *text = xasprintf("%s (%s; how much it needed is not recorded)", fn, jstr(e, "status_name", "failed"));
    }
    return b;
}

/* the only framework of the process, or "" */
static const char *sole_framework(struct trace *t)
{
    unsigned fws = frameworks_of(t);
    return fws && !(fws & (fws - 1)) ? fw_label(fws) : "";
}

/* this process's share, split where something says how: PyTorch's message,
 * another framework's pool (diagnose.c other_framework_pool), one block the
 * size of a pool (the rule own_pool_took_memory's `pool`); the rest of what
 * NVML counts for it is its context, code and other allocations */
static void self_parts(struct mem_picture *m, struct finding *f, struct trace *t, json_t *e, json_t *torch,
                       long long self)
{
    char sz[32];
    long long live = jint(e, "live", jint(e, "gpu_mem.live", -1)), split = 0;
    if (torch && jint(torch, "torch_allocated", -1) >= 0) {
        long long al = jint(torch, "torch_allocated", 0), cached = jint(torch, "torch_reserved_unallocated", 0);
        add_part(m, MP_POOL, al, -1, xstrdup("this process: PyTorch, allocated"));
        if (cached > 0)
            add_part(m, MP_POOL, cached, -1, xstrdup("this process: PyTorch, cached (reserved, not allocated)"));
        split = al + cached;
        if (self < 0)
            self = jint(torch, "process_in_use", -1);
    }
    if (!strcmp(jstr(e, "likely_cause.kind", ""), "other_framework_pool")) {
        long long pool = jint(e, "likely_cause.pool", 0);
        add_part(m, MP_POOL, pool, -1, xasprintf("this process: %s's pool", jstr(e, "likely_cause.framework", "?")));
        split += pool;
    } else if (!split && jint(f->vars, "pool", -1) > 0) {
        long long pool = jint(f->vars, "pool", 0);
        const char *fw = sole_framework(t);
        add_part(m, MP_POOL, pool, -1,
                 *fw ? xasprintf("this process: %s's pool (one block of %s)", fw, fmt_size(pool, sz, sizeof sz))
                     : xasprintf("this process: one block of %s (a framework's pool)", fmt_size(pool, sz, sizeof sz)));
        split = pool;
    }
    if (self < 0)
        self = live; /* NVML did not say: what the shim counted */
    if (self < 0 && !split)
        return;
    if (self > split || !split)
        add_part(m, MP_SELF, self > split ? self - split : 0, -1,
                 xstrdup(split ? "this process: the rest (CUDA context, code, other allocations)"
                               : live > 0 && self > live ? "this process (CUDA context, code and allocations)"
                                                         : "this process"));
}

/* the other processes NVML lists, one part each (the first MAX_OTHERS);
 * returns this process's bytes as NVML counts them, -1 when not listed */
static long long holder_parts(struct mem_picture *m, struct trace *t, json_t *holders, long long *others)
{
    long long self = -1;
    int nothers = 0;
    m->holders_known = json_is_array(holders);
    for (size_t i = 0; i < json_array_size(holders); i++) {
        json_t *h = json_array_get(holders, i);
        long long b = jint(h, "bytes", -1), pid = jint(h, "pid", -1);
        if (jtrue(h, "self") || (pid >= 0 && pid == t->pid)) { /* an older shim marked none */
            self = b;
            continue;
        }
        *others += b > 0 ? b : 0;
        if (nothers++ < MAX_OTHERS)
            add_part(m, MP_OTHER, b, pid,
                     jstr(h, "name", NULL) ? xasprintf("pid %lld (%s)", pid, jstr(h, "name", "?"))
                                           : xasprintf("pid %lld (not visible here: another PID namespace)", pid));
    }
    if (nothers > MAX_OTHERS) {
        long long rest = *others;
        for (int k = 0; k < m->nparts; k++)
            rest -= m->parts[k].bytes > 0 ? m->parts[k].bytes : 0;
        add_part(m, MP_OTHER, rest, -1, xasprintf("%d more processes", nothers - MAX_OTHERS));
    }
    return self;
}

/* the call failed (a lookup that returned algorithms did not: its candidates did) */
static bool failed(json_t *e)
{
    return jint(e, "status", 0) != 0 || (json_is_false(jget(e, "ok")));
}

static bool make_picture(struct analysis *a, int g, struct mem_picture *m)
{
    struct finding *f = &a->f[a->blocks[a->groups[g].blocks[0]].head];
    struct trace *t = &a->s->t[f->ti];
    if (strcmp(f->r->layer, "resource") != 0)
        return false;
    json_t *e = memory_event(t, f->ev), *torch = torch_message(t, f->ev);
    long long total = jint(e, "mem.total", jint(torch, "total", -1));
    long long free_b = e ? jint(e, "mem.free", -1) : jint(torch, "free", -1);
    if (total <= 0 || free_b < 0)
        return false;
    if (!e)
        e = f->ev;
    *m = (struct mem_picture){.ti = f->ti, .group = g, .ev = e, .total = total, .free = free_b};
    m->request = request_of(f, e, torch, &m->request_text);
    long long others = 0, self = holder_parts(m, t, jget(e, "holders"), &others);
    if (m->holders_known && self < 0)
        self = 0; /* NVML lists every process holding memory: not listed, none */
    int before = m->nparts;
    self_parts(m, f, t, e, torch, self);
    long long mine = 0;
    for (int k = before; k < m->nparts; k++)
        mine += m->parts[k].bytes;
    long long unknown = total - free_b - others - mine;
    if (unknown > 0)
        add_part(m, MP_UNKNOWN, unknown, -1,
                 xstrdup(m->holders_known ? "in use, not attributed (the driver, processes NVML does not list)"
                                          : "in use (who holds it is not known: NVML gave no holders)"));
    add_part(m, MP_FREE, free_b, -1, xstrdup("free"));
    char sz[32];
    const char *nd = jstr(e, "nvml_device", NULL);
    if (is_kind(e, "output"))
        m->title = xasprintf("GPU memory when %s said out of memory (its message; %s, a %s GPU)",
                             torch ? "PyTorch" : "the program", a->p[f->ti].label, fmt_size(total, sz, sizeof sz));
    else {
        const char *fn = jstr(e, "fn", jstr(e, "ev", "?"));
        char *when = failed(e) ? xasprintf("when %s failed", fn) : xasprintf("at %s", fn);
        m->title = xasprintf("GPU memory %s (#%lld, %s; a %s GPU%s%s)", when, jint(e, "seq", -1), a->p[f->ti].label,
                             fmt_size(total, sz, sizeof sz), nd ? ", NVML device " : "", nd ? nd : "");
        free(when);
    }
    if (is_kind(e, "output"))
        m->note = xstrdup("the numbers are PyTorch's message: it does not say which other processes hold memory");
    else if (!m->holders_known)
        m->note = jstr(e, "nvml", NULL) ? xasprintf("who holds the memory is not known: NVML: %s", jstr(e, "nvml", ""))
                                        : xstrdup("who holds the memory is not known: NVML was not asked at this failure");
    return true;
}

void memory_pictures(struct analysis *a)
{
    for (int g = 0; g < a->ngroups && a->npics < MAX_PICTURES; g++) {
        struct mem_picture m;
        if (!make_picture(a, g, &m))
            continue;
        bool seen = false; /* two problems of one event: one picture */
        for (int k = 0; k < a->npics; k++)
            seen |= a->pics[k].ev == m.ev && a->pics[k].ti == m.ti;
        if (seen) {
            mem_picture_free(&m);
            continue;
        }
        struct mem_picture *p = realloc(a->pics, (size_t)(a->npics + 1) * sizeof *p);
        if (!p)
            exit(2);
        a->pics = p;
        a->pics[a->npics++] = m;
    }
}

/* the bytes the bar spans: the GPU, or more when the readings of two moments add up past it */
long long mem_picture_span(const struct mem_picture *m)
{
    long long sum = 0;
    for (int k = 0; k < m->nparts; k++)
        sum += m->parts[k].bytes > 0 ? m->parts[k].bytes : 0;
    return sum > m->total ? sum : m->total;
}

const char *mem_part_kind_name(enum mem_part_kind k)
{
    static const char *const names[] = {"other_process", "pool", "self", "unknown", "free"};
    return names[k];
}

void mem_picture_free(struct mem_picture *m)
{
    for (int k = 0; k < m->nparts; k++)
        free(m->parts[k].label);
    free(m->parts), free(m->title), free(m->note), free(m->request_text);
}
