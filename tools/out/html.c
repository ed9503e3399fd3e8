/* html.c - the report as one self-contained page: no script, no external
 * file, so it can be mailed or attached to an issue; its Content-Security-Policy
 * lets nothing but its inline style run or load, should a string ever slip past esc().  An inline SVG timeline
 * per process shows free GPU memory, allocation and workspace requests,
 * fallbacks and failures over time. */
#include <stdlib.h>
#include <string.h>

#include "out/out.h"

/* Every string of the page that is not ours goes through here: shown as the
 * terminal would show it (util/term.c: controls and bytes that are not UTF-8
 * as \xNN, so the page stays UTF-8), then with the five characters that HTML
 * reads as markup as references, so that it is text in an element and in a
 * quoted attribute alike (docs/robustness.md, "Output"). */
static void esc(FILE *o, const char *s)
{
    char *t = term_text(s);
    for (const char *c = t; *c; c++) {
        switch (*c) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default: fputc(*c, o);
        }
    }
    free(t);
}

#define W 960
#define LANE 150
#define LEFT 70
#define MAX_LANES 16

/* where one lane lies, and how its times and sizes map to points */
struct lane_geom {
    int y0, h, base;
    long long top;
    double off, t0, span;
};

static int lane_x(const struct lane_geom *g, double t)
{
    return LEFT + (int)((t + g->off - g->t0) / g->span * (W - LEFT - 20));
}

static int lane_y(const struct lane_geom *g, long long b)
{
    return g->base - (int)((double)b / (double)g->top * g->h);
}

/* free memory as a line, the sizes asked for as bars: from every event (the reader's timeline) */
static void lane_memory(FILE *o, struct trace *t, const struct lane_geom *g)
{
    char sz[32];
    struct sbuf pts = {0};
    for (int i = 0; i < t->ntl && g->top > 0; i++)
        if (t->tl[i].kind == TL_FREE)
            sb_printf(&pts, "%d,%d ", lane_x(g, t->tl[i].t), lane_y(g, t->tl[i].v));
    if (pts.len)
        fprintf(o, "<polyline points=\"%s\" class=\"free\"><title>free GPU memory</title></polyline>\n", pts.s);
    free(pts.s);
    for (int i = 0; i < t->ntl && g->top > 0; i++) {
        struct tl_point *q = &t->tl[i];
        if (q->kind == TL_FREE || q->v <= 0)
            continue;
        bool al = q->kind == TL_ALLOC;
        int x = lane_x(g, q->t), y = lane_y(g, q->v);
        fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"5\" height=\"%d\" class=\"%s\"><title>", x - 2, y,
                g->base - y > 1 ? g->base - y : 1, al ? "alloc" : q->kind == TL_FB ? "fb" : "ws");
        fprintf(o, "%s %s</title></rect>\n", al ? "allocation" : "workspace", fmt_size(q->v, sz, sizeof sz));
    }
}

/* the events on the lane: libraries loaded (ticks), fallbacks, failures (the first four labelled) */
static void lane_events(FILE *o, struct trace *t, const struct lane_geom *g)
{
    json_t *evs = t->events;
    int labels = 0;
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *e = json_array_get(evs, i);
        const char *n = jstr(e, "ev", "");
        int x = lane_x(g, trace_event_t(t, e));
        if (strcmp(n, "lib") == 0) {
            fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"lib\"><title>", x, g->base, x,
                    g->base + 6);
            esc(o, base_name(jstr(e, "path", "?")));
            fputs("</title></line>\n", o);
        }
        if (strcmp(n, "fallback") == 0) {
            fprintf(o, "<path d=\"M%d %d l6 6 l-6 6 l-6 -6 z\" class=\"fbm\"><title>fallback: ", x, g->y0 + 18);
            esc(o, jstr(e, "action", "?"));
            fputs("</title></path>\n", o);
        }
        if (is_failure_event(t, i)) {
            char *d = describe_event(e);
            fprintf(o, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" class=\"fail\"><title>", x, g->base);
            esc(o, d);
            fputs("</title></circle>\n", o);
            if (labels++ < 4) {
                /* left-aligned under the lane title: long texts never run off the right */
                fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"ftext\">", LEFT + 60, g->y0 + 22 + labels * 13);
                esc(o, d);
                fputs("</text>\n", o);
            }
            free(d);
        }
    }
}

