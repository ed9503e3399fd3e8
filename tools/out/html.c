/* html.c - the report as one self-contained page: no script, no external
 * file, so it can be mailed or attached to an issue; its Content-Security-Policy
 * lets nothing but its inline style run or load, should a string ever slip past
 * esc().  Inline SVG draws, for a memory failure, the whole GPU split into who
 * held it (analysis/memory.c), and a timeline per process: free GPU memory,
 * allocation and workspace requests, fallbacks, failures, libraries loaded.
 * Every text the SVG places is measured before it is placed (monospace: a
 * known width per character) so that no two overlap; tests/report/
 * t_report_html.sh checks the boxes Chromium computes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/out.h"

/* Every string of the page that is not ours goes through here: shown as the
 * terminal would show it (util/term.c: controls and bytes that are not UTF-8
 * as \xNN, so the page stays UTF-8), then with the five characters that HTML
 * reads as markup as references, so that it is text in an element and in a
 * quoted attribute alike (docs/robustness.md, "Output"). */
static void esc_shown(FILE *o, const char *t, size_t n)
{
    for (const char *c = t; c < t + n && *c; c++) {
        switch (*c) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default: fputc(*c, o);
        }
    }
}

static void esc(FILE *o, const char *s)
{
    char *t = term_text(s);
    esc_shown(o, t, strlen(t));
    free(t);
}

/* a text of ours (a cause, a fix) whose `commands` are written in backticks:
 * each pair becomes <code>; an unpaired one stays as it is */
static void esc_code(FILE *o, const char *s)
{
    char *t = term_text(s);
    int ticks = 0;
    for (const char *c = t; *c; c++)
        ticks += *c == '`';
    const char *run = t;
    bool open = false;
    for (const char *c = t; *c; c++) {
        if (*c != '`' || (!open && ticks < 2))
            continue;
        esc_shown(o, run, (size_t)(c - run));
        fputs(open ? "</code>" : "<code>", o);
        open = !open, ticks--, run = c + 1;
    }
    esc_shown(o, run, strlen(run));
    if (open)
        fputs("</code>", o);
    free(t);
}

/* ---- measured text: every SVG text is monospace (.m), so its width is its
 * columns times CH_W of its size; a character that is not ASCII counts two
 * columns (wide scripts), so the estimate is never short */
#define CH_W 0.61

static int text_cols(const char *t)
{
    int n = 0;
    for (const unsigned char *c = (const unsigned char *)t; *c; c++)
        if (*c < 0x80)
            n++;
        else if ((*c & 0xc0) != 0x80)
            n += 2;
    return n;
}

static double text_w(const char *shown, int px) { return text_cols(shown) * CH_W * px; }

/* the shown form of s cut to at most `cols` columns ("..." when cut); owned */
static char *shown_fit(const char *s, int cols)
{
    char *t = term_text(s);
    if (text_cols(t) <= cols || cols < 4)
        return t;
    int n = 0;
    char *c = t;
    for (; *c; c++) {
        unsigned char u = (unsigned char)*c;
        if ((u & 0xc0) == 0x80)
            continue;
        int w = u < 0x80 ? 1 : 2;
        if (n + w > cols - 3)
            break;
        n += w;
    }
    strcpy(c, "...");
    return t;
}

/* <text> at x, y of the shown text (already term_text'd), its full form in a title when it was cut */
static void svg_text(FILE *o, double x, int y, const char *cls, const char *anchor, const char *shown,
                     const char *full)
{
    fprintf(o, "<text x=\"%.1f\" y=\"%d\" class=\"%s\"%s%s%s>", x, y, cls, anchor ? " text-anchor=\"" : "",
            anchor ? anchor : "", anchor ? "\"" : "");
    if (full) {
        fputs("<title>", o);
        esc(o, full);
        fputs("</title>", o);
    }
    esc_shown(o, shown, strlen(shown));
    fputs("</text>\n", o);
}

/* Rows of labels below a line, each with a leader from the line down to it
 * (or none): a label goes to the first row where its text clears every text
 * of that row by GAP, covers no leader that runs past that row, and its own
 * leader crosses no text above it; no such row: it is not drawn (counted). */
#define MAX_ROWS 6
#define MAX_PLACED 64
#define GAP 6
struct placed { double x0, x1, lead; int row; }; /* lead < 0: no leader */
struct rows { struct placed p[MAX_PLACED]; int n, used, dropped; };

