/* html.c - the report as one self-contained page: no script, no external
 * file, so it can be mailed or attached to an issue.  An inline SVG timeline
 * per process shows free GPU memory, allocation and workspace requests,
 * fallbacks and failures over time. */
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void esc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        default: fputc(*s, o);
        }
    }
}

/* the requested size an event carries, for the bars: allocation or workspace */
static long long request_of(json_t *e, bool *is_alloc)
{
    const char *n = jstr(e, "ev", "");
    *is_alloc = strcmp(n, "alloc_failed") == 0;
    if (*is_alloc)
        return jint(e, "bytes", -1);
    if (strcmp(n, "conv_algos") == 0) {
        long long need = -1;
        json_t *a = jget(e, "algos");
        for (size_t i = 0; i < json_array_size(a); i++) {
            long long w = jint(json_array_get(a, i), "workspace", -1);
            if (w > 0 && (need < 0 || w < need))
                need = w;
        }
        return need;
    }
    if (strcmp(n, "graph_plan") == 0 || strcmp(n, "conv_exec_failed") == 0 || strcmp(n, "graph_exec_failed") == 0)
        return jint(e, "workspace", -1);
    if (strcmp(n, "fallback") == 0)
        return jint(e, "asked", -1);
    return -1;
}

#define W 960
#define LANE 150
#define LEFT 70

static void lane(FILE *o, struct analysis *a, size_t ti, int y0, double t0, double span)
{
    struct trace *t = &a->s->t[ti];
    json_t *evs = t->events;
    long long top = 0;
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *e = json_array_get(evs, i);
        bool al;
        long long r = request_of(e, &al);
        if (jint(e, "mem.total", 0) > top)
            top = jint(e, "mem.total", 0);
        if (r > top)
            top = r;
        if (jint(e, "mem.free", 0) > top)
            top = jint(e, "mem.free", 0);
    }
    int h = LANE - 40, base = y0 + 20 + h;
    char sz[32];
    fprintf(o, "<text x=\"4\" y=\"%d\" class=\"lab\">", y0 + 12);
    esc(o, a->p[ti].label);
    fputs(" ", o);
    esc(o, a->p[ti].prog);
    fprintf(o, "</text>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", LEFT, base, W - 10, base);
    fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", LEFT, y0 + 20, LEFT, base);
    if (top > 0)
        fprintf(o, "<text x=\"4\" y=\"%d\" class=\"small\">%s</text>\n", y0 + 30, fmt_size(top, sz, sizeof sz));
    else
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"small\">no GPU memory readings in this trace</text>\n", LEFT + 8,
                y0 + 34);
    double off = t->wall > 0 ? t->wall : 0;
#define X(tt) (LEFT + (int)(((tt) + off - t0) / span * (W - LEFT - 20)))
#define Y(b) (base - (int)((double)(b) / (double)top * h))
    /* free memory as a line */
    struct sbuf pts = {0};
    for (size_t i = 0; i < json_array_size(evs) && top > 0; i++) {
        json_t *e = json_array_get(evs, i);
        if (jint(e, "mem.free", -1) >= 0)
            sb_printf(&pts, "%d,%d ", X(jnum(e, "t", 0)), Y(jint(e, "mem.free", 0)));
    }
    if (pts.len)
        fprintf(o, "<polyline points=\"%s\" class=\"free\"><title>free GPU memory</title></polyline>\n", pts.s);
    free(pts.s);
    int labels = 0;
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *e = json_array_get(evs, i);
        const char *n = jstr(e, "ev", "");
        int x = X(jnum(e, "t", 0));
        bool al;
        long long r = request_of(e, &al);
        if (r > 0 && top > 0) {
            fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"5\" height=\"%d\" class=\"%s\"><title>", x - 2, Y(r),
                    base - Y(r) > 1 ? base - Y(r) : 1, al ? "alloc" : strcmp(n, "fallback") == 0 ? "fb" : "ws");
            fprintf(o, "%s %s</title></rect>\n", al ? "allocation" : "workspace", fmt_size(r, sz, sizeof sz));
        }
        if (strcmp(n, "lib") == 0)
            fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"lib\"><title>%s</title></line>\n", x,
                    base, x, base + 6, base_name(jstr(e, "path", "?")));
        if (strcmp(n, "fallback") == 0) {
            fprintf(o, "<path d=\"M%d %d l6 6 l-6 6 l-6 -6 z\" class=\"fbm\"><title>fallback: ", x, y0 + 18);
            esc(o, jstr(e, "action", "?"));
            fputs("</title></path>\n", o);
        }
        if (is_failure_event(t, i)) {
            char *d = describe_event(e);
            fprintf(o, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" class=\"fail\"><title>", x, base);
            esc(o, d);
            fputs("</title></circle>\n", o);
            if (labels++ < 4) {
                /* left-aligned under the lane title: long texts never run off the right */
                fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"ftext\">", LEFT + 60, y0 + 22 + labels * 13);
                esc(o, d);
                fputs("</text>\n", o);
            }
            free(d);
        }
    }
#undef X
#undef Y
}

static bool has_timeline(struct analysis *a, size_t i)
{
    return a->p[i].nlibs || a->p[i].nfail || a->p[i].nfind;
}