static void lane(FILE *o, struct analysis *a, size_t ti, int y0, double t0, double span)
{
    struct trace *t = &a->s->t[ti];
    struct lane_geom g = {.y0 = y0, .h = LANE - 40, .top = t->tl_top, .t0 = t0, .span = span};
    g.base = y0 + 20 + g.h;
    char sz[32];
    fprintf(o, "<text x=\"4\" y=\"%d\" class=\"lab\">", y0 + 12);
    esc(o, a->p[ti].label);
    fputs(" ", o);
    esc(o, a->p[ti].prog);
    fprintf(o, "</text>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", LEFT, g.base, W - 10, g.base);
    fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", LEFT, y0 + 20, LEFT, g.base);
    if (g.top > 0)
        fprintf(o, "<text x=\"4\" y=\"%d\" class=\"small\">%s</text>\n", y0 + 30, fmt_size(g.top, sz, sizeof sz));
    else
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"small\">no GPU memory readings in this trace</text>\n", LEFT + 8,
                y0 + 34);
    g.off = t->wall > 0 ? t->wall : 0;
    lane_memory(o, t, &g);
    lane_events(o, t, &g);
}

static bool has_timeline(struct analysis *a, size_t i)
{
    return a->p[i].nlibs || a->p[i].nfail || a->p[i].nfind;
}

struct lanes { size_t i[MAX_LANES]; int n; bool *taken; };

static void take_lane(struct analysis *a, struct lanes *l, size_t i)
{
    if (l->n < MAX_LANES && !l->taken[i] && has_timeline(a, i))
        l->taken[i] = true, l->i[l->n++] = i;
}

/* The processes that get a lane: the first to fail, one of each finding and
 * of each kind of process, then the rest in order, MAX_LANES at most; shown
 * in set order (rank, host), as the table. */
static int pick_lanes(struct analysis *a, size_t *out)
{
    struct lanes l = {.taken = calloc(a->s->n ? a->s->n : 1, 1)};
    if (!l.taken)
        exit(2);
    if (a->ff.proc >= 0)
        take_lane(a, &l, (size_t)a->ff.proc);
    for (int g = 0; g < a->ngroups; g++)
        for (int k = 0; k < a->groups[g].nb; k++)
            take_lane(a, &l, a->blocks[a->groups[g].blocks[k]].p.i[0]);
    for (int g = 0; g < a->npgroups; g++)
        take_lane(a, &l, a->pgroups[g].p.i[0]);
    for (size_t i = 0; i < a->s->n; i++)
        take_lane(a, &l, i);
    free(l.taken);
    for (int x = 1; x < l.n; x++)
        for (int y = x; y > 0 && l.i[y] < l.i[y - 1]; y--) {
            size_t z = l.i[y];
            l.i[y] = l.i[y - 1], l.i[y - 1] = z;
        }
    memcpy(out, l.i, (size_t)l.n * sizeof *out);
    return l.n;
}

static void process_row(FILE *o, struct analysis *a, size_t i, int max_fail)
{
    struct trace *t = &a->s->t[i];
    char *libs = lib_summary(&a->p[i]);
    fputs("<tr><td>", o);
    esc(o, a->p[i].label);
    fputs("</td><td>", o);
    esc(o, a->p[i].prog);
    fputs("</td><td>", o);
    esc(o, libs);
    fputs("</td><td>", o);
    free(libs);
    int shown = 0;
    for (size_t k = 0; k < json_array_size(t->events) && shown < max_fail; k++) {
        if (!is_failure_event(t, k))
            continue;
        char *d = describe_event(json_array_get(t->events, k));
        esc(o, d);
        fputs("<br>", o);
        free(d);
        shown++;
    }
    if (a->p[i].nfail > shown)
        fprintf(o, "and %d more", a->p[i].nfail - shown);
    fputs("</td></tr>\n", o);
}

static const char table_head[] = "<table><tr><th>process</th><th>program</th><th>libraries</th><th>failures</th></tr>\n";

