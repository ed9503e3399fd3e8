/* json.c - the report as JSON (`convguard report --json`, schema:
 * docs/report-json.md), built whole or written piece by piece. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/capture.h"
#include "out/out.h"
#include "host/host.h"

static json_t *read_stats_json(struct trace *t)
{
    json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I}", "lines", (json_int_t)t->st.lines,
                          "events", (json_int_t)t->st.events, "bad_lines", (json_int_t)t->st.bad_lines, "huge_lines",
                          (json_int_t)t->st.huge_lines, "cut_lines", (json_int_t)t->st.cut_lines, "fixed_utf8",
                          (json_int_t)t->st.fixed_utf8, "seq_gaps", (json_int_t)t->st.seq_gaps, "last_line_cut",
                          t->st.last_line_cut, "elided", (json_int_t)t->st.elided);
    json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:I}", "long_lines", (json_int_t)t->st.long_lines, "nul_bytes",
                                        (json_int_t)t->st.nul_bytes, "trace_gaps", (json_int_t)t->st.gap_events,
                                        "lost", (json_int_t)t->st.gap_lost));
    if (t->elided)
        json_object_set(j, "elided_by_event", t->elided);
    return j;
}

static json_t *int_or_null(long long v) { return v >= 0 ? json_integer(v) : json_null(); }

static json_t *procs_json(const struct procs *p)
{
    json_t *j = json_array();
    for (size_t k = 0; k < p->n; k++)
        json_array_append_new(j, json_integer((json_int_t)p->i[k]));
    return j;
}

static json_t *first_failure_json(struct analysis *a)
{
    struct first_failure *ff = &a->ff;
    if (ff->proc < 0)
        return json_null();
    static const char *const kinds[] = {"same_cause", "killed", "timeout", "stopped", "other_cause"};
    struct proc_sum *p = &a->p[ff->proc];
    json_t *after = json_array();
    for (int k = 0; k < AFTER_KINDS; k++) {
        struct after *af = &ff->after[k];
        if (!af->p.n)
            continue;
        char *who = who_text(a, &af->p), *text = after_text(a, (enum after_kind)k);
        json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:o}", "kind", kinds[k], "count", (json_int_t)af->p.n, "who", who,
                              "text", text, "processes", procs_json(&af->p));
        if (isfinite(af->dt_min)) {
            json_object_set_new(o, "after_min_s", json_real(af->dt_min));
            json_object_set_new(o, "after_max_s", json_real(af->dt_max));
        }
        if (af->signals)
            json_object_set(o, "signals", af->signals);
        json_array_append_new(after, o);
        free(who), free(text);
    }
    char *head = first_failure_head(a), *d = describe_event(p->fail_ev), *note = clock_note(a);
    json_t *j = json_pack("{s:i, s:s, s:f, s:f, s:I, s:s, s:o, s:s, s:o, s:o, s:I}", "process", ff->proc, "label",
                          p->label, "wall_time", ff->wall, "t", p->fail_t, "seq",
                          (json_int_t)jint(p->fail_ev, "seq", -1), "failure", d, "rule",
                          p->first_f >= 0 ? json_string(a->f[p->first_f].r->id) : json_null(), "text", head,
                          "clock_note", note ? json_string(note) : json_null(), "after", after, "quiet",
                          (json_int_t)ff->quiet);
    free(head), free(d), free(note);
    return j;
}

/* A process's `captured` (docs/report-json.md): its capture, every output
 * line read from it and whether "you see" quotes it; null without one. */
static json_t *captured_json(struct trace *t)
{
    json_t *m = capture_marker(t);
    if (!m)
        return json_null();
    json_t *lines = json_array(), *q = capture_quoted(t);
    for (size_t k = 0; k < json_array_size(t->events); k++) {
        json_t *e = json_array_get(t->events, k);
        if (strcmp(jstr(e, "ev", ""), "output") == 0)
            json_array_append_new(lines, json_pack("{s:s, s:s, s:s, s:b, s:b}", "text", jstr(e, "text", ""),
                                                   "pattern", jstr(e, "pattern", ""), "kind", jstr(e, "kind", ""),
                                                   "exception", jtrue(e, "exception"), "quoted", 0));
    }
    for (size_t k = 0; k < json_array_size(lines); k++)
        for (size_t j = 0; j < json_array_size(q); j++)
            if (strcmp(jstr(json_array_get(lines, k), "text", ""), jstr(json_array_get(q, j), "text", "")) == 0)
                json_object_set_new(json_array_get(lines, k), "quoted", json_true());
    json_decref(q);
    return json_pack("{s:s, s:s, s:s, s:I, s:o}", "file", jstr(m, "file", ""), "stream", jstr(m, "stream", ""),
                     "mode", jstr(m, "mode", ""), "bytes", (json_int_t)jint(m, "bytes", -1), "lines", lines);
}

