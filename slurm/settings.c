/* settings.c - the plugin's words (settings.h): small plain functions of
 * strings, no allocation, no Slurm, so that the plugin, the command and the
 * unit test read them the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

#ifndef CGS_PRELOAD_DEFAULT
#define CGS_PRELOAD_DEFAULT "/usr/local/lib/libconvguard.so"
#endif

static void say(char *err, size_t cap, const char *a, const char *b)
{
    if (cap)
        snprintf(err, cap, "%s%s", a, b ? b : "");
}

static int copy(char *out, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap)
        return -1;
    memcpy(out, s, n + 1);
    return 0;
}

void cgs_defaults(struct cgs_settings *s)
{
    memset(s, 0, sizeof *s);
    copy(s->preload, sizeof s->preload, CGS_PRELOAD_DEFAULT);
    s->report = true;
    s->report_timeout = CGS_TIMEOUT_DEFAULT;
}

/* on/off, yes/no, 1/0; -1 neither */
static int yes_no(const char *v)
{
    static const char *const on[] = {"on", "yes", "1", "true"}, *const off[] = {"off", "no", "0", "false"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(v, on[i]) == 0)
            return 1;
        if (strcmp(v, off[i]) == 0)
            return 0;
    }
    return -1;
}

static int flag(bool *to, const char *name, const char *v, char *err, size_t cap)
{
    int b = yes_no(v);
    if (b < 0) {
        say(err, cap, name, "= takes on or off");
        return -1;
    }
    *to = b;
    return 0;
}

static int absolute(char *to, size_t tcap, const char *name, const char *v, char *err, size_t cap)
{
    if (v[0] != '/') {
        say(err, cap, name, "= takes an absolute path");
        return -1;
    }
    if (copy(to, tcap, v) != 0) {
        say(err, cap, name, "= is too long");
        return -1;
    }
    return 0;
}

static int seconds(unsigned *to, const char *v, char *err, size_t cap)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || v[0] == '-' || n == 0 || n > CGS_TIMEOUT_MAX) {
        say(err, cap, "report_timeout= takes whole seconds, 1 to 600", NULL);
        return -1;
    }
    *to = (unsigned)n;
    return 0;
}

int cgs_arg(struct cgs_settings *s, const char *arg, char *err, size_t cap)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;
    const char *v = eq ? eq + 1 : "";
#define IS(name) (n == sizeof name - 1 && strncmp(arg, name, n) == 0)
    if (IS("preload"))
        return absolute(s->preload, sizeof s->preload, "preload", v, err, cap);
    if (IS("convguard"))
        return absolute(s->convguard, sizeof s->convguard, "convguard", v, err, cap);
    if (IS("dir")) {
        char probe[CGS_PATH];
        size_t made;
        struct cgs_job j = {"user", 1, 1, "node"};
        if (cgs_expand(v, &j, probe, sizeof probe, &made, err, cap) != 0)
            return -1;
        return copy(s->dir, sizeof s->dir, v);
    }
    if (IS("default"))
        return flag(&s->default_on, "default", v, err, cap);
    if (IS("partitions")) {
        if (!*v || strspn(v, ",") == strlen(v) || strchr(v, ' ')) {
            say(err, cap, "partitions= takes partition names, comma-separated", NULL);
            return -1;
        }
        if (copy(s->partitions, sizeof s->partitions, v) != 0) {
            say(err, cap, "partitions= is too long", NULL);
            return -1;
        }
        return 0;
    }
    if (IS("fallback"))
        return flag(&s->fallback, "fallback", v, err, cap);
    if (IS("report"))
        return flag(&s->report, "report", v, err, cap);
    if (IS("report_timeout"))
        return seconds(&s->report_timeout, v, err, cap);
#undef IS
    say(err, cap, "unknown argument ", arg);
    return -1;
}

void cgs_command(const struct cgs_settings *s, char *out, size_t cap)
{
    if (s->convguard[0] || !cap) {
        snprintf(out, cap, "%s", s->convguard);
        return;
    }
    const char *slash = strrchr(s->preload, '/');
    int d = slash ? (int)(slash - s->preload) : 0;
    /* <prefix>/lib/libconvguard.so -> <prefix>/bin/convguard */
    if (d >= 4 && strncmp(s->preload + d - 4, "/lib", 4) == 0)
        snprintf(out, cap, "%.*s/bin/convguard", d - 4, s->preload);
    else
        snprintf(out, cap, "%.*s/convguard", d, s->preload);
}

bool cgs_default_for(const struct cgs_settings *s, const char *partition)
{
    if (!s->default_on)
        return false;
    if (!s->partitions[0])
        return true;
    size_t n = partition ? strlen(partition) : 0;
    const char *p = s->partitions;
    while (n && *p) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, partition, n) == 0)
            return true;
        p += len;
        p += *p == ',';
    }
    return false;
}

int cgs_option(const char *value, char *err, size_t cap)
{
    if (!value || !*value)
        return CGS_ON;
    int b = yes_no(value);
    if (b >= 0)
        return b ? CGS_ON : CGS_OFF;
    char probe[CGS_PATH];
    size_t made;
    struct cgs_job j = {"user", 1, 1, "node"};
    if (cgs_expand(value, &j, probe, sizeof probe, &made, err, cap) != 0)
        return -1;
    return CGS_DIR;
}