int write_html(struct analysis *a, const char *path)
{
    FILE *o = fopen(path, "w");
    if (!o)
        return -1;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>convguard report</title>\n<style>\n"
          "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}\n"
          "h1{font-size:22px} h2{font-size:17px;margin-top:28px}\n"
          ".problem{border-left:6px solid #c62828;padding:6px 12px;margin:12px 0;background:#fff5f5}\n"
          ".problem.warning{border-color:#ef6c00;background:#fff8ee}\n"
          ".layer{font-size:12px;background:#444;color:#fff;padding:1px 6px;border-radius:3px}\n"
          "dt{font-weight:bold;margin-top:4px} dd{margin-left:16px} code{background:#eee}\n"
          "table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}\n"
          ".ok{color:#2e7d32;font-weight:bold}\n"
          "svg{border:1px solid #ddd;background:#fcfcfc} .lab{font:bold 12px sans-serif}\n"
          ".small{font:11px sans-serif;fill:#555} .ftext{font:11px sans-serif;fill:#b71c1c}\n"
          ".axis{stroke:#999} .free{fill:none;stroke:#2e7d32;stroke-width:2} .alloc{fill:#c62828;opacity:.7}\n"
          ".ws{fill:#ef6c00;opacity:.7} .fb{fill:#1565c0;opacity:.5} .fbm{fill:#1565c0} .lib{stroke:#777}\n"
          ".fail{fill:#c62828;stroke:#fff}\n"
          "</style></head><body>\n<h1>convguard report</h1>\n", o);
    int problems = analysis_problems(a);
    fprintf(o, "<p>%zu process%s on %d host%s: ", a->s->n, a->s->n == 1 ? "" : "es", a->nhosts, a->nhosts == 1 ? "" : "s");
    if (problems)
        fprintf(o, "<b>%d problem%s</b></p>\n", problems, problems > 1 ? "s" : "");
    else
        fputs("<span class=\"ok\">no problem found</span></p>\n", o);
    for (size_t i = 0; i < a->nf; i++) {
        struct finding *f = &a->f[i];
        if (f->block != (int)i)
            continue;
        fprintf(o, "<div class=\"problem %s\"><span class=\"layer\">%s</span> <b>", f->r->severity, f->r->layer);
        esc(o, f->title);
        fputs("</b> <small>(", o);
        esc(o, f->r->id);
        fputs(", ", o);
        esc(o, a->p[f->ti].label);
        fputs(")</small><dl><dt>you see</dt><dd>", o);
        esc(o, f->symptom);
        fputs("</dd><dt>in the trace</dt><dd>", o);
        esc(o, f->seen);
        if (f->driver) {
            fputs("</dd><dt>the driver said</dt><dd>", o);
            esc(o, f->driver);
        }
        fputs("</dd><dt>cause</dt><dd>", o);
        esc(o, f->cause);
        fputs("</dd><dt>fix</dt><dd>", o);
        esc(o, f->fix);
        fputs("</dd></dl></div>\n", o);
    }
    if (json_array_size(a->incons)) {
        fputs("<h2>Inconsistent across processes</h2><ul>\n", o);
        for (size_t i = 0; i < json_array_size(a->incons); i++) {
            fputs("<li>", o);
            esc(o, jstr(json_array_get(a->incons, i), "text", "?"));
            fputs("</li>\n", o);
        }
        fputs("</ul>\n", o);
    }
    /* the timeline: one lane per process that did something with CUDA */
    double t0 = 1e300, t1 = -1e300;
    int lanes = 0;
    for (size_t i = 0; i < a->s->n; i++) {
        if (!has_timeline(a, i) || lanes >= 16)
            continue;
        lanes++;
        struct trace *t = &a->s->t[i];
        double off = t->wall > 0 ? t->wall : 0;
        for (size_t k = 0; k < json_array_size(t->events); k++) {
            double tt = jnum(json_array_get(t->events, k), "t", 0) + off;
            t0 = tt < t0 ? tt : t0;
            t1 = tt > t1 ? tt : t1;
        }
    }
    if (lanes) {
        double span = t1 - t0 > 1e-6 ? t1 - t0 : 1;
        fputs("<h2>Timeline</h2>\n<p><small>green line: free GPU memory; red bars: allocations that failed; orange: "
              "workspace requests; blue: fallbacks; red dots: failures; grey ticks: libraries loaded</small></p>\n", o);
        fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W,
                lanes * LANE + 20, W, lanes * LANE + 20);
        int k = 0;
        for (size_t i = 0; i < a->s->n && k < lanes; i++)
            if (has_timeline(a, i))
                lane(o, a, i, k++ * LANE, t0, span);
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"small\">%.3f s</text>\n", W - 70, lanes * LANE + 14, span);
        fputs("</svg>\n", o);
    }
    fputs("<h2>Processes</h2>\n<table><tr><th>process</th><th>program</th><th>libraries</th><th>failures</th></tr>\n", o);
    for (size_t i = 0; i < a->s->n; i++) {
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
        for (size_t k = 0; k < json_array_size(t->events) && shown < 10; k++) {
            if (!is_failure_event(t, k))
                continue;
            char *d = describe_event(json_array_get(t->events, k));
            esc(o, d);
            fputs("<br>", o);
            free(d);
            shown++;
        }
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n</body></html>\n", o);
    return fclose(o);
}