static bool row_free(const struct rows *r, int row, double x0, double x1, double lead)
{
    for (int k = 0; k < r->n; k++) {
        const struct placed *q = &r->p[k];
        if (q->row == row && x0 < q->x1 + GAP && q->x0 < x1 + GAP)
            return false; /* text on text */
        if (q->lead >= 0 && q->row > row && q->lead >= x0 - 2 && q->lead <= x1 + 2)
            return false; /* this text over a leader that runs down past it */
        if (lead >= 0 && q->row < row && lead >= q->x0 - 2 && lead <= q->x1 + 2)
            return false; /* this leader through a text above */
    }
    return true;
}

static int row_for_lead(struct rows *r, double x0, double x1, double lead)
{
    for (int row = 0; row < MAX_ROWS && r->n < MAX_PLACED; row++)
        if (row_free(r, row, x0, x1, lead)) {
            r->p[r->n++] = (struct placed){x0, x1, lead, row};
            r->used = row + 1 > r->used ? row + 1 : r->used;
            return row;
        }
    r->dropped++;
    return -1;
}

static int row_for(struct rows *r, double x0, double x1) { return row_for_lead(r, x0, x1, -1); }

#define W 960
#define LEFT 78         /* the timeline's y-axis labels live left of it */
#define RIGHT (W - 12)
#define SMALL 11        /* px of the small texts */
#define ROW 14          /* a row of small text */

static const char *size_text(long long b, char *buf, size_t n)
{
    if (b < 0)
        return "size not known";
    return fmt_size(b, buf, n);
}

/* a figure is drawn into a buffer first: its height is known only at its end */
struct figure_buf { char *buf; size_t len; FILE *f; };

static FILE *figure_open(struct figure_buf *fb)
{
    *fb = (struct figure_buf){0};
    if (!(fb->f = open_memstream(&fb->buf, &fb->len)))
        exit(2);
    return fb->f;
}

static void figure_close(FILE *o, struct figure_buf *fb, const char *cls, int height)
{
    fclose(fb->f);
    fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            cls, W, height, W, height);
    fwrite(fb->buf, 1, fb->len, o);
    fputs("</svg>\n", o);
    free(fb->buf);
}

/* ---- the GPU's memory at a failure: one bar of the whole GPU */
#define BAR_X 10
#define BAR_W (W - 20)
#define BAR_H 30

static const char *part_class(const struct mem_part *q, int *nother, int *npool)
{
    static const char *const other[] = {"mo0", "mo1", "mo2", "mo3", "mo4", "mo5", "mo6", "mo7", "mo8"};
    static const char *const pool[] = {"mp0", "mp1", "mp2"};
    switch (q->kind) {
    case MP_OTHER: return other[(*nother)++ % 9];
    case MP_POOL: return pool[(*npool)++ % 3];
    case MP_SELF: return "mself";
    case MP_UNKNOWN: return "munk";
    default: return "mfree";
    }
}

/* the x of `bytes` from the bar's start, at the bar's scale */
static double bar_x(long long bytes, long long span) { return BAR_X + (double)bytes / (double)span * BAR_W; }

struct seg { double x0, x1; const char *cls; char *shown; const struct mem_part *q; };

/* the bar, its segments in proportion to their bytes; a label inside a
 * segment it fits in, else below it in rows, with a line to the segment */
static int memory_bar(FILE *o, const struct mem_picture *m, struct seg *sg, int y)
{
    long long span = mem_picture_span(m), at = 0;
    int nother = 0, npool = 0;
    char sz[32];
    for (int k = 0; k < m->nparts; k++) {
        const struct mem_part *q = &m->parts[k];
        long long b = q->bytes > 0 ? q->bytes : 0;
        char *label = xasprintf("%s %s", q->label, size_text(q->bytes, sz, sizeof sz));
        sg[k] = (struct seg){bar_x(at, span), bar_x(at + b, span), part_class(q, &nother, &npool),
                             shown_fit(label, (int)(BAR_W / (CH_W * SMALL))), q};
        free(label);
        at += b;
        fprintf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"seg %s\" data-bytes=\"%lld\"><title>",
                sg[k].x0, y, sg[k].x1 - sg[k].x0, BAR_H, sg[k].cls, b);
        esc_shown(o, sg[k].shown, strlen(sg[k].shown));
        fputs("</title></rect>\n", o);
    }
    fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", BAR_X, y, BAR_W, BAR_H);
    struct rows r = {0};
    int below = y + BAR_H;
    for (int k = 0; k < m->nparts; k++) {
        struct seg *g = &sg[k];
        double w = text_w(g->shown, SMALL), mid = (g->x0 + g->x1) / 2;
        if (g->q->bytes <= 0 && g->q->kind != MP_FREE)
            continue; /* nothing to point at: the table lists it */
        if (w + 8 <= g->x1 - g->x0) {
            svg_text(o, mid, y + BAR_H / 2 + 4, "m lab in", "middle", g->shown, NULL);
            continue;
        }
        /* the text beside its leader, on the side with more room */
        double x0 = mid > W / 2 ? mid - 4 - w : mid + 4;
        x0 = x0 < BAR_X ? BAR_X : x0 + w > BAR_X + BAR_W ? BAR_X + BAR_W - w : x0;
        int row = row_for_lead(&r, x0, x0 + w, mid);
        if (row < 0)
            continue;
        int ty = below + 14 + row * ROW;
        fprintf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"lead\"/>\n", mid, below, mid, ty - 4);
        svg_text(o, x0, ty, "m lab", NULL, g->shown, NULL);
    }
    return below + 6 + r.used * ROW;
}

