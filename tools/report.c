/* report.c - `convguard report`: turns traces into "what you see -> why ->
 * what to do".  It reads the trace set (model/), has it analysed
 * (analysis/, which applies the rules of rules/rules.def) and writes the
 * result as text, JSON (--json) or HTML (--html) (out/). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/capture.h"
#include "cli.h"
#include "out/out.h"

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard report [--json] [--html FILE] [--all] [--all-runs] [-v]\n"
               "                        [--job JOBID] [PATH...]\n"
               "  the cause and the fix, from traces (per process, across ranks and hosts)\n"
               "  PATH        trace files (*.jsonl) or folders of them; none: $CONVGUARD_DIR,\n"
               "              else ./convguard-logs (where `convguard run` writes)\n"
               "  --json      the report as JSON on stdout (docs/report-json.md)\n"
               "  --html FILE the report as a page in FILE (-: on stdout)\n"
               "  --all       one line per process, every variant and note\n"
               "              (alike processes share a line otherwise)\n"
               "  --all-runs  every run in the folders; without it, the latest run alone\n"
               "              (processes that ran together), said when others are left out\n"
               "  -v          more detail: every library, every failure\n"
               "  --job JOBID every step of a Slurm job the Slurm plugin traced: its\n"
               "              folders JOBID.<step> under PATH, or under the plugin's dir=\n"
               "the report starts from each process's outcome (exit status, signal, its final\n"
               "  error line)\n"
               "exit status: 0 no problem found (notes only), 1 a process failed, problems\n"
               "  found or a trace incomplete (no exit line, lost lines), 2 usage or I/O error\n");
    return rc;
}

/* "the latest of 3 runs in ./convguard-logs ...": the report is about one
 * run, and says which and what it left out */
static void say_run_choice(FILE *out, const struct run_choice *rc, char **paths, int n)
{
    if (!rc->left_out)
        return;
    time_t t = (time_t)rc->started;
    struct tm tm;
    char when[64] = "?";
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    term_printf(out, "convguard report: the latest of %zu runs in %s (started %s);\n"
                     "  %zu process%s of earlier runs left out (--all-runs: every run)\n",
                rc->runs, n == 1 ? paths[0] : "these traces", when, rc->left_out, rc->left_out == 1 ? "" : "es");
}

static void say_no_trace(const struct trace_set *s, char **paths, int n)
{
    fprintf(stderr, "convguard report: no readable trace in");
    for (int i = 0; i < n; i++)
        term_printf(stderr, " %s", paths[i]);
    fprintf(stderr, "\n");
    for (size_t i = 0; i < json_array_size(s->unreadable); i++) /* names from a folder: escaped */
        term_printf(stderr, "  %s: %s\n", jstr(json_array_get(s->unreadable, i), "path", "?"),
                    jstr(json_array_get(s->unreadable, i), "error", "?"));
}

/* the set linked; the latest run alone unless all_runs (model/runs.c) */
static void link_runs(struct trace_set *s, bool all_runs, struct run_choice *runs)
{
    trace_set_link(s);
    if (!all_runs && trace_set_keep_latest_run(s, runs) == 0 && runs->left_out)
        trace_set_link(s); /* the parents' indices, in the smaller set */
}

/* --html FILE: the page, and where it went ("-": stdout, said nowhere) */
static int page(struct analysis *a, const char *html)
{
    if (write_html(a, html) != 0) {
        perror(html);
        return -1;
    }
    if (strcmp(html, "-") != 0)
        term_printf(stderr, "convguard report: wrote %s\n", html);
    return 0;
}

/* 1: problems, an incomplete trace (no clean run), or a process that failed (outcome.c); else 0 */
static int report_status(struct analysis *a)
{
    return analysis_problems(a) || analysis_incomplete(a) || a->nfailed || a->nunowned ? 1 : 0;
}

/* What to read: the step folders of a Slurm job (--job; each step is a run of
 * its own: every run), the paths given, else $CONVGUARD_DIR, else
 * ./convguard-logs; *argc their number.  NULL: the job has no folder. */
