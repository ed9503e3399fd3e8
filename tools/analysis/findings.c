/* findings.c - the rules of rules.def applied to one process: each rule's
 * pattern over its events, the match function, the groups that keep one
 * failure to one cause, and the finding's texts. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "model/capture.h"

/* the rule's own group, g[0..n): `a+b` is taken when either is */
static bool group_taken(json_t *taken, const char *g, size_t n)
{
    for (size_t at = 0; at < n;) {
        size_t len = strcspn(g + at, "+,");
        char k[64];
        snprintf(k, sizeof k, "%.*s", (int)(len < n - at ? len : n - at), g + at);
        if (json_object_get(taken, k))
            return true;
        at += len + 1;
    }
    return false;
}

static void take_groups(json_t *taken, const char *groups)
{
    for (const char *g = groups; g && *g;) {
        size_t n = strcspn(g, ",+");
        char k[64];
        snprintf(k, sizeof k, "%.*s", (int)n, g);
        json_object_set_new(taken, k, json_true());
        g = g[n] ? g + n + 1 : NULL;
    }
}

static void add_finding(struct analysis *a, const struct rule *r, size_t ti, json_t *ev, json_t *vars, int count)
{
    struct finding *f = finding_new(a);
    f->r = r, f->ti = ti, f->ev = ev, f->vars = vars, f->count = count;
    f->severity = r->severity, f->went_on = NULL, f->tier = 1, f->dist = 0; /* placed by outcome.c */
    f->title = expand(r->title, vars, ev);
    f->symptom = frame_symptom(a->s, ti, expand(r->symptom, vars, ev));
    char *said = capture_symptom(&a->s->t[ti]); /* the program's own words, when captured */
    if (said)
        free(f->symptom), f->symptom = said;
    f->cause = expand(r->cause, vars, ev);
    f->fix = frame_fix(a->s, ti, expand(r->fix, vars, ev));
    const char *seen = jstr(vars, "seen", NULL);
    if (seen)
        f->seen = xstrdup(seen);
    else if (ev)
        f->seen = describe_event(ev);
    else
        f->seen = xstrdup("");
    f->driver = driver_words(&a->s->t[ti], ev);
    if (count > 1) {
        char *s = xasprintf("%s (and %d more like it)", f->seen, count - 1);
        free(f->seen);
        f->seen = s;
    }
}

/* the kinds each rule's pattern can match (model/event.c pattern_kinds):
 * a rule tries only the events of those kinds, not every event of the
 * process (81 rules times every event was most of the rules' time) */
static struct kind_set *rule_kinds;
static bool *rule_indexed;

static void index_rules(void)
{
    if (rule_kinds)
        return;
    rule_kinds = calloc(n_rules ? n_rules : 1, sizeof *rule_kinds);
    rule_indexed = calloc(n_rules ? n_rules : 1, sizeof *rule_indexed);
    if (!rule_kinds || !rule_indexed)
        exit(2);
    for (size_t r = 0; r < n_rules; r++)
        rule_indexed[r] = pattern_kinds(rules[r].pattern, &rule_kinds[r]);
}

static int *event_kinds(struct trace *t, int *kind, size_t *n)
{
    *n = json_array_size(t->events);
    kind = realloc(kind, (*n ? *n : 1) * sizeof *kind);
    if (!kind)
        exit(2);
    for (size_t i = 0; i < *n; i++) {
        const char *name = jstr(json_array_get(t->events, i), "ev", NULL);
        kind[i] = name ? trace_kind(name, strlen(name)) : -1;
    }
    return kind;
}

void apply_rules(struct analysis *a, size_t ti)
{
    struct trace *t = &a->s->t[ti];
    index_rules();
    size_t nev = 0;
    int *kind = NULL;
    json_t *taken = json_object();
    for (size_t r = 0; r < n_rules; r++) {
        const struct rule *ru = &rules[r];
        if (!kind || nev != json_array_size(t->events)) /* the kind of each event, again if events came */
            kind = event_kinds(t, kind, &nev);
        if (group_taken(taken, ru->group, strcspn(ru->group, ",")))
            continue;
        json_t *vars = NULL, *first = NULL;
        int count = 0;
        if (!*ru->pattern) {
            vars = json_object();
            if (ru->match(a->s, ti, NULL, vars))
                count = 1;
        } else {
            for (size_t i = 0; i < nev; i++) {
                json_t *ev = json_array_get(t->events, i);
                if (rule_indexed[r] && !kind_in(&rule_kinds[r], kind[i]))
                    continue;
                if (!rule_pattern_match(ru->pattern, ev, t->events))
                    continue;
                json_t *v = json_object();
                if (ru->match && !ru->match(a->s, ti, ev, v)) {
                    json_decref(v);
                    continue;
                }
                if (!count++)
                    first = ev, vars = v;
                else
                    json_decref(v);
            }
        }
        if (count) {
            add_finding(a, ru, ti, first, vars, count);
            /* a failure the library went on from explains nothing after it: it keeps no rule silent */
            if (!went_on_from(a, ti, ru, first))
                take_groups(taken, ru->group);
        } else {
            json_decref(vars);
        }
    }
    json_decref(taken);
    free(kind);
}