/* a name the escape may stand for: one folder name, never . or .. */
static bool one_name(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static int put(char *out, size_t cap, size_t *n, const char *s)
{
    size_t k = strlen(s);
    if (*n + k >= cap)
        return -1;
    memcpy(out + *n, s, k + 1);
    *n += k;
    return 0;
}

/* what %c stands for, in num's room when a number; NULL: no such escape */
static const char *escape(char c, const struct cgs_job *j, char *num, size_t ncap, const char **bad)
{
    *bad = NULL;
    switch (c) {
    case 'u': *bad = one_name(j->user) ? NULL : "the user name"; return j->user;
    case 'n': *bad = one_name(j->node) ? NULL : "the node name"; return j->node;
    case 'U': snprintf(num, ncap, "%lu", j->uid); return num;
    case 'j': snprintf(num, ncap, "%lu", j->job); return num;
    case '%': return "%";
    default: return NULL;
    }
}

int cgs_expand(const char *pattern, const struct cgs_job *j, char *out, size_t cap, size_t *made, char *err,
               size_t ecap)
{
    size_t n = 0, first = (size_t)-1, last_slash = 0;
    if (!pattern || pattern[0] != '/') {
        say(err, ecap, "not an absolute folder: ", pattern ? pattern : "");
        return -1;
    }
    out[0] = 0;
    for (const char *p = pattern; *p; p++) {
        char one[2] = {*p, 0}, num[24];
        const char *v = one, *bad = NULL;
        if (*p == '%') {
            char e[3] = {'%', p[1], 0};
            if (!(v = escape(p[1], j, num, sizeof num, &bad))) {
                say(err, ecap, "unknown escape in the folder pattern: ", p[1] ? e : "% at the end");
                return -1;
            }
            if (bad) {
                say(err, ecap, bad, " is no folder name");
                return -1;
            }
            if (p[1] != '%' && first == (size_t)-1)
                first = last_slash; /* the folders from the one holding the first escape on are made */
            p++;
        } else if (*p == '/') {
            last_slash = n;
        }
        if (put(out, cap, &n, v) != 0) {
            say(err, ecap, "the folder pattern is too long: ", pattern);
            return -1;
        }
    }
    while (n > 1 && out[n - 1] == '/') /* "/a/b/" is /a/b */
        out[--n] = 0;
    const char *ls = strrchr(out, '/');
    size_t tail = ls ? (size_t)(ls - out) : 0;
    *made = first == (size_t)-1 || first > tail ? tail : first;
    return 0;
}

int cgs_step_dir(char *out, size_t cap, const char *base, unsigned long job, const char *step)
{
    int k = snprintf(out, cap, "%s%s%lu.%s", base, base[0] && base[strlen(base) - 1] == '/' ? "" : "/", job, step);
    return k < 0 || (size_t)k >= cap ? -1 : 0;
}

/* the next entry of an LD_PRELOAD list (ld.so splits at ':' and ' '): its start, its length in *len */
static const char *entry(const char *p, size_t *len)
{
    while (*p == ':' || *p == ' ')
        p++;
    *len = strcspn(p, ": ");
    return *len ? p : NULL;
}

static bool has_entry(const char *list, const char *shim)
{
    size_t len, sl = strlen(shim);
    for (const char *p = list; list && (p = entry(p, &len)); p += len)
        if (len == sl && strncmp(p, shim, sl) == 0)
            return true;
    return false;
}

int cgs_preload_add(const char *old, const char *shim, char *out, size_t cap)
{
    if (has_entry(old, shim))
        return copy(out, cap, old) == 0 ? 1 : -1;
    size_t n = 0;
    out[0] = 0;
    if (old && entry(old, &(size_t){0})) {
        if (put(out, cap, &n, old) != 0 || put(out, cap, &n, ":") != 0)
            return -1;
    }
    return put(out, cap, &n, shim);
}

int cgs_preload_remove(const char *old, const char *shim, char *out, size_t cap)
{
    if (!has_entry(old, shim))
        return copy(out, cap, old ? old : "") == 0 ? 1 : -1;
    size_t len, n = 0, sl = strlen(shim);
    out[0] = 0;
    for (const char *p = old; (p = entry(p, &len)); p += len) {
        if (len == sl && strncmp(p, shim, sl) == 0)
            continue;
        if (n + len + 2 > cap)
            return -1;
        if (n)
            out[n++] = ':';
        memcpy(out + n, p, len);
        out[n += len] = 0;
    }
    return 0;
}

bool cgs_preload_has_convguard(const char *list)
{
    static const char name[] = "libconvguard.so";
    size_t len, nl = sizeof name - 1;
    for (const char *p = list; list && (p = entry(p, &len)); p += len)
        if (len >= nl && strncmp(p + len - nl, name, nl) == 0 && (len == nl || p[len - nl - 1] == '/'))
            return true;
    return false;
}
