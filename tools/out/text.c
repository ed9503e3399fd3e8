/* text.c - the report as text (`convguard report`): how each process ended
 * (its outcome), the processes, the first failure, each finding told once
 * with who it concerns (what a process died of first), and the notes about
 * the traces themselves. */
#include <stdlib.h>
#include <string.h>

#include "out/out.h"

/* the columns the report fills: the terminal's (util/term.c term_width),
 * set by print_text */
static int wrap_width = 80;

/* a word that is a path with "//", "/./" or "/../" in it, as it is meant
 * (util/term.c path_tidy); NULL: the word as it is */
static char *tidy_word(const char *p, size_t w)
{
    char *word = xasprintf("%.*s", (int)w, p);
    bool messy = strchr(word, '/') && (strstr(word, "//") || strstr(word, "/./") || strstr(word, "/../"));
    char *t = messy ? path_tidy(word) : NULL;
    free(word);
    return t;
}

/* Prints `text` after `head`, wrapped at the terminal's width with a hanging
 * indent.  Everything text.c prints of a trace goes through here or term_printf:
 * escaped (util/term.c), so no value can move the cursor or start a line. */
static void wrap(FILE *out, const char *head, const char *text, int indent)
{
    char *safe = term_text(text);
    int col = fprintf(out, "%s", head);
    const char *p = safe;
    while (*p) {
        size_t w = strcspn(p, " ");
        char *tidy = tidy_word(p, w);
        size_t shown = tidy ? strlen(tidy) : w;
        if (col > indent && col + 1 + (int)shown > wrap_width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (p != safe) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)shown, tidy ? tidy : p);
        col += (int)shown;
        free(tidy);
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
    free(safe);
}

/* What is wrong with a trace file itself, "" when nothing. */
static char *trace_note(struct trace *t)
{
    struct sbuf b = {0};
    char sz[32];
    if (t->st.bad_lines)
        sb_printf(&b, ", %ld unreadable line%s skipped", t->st.bad_lines, t->st.bad_lines > 1 ? "s" : "");
    if (t->st.last_line_cut)
        sb_add(&b, ", the last line was cut off");
    if (t->st.seq_gaps)
        sb_printf(&b, ", %ld line%s lost (gaps in seq)", t->st.seq_gaps, t->st.seq_gaps > 1 ? "s" : "");
    if (jint(t->exit, "events_dropped", 0) > 0)
        sb_printf(&b, ", %lld events dropped by the shim", jint(t->exit, "events_dropped", 0));
    if (t->st.gap_events)
        sb_printf(&b, ", %lld events lost before the shim's trace_gap", t->st.gap_lost);
    if (t->st.nul_bytes)
        sb_printf(&b, ", %s of NUL bytes (a file cut by a crash)", fmt_size(t->st.nul_bytes, sz, sizeof sz));
    if (t->st.long_lines)
        sb_printf(&b, ", %ld line%s over 4 MiB skipped", t->st.long_lines, t->st.long_lines > 1 ? "s" : "");
    if (t->st.fixed_utf8)
        sb_printf(&b, ", %ld line%s with bytes that are not UTF-8", t->st.fixed_utf8, t->st.fixed_utf8 > 1 ? "s" : "");
    if (t->st.elided) {
        sb_printf(&b, ", %ld event%s only counted (past the first and last ones of their kind:", t->st.elided,
                  t->st.elided > 1 ? "s" : "");
        const char *k;
        json_t *v;
        int n = 0;
        json_object_foreach(t->elided, k, v)
            sb_printf(&b, "%s %s %lld", n++ ? "," : "", k, (long long)json_integer_value(v));
        sb_add(&b, ")");
    }
    if (!t->start)
        sb_add(&b, ", no start line");
    bool crashed = false;
    for (size_t k = 0; k < json_array_size(t->events); k++)
        crashed |= strcmp(jstr(json_array_get(t->events, k), "ev", ""), "crash") == 0;
    if (!t->exit && !crashed && !t->execd)
        sb_add(&b, ", no exit line (killed, still running, or convguard's file closed)");
    char *r = xstrdup(b.len ? b.s + 2 : "");
    free(b.s);
    return r;
}

/* "FILE1, FILE2, FILE3 and 997 more" */
static char *files_text(json_t *files, bool all)
{
    struct sbuf b = {0};
    size_t n = json_array_size(files);
    for (size_t k = 0; k < n; k++) {
        if (k == 3 && !all) {
            sb_printf(&b, " and %zu more", n - 3);
            break;
        }
        sb_printf(&b, "%s%s", k ? ", " : "", json_string_value(json_array_get(files, k)));
    }
    return sb_take(&b);
}