static void add_capture_process(json_t *p, struct trace_set *s, size_t i)
{
    json_t *c = captured_json(&s->t[i]);
    json_object_set_new(p, "captured", c ? c : json_null());
}

/* each finding's `you_see_source`: "stderr" when its first process has a capture */
static void add_capture_findings(json_t *finds, struct trace_set *s)
{
    for (size_t i = 0; i < json_array_size(finds); i++) {
        json_t *f = json_array_get(finds, i);
        json_t *who = json_array_get(jget(f, "processes"), 0);
        long long p = json_is_integer(who) ? json_integer_value(who) : -1;
        bool cap = p >= 0 && (size_t)p < s->n && capture_marker(&s->t[p]);
        json_object_set_new(f, "you_see_source", json_string(cap ? "stderr" : "template"));
    }
}

/* A process's `outcome`: how it ended (analysis/outcome.c) */
static json_t *outcome_json(struct analysis *a, size_t i)
{
    static const char *const kinds[] = {"ok", "ended", "unknown", "failed"};
    struct outcome *o = &a->p[i].out;
    char *how = outcome_how(a, i);
    json_t *j = json_pack("{s:s, s:o, s:o, s:s, s:o, s:b}", "kind", kinds[o->kind], "status", int_or_null(o->status),
                          "signal", o->signal ? json_integer(o->signal) : json_null(), "how", how, "final_line",
                          o->line ? json_string(jstr(o->line, "text", "")) : json_null(), "explained", o->explained);
    free(how);
    return j;
}

/* One element of "processes" */
static json_t *process_json(struct analysis *a, size_t i)
{
    {
        struct trace *t = &a->s->t[i];
        struct proc_sum *p = &a->p[i];
        json_t *libs = json_array(), *fails = json_array();
        for (size_t k = 0; k < json_array_size(t->events); k++) {
            json_t *e = json_array_get(t->events, k);
            if (strcmp(jstr(e, "ev", ""), "lib") == 0)
                json_array_append_new(libs, json_pack("{s:s, s:s, s:s, s:o, s:o, s:s?}", "path", jstr(e, "path", "?"),
                                                      "soname", jstr(e, "soname", "?"), "family", jstr(e, "family", "?"),
                                                      "version", int_or_null(jint(e, "version", -1)),
                                                      "cuda_built_for", int_or_null(jint(e, "cuda_built_for", -1)),
                                                      "origin", jstr(e, "origin", NULL)));
            if (is_failure_event(t, k)) {
                char *d = describe_event(e);
                json_array_append_new(fails, json_pack("{s:I, s:f, s:s, s:s}", "seq", (json_int_t)jint(e, "seq", -1),
                                                       "t", trace_event_t(t, e), "ev", jstr(e, "ev", "?"), "text", d));
                free(d);
            }
        }
        json_t *ids = json_array(); /* its headline first, then the others in their order */
        if (p->first_f >= 0)
            json_array_append_new(ids, json_string(a->f[p->first_f].r->id));
        for (int k = p->f_begin; k < p->f_end; k++)
            if (k != p->first_f)
                json_array_append_new(ids, json_string(a->f[k].r->id));
        if (p->f_extra >= 0 && p->f_extra != p->first_f)
            json_array_append_new(ids, json_string(a->f[p->f_extra].r->id));
        json_t *j = json_pack(
            "{s:o, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:O, s:f, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
            "file", json_text(t->file), "label", p->label, "program", p->prog, "pid", int_or_null(t->pid), "host", t->host,
            "rank", int_or_null(t->rank), "ppid", int_or_null(t->ppid), "parent",
            t->parent >= 0 ? json_integer(t->parent) : json_null(), "argv", jget(t->start, "argv") ?: json_null(),
            "wall_time", t->wall, "exited", t->exit != NULL, "cudnn_version", int_or_null(p->cudnn_ver),
            "cudart_version", int_or_null(p->cudart_ver), "driver_version", int_or_null(p->driver_ver), "libs", libs,
            "failures", fails, "rules", ids, "read", read_stats_json(t));
        add_capture_process(j, a->s, i);
        json_object_set_new(j, "outcome", outcome_json(a, i));
        return j;
    }
}