/* "ranks 0-999 on node0-node125" and, folded, every label */
static void who_details(FILE *o, struct analysis *a, const struct procs *p)
{
    char *w = who_counted(a, p);
    if (p->n <= 6) {
        esc(o, w);
    } else {
        fputs("<details><summary>", o);
        esc(o, w);
        fputs("</summary><small>", o);
        for (size_t k = 0; k < p->n; k++) {
            if (k)
                fputs(", ", o);
            esc(o, a->p[p->i[k]].label);
        }
        fputs("</small></details>", o);
    }
    free(w);
}

/* a finding's other blocks: the same cause with other numbers or paths, folded */
static void variants(FILE *o, struct analysis *a, struct fgroup *g, struct finding *f)
{
    struct block *b0 = &a->blocks[g->blocks[0]];
    fputs(" <small>(", o);
    char *w = who_counted(a, &b0->p);
    esc(o, w);
    free(w);
    fprintf(o, ")</small><details><summary>%d variant%s: other numbers or paths</summary><ul>\n", g->nb - 1,
            g->nb > 2 ? "s" : "");
    for (int k = 1; k < g->nb; k++) {
        struct block *b = &a->blocks[g->blocks[k]];
        struct finding *e = &a->f[b->head];
        fputs("<li><b>", o);
        w = who_counted(a, &b->p);
        esc(o, w);
        free(w);
        fputs("</b>: ", o);
        esc(o, e->cause);
        if (strcmp(e->fix, f->fix) != 0) {
            fputs("; fix: ", o);
            esc(o, e->fix);
        }
        fputs("</li>\n", o);
    }
    fputs("</ul></details>", o);
}

static void problem(FILE *o, struct analysis *a, struct fgroup *g)
{
    struct block *b0 = &a->blocks[g->blocks[0]];
    struct finding *f = &a->f[b0->head];
    fputs("<div class=\"problem ", o);
    esc(o, f->severity); /* as it stands in this run (analysis/outcome.c) */
    fputs("\"><span class=\"layer\">", o);
    esc(o, f->r->layer);
    fputs("</span> <b>", o);
    esc(o, f->title);
    fputs("</b> <small>(", o);
    esc(o, f->r->id);
    fputs(", ", o);
    char *w = who_counted(a, &g->p);
    esc(o, w);
    free(w);
    fputs(")</small><dl><dt>you see</dt><dd>", o);
    esc(o, f->symptom);
    fputs("</dd><dt>in the trace</dt><dd>", o);
    esc(o, f->seen);
    if (a->s->n > 1) {
        fputs(" <small>(", o);
        esc(o, a->p[f->ti].label);
        fputs(")</small>", o);
    }
    if (f->driver) {
        fputs("</dd><dt>the driver said</dt><dd>", o);
        esc(o, f->driver);
    }
    fputs("</dd><dt>cause</dt><dd>", o);
    esc(o, f->cause);
    if (g->nb > 1)
        variants(o, a, g, f);
    fputs("</dd><dt>fix</dt><dd>", o);
    esc(o, f->fix);
    fputs("</dd>", o);
    if (f->went_on || strcmp(f->severity, f->r->severity) != 0) {
        fputs("<dt>after it</dt><dd>", o);
        esc(o, f->went_on ? f->went_on : "the process went on and exited 0");
        fputs(": context, not what the process died of</dd>", o);
    }
    if (g->p.n > 6) {
        fputs("<dt>processes</dt><dd>", o);
        who_details(o, a, &g->p);
        fputs("</dd>", o);
    }
    fputs("</dl></div>\n", o);
}