/* Notes of damaged traces: per file when few, else once per kind of damage with the count. */
static void damage_notes(struct analysis *a, FILE *out, bool all)
{
    json_t *by_note = json_object(), *order = json_array();
    struct procs *who = NULL;
    for (size_t i = 0; i < a->s->n; i++) {
        char *note = trace_note(&a->s->t[i]);
        if (*note) {
            json_t *k = json_object_get(by_note, note);
            if (!k) {
                k = json_integer((json_int_t)json_array_size(order));
                json_object_set_new(by_note, note, k);
                json_array_append_new(order, json_pack("{s:s, s:[]}", "note", note, "files"));
                who = realloc(who, json_array_size(order) * sizeof *who);
                memset(&who[json_array_size(order) - 1], 0, sizeof *who);
            }
            json_t *o = json_array_get(order, (size_t)json_integer_value(k));
            json_array_append_new(json_object_get(o, "files"), json_text(a->s->t[i].file));
            procs_add(&who[json_integer_value(k)], i);
        }
        free(note);
    }
    for (size_t k = 0; k < json_array_size(order); k++) {
        json_t *o = json_array_get(order, k), *files = json_object_get(o, "files");
        const char *note = jstr(o, "note", "?");
        if (json_array_size(files) <= 3 || all) {
            for (size_t j = 0; j < json_array_size(files); j++)
                term_wrapf(out, 4, "note: %s: %s", json_string_value(json_array_get(files, j)), note);
        } else {
            char *w = who_counted(a, &who[k]), *f = files_text(files, false);
            term_wrapf(out, 4, "note: %s: %s (%s)", w, note, f);
            free(w), free(f);
        }
        procs_free(&who[k]);
    }
    free(who);
    json_decref(by_note);
    json_decref(order);
}

/* files that could not be read, by reason: per file when few, else with the count */
static void unreadable_notes(struct analysis *a, FILE *out, bool all)
{
    json_t *by_err = json_object(), *errs = json_array();
    for (size_t i = 0; i < json_array_size(a->s->unreadable); i++) {
        json_t *u = json_array_get(a->s->unreadable, i);
        const char *e = jstr(u, "error", "?");
        json_t *l = json_object_get(by_err, e);
        if (!l) {
            json_object_set_new(by_err, e, l = json_array());
            json_array_append_new(errs, json_string(e));
        }
        json_array_append_new(l, json_string(jstr(u, "path", "?")));
    }
    for (size_t k = 0; k < json_array_size(errs); k++) {
        const char *e = json_string_value(json_array_get(errs, k));
        json_t *l = json_object_get(by_err, e);
        if (json_array_size(l) <= 3 || all) {
            for (size_t j = 0; j < json_array_size(l); j++)
                term_wrapf(out, 4, "note: %s: %s", json_string_value(json_array_get(l, j)), e);
        } else {
            char *f = files_text(l, false);
            term_wrapf(out, 4, "note: %zu files: %s (%s)", json_array_size(l), e, f);
            free(f);
        }
    }
    json_decref(by_err);
    json_decref(errs);
}

/* Notes: per file when few, else once per kind of damage with the count. */
static void trace_notes(struct analysis *a, FILE *out, bool all)
{
    damage_notes(a, out, all);
    unreadable_notes(a, out, all);
}

/* more processes in the table than this: alike ones share a line */
#define TABLE_MAX 16

static void process_line(struct analysis *a, FILE *out, size_t i)
{
    struct proc_sum *p = &a->p[i];
    char *libs = lib_short(p);
    term_printf(out, "  %-22s %-22s %s", p->label, p->prog, libs);
    if (p->first_f >= 0)
        term_printf(out, "-> %s\n", a->f[p->first_f].title);
    else if (p->nfail)
        term_printf(out, "%d failure%s\n", p->nfail, p->nfail > 1 ? "s" : "");
    else
        term_printf(out, "ok\n");
    free(libs);
}