/* the request at the bar's scale, from where free memory starts: past the
 * bar's end it does not fit even in all that was free */
static int request_row(FILE *o, const struct mem_picture *m, double free_x, int y)
{
    char sz[32], fr[32];
    long long span = mem_picture_span(m);
    double w = (double)m->request / (double)span * BAR_W, end = free_x + w;
    double clip = end > BAR_X + BAR_W ? BAR_X + BAR_W : end;
    fprintf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"12\" class=\"req\" data-bytes=\"%lld\"><title>asked: ",
            free_x, y, clip - free_x, m->request);
    esc(o, m->request_text);
    fputs("</title></rect>\n", o);
    if (end > BAR_X + BAR_W)
        fprintf(o, "<path d=\"M%d %d l8 6 l-8 6 z\" class=\"reqover\"/>\n", BAR_X + BAR_W, y);
    char *line = m->free > 0 ? xasprintf("asked for %s: %.1fx the %s free", size_text(m->request, sz, sizeof sz),
                                         (double)m->request / (double)m->free, fmt_size(m->free, fr, sizeof fr))
                             : xasprintf("asked for %s, with nothing free", size_text(m->request, sz, sizeof sz));
    char *shown = term_text(line);
    double tw = text_w(shown, SMALL);
    /* right of the request when it fits there, else ending at the bar's start of free memory */
    if (clip + 14 + tw <= W - 4)
        svg_text(o, clip + 14, y + 10, "m lab reqt", NULL, shown, NULL);
    else
        svg_text(o, free_x - 6 > tw + 4 ? free_x - 6 : tw + 4, y + 10, "m lab reqt", "end", shown, NULL);
    free(shown), free(line);
    return y + 12;
}

/* free memory and the request are too thin to see at the GPU's scale: the
 * bar's end again, ZOOM times larger */
static int zoom_row(FILE *o, const struct mem_picture *m, int y)
{
    long long span = mem_picture_span(m), req = m->request > 0 ? m->request : 0;
    long long big = m->free > req ? m->free : req;
    long long range = (double)big * 1.5 >= (double)span ? span : big + big / 2; /* the last `range` bytes of the bar */
    if (range <= 0)
        return y;
    long long used = range - m->free > 0 ? range - m->free : 0;
    double x_of_range = bar_x(span - range, span);
    char sz[32], rz[32];
    char *head = xasprintf("the bar's last %s, %.0f times larger:", fmt_size(range, rz, sizeof rz),
                           (double)span / (double)range);
    char *shown = term_text(head);
    svg_text(o, BAR_X, y + 10, "m lab", NULL, shown, NULL);
    free(shown), free(head);
    /* the part of the bar it enlarges, joined to it */
    fprintf(o, "<path d=\"M%.1f %d L%d %d M%d %d L%d %d\" class=\"lead\"/>\n", x_of_range, y - 2, BAR_X, y + 16,
            BAR_X + BAR_W, y - 2, BAR_X + BAR_W, y + 16);
    int zy = y + 16;
    double zx = (double)BAR_W / (double)range, fx = BAR_X + used * zx;
    fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"seg zused\" data-bytes=\"%lld\"><title>in use</title></rect>\n",
            BAR_X, zy, fx - BAR_X, BAR_H, used);
    if (text_w("in use", SMALL) + 8 <= fx - BAR_X)
        svg_text(o, (BAR_X + fx) / 2, zy + BAR_H / 2 + 4, "m lab", "middle", "in use", NULL);
    fprintf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"seg mfree\" data-bytes=\"%lld\"><title>free</title></rect>\n",
            fx, zy, m->free * zx, BAR_H, m->free);
    char *fl = xasprintf("free %s", fmt_size(m->free, sz, sizeof sz));
    shown = term_text(fl);
    double fw = text_w(shown, SMALL);
    if (fw + 8 <= m->free * zx)
        svg_text(o, fx + m->free * zx / 2, zy + BAR_H / 2 + 4, "m lab in", "middle", shown, NULL);
    else
        svg_text(o, fx - 6, zy + BAR_H / 2 + 4, "m lab", "end", shown, NULL);
    free(shown), free(fl);
    int end = zy + BAR_H;
    if (req > 0) {
        double rw = req * zx, clip = fx + rw > BAR_X + BAR_W ? BAR_X + BAR_W : fx + rw;
        fprintf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"12\" class=\"req\" data-bytes=\"%lld\"><title>asked</title></rect>\n",
                fx, end + 4, clip - fx, req);
        if (fx + rw > BAR_X + BAR_W)
            fprintf(o, "<path d=\"M%d %d l8 6 l-8 6 z\" class=\"reqover\"/>\n", BAR_X + BAR_W, end + 4);
        char *rl = xasprintf("asked %s", fmt_size(req, sz, sizeof sz));
        shown = term_text(rl);
        svg_text(o, fx - 6, end + 14, "m lab reqt", "end", shown, NULL);
        free(shown), free(rl);
        end += 16;
    }
    return end;
}

