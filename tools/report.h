/* report.h - the analysis of a trace set, shared by the text, JSON and HTML
 * outputs (report.c, html.c). */
#ifndef CONVGUARD_REPORT_H
#define CONVGUARD_REPORT_H
#include "cli.h"

struct finding {
    const struct rule *r;
    size_t ti;      /* the process */
    json_t *ev;     /* the event that matched (borrowed), NULL for whole-process rules */
    json_t *vars;   /* facts for the texts (owned) */
    int count;      /* how many events matched */
    char *title, *symptom, *seen, *cause, *fix;
    char *driver;   /* the driver's own words about it, quoted (rules_code.c), or NULL */
    int block;      /* index of the first finding with the same rule and cause */
};

struct proc_sum {
    char *label, *prog;
    const char *cudnn_path, *cudart_path, *driver_path;
    long long cudnn_ver, cudnn_built_for, cudart_ver, driver_ver;
    bool cudnn_mixed;
    char *cudnn_mix;  /* "libcudnn_graph.so.9 9.14.0 from /usr/lib/..." : parts of other versions */
    int nlibs, nparts, nfail, nfind;
};

struct analysis {
    struct trace_set *s;
    struct finding *f;
    size_t nf;
    struct proc_sum *p;
    json_t *incons;   /* [{what, text, values: [{value, processes: [label]}]}] */
    int nhosts, nblocks;
};

char *lib_summary(struct proc_sum *p);
#endif