/* the page's head and style */
static const char page_head[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
    /* the page needs nothing but its inline style: no script, image, font, frame, form or link may load */
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'\">\n<title>convguard report</title>\n<style>\n"
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}\n"
    "h1{font-size:22px} h2{font-size:17px;margin-top:28px}\n"
    ".problem{border-left:6px solid #c62828;padding:6px 12px;margin:12px 0;background:#fff5f5}\n"
    ".problem.warning{border-color:#ef6c00;background:#fff8ee}\n"
    ".problem.note{border-color:#78909c;background:#f5f7f8}\n"
    ".layer{font-size:12px;background:#444;color:#fff;padding:1px 6px;border-radius:3px}\n"
    "dt{font-weight:bold;margin-top:4px} dd{margin-left:16px} code{background:#eee}\n"
    "table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}\n"
    "details{margin:4px 0} summary{cursor:pointer}\n"
    ".ok{color:#2e7d32;font-weight:bold}\n"
    "svg{border:1px solid #ddd;background:#fcfcfc} .lab{font:bold 12px sans-serif}\n"
    ".small{font:11px sans-serif;fill:#555} .ftext{font:11px sans-serif;fill:#b71c1c}\n"
    ".axis{stroke:#999} .free{fill:none;stroke:#2e7d32;stroke-width:2} .alloc{fill:#c62828;opacity:.7}\n"
    ".ws{fill:#ef6c00;opacity:.7} .fb{fill:#1565c0;opacity:.5} .fbm{fill:#1565c0} .lib{stroke:#777}\n"
    ".fail{fill:#c62828;stroke:#fff}\n"
    "</style></head><body>\n<h1>convguard report</h1>\n";

/* "N processes on M hosts: K problems" */
static void counts_line(FILE *o, struct analysis *a)
{
    int problems = analysis_problems(a);
    fprintf(o, "<p>%zu process%s on %d host%s: ", a->s->n, a->s->n == 1 ? "" : "es", a->nhosts, a->nhosts == 1 ? "" : "s");
    if (problems)
        fprintf(o, "<b>%d problem%s</b></p>\n", problems, problems > 1 ? "s" : "");
    else if (!a->nincomplete)
        fputs("<span class=\"ok\">no problem found</span></p>\n", o);
    else if (a->nincomplete == 1)
        fputs("<b>no failure recorded, but the trace is incomplete</b></p>\n", o);
    else
        fprintf(o, "<b>no failure recorded, but %d traces are incomplete</b></p>\n", a->nincomplete);
    char *oc = outcome_summary(a); /* what happened to each process comes first */
    fputs("<p class=\"outcome\"><b>outcome:</b> ", o);
    esc(o, oc);
    fputs("</p>\n", o);
    free(oc);
    int shown = 0; /* what each incomplete one lacks, the first 16 */
    for (size_t i = 0; i < a->s->n && !problems && shown < 16; i++)
        if (a->p[i].incomplete) {
            fputs("<p>", o);
            esc(o, a->p[i].incomplete);
            fputs("</p>\n", o);
            shown++;
        }
    if (!problems && a->nincomplete > shown)
        fprintf(o, "<p>and %d more incomplete traces</p>\n", a->nincomplete - shown);
}

/* the first failure across processes, what came after it, the clocks' note */
static void first_failure_section(FILE *o, struct analysis *a)
{
    char *head = a->s->n > 1 ? first_failure_head(a) : NULL;
    if (!head)
        return;
    fputs("<h2>First failure</h2>\n<p>", o);
    esc(o, head);
    fputs("</p>\n<ul>\n", o);
    free(head);
    for (int k = 0; k < AFTER_KINDS; k++) {
        char *t = after_text(a, (enum after_kind)k);
        if (!t)
            continue;
        fputs("<li>", o);
        esc(o, t);
        fputs("</li>\n", o);
        free(t);
    }
    fputs("</ul>\n", o);
    char *c = clock_note(a);
    if (c) {
        fputs("<p><small>", o);
        esc(o, c);
        fputs("</small></p>\n", o);
        free(c);
    }
}

static void inconsistent_section(FILE *o, struct analysis *a)
{
    if (!json_array_size(a->incons))
        return;
    fputs("<h2>Inconsistent across processes</h2><ul>\n", o);
    for (size_t i = 0; i < json_array_size(a->incons); i++) {
        fputs("<li>", o);
        esc(o, jstr(json_array_get(a->incons, i), "text", "?"));
        fputs("</li>\n", o);
    }
    fputs("</ul>\n", o);
}

