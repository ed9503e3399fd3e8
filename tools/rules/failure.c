/* failure.c - what counts as a failure and how one is told in a line: the
 * FAILURE rows of rules.def. */
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

#define RULE(...)
#define FAILURE(pattern, text) {pattern, text},
const struct failure_text failure_texts[] = {
#include "rules.def"
};
#undef RULE
#undef FAILURE
const size_t n_failure_texts = sizeof failure_texts / sizeof failure_texts[0];

static const char *failure_text(json_t *ev)
{
    for (size_t i = 0; i < n_failure_texts; i++)
        if (pattern_match(failure_texts[i].pattern, ev))
            return failure_texts[i].text;
    return NULL;
}

bool is_failure_event(struct trace *t, size_t i)
{
    json_t *ev = json_array_get(t->events, i);
    if (!failure_text(ev))
        return false;
    return strcmp(jstr(ev, "ev", ""), "dlopen") != 0 || !load_resolved(t, i);
}

char *describe_event(json_t *ev)
{
    const char *txt = failure_text(ev);
    /* dlerror starts with the name the program passed: say it once */
    json_t *vars = json_object();
    const char *err = jstr(ev, "error", NULL), *name = jstr(ev, "name", "");
    size_t n0 = strlen(name);
    if (err && n0 && strncmp(err, name, n0) == 0 && strncmp(err + n0, ": ", 2) == 0)
        err += n0 + 2;
    if (err)
        json_object_set_new(vars, "error_short", json_string(err));
    /* a library: its file and whose it is (analysis/diagnose.c's origin) */
    if (!txt && strcmp(jstr(ev, "ev", ""), "lib") == 0)
        txt = jget(ev, "origin_words") ? "{soname} at {path}, {origin_words}" : "{soname} at {path}";
    char *body = expand(txt ? txt : "{ev}", vars, ev);
    json_decref(vars);
    size_t n = strlen(body);
    while (n && body[n - 1] == ' ')
        body[--n] = 0;
    long long again = jint(ev, "repeated.count", 0) - 1; /* the shim's `repeated`: this, then again */
    char *r = again > 0 ? xasprintf("#%lld %s; the same again %lld time%s, to #%lld (t=%.3f s)", jint(ev, "seq", -1),
                                    body, again, again > 1 ? "s" : "", jint(ev, "repeated.last_seq", -1),
                                    jnum(ev, "repeated.last_t", 0))
                        : xasprintf("#%lld %s", jint(ev, "seq", -1), body);
    free(body);
    return r;
}
