/* report.c - `convguard report`: turns traces into "what you see -> why ->
 * what to do".  It reads the trace set (model/), has it analysed
 * (analysis/, which applies the rules of rules/rules.def) and writes the
 * result as text, JSON (--json) or HTML (--html) (out/). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "model/capture.h"
#include "cli.h"
#include "out/out.h"

static int usage(FILE *o, int rc)
{
    fprintf(o, "usage: convguard report [--json] [--html FILE] [--all] [-v] [PATH...]\n"
               "  PATH: trace files (*.jsonl) or directories of them (several processes, ranks, hosts);\n"
               "        none: $CONVGUARD_DIR, else ./convguard-logs (where `convguard run` writes)\n"
               "  --all: one line per process, every variant and note (alike processes share a line otherwise)\n"
               "  the report starts from each process's outcome (exit status, signal, its final error line)\n"
               "  exit status: 0 no problem found (notes only), 1 a process failed, problems found or a trace\n"
               "  incomplete (no exit line, lost lines), 2 usage or I/O error\n");
    return rc;
}

/* 1: problems, an incomplete trace (no clean run), or a process that failed (outcome.c); else 0 */
static int report_status(struct analysis *a)
{
    return analysis_problems(a) || analysis_incomplete(a) || a->nfailed || a->nunowned ? 1 : 0;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"html", required_argument, 0, 'H'},
                                             {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'},
                                             {"all", no_argument, 0, 'a'},
                                             {0, 0, 0, 0}};
    bool as_json = false, verbose = false, all = false;
    const char *html = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jH:vha", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = true; break;
        case 'H': html = optarg; break;
        case 'v': verbose = true; break;
        case 'a': all = true; break;
        case 'h': return usage(stdout, 0);
        default: return usage(stderr, 2);
        }
    }
    char *dflt[2] = {NULL, NULL};
    if (optind >= argc) {
        const char *d = getenv("CONVGUARD_DIR");
        dflt[0] = (char *)(d && *d ? d : "./convguard-logs");
        argv = dflt;
        argc = 1;
        optind = 0;
    }
    struct trace_set s = {0};
    rules_keep_events();
    for (int i = optind; i < argc; i++)
        trace_set_add(&s, argv[i]);
    if (s.n == 0) {
        fprintf(stderr, "convguard report: no readable trace in");
        for (int i = optind; i < argc; i++)
            term_printf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
        for (size_t i = 0; i < json_array_size(s.unreadable); i++) /* names from a folder: escaped */
            term_printf(stderr, "  %s: %s\n", jstr(json_array_get(s.unreadable, i), "path", "?"),
                    jstr(json_array_get(s.unreadable, i), "error", "?"));
        trace_set_free(&s);
        return 2;
    }
    trace_set_link(&s);
    capture_attach(&s, argv + optind, argc - optind, 0);
    struct analysis *a = analyse(&s);
    if (as_json) {
        analysis_json_write(a, stdout);
    } else {
        print_text(a, stdout, verbose, all);
    }
    int rc = report_status(a);
    if (html && write_html(a, html) != 0) {
        perror(html);
        rc = 2;
    }
    analysis_free(a);
    trace_set_free(&s);
    return rc;
}

int report_recent(const char *dir, double since, FILE *out, bool force)
{
    struct trace_set s = {0};
    rules_keep_events();
    trace_set_add(&s, dir);
    trace_set_keep_since(&s, since);
    if (s.n == 0) {
        /* only a process that touched a CUDA library or ran a framework makes a file */
        (void)force;
        term_printf(out, "convguard: no process of this run loaded a CUDA library or a deep-learning framework: the "
                     "GPU was never used (no trace in %s; a static or setuid program is not traced either)\n",
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