/* the timeline: one lane per chosen process */
static void timeline(FILE *o, struct analysis *a)
{
    size_t pick[MAX_LANES];
    int lanes = pick_lanes(a, pick);
    double t0 = 1e300, t1 = -1e300;
    for (int k = 0; k < lanes; k++) {
        struct trace *t = &a->s->t[pick[k]];
        double off = t->wall > 0 ? t->wall : 0;
        t0 = off < t0 ? off : t0;
        t1 = off + t->t_last > t1 ? off + t->t_last : t1;
    }
    if (!lanes)
        return;
    double span = t1 - t0 > 1e-6 ? t1 - t0 : 1;
    fputs("<h2>Timeline</h2>\n<p><small>green line: free GPU memory; red bars: allocations that failed; orange: "
          "workspace requests; blue: fallbacks; red dots: failures; grey ticks: libraries loaded", o);
    if ((size_t)lanes < a->s->n)
        fprintf(o, "; %d of the %zu processes: the first to fail and one of each kind", lanes, a->s->n);
    fputs("</small></p>\n", o);
    fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W,
            lanes * LANE + 20, W, lanes * LANE + 20);
    for (int k = 0; k < lanes; k++)
        lane(o, a, pick[k], k * LANE, t0, span);
    fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"small\">%.3f s</text>\n", W - 70, lanes * LANE + 14, span);
    fputs("</svg>\n", o);
}

/* one folded table of processes: "WHO: WHAT LINE" above it */
static void folded_table(FILE *o, struct analysis *a, struct procs *p, const char *what, const char *line)
{
    char *w = who_counted(a, p);
    fputs("<details><summary>", o);
    esc(o, w);
    fputs(what, o);
    if (line)
        esc(o, line);
    fputs("</summary>\n", o);
    fputs(table_head, o);
    for (size_t k = 0; k < p->n; k++)
        process_row(o, a, p->i[k], 3);
    fputs("</table></details>\n", o);
    free(w);
}

/* many processes: one folded table per kind of process, the largest first; the rest last */
static void process_tables_folded(FILE *o, struct analysis *a)
{
    bool *listed = calloc(a->s->n, 1);
    if (!listed)
        exit(2);
    int *order = malloc((size_t)(a->npgroups ? a->npgroups : 1) * sizeof *order);
    for (int g = 0; g < a->npgroups; g++)
        order[g] = g;
    for (int x = 1; x < a->npgroups; x++)
        for (int y = x; y > 0 && a->pgroups[order[y]].p.n > a->pgroups[order[y - 1]].p.n; y--) {
            int z = order[y];
            order[y] = order[y - 1], order[y - 1] = z;
        }
    for (int g = 0; g < a->npgroups; g++) {
        struct pgroup *pg = &a->pgroups[order[g]];
        folded_table(o, a, &pg->p, ": ", pg->line);
        for (size_t k = 0; k < pg->p.n; k++)
            listed[pg->p.i[k]] = true;
    }
    free(order);
    struct procs rest = {0};
    for (size_t i = 0; i < a->s->n; i++)
        if (!listed[i])
            procs_add(&rest, i);
    if (rest.n)
        folded_table(o, a, &rest, ": no CUDA library, no failure", NULL);
    procs_free(&rest);
    free(listed);
}

static void processes_section(FILE *o, struct analysis *a)
{
    fputs("<h2>Processes</h2>\n", o);
    if (a->s->n > MAX_LANES) {
        process_tables_folded(o, a);
        return;
    }
    fputs(table_head, o);
    for (size_t i = 0; i < a->s->n; i++)
        process_row(o, a, i, 10);
    fputs("</table>\n", o);
}

int write_html(struct analysis *a, const char *path)
{
    bool to_stdout = strcmp(path, "-") == 0; /* `--html -`: the page on stdout, as tools write "-" */
    FILE *o = to_stdout ? stdout : fopen(path, "w");
    if (!o)
        return -1;
    fputs(page_head, o);
    counts_line(o, a);
    first_failure_section(o, a);
    for (int g = 0; g < a->ngroups; g++)
        problem(o, a, &a->groups[g]);
    inconsistent_section(o, a);
    timeline(o, a);
    processes_section(o, a);
    fputs("</body></html>\n", o);
    return to_stdout ? (fflush(o) == 0 && !ferror(o) ? 0 : -1) : fclose(o);
}
