/* code.c - the match functions of the rules about GPU code and the
 * driver's own log (rules.def, block "GPU code and the driver's log"), and
 * the driver's words quoted under any finding.
 *
 * What they read: `driver_log` events (the driver's messages; a Returning
 * line gives fn and status, `hooked` false when no hook of convguard saw the
 * call), the `driver_log` seq list a failure event carries (the messages of
 * its thread written just before it), and the code images the load calls
 * were given (`image` on code_load_failed, `code_no_fit` on the driver's 209,
 * `code_images.no_fit_images` at exit). */
#include <stdlib.h>
#include <string.h>

#include "rules/match.h"

static json_t *by_seq(struct trace *t, long long seq)
{
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (jint(e, "seq", -1) == seq)
            return e;
    }
    return NULL;
}

/* The messages that explain ev: those its "driver_log" list names; for a
 * driver_log event itself, it and the messages of its thread just before it
 * that name no status (the driver explains first, then says "Returning"). */
static json_t *messages_of(struct trace *t, json_t *ev)
{
    json_t *out = json_array();
    json_t *list = jget(ev, "driver_log");
    if (json_is_array(list)) {
        for (size_t i = 0; i < json_array_size(list); i++) {
            json_t *m = by_seq(t, json_integer_value(json_array_get(list, i)));
            if (m && is_ev(m, "driver_log"))
                json_array_append(out, m);
        }
        return out;
    }
    if (!is_ev(ev, "driver_log"))
        return out;
    long idx = -1;
    for (size_t i = 0; i < json_array_size(t->events) && idx < 0; i++)
        if (json_array_get(t->events, i) == ev)
            idx = (long)i;
    long first = idx;
    for (long i = idx - 1; i >= 0 && idx - i <= 6; i--) {
        json_t *e = json_array_get(t->events, (size_t)i);
        if (jint(e, "tid", -1) != jint(ev, "tid", -2))
            continue;
        if (!is_ev(e, "driver_log") || jget(e, "status"))
            break;
        first = i;
    }
    for (long i = first; i >= 0 && i <= idx; i++) {
        json_t *e = json_array_get(t->events, (size_t)i);
        if (is_ev(e, "driver_log") && jint(e, "tid", -1) == jint(ev, "tid", -2))
            json_array_append(out, e);
    }
    return out;
}

char *driver_words(struct trace *t, json_t *ev)
{
    if (!ev)
        return NULL;
    json_t *ms = messages_of(t, ev);
    struct sbuf b = {0};
    for (size_t i = 0; i < json_array_size(ms) && i < 6; i++) {
        /* the driver's standing advice after some sentences adds nothing to a report */
        const char *m = jstr(json_array_get(ms, i), "message", "?");
        const char *advice = strstr(m, ", to get more information when using CUDA Driver APIs");
        int n = advice ? (int)(advice - m) : 200;
        sb_printf(&b, "%s\"%.*s\"", b.len ? " " : "", n < 200 ? n : 200, m);
    }
    if (json_array_size(ms) > 6)
        sb_printf(&b, " (and %zu more)", json_array_size(ms) - 6);
    json_decref(ms);
    return b.len ? sb_take(&b) : NULL;
}

/* "sm_80 machine code and no PTX", "sm_80, sm_86 machine code and PTX for compute_80 (ISA 9.0)" */
static char *code_text(json_t *image)
{
    struct sbuf b = {0};
    json_t *sass = jget(image, "sass"), *ptx = jget(image, "ptx");
    for (size_t i = 0; i < json_array_size(sass); i++)
        sb_printf(&b, "%s%s", i ? ", " : "", json_string_value(json_array_get(sass, i)) ?: "?");
    sb_add(&b, json_array_size(sass) ? " machine code" : "no machine code");
    if (!json_array_size(ptx))
        sb_add(&b, " and no PTX");
    for (size_t i = 0; i < json_array_size(ptx); i++) {
        json_t *p = json_array_get(ptx, i);
        sb_printf(&b, "%s%s (ISA %s)", i ? ", " : " and PTX for ", jstr(p, "arch", "compute_?"), jstr(p, "isa", "?"));
    }
    return sb_take(&b);
}

/* The image that explains a failure: its own, or one the load calls kept. */
static json_t *image_for(struct trace *t, json_t *ev, json_t **load)
{
    *load = NULL;
    if (jget(ev, "image"))
        return *load = ev, jget(ev, "image");
    json_t *nf = json_array_get(jget(ev, "code_no_fit"), 0);
    if (!nf)
        nf = json_array_get(jget(t->exit, "code_images.no_fit_images"), 0);
    *load = nf;
    return jget(nf, "image");
}

/* "9.0": from the image, the event, another event of the process, or the
 * driver's "GPU ISA 90". */
