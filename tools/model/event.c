/* event.c - what one event says, as the rules read it: the patterns of
 * rules.def ("ev[:cond,cond]|ev2", and clause&clause&!clause across a
 * process's events), the kind of a failed load's error, and whether the
 * reader found it resolved by a later load. */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

/* ---- patterns: "ev[:cond,cond]|ev2..." (syntax in rules.def) */
static bool value_eq(json_t *v, const char *want)
{
    size_t n = strlen(want);
    if (json_is_string(v)) {
        if (n && want[n - 1] == '*')
            return strncmp(json_string_value(v), want, n - 1) == 0;
        return strcmp(json_string_value(v), want) == 0;
    }
    if (json_is_integer(v)) {
        char *end;
        long long w = strtoll(want, &end, 10);
        return *want && !*end && w == json_integer_value(v);
    }
    if (json_is_true(v))
        return strcmp(want, "true") == 0;
    if (json_is_false(v))
        return strcmp(want, "false") == 0;
    if (json_is_null(v))
        return strcmp(want, "null") == 0;
    return false;
}

static bool cond_match(json_t *ev, const char *c, size_t n)
{
    char buf[256];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, c, n);
    buf[n] = 0;
    char *ne = strstr(buf, "!="), *eq = strchr(buf, '=');
    if (ne) {
        *ne = 0;
        json_t *v = jget(ev, buf);
        return v && !value_eq(v, ne + 2);
    }
    if (eq) {
        *eq = 0;
        return value_eq(jget(ev, buf), eq + 1);
    }
    return jhas(ev, buf);
}

bool pattern_match(const char *pattern, json_t *ev)
{
    const char *name = jstr(ev, "ev", "");
    for (const char *alt = pattern; alt && *alt;) {
        const char *end = strchr(alt, '|');
        size_t len = end ? (size_t)(end - alt) : strlen(alt);
        size_t nlen = strcspn(alt, ":|");
        if (nlen > len)
            nlen = len;
        bool ok = strlen(name) == nlen && strncmp(name, alt, nlen) == 0;
        for (const char *c = alt + nlen + 1; ok && c < alt + len;) {
            size_t clen = strcspn(c, ",|");
            if (c + clen > alt + len)
                clen = (size_t)(alt + len - c);
            ok = cond_match(ev, c, clen);
            c += clen + 1;
        }
        if (ok)
            return true;
        alt = end ? end + 1 : NULL;
    }
    return false;
}

/* ---- rule patterns: clause&clause&!clause */
static bool clause_match(const char *c, size_t n, json_t *ev)
{
    char buf[512];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, c, n);
    buf[n] = 0;
    return pattern_match(buf, ev);
}

static bool any_event(const char *c, size_t n, json_t *events)
{
    for (size_t i = 0; i < json_array_size(events); i++)
        if (clause_match(c, n, json_array_get(events, i)))
            return true;
    return false;
}

bool rule_pattern_match(const char *pattern, json_t *ev, json_t *events)
{
    if (!strchr(pattern, '&'))
        return pattern_match(pattern, ev);
    for (const char *alt = pattern; alt && *alt;) {
        const char *bar = strchr(alt, '|');
        size_t len = bar ? (size_t)(bar - alt) : strlen(alt);
        size_t first = strcspn(alt, "&|");
        bool ok = clause_match(alt, first < len ? first : len, ev);
        for (const char *c = alt + first; ok && c < alt + len && *c == '&';) {
            c++;
            bool neg = *c == '!';
            c += neg;
            size_t cl = strcspn(c, "&|");
            ok = any_event(c, cl, events) != neg;
            c += cl;
        }
        if (ok)
            return true;
        alt = bar ? bar + 1 : NULL;
    }
    return false;
}

/* ---- failed loads */
/* A failed dlopen that a later load of the same library resolved (cuDNN's
 * probes of .so.9.19.0 and .so.9.19): decided by the reader as the loads go
 * by (trace_read.c), since successful loads are not kept. */
bool load_resolved(struct trace *t, size_t i)
{
    return jtrue(json_array_get(t->events, i), RESOLVED_KEY);
}

/* The loader's words: only "absent" (the very name asked was in no folder
 * searched) is how probes fail.  Anything else names a file that is there
 * and broken, or of another build, or a dependency that is missing. */
const char *load_error_kind(json_t *ev, const char **named_out, char *named, size_t cap)
{
    const char *kind = jstr(ev, "error_kind", NULL), *err = jstr(ev, "error", ""), *name = jstr(ev, "name", "");
    const char *req = strstr(err, "(required by ");
    size_t n = strcspn(err, ":");
    named[0] = 0;
    if (req)
        snprintf(named, cap, "%.*s", (int)strcspn(req + 13, ")"), req + 13);
    else if (err[n] == ':')
        snprintf(named, cap, "%.*s", (int)n, err);
    *named_out = jstr(ev, "error_file", named);
    if (kind)
        return kind;
    if (strstr(err, "No such file or directory"))
        return strcmp(base_name(named), base_name(name)) == 0 ? "absent" : "dependency_absent";
    static const struct {
        const char *words, *kind;
    } kinds[] = {{"file too short", "too_short"},   {"invalid ELF header", "bad_elf"},
                 {"wrong ELF class", "wrong_class"}, {"undefined symbol", "undefined_symbol"},
                 {"Permission denied", "permission"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strstr(err, kinds[i].words))
            return kinds[i].kind;
    if (strstr(err, "version `") && strstr(err, "not found"))
        return "version_not_found";
    return "other";
}

bool load_failure_absent(json_t *ev)
{
    const char *named;
    char buf[1024];
    return strcmp(load_error_kind(ev, &named, buf, sizeof buf), "absent") == 0;
}