static json_t *bytes_or_null(long long b) { return b >= 0 ? json_integer(b) : json_null(); }

/* `gpu_memory`: where the GPU's memory was at each memory failure (analysis/memory.c) */
static json_t *gpu_memory_json(struct analysis *a)
{
    json_t *pics = json_array();
    for (int k = 0; k < a->npics; k++) {
        struct mem_picture *m = &a->pics[k];
        json_t *parts = json_array();
        for (int i = 0; i < m->nparts; i++) {
            struct mem_part *q = &m->parts[i];
            json_array_append_new(parts, json_pack("{s:s, s:o, s:o, s:o}", "kind", mem_part_kind_name(q->kind), "label",
                                                   json_text(q->label), "bytes", bytes_or_null(q->bytes), "pid",
                                                   q->pid >= 0 ? json_integer(q->pid) : json_null()));
        }
        json_array_append_new(
            pics, json_pack("{s:I, s:o, s:i, s:o, s:o, s:o, s:I, s:I, s:I, s:{s:o, s:o}, s:b, s:o, s:o}", "process",
                            (json_int_t)m->ti, "label", json_text(a->p[m->ti].label), "group", m->group, "seq",
                            bytes_or_null(jint(m->ev, "seq", -1)), "event", json_text(jstr(m->ev, "ev", "?")), "source",
                            json_text(jstr(m->ev, "mem.source", "message")), "total", (json_int_t)m->total, "free", (json_int_t)m->free, "span",
                            (json_int_t)mem_picture_span(m), "request", "bytes", bytes_or_null(m->request), "text",
                            json_text(m->request_text), "holders_known", m->holders_known, "title", json_text(m->title),
                            "note", m->note ? json_text(m->note) : json_null()));
        json_object_set_new(json_array_get(pics, json_array_size(pics) - 1), "parts", parts);
    }
    return pics;
}

/* Everything but "processes", in the order of the document */
static json_t *rest_json(struct analysis *a)
{
    json_t *finds = json_array();
    /* findings: one per block (rule, cause, fix), a group's blocks together */
    json_t *groups = json_array();
    for (int g = 0; g < a->ngroups; g++) {
        struct fgroup *G = &a->groups[g];
        json_t *fl = json_array();
        for (int k = 0; k < G->nb; k++) {
            struct block *b = &a->blocks[G->blocks[k]];
            struct finding *f = &a->f[b->head];
            char *who = who_text(a, &b->p);
            json_array_append_new(fl, json_integer((json_int_t)json_array_size(finds)));
            json_array_append_new(finds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:O, s:I, s:s, "
                                                   "s:i}",
                                                   "rule", f->r->id, "layer", f->r->layer, "severity", f->severity,
                                                   "title", f->title, "symptom", f->symptom, "seen", f->seen, "cause",
                                                   f->cause, "fix", f->fix, "processes", procs_json(&b->p), "seq",
                                                   f->ev ? json_integer(jint(f->ev, "seq", -1)) : json_null(), "facts",
                                                   f->vars, "count", (json_int_t)b->p.n, "who", who, "group", g));
            json_t *fj = json_array_get(finds, json_array_size(finds) - 1);
            json_object_set_new(fj, "driver_said", f->driver ? json_string(f->driver) : json_null());
            /* against the end of its process (analysis/outcome.c) */
            json_object_set_new(fj, "rule_severity", json_string(f->r->severity));
            json_object_set_new(fj, "place", json_string(f->tier == 0 ? "died_of" : f->tier == 1 ? "before_end" : "context"));
            json_object_set_new(fj, "went_on", f->went_on ? json_string(f->went_on) : json_null());
            free(who);
        }
        struct finding *f = &a->f[a->blocks[G->blocks[0]].head];
        char *who = who_text(a, &G->p);
        json_array_append_new(groups, json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:o}", "rule", f->r->id, "layer",
                                                f->r->layer, "severity", f->severity, "title", f->title, "count",
                                                (json_int_t)G->p.n, "who", who, "processes", procs_json(&G->p),
                                                "findings", fl));
        free(who);
    }
    json_t *pgroups = json_array();
    for (int g = 0; g < a->npgroups; g++) {
        struct pgroup *pg = &a->pgroups[g];
        char *who = who_text(a, &pg->p);
        json_array_append_new(pgroups, json_pack("{s:s, s:I, s:s, s:o}", "line", pg->line, "count",
                                                 (json_int_t)pg->p.n, "who", who, "processes", procs_json(&pg->p)));
        free(who);
    }
    /* "o" for unreadable: a new empty array must not get a second reference (found by tests/fuzz/fuzz_reader) */
    add_capture_findings(finds, a->s);
    json_t *incomplete = json_array();
    for (size_t i = 0; i < a->s->n; i++)
        if (a->p[i].incomplete)
            json_array_append_new(incomplete, json_pack("{s:I, s:s, s:s}", "process", (json_int_t)i, "label",
                                                        a->p[i].label, "text", a->p[i].incomplete));
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:O, s:o, s:o}", "findings", finds, "groups", groups, "process_groups",
                     pgroups, "gpu_memory", gpu_memory_json(a), "first_failure", first_failure_json(a), "inconsistencies",
                     a->incons, "incomplete", incomplete, "unreadable",
                     a->s->unreadable ? json_incref(a->s->unreadable) : json_array());
}