static void process_block(struct analysis *a, FILE *out, size_t i, bool verbose)
{
    struct proc_sum *p = &a->p[i];
    size_t n = a->s->n;
    char *libs = lib_summary(p);
    if (n > 1)
        term_printf(out, "%s  %s  (trace %s)\n", p->label, p->prog, a->s->t[i].file);
    wrap(out, "  libraries: ", libs, 13);
    free(libs);
    json_t *evs = a->s->t[i].events;
    if (verbose) {
        for (size_t k = 0; k < json_array_size(evs); k++) {
            json_t *e = json_array_get(evs, k);
            if (strcmp(jstr(e, "ev", ""), "lib") == 0) {
                char v[32], runs_as[64] = "";
                long long ver = jint(e, "version", -1);
                bool cudnn = strcmp(jstr(e, "family", ""), "cudnn") == 0;
                if (cudnn && ver < 0 && p->cudnn_ver > 0) /* the dispatcher has no version of its own */
                    snprintf(runs_as, sizeof runs_as, "(runs as %s: its parts' version)", fmt_cudnn_ver(p->cudnn_ver, v, sizeof v));
                term_printf(out, "    %s %s %s\n", jstr(e, "path", "?"),
                        *runs_as ? runs_as : cudnn ? fmt_cudnn_ver(ver, v, sizeof v) : fmt_cuda_ver(ver, v, sizeof v),
                        jstr(e, "via", ""));
            }
        }
    }
    if (p->nfail) {
        term_printf(out, "  failures:\n");
        int k = 0;
        for (size_t j = 0; j < json_array_size(evs); j++) {
            if (!is_failure_event(&a->s->t[i], j))
                continue;
            if (k++ == 8 && !verbose) {
                term_printf(out, "    ... and %d more\n", p->nfail - 8);
                break;
            }
            char *d = describe_event(json_array_get(evs, j));
            wrap(out, "    ", d, 6);
            free(d);
        }
    }
}

static void first_failure_text(struct analysis *a, FILE *out)
{
    char *head = first_failure_head(a);
    if (!head)
        return;
    wrap(out, "first failure: ", head, 4);
    free(head);
    for (int k = 0; k < AFTER_KINDS; k++) {
        char *t = after_text(a, (enum after_kind)k);
        if (t)
            wrap(out, "  ", t, 4);
        free(t);
    }
    char *c = clock_note(a);
    if (c) {
        char *t = xasprintf("(%s)", c);
        wrap(out, "  ", t, 4);
        free(t);
        free(c);
    }
}

/* what came after a finding that is less in this run than its rule says */
static void after_line(FILE *out, struct finding *f)
{
    if (f->went_on) {
        char *t = xasprintf("%s: context, not what the process died of", f->went_on);
        wrap(out, "    after:   ", t, 13);
        free(t);
    } else if (strcmp(f->severity, f->r->severity) != 0) {
        wrap(out, "    after:   ", "the process went on and exited 0: a warning, not what ended it", 13);
    }
}

/* A group of findings: told once, with who; its variants (other numbers,
 * another library) told apart below the cause. */
static void finding_group(struct analysis *a, FILE *out, struct fgroup *g, bool blocks, bool all)
{
    size_t n = a->s->n;
    struct block *b0 = &a->blocks[g->blocks[0]];
    struct finding *f = &a->f[b0->head];
    char *who = NULL;
    if (g->p.n <= 6) {
        struct sbuf w = {0};
        for (size_t k = 0; k < g->p.n; k++)
            sb_printf(&w, "%s%s", k ? ", " : "", a->p[g->p.i[k]].label);
        who = sb_take(&w);
    } else {
        who = who_counted(a, &g->p);
    }
    /* an error of the rule that is less in this run: a failure the library went on from, a process that exited 0 */
    bool less = strcmp(f->severity, f->r->severity) != 0;
    char *h = xasprintf("[%s] %s%s%s%s%s%s", f->r->layer, less ? f->severity : "", less ? ": " : "", f->title,
                        n > 1 ? " (" : "", n > 1 ? who : "", n > 1 ? ")" : "");
    wrap(out, "", h, 4);
    free(h);
    free(who);
    wrap(out, "    you see: ", f->symptom, 13);
    if (*f->seen && !blocks) {
        char *t = n > 1 ? xasprintf("%s, in %s", f->seen, a->p[f->ti].label) : xstrdup(f->seen);
        wrap(out, "    trace:   ", t, 13);
        free(t);
    }
    if (f->driver)
        wrap(out, "    driver:  ", f->driver, 13);
    if (g->nb == 1) {
        wrap(out, "    cause:   ", f->cause, 13);
    } else {
        char *w = who_counted(a, &b0->p), *t = xasprintf("%s (%s)", f->cause, w);
        wrap(out, "    cause:   ", t, 13);
        free(w), free(t);
        int shown = 0;
        for (int k = 1; k < g->nb; k++) {
            if (shown++ == 3 && !all) {
                char *m = xasprintf("and %d more variants (--all lists them)", g->nb - k);
                wrap(out, "    also:    ", m, 13);
                free(m);
                break;
            }
            struct block *b = &a->blocks[g->blocks[k]];
            struct finding *e = &a->f[b->head];
            char *bw = who_counted(a, &b->p);
            char *t2 = strcmp(e->fix, f->fix) == 0 ? xasprintf("%s: %s", bw, e->cause)
                                                  : xasprintf("%s: %s; fix: %s", bw, e->cause, e->fix);
            wrap(out, "    also:    ", t2, 13);
            free(bw), free(t2);
        }
    }
    wrap(out, "    fix:     ", f->fix, 13);
    after_line(out, f);
}