static char **paths_to_read(const char *job, char **given, int *argc, int optind_, char **dflt, char ***owned,
                            bool *all_runs)
{
    int n = *argc - optind_;
    if (job) {
        *all_runs = true;
        return *owned = job_folders(job, given, n, argc);
    }
    if ((*argc = n) > 0)
        return given;
    const char *d = getenv("CONVGUARD_DIR");
    dflt[0] = (char *)(d && *d ? d : "./convguard-logs");
    *argc = 1;
    return dflt;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"html", required_argument, 0, 'H'},
                                             {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'},
                                             {"all", no_argument, 0, 'a'}, {"all-runs", no_argument, 0, 'R'},
                                             {"job", required_argument, 0, 'J'}, {0, 0, 0, 0}};
    bool as_json = false, verbose = false, all = false, all_runs = false;
    const char *html = NULL, *job = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jH:vha", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = true; break;
        case 'H': html = optarg; break;
        case 'v': verbose = true; break;
        case 'a': all = true; break;
        case 'R': all_runs = true; break;
        case 'J': job = optarg; break;
        case 'h': return usage(stdout, 0);
        default: return usage(stderr, 2);
        }
    }
    if (as_json && html && strcmp(html, "-") == 0)
        return fprintf(stderr, "convguard report: --json and --html - both write stdout; give --html a file\n"), 2;
    char *dflt[2] = {NULL, NULL}, **steps = NULL;
    argv = paths_to_read(job, argv + optind, &argc, optind, dflt, &steps, &all_runs);
    if (!argv)
        return 2;
    optind = 0;
    struct trace_set s = {0};
    rules_keep_events();
    for (int i = optind; i < argc; i++) { /* "logs/" reads as "logs": its files shown as logs/x, not logs//x */
        if (strlen(argv[i]) > 1 && argv[i][strlen(argv[i]) - 1] == '/')
            argv[i] = path_tidy(argv[i]); /* kept to the end: paths in the set point into it */
        trace_set_add(&s, argv[i]);
    }
    if (s.n == 0) {
        say_no_trace(&s, argv + optind, argc - optind);
        trace_set_free(&s);
        return 2;
    }
    struct run_choice runs = {0};
    link_runs(&s, all_runs, &runs);
    capture_attach(&s, argv + optind, argc - optind, 0);
    struct analysis *a = analyse(&s);
    bool html_out = html && strcmp(html, "-") == 0; /* the page is stdout: the text goes nowhere */
    say_run_choice(as_json || html_out ? stderr : stdout, &runs, argv + optind, argc - optind);
    if (as_json)
        analysis_json_write(a, stdout);
    else if (!html_out)
        print_text(a, stdout, verbose, all);
    int rc = report_status(a);
    if (html && page(a, html) != 0)
        rc = 2;
    analysis_free(a);
    trace_set_free(&s);
    job_folders_free(steps);
    return rc;
}

int report_recent(const char *dir, double since, FILE *out, bool force)
{
    struct trace_set s = {0};
    rules_keep_events();
    trace_set_add(&s, dir);
    trace_set_keep_since(&s, since);
    if (s.n == 0) {
        /* only a process that touched a CUDA library or ran a framework makes a file; a run that
         * failed (force) is told as failed first, never as if nothing happened */
        if (force)
            term_printf(out, "convguard: the program failed, and no process of this run loaded a CUDA library or a "
                         "deep-learning framework: it did not fail in CUDA, cuDNN or the GPU; its own error above "
                         "says why (no trace in %s; a static or setuid program is not traced either)\n",
                    dir);
        else
            term_printf(out, "convguard: no process of this run loaded a CUDA library or a deep-learning framework: "
                         "the GPU was never used (no trace in %s; a static or setuid program is not traced either)\n",
                    dir);
        trace_set_free(&s);
        return -1;
    }
    trace_set_link(&s);
    capture_attach(&s, (char *[]){(char *)dir}, 1, since);
    struct analysis *a = analyse(&s);
    int problems = analysis_problems(a) + analysis_incomplete(a) + a->nfailed + a->nunowned;
    if (problems || force)
        print_text(a, out, false, false);
    analysis_free(a);
    trace_set_free(&s);
    return problems;
}