/* the legend: every part with its bytes and share, the request below */
static void memory_table(FILE *o, const struct mem_picture *m, const struct seg *sg)
{
    char sz[32];
    long long span = mem_picture_span(m);
    fputs("<table class=\"mem\"><tr><th></th><th>who</th><th>bytes</th><th>share</th></tr>\n", o);
    for (int k = 0; k < m->nparts; k++) {
        const struct mem_part *q = &m->parts[k];
        fprintf(o, "<tr><td><span class=\"sw %s\"></span></td><td>", sg[k].cls);
        esc(o, q->label);
        fprintf(o, "</td><td class=\"num\">%s</td><td class=\"num\">", size_text(q->bytes, sz, sizeof sz));
        if (q->bytes >= 0)
            fprintf(o, "%.1f%%", 100.0 * (double)q->bytes / (double)span);
        fputs("</td></tr>\n", o);
    }
    fputs("<tr><td><span class=\"sw req\"></span></td><td>asked: ", o);
    esc(o, m->request_text);
    fprintf(o, "</td><td class=\"num\">%s</td><td class=\"num\"></td></tr>\n</table>\n",
            m->request >= 0 ? size_text(m->request, sz, sizeof sz) : "");
}

static void memory_picture(FILE *o, const struct mem_picture *m)
{
    struct seg *sg = calloc((size_t)m->nparts, sizeof *sg);
    if (!sg)
        exit(2);
    fputs("<figure class=\"gpumem\"><figcaption>", o);
    esc(o, m->title);
    fputs("</figcaption>\n", o);
    struct figure_buf fb;
    FILE *b = figure_open(&fb);
    int y = memory_bar(b, m, sg, 4);
    long long span = mem_picture_span(m);
    double free_x = sg[m->nparts - 1].x0; /* free is the last part */
    double thin = (double)(m->free > m->request ? m->free : m->request) / (double)span * BAR_W;
    if (m->request > 0)
        y = request_row(b, m, free_x, y + 4) + 6;
    if (thin < 40 && (m->free > 0 || m->request > 0))
        y = zoom_row(b, m, y + 8) + 4;
    figure_close(o, &fb, "membar", y + 4);
    memory_table(o, m, sg);
    if (m->note) {
        fputs("<p><small>", o);
        esc(o, m->note);
        fputs("</small></p>\n", o);
    }
    fputs("</figure>\n", o);
    for (int k = 0; k < m->nparts; k++)
        free(sg[k].shown);
    free(sg);
}

static void memory_section(FILE *o, struct analysis *a)
{
    if (!a->npics)
        return;
    fputs("<h2>GPU memory at the failure</h2>\n", o);
    for (int k = 0; k < a->npics; k++)
        memory_picture(o, &a->pics[k]);
}

/* ---- the timeline: one lane per chosen process, one clock for all */
#define PLOT_H 80       /* a lane's plot with memory readings */
#define PLOT_H_NONE 28  /* without */
#define MAX_FAIL_LINES 4

struct lane_geom {
    int y0, top_y, base;
    long long top;
    double off, t0, span;
};

static double lane_x(const struct lane_geom *g, double t)
{
    return LEFT + (t + g->off - g->t0) / g->span * (RIGHT - LEFT);
}

static double lane_y(const struct lane_geom *g, long long b)
{
    return g->base - (double)b / (double)g->top * (g->base - g->top_y);
}

