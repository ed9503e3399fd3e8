/* expand.c - the texts of rules.def: "{path[:fmt]}" replaced by a fact of
 * the finding (vars), else by a field of its event, written as people read
 * it (sizes, versions, base names). */
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

static void render(struct sbuf *b, json_t *v, const char *fmt)
{
    char buf[64];
    if (strcmp(fmt, "opt") == 0) {
        if (json_is_string(v))
            sb_add(b, json_string_value(v));
        return;
    }
    /* a number written as a string (a verdict's versions) reads as the number */
    char *end = NULL;
    long long num = json_is_string(v) && *fmt && strcmp(fmt, "base") ? strtoll(json_string_value(v), &end, 10) : 0;
    bool numeric_string = end && end != json_string_value(v) && !*end;
    if (!v || json_is_null(v)) {
        sb_add(b, "?");
    } else if ((json_is_number(v) || numeric_string) && *fmt) {
        long long x = numeric_string ? num : (long long)json_number_value(v);
        if (strcmp(fmt, "size") == 0)
            sb_add(b, fmt_size(x, buf, sizeof buf));
        else if (strcmp(fmt, "mib") == 0)
            sb_printf(b, "%lld", x / (1ll << 20));
        else if (strcmp(fmt, "cudnn") == 0)
            sb_add(b, fmt_cudnn_ver(x, buf, sizeof buf));
        else if (strcmp(fmt, "cuda") == 0)
            sb_add(b, fmt_cuda_ver(x, buf, sizeof buf));
        else
            sb_printf(b, "%lld", x);
    } else if (json_is_string(v)) {
        sb_add(b, strcmp(fmt, "base") == 0 ? base_name(json_string_value(v)) : json_string_value(v));
    } else if (json_is_integer(v)) {
        sb_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        sb_printf(b, "%g", json_real_value(v));
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                sb_add(b, ", ");
            render(b, json_array_get(v, i), fmt);
        }
    } else {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        sb_add(b, s ? s : "?");
        free(s);
    }
}

char *expand(const char *t, json_t *vars, json_t *ev)
{
    struct sbuf b = {0};
    while (*t) {
        const char *o = strchr(t, '{'), *c = o ? strchr(o, '}') : NULL;
        if (!o || !c || c - o > 100) {
            sb_add(&b, t);
            break;
        }
        sb_addn(&b, t, (size_t)(o - t));
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(c - o - 1), o + 1);
        char *colon = strchr(key, ':');
        const char *fmt = "";
        if (colon)
            *colon = 0, fmt = colon + 1;
        json_t *v = jget(vars, key);
        render(&b, v ? v : jget(ev, key), fmt);
        t = c + 1;
    }
    return sb_take(&b);
}