/* the run's `outcome`: the summary every report starts with, and the counts */
static json_t *run_outcome_json(struct analysis *a)
{
    size_t by[4] = {0};
    for (size_t i = 0; i < a->s->n; i++)
        by[a->p[i].out.kind]++;
    char *text = outcome_summary(a);
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "text", text, "failed", (json_int_t)by[OC_FAILED], "ok",
                          (json_int_t)by[OC_OK], "ended", (json_int_t)by[OC_ENDED], "unknown", (json_int_t)by[OC_UNKNOWN],
                          "run_failures", (json_int_t)a->nunowned);
    free(text);
    return j;
}

json_t *analysis_json(struct analysis *a)
{
    json_t *procs = json_array();
    for (size_t i = 0; i < a->s->n; i++)
        json_array_append_new(procs, process_json(a, i));
    json_t *j = json_pack("{s:i, s:i, s:o, s:o}", "convguard_report", 1, "problems", analysis_problems(a), "outcome",
                          run_outcome_json(a), "processes", procs);
    json_t *rest = rest_json(a);
    json_object_update(j, rest);
    json_decref(rest);
    return j;
}

/* `v` as JSON_INDENT(2) writes it `depth` levels down */
static void dump_at(FILE *out, json_t *v, int depth)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
    for (const char *c = s ? s : "null"; *c; c++) {
        fputc(*c, out);
        if (*c == '\n')
            fprintf(out, "%*s", 2 * depth, "");
    }
    free(s);
}

/* The same document as analysis_json, written as it is built: one process
 * at a time, so that the output is never all in memory. */
void analysis_json_write(struct analysis *a, FILE *out)
{
    fprintf(out, "{\n  \"convguard_report\": 1,\n  \"problems\": %d,\n  \"outcome\": ", analysis_problems(a));
    json_t *oc = run_outcome_json(a);
    dump_at(out, oc, 1);
    json_decref(oc);
    fputs(",\n  \"processes\": [", out);
    for (size_t i = 0; i < a->s->n; i++) {
        json_t *p = process_json(a, i);
        fputs(i ? ",\n    " : "\n    ", out);
        dump_at(out, p, 2);
        json_decref(p);
    }
    fputs(a->s->n ? "\n  ]" : "]", out);
    json_t *rest = rest_json(a);
    const char *k;
    json_t *v;
    json_object_foreach(rest, k, v) {
        fprintf(out, ",\n  \"%s\": ", k);
        dump_at(out, v, 1);
    }
    json_decref(rest);
    fputs("\n}\n", out);
}

/* `convguard inspect --json`: the snapshot of a running process (host/proc.c)
 * with the report's findings and the command's exit status */
json_t *snapshot_json(const struct proc_view *p, struct analysis *a, int rc)
{
    json_t *rj = analysis_json(a);
    json_t *j = json_pack("{s:i, s:I, s:s, s:O, s:s, s:s, s:I, s:O, s:O, s:O, s:O, s:O, s:i, s:O, s:i}",
                          "convguard_inspect", 1, "pid", (json_int_t)p->pid, "program", a->p[0].prog, "argv", p->argv,
                          "exe", p->exe ? p->exe : "?", "cwd", p->cwd ? p->cwd : "?", "uid", (json_int_t)p->uid,
                          "libraries", p->libs, "frameworks", p->frameworks, "env", p->env, "gpu_memory", p->gpu,
                          "convguard", p->shim, "problems", analysis_problems(a), "findings",
                          jget(rj, "findings") ?: json_null(), "exit_status", rc);
    json_decref(rj);
    return j;
}