/* free memory as a line with what was in use shaded above it, the sizes asked for as bars */
static void lane_memory(FILE *o, struct trace *t, const struct lane_geom *g)
{
    char sz[32];
    struct sbuf pts = {0};
    double lx = 0, ly = 0, first_x = -1;
    long long last = -1;
    for (int i = 0; i < t->ntl; i++)
        if (t->tl[i].kind == TL_FREE) {
            lx = lane_x(g, t->tl[i].t), ly = lane_y(g, t->tl[i].v), last = t->tl[i].v;
            first_x = first_x < 0 ? lx : first_x;
            sb_printf(&pts, "%.1f,%.1f ", lx, ly);
        }
    if (pts.len) {
        fprintf(o, "<polygon points=\"%.1f,%d %s%.1f,%d\" class=\"used\"><title>in use</title></polygon>\n", first_x,
                g->top_y, pts.s, lx, g->top_y);
        fprintf(o, "<polyline points=\"%s\" class=\"free\"><title>free GPU memory</title></polyline>\n", pts.s);
        char *l = xasprintf("%s free", fmt_size(last, sz, sizeof sz));
        char *shown = term_text(l);
        double w = text_w(shown, SMALL);
        int y = ly - 4 < g->top_y + 10 ? (int)ly + 13 : (int)ly - 4;
        if (y > g->base - 2)
            y = (int)ly - 4;
        svg_text(o, lx + 4 + w <= RIGHT ? lx + 4 : lx - 4, y, "m small freet", lx + 4 + w <= RIGHT ? NULL : "end", shown, NULL);
        free(shown), free(l);
    }
    free(pts.s);
    for (int i = 0; i < t->ntl; i++) {
        struct tl_point *q = &t->tl[i];
        if (q->kind == TL_FREE || q->v <= 0)
            continue;
        bool al = q->kind == TL_ALLOC;
        double x = lane_x(g, q->t), y = lane_y(g, q->v < g->top ? q->v : g->top);
        fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"5\" height=\"%.1f\" class=\"%s\"><title>", x - 2, y,
                g->base - y > 1 ? g->base - y : 1, al ? "alloc" : q->kind == TL_FB ? "fb" : "ws");
        fprintf(o, "%s %s</title></rect>\n", al ? "allocation" : q->kind == TL_FB ? "fallback" : "workspace",
                fmt_size(q->v, sz, sizeof sz));
    }
}

/* the unit a span's times are told in: seconds per unit, its name */
static double time_unit(double span, const char **name)
{
    static const struct { double max, div; const char *name; } units[] = {
        {1e-3, 1e-6, "µs"}, {1, 1e-3, "ms"}, {300, 1, "s"}, {18000, 60, "min"}, {1e300, 3600, "h"}};
    size_t k = 0;
    while (span >= units[k].max)
        k++;
    *name = units[k].name;
    return units[k].div;
}

/* "0.5 ms": a time in the unit of the span, with `digits` significant digits at most */
static void time_label(char *buf, size_t n, double v, double span, int digits)
{
    const char *unit;
    double div = time_unit(span, &unit);
    snprintf(buf, n, "%.*g %s", digits, fabs(v / div) < 1e-9 ? 0 : v / div, unit);
}

/* ticks every 1, 2 or 5 times a power of ten of the unit, at least 90 px apart */
static void time_axis(FILE *o, const struct lane_geom *g)
{
    const char *unit;
    double div = time_unit(g->span, &unit), px_per_unit = (RIGHT - LEFT) / g->span * div;
    double p10 = pow(10, floor(log10(90 / px_per_unit))), step = p10;
    static const double mult[] = {1, 2, 5, 10};
    for (size_t k = 0; k < sizeof mult / sizeof mult[0]; k++)
        if ((step = p10 * mult[k]) * px_per_unit >= 90)
            break;
    for (int k = 0; k * step * div <= g->span * 1.0001; k++) {
        double x = LEFT + k * step * px_per_unit;
        char l[32];
        time_label(l, sizeof l, k * step * div, g->span, 6);
        fprintf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"tick\"/>\n", x, g->base, x, g->base + 4);
        double w = text_w(l, SMALL);
        svg_text(o, x + w / 2 > W - 2 ? W - 2 - w / 2 : x, g->base + 15, "m small", "middle", l, NULL);
    }
}

/* libraries loaded close together (within one label's width) share one tick label */
struct lib_group { double x; int first, n; };

/* the number label of failures first..last, which lie close together at x */
static void failure_number(FILE *o, const struct lane_geom *g, struct rows *r, int marks_y, double x, int first,
                           int last)
{
    char num[32];
    if (last > first)
        snprintf(num, sizeof num, "%d-%d", first, last);
    else
        snprintf(num, sizeof num, "%d", first);
    double w = text_w(num, SMALL);
    int row = row_for_lead(r, x - w / 2, x + w / 2, x);
    if (row < 0)
        return;
    if (row)
        fprintf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"lead\"/>\n", x, g->base + 6, x,
                marks_y + row * ROW - 10);
    svg_text(o, x, marks_y + row * ROW, "m small fnum", "middle", num, NULL);
}