static char *gpu_of(struct trace *t, json_t *ev, json_t *image)
{
    const char *cc = jstr(image, "device", jstr(ev, "compute_capability", NULL));
    for (size_t i = 0; !cc && i < json_array_size(t->events); i++)
        cc = jstr(json_array_get(t->events, i), "compute_capability", NULL);
    if (cc)
        return xstrdup(cc);
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        const char *m = jstr(json_array_get(t->events, i), "message", "");
        const char *isa = strstr(m, "GPU ISA ");
        if (isa && isa[8] >= '1' && isa[8] <= '9') {
            int v = atoi(isa + 8);
            return xasprintf("%d.%d", v / 10, v % 10);
        }
    }
    return NULL;
}

/* The failing call as the user would name it, and how the failure was seen. */
static void what_failed(json_t *ev, json_t *vars)
{
    bool from_log = is_ev(ev, "driver_log");
    set_own(vars, "what", xasprintf("%s%s", jstr(ev, "fn", "a CUDA call"),
                                    from_log ? " (a call convguard does not wrap: seen in the driver's log)" : ""));
}

bool m_code_arch(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    json_t *load;
    json_t *image = image_for(t, ev, &load);
    char *gpu = gpu_of(t, ev, image);
    set_own(vars, "gpu", gpu ? xstrdup(gpu) : xstrdup("?"));
    set_own(vars, "sm", gpu ? xasprintf("%c%c", gpu[0], gpu[2] ? gpu[2] : '0') : xstrdup("XY"));
    free(gpu);
    what_failed(ev, vars);
    if (image) {
        char *c = code_text(image);
        set_own(vars, "code", xasprintf("the code has %s", c));
        free(c);
        set_own(vars, "loaded", load && load != ev ? xasprintf(" (loaded by %s through %s)",
                                                               base_name(jstr(load, "caller", "?")),
                                                               jstr(load, "fn", "?"))
                                                   : xstrdup(""));
    } else {
        set_str(vars, "code", "the loaded code has no machine code or PTX for it");
        set_str(vars, "loaded", "");
    }
    return true;
}

bool m_ptx_version(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    struct trace *t = &s->t[ti];
    json_t *load;
    json_t *image = image_for(t, ev, &load);
    /* the PTX the failed load was given; a driver_log event looks at the
     * code_load_failed of the same call */
    for (size_t i = 0; !image && i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "code_load_failed") && jint(e, "status", 0) == 222)
            image = jget(e, "image");
    }
    const char *isa = NULL;
    json_t *ptx = jget(image, "ptx");
    for (size_t i = 0; i < json_array_size(ptx); i++)
        if (!isa || strcmp(jstr(json_array_get(ptx, i), "isa", ""), isa) > 0)
            isa = jstr(json_array_get(ptx, i), "isa", NULL);
    set_own(vars, "ptx", isa ? xasprintf("PTX of ISA version %s", isa) : xstrdup("PTX"));
    long long drv = -1;
    for (size_t i = 0; i < json_array_size(t->events); i++) {
        json_t *e = json_array_get(t->events, i);
        if (is_ev(e, "lib") && strcmp(jstr(e, "family", ""), "driver") == 0 && jint(e, "version", -1) > 0)
            drv = jint(e, "version", -1);
    }
    char v[32];
    set_own(vars, "driver", drv > 0 ? xasprintf("CUDA %s", fmt_cuda_ver(drv, v, sizeof v)) : xstrdup("its CUDA version"));
    char *gpu = gpu_of(t, ev, image);
    set_own(vars, "sm", gpu ? xasprintf("%c%c", gpu[0], gpu[2] ? gpu[2] : '0') : xstrdup("XY"));
    free(gpu);
    what_failed(ev, vars);
    return true;
}

/* Code for other GPUs loaded on a driver without a log: it may or may not have been used. */
bool m_code_no_fit(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    if (jget(ev, "driver_log"))
        return false; /* the driver's log would have said if a kernel of it failed */
    json_t *nf = json_array_get(jget(ev, "code_images.no_fit_images"), 0);
    json_t *image = jget(nf, "image");
    if (!image)
        return false;
    const char *gpu = jstr(image, "device", "?");
    set_str(vars, "gpu", gpu);
    set_own(vars, "sm", strlen(gpu) >= 3 ? xasprintf("%c%c", gpu[0], gpu[2]) : xstrdup("XY"));
    set_own(vars, "code_text", code_text(image));
    set_own(vars, "load_fn", xasprintf("%s (called by %s)", jstr(nf, "fn", "?"), base_name(jstr(nf, "caller", "?"))));
    return true;
}

bool m_driver_error(struct trace_set *s, size_t ti, json_t *ev, json_t *vars)
{
    (void)s, (void)ti;
    what_failed(ev, vars);
    return true;
}