/* "convguard report: WHAT: N problems" */
static void head_line(struct analysis *a, FILE *out)
{
    size_t n = a->s->n;
    int problems = analysis_problems(a);
    char head[256];
    if (n == 1)
        snprintf(head, sizeof head, "%s (%s) on %s, %s", a->p[0].label, a->p[0].prog, a->s->t[0].host,
                 a->s->t[0].file);
    else
        snprintf(head, sizeof head, "%zu processes on %d host%s", n, a->nhosts, a->nhosts > 1 ? "s" : "");
    term_printf(out, "convguard report: %s: ", head);
    if (problems)
        term_printf(out, "%d problem%s\n", problems, problems > 1 ? "s" : "");
    else if (a->nfailed || a->nunowned) /* never: each failed process has a finding (outcome.c) */
        term_printf(out, "a process failed\n");
    else if (a->nincomplete == 1) /* what is missing may hold the failure */
        term_printf(out, "no failure recorded, but the trace is incomplete\n");
    else if (a->nincomplete)
        term_printf(out, "no failure recorded, but %d traces are incomplete\n", a->nincomplete);
    else if (a->ngroups)
        term_printf(out, "no problem found (%d note%s: failures the program went on from)\n", a->ngroups,
                    a->ngroups > 1 ? "s" : "");
    else
        term_printf(out, "no problem found\n");
    char *o = outcome_summary(a); /* every report starts from what happened to each process */
    wrap(out, "outcome: ", o, 4);
    free(o);
}

/* no problem found, and traces incomplete: what each one lacks (the notes say it of every file) */
static void incomplete_lines(struct analysis *a, FILE *out, bool all)
{
    int shown = 0;
    for (size_t i = 0; i < a->s->n && !analysis_problems(a); i++) {
        if (!a->p[i].incomplete)
            continue;
        if (shown++ == 3 && !all) {
            fprintf(out, "and %d more incomplete traces (--all lists them)\n", a->nincomplete - 3);
            break;
        }
        wrap(out, "", a->p[i].incomplete, 4);
    }
}

/* many processes: those alike share a line, the most common first, at most 12 lines */
static void process_kinds(struct analysis *a, FILE *out)
{
    int *order = malloc((size_t)(a->npgroups ? a->npgroups : 1) * sizeof *order);
    for (int g = 0; g < a->npgroups; g++)
        order[g] = g;
    for (int x = 1; x < a->npgroups; x++) /* insertion sort: stable, by size */
        for (int y = x; y > 0 && a->pgroups[order[y]].p.n > a->pgroups[order[y - 1]].p.n; y--) {
            int z = order[y];
            order[y] = order[y - 1], order[y - 1] = z;
        }
    for (int g = 0; g < a->npgroups; g++) {
        struct pgroup *pg = &a->pgroups[order[g]];
        if (g == 12) {
            size_t rest = 0;
            for (int k = g; k < a->npgroups; k++)
                rest += a->pgroups[order[k]].p.n;
            term_printf(out, "  (%d more kinds of process, %zu processes: --all lists every process)\n",
                    a->npgroups - g, rest);
            break;
        }
        char *w = who_counted(a, &pg->p), *t = xasprintf("%s: %s", w, pg->line);
        wrap(out, "  ", t, 6);
        free(w), free(t);
    }
    free(order);
}

void print_text(struct analysis *a, FILE *out, bool verbose, bool all)
{
    wrap_width = term_width(out);
    size_t n = a->s->n, shown = 0, quiet = 0;
    all |= verbose;
    for (size_t i = 0; i < n; i++)
        shown += analysis_in_table(a, i);
    quiet = n - shown;
    head_line(a, out);
    bool blocks = verbose || shown <= 3;
    if (blocks) {
        for (size_t i = 0; i < n; i++)
            if (analysis_in_table(a, i) || verbose)
                process_block(a, out, i, verbose);
    } else if (shown <= TABLE_MAX || all) {
        for (size_t i = 0; i < n; i++)
            if (analysis_in_table(a, i))
                process_line(a, out, i);
    } else {
        process_kinds(a, out);
    }
    if (quiet && !verbose)
        term_printf(out, "  (%zu more process%s loaded no CUDA library and had no failure)\n", quiet, quiet > 1 ? "es" : "");
    if (n > 1)
        first_failure_text(a, out);
    if (json_array_size(a->incons)) {
        term_printf(out, "inconsistent across processes:\n");
        for (size_t i = 0; i < json_array_size(a->incons); i++)
            wrap(out, "  ", jstr(json_array_get(a->incons, i), "text", "?"), 4);
    }
    for (int g = 0; g < a->ngroups; g++)
        finding_group(a, out, &a->groups[g], blocks, all);
    incomplete_lines(a, out, all);
    trace_notes(a, out, all);
}