/* failures: a dot on the axis each, the first MAX_FAIL_LINES numbered below
 * it (those close together under one number, 1-3) and written out (lines,
 * owned); returns how many there are */
static int lane_failures(FILE *o, struct trace *t, const struct lane_geom *g, struct rows *r, int marks_y,
                         char **lines, int *shown)
{
    json_t *evs = t->events;
    int nfail = 0, first = 0;
    double gx = 0;
    for (size_t i = 0; i < json_array_size(evs); i++) {
        if (!is_failure_event(t, i))
            continue;
        json_t *e = json_array_get(evs, i);
        double x = lane_x(g, trace_event_t(t, e));
        char *d = describe_event(e);
        fprintf(o, "<circle cx=\"%.1f\" cy=\"%d\" r=\"5\" class=\"fail\"><title>", x, g->base);
        esc(o, d);
        fputs("</title></circle>\n", o);
        nfail++;
        if (*shown < MAX_FAIL_LINES) {
            if (first && x - gx >= 14) { /* the group before is complete */
                failure_number(o, g, r, marks_y, gx, first, nfail - 1);
                first = 0;
            }
            if (!first)
                first = nfail, gx = x;
            char tl[32];
            time_label(tl, sizeof tl, trace_event_t(t, e) + g->off - g->t0, g->span, 4);
            lines[(*shown)++] = xasprintf("%d  at %s  %s", nfail, tl, d);
        }
        free(d);
    }
    if (first)
        failure_number(o, g, r, marks_y, gx, first, *shown);
    return nfail;
}

/* libraries: a tick each, names in groups of those loaded close together;
 * fallbacks: a diamond at the plot's top */
static void lane_libs(FILE *o, struct trace *t, const struct lane_geom *g, struct rows *r, int marks_y)
{
    json_t *evs = t->events;
    struct lib_group grp = {.first = -1};
    for (size_t i = 0; i <= json_array_size(evs); i++) {
        json_t *e = json_array_get(evs, i);
        if (e && strcmp(jstr(e, "ev", ""), "fallback") == 0) {
            fprintf(o, "<path d=\"M%.1f %d l6 6 l-6 6 l-6 -6 z\" class=\"fbm\"><title>fallback: ",
                    lane_x(g, trace_event_t(t, e)), g->top_y);
            esc(o, jstr(e, "action", "?"));
            fputs("</title></path>\n", o);
        }
        if (e && strcmp(jstr(e, "ev", ""), "lib") != 0)
            continue;
        double x = e ? lane_x(g, trace_event_t(t, e)) : 0;
        if (e) {
            fprintf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"lib\"><title>", x, g->base, x, g->base + 8);
            esc(o, jstr(e, "path", "?"));
            fputs("</title></line>\n", o);
            if (grp.first >= 0 && x - grp.x < 60) {
                grp.n++;
                continue;
            }
        }
        if (grp.first >= 0) { /* the group before is complete: its label */
            const char *name = base_name(jstr(json_array_get(evs, (size_t)grp.first), "path", "?"));
            char *l = grp.n > 1 ? xasprintf("%s +%d", name, grp.n - 1) : xstrdup(name);
            char *shown = shown_fit(l, 40);
            double w = text_w(shown, SMALL), x0 = grp.x + w > W - 2 ? W - 2 - w : grp.x;
            if (row_for(r, x0, x0 + w) >= 0)
                svg_text(o, x0, marks_y + r->p[r->n - 1].row * ROW, "m small libt", NULL, shown, NULL);
            free(shown), free(l);
        }
        grp = (struct lib_group){.x = x, .first = (int)i, .n = 1};
    }
}

/* below the axis: failure numbers and library names in rows, then the
 * failures written out; returns the lane's bottom */
