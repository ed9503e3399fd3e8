/* finding.c - one finding of the report's model: made at the end of the
 * list, and whether it counts as a problem.  Apart from findings.c (the
 * rules) and outcome.c (how each process ended) because both make findings
 * and findings.c asks outcome.c what a process went on from: here, neither
 * calls the other back. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

/* a new finding at the end of a->f, zeroed (findings.c adds the rules', outcome.c the plain truth) */
struct finding *finding_new(struct analysis *a)
{
    if (a->nf == a->capf) {
        a->capf = a->capf ? a->capf * 2 : 16;
        a->f = realloc(a->f, a->capf * sizeof *a->f);
        if (!a->f)
            exit(2);
    }
    struct finding *f = &a->f[a->nf++];
    memset(f, 0, sizeof *f);
    return f;
}

/* a note is context; a warning or an error is a problem the report counts */
bool finding_counts(const struct finding *f) { return strcmp(f->severity, "note") != 0; }