static int lane_marks(FILE *o, struct trace *t, const struct lane_geom *g)
{
    struct rows r = {0};
    int marks_y = g->base + 32, shown_fail = 0;
    char *lines[MAX_FAIL_LINES] = {0};
    int nfail = lane_failures(o, t, g, &r, marks_y, lines, &shown_fail); /* first: numbers matter more than names */
    lane_libs(o, t, g, &r, marks_y);
    int y = marks_y + (r.used ? r.used - 1 : -1) * ROW + 4;
    if (r.dropped) {
        char *l = xasprintf("(%d more libraries or failures: see the table below)", r.dropped);
        svg_text(o, LEFT, y += ROW, "m small", NULL, l, NULL);
        free(l);
    }
    for (int k = 0; k < shown_fail; k++) {
        char *shown = shown_fit(lines[k], (int)((W - LEFT) / (CH_W * SMALL)) - 1);
        svg_text(o, LEFT, y += ROW, "m small ftext", NULL, shown, strcmp(shown, lines[k]) ? lines[k] : NULL);
        free(shown), free(lines[k]);
    }
    if (nfail > shown_fail) {
        char *l = xasprintf("and %d more failures (the table below)", nfail - shown_fail);
        svg_text(o, LEFT, y += ROW, "m small ftext", NULL, l, NULL);
        free(l);
    }
    return y + 10;
}

/* one lane: its title, y axis, memory, time axis, marks; returns its bottom */
static int lane(FILE *o, struct analysis *a, size_t ti, int y0, double t0, double span)
{
    struct trace *t = &a->s->t[ti];
    bool readings = t->tl_top > 0;
    struct lane_geom g = {.y0 = y0, .top_y = y0 + 24, .top = t->tl_top, .t0 = t0, .span = span};
    g.base = g.top_y + (readings ? PLOT_H : PLOT_H_NONE);
    g.off = t->wall > 0 ? t->wall : 0;
    char sz[32];
    char *title = xasprintf("%s  %s", a->p[ti].label, a->p[ti].prog);
    char *shown = shown_fit(title, (int)((W - 8) / (CH_W * 12)));
    svg_text(o, 4, y0 + 14, "m lab b", NULL, shown, strcmp(shown, title) ? title : NULL);
    free(shown), free(title);
    fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", LEFT, g.base, RIGHT, g.base);
    fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", LEFT, g.top_y, LEFT, g.base);
    if (readings) {
        svg_text(o, LEFT - 4, g.top_y + 8, "m small", "end", fmt_size(g.top, sz, sizeof sz), NULL);
        svg_text(o, LEFT - 4, g.base, "m small", "end", "0", NULL);
        fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"grid\"/>\n", LEFT, g.top_y, RIGHT, g.top_y);
        lane_memory(o, t, &g);
    } else {
        svg_text(o, LEFT + 8, g.top_y + 14, "m small", NULL, "no GPU memory readings in this trace", NULL);
    }
    time_axis(o, &g);
    return lane_marks(o, t, &g);
}

#define MAX_LANES 16

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
        esc_code(o, e->cause);
        if (strcmp(e->fix, f->fix) != 0) {
            fputs("; fix: ", o);
            esc_code(o, e->fix);
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
    esc_code(o, f->title);
    fputs("</b> <small>(", o);
    esc(o, f->r->id);
    fputs(", ", o);
    char *w = who_counted(a, &g->p);
    esc(o, w);
    free(w);
    fputs(")</small><dl><dt>you see</dt><dd>", o);
    esc_code(o, f->symptom);
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
    esc_code(o, f->cause);
    if (g->nb > 1)
        variants(o, a, g, f);
    fputs("</dd><dt>fix</dt><dd>", o);
    esc_code(o, f->fix);
    fputs("</dd>", o);
    if (f->went_on || strcmp(f->severity, f->r->severity) != 0) {
        fputs("<dt>after it</dt><dd>", o);
        esc_code(o, f->went_on ? f->went_on : "the process went on and exited 0");
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
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff;max-width:1000px}\n"
    "h1{font-size:22px} h2{font-size:17px;margin-top:28px}\n"
    ".problem{border-left:6px solid #c62828;padding:6px 12px;margin:12px 0;background:#fff5f5}\n"
    ".problem.warning{border-color:#ef6c00;background:#fff8ee}\n"
    ".problem.note{border-color:#78909c;background:#f5f7f8}\n"
    ".layer{font-size:12px;background:#444;color:#fff;padding:1px 6px;border-radius:3px}\n"
    "dt{font-weight:bold;margin-top:4px} dd{margin-left:16px} code{background:#eee;padding:0 3px;border-radius:3px}\n"
    "table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}\n"
    "td.num{text-align:right;white-space:nowrap}\n"
    "details{margin:4px 0} summary{cursor:pointer}\n"
    ".ok{color:#2e7d32;font-weight:bold}\n"
    "figure{margin:12px 0} figcaption{font-weight:bold;margin-bottom:6px}\n"
    "svg{border:1px solid #ddd;background:#fcfcfc;display:block}\n"
    ".m{font-family:'DejaVu Sans Mono',Menlo,Consolas,'Liberation Mono',monospace;font-size:11px;fill:#333}\n"
    ".lab{font-size:11px} .b{font-weight:bold;font-size:12px} .in{fill:#fff} .small{fill:#555}\n"
    ".ftext{fill:#b71c1c} .fnum{fill:#b71c1c;font-weight:bold} .libt{fill:#666} .freet{fill:#1b5e20} .reqt{fill:#b71c1c}\n"
    ".axis{stroke:#999} .tick{stroke:#999} .grid{stroke:#ddd;stroke-dasharray:3 3} .sep{stroke:#ddd}\n"
    ".free{fill:none;stroke:#2e7d32;stroke-width:2} .used{fill:#e0e0e0;opacity:.6}\n"
    ".alloc{fill:#c62828;opacity:.7} .ws{fill:#ef6c00;opacity:.7} .fb{fill:#1565c0;opacity:.5} .fbm{fill:#1565c0}\n"
    ".lib{stroke:#777} .fail{fill:#c62828;stroke:#fff} .lead{stroke:#888;fill:none}\n"
    ".frame{fill:none;stroke:#555} .seg{stroke:#fff;stroke-width:.5}\n"
    ".mo0{fill:#6a1b9a;background:#6a1b9a} .mo1{fill:#8d6e63;background:#8d6e63} .mo2{fill:#ad1457;background:#ad1457}\n"
    ".mo3{fill:#4527a0;background:#4527a0} .mo4{fill:#00838f;background:#00838f} .mo5{fill:#827717;background:#827717}\n"
    ".mo6{fill:#5d4037;background:#5d4037} .mo7{fill:#880e4f;background:#880e4f} .mo8{fill:#37474f;background:#37474f}\n"
    ".mp0{fill:#1565c0;background:#1565c0} .mp1{fill:#1e88e5;background:#1e88e5} .mp2{fill:#0d47a1;background:#0d47a1}\n"
    ".mself{fill:#64b5f6;background:#64b5f6} .munk{fill:#9e9e9e;background:#9e9e9e} .zused{fill:#bdbdbd}\n"
    ".mfree{fill:#43a047;background:#43a047} .req{fill:#e53935;background:#e53935} .reqover{fill:#b71c1c}\n"
    "span.sw{display:inline-block;width:12px;height:12px;vertical-align:middle;border:1px solid #fff}\n"
    "span.sw.alloc{background:#c62828} span.sw.ws{background:#ef6c00} span.sw.fb{background:#1565c0}\n"
    "span.sw.fail{background:#c62828;border-radius:6px}\n"
    "table.mem td{font-size:12px}\n"
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
    esc_code(o, oc);
    fputs("</p>\n", o);
    free(oc);
    int shown = 0; /* what each incomplete one lacks, the first 16 */
    for (size_t i = 0; i < a->s->n && !problems && shown < 16; i++)
        if (a->p[i].incomplete) {
            fputs("<p>", o);
            esc_code(o, a->p[i].incomplete);
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
        esc_code(o, t);
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
        esc_code(o, jstr(json_array_get(a->incons, i), "text", "?"));
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
    double span = t1 - t0 > 1e-6 ? t1 - t0 : 1e-3;
    fputs("<h2>Timeline</h2>\n<p><small><span class=\"sw mfree\"></span> free GPU memory (shaded above it: in use); "
          "<span class=\"sw alloc\"></span> allocations that failed; <span class=\"sw ws\"></span> workspace requests; "
          "<span class=\"sw fb\"></span> fallbacks; <span class=\"sw fail\"></span> failures, numbered and listed under "
          "each lane; grey ticks: libraries loaded, named below the axis. Time runs from the start of ", o);
    fputs(lanes > 1 ? "the first of these processes" : "the process", o);
    if ((size_t)lanes < a->s->n)
        fprintf(o, "; %d of the %zu processes: the first to fail and one of each kind", lanes, a->s->n);
    fputs(".</small></p>\n", o);
    struct figure_buf fb;
    FILE *b = figure_open(&fb);
    int y = 0;
    for (int k = 0; k < lanes; k++) {
        if (k)
            fprintf(b, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"sep\"/>\n", y, W, y);
        y = lane(b, a, pick[k], y, t0, span) + 6;
    }
    figure_close(o, &fb, "timeline", y);
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
    memory_section(o, a); /* where the GPU's memory went, first: what users look for in a memory failure */
    for (int g = 0; g < a->ngroups; g++)
        problem(o, a, &a->groups[g]);
    inconsistent_section(o, a);
    timeline(o, a);
    processes_section(o, a);
    fputs("</body></html>\n", o);
    return to_stdout ? (fflush(o) == 0 && !ferror(o) ? 0 : -1) : fclose(o);
}
