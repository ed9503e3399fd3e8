/* util.c - JSON accessors that never fail, status names, sizes and versions
 * as people write them, a growing string, and host names in natural order. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

json_t *jget(json_t *obj, const char *path)
{
    /* the rules ask this for every event they look at: no copy of the key */
    while (obj && path && *path) {
        const char *dot = strchr(path, '.');
        if (!json_is_object(obj))
            return NULL;
        if (!dot)
            return json_object_get(obj, path);
        obj = json_object_getn(obj, path, (size_t)(dot - path));
        path = dot + 1;
    }
    return obj;
}

const char *jstr(json_t *obj, const char *path, const char *dflt)
{
    json_t *v = jget(obj, path);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

long long jint(json_t *obj, const char *path, long long dflt)
{
    json_t *v = jget(obj, path);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return (long long)json_real_value(v);
    /* the shim writes a verdict's versions as strings ("12090") */
    if (json_is_string(v) && *json_string_value(v)) {
        char *end;
        long long x = strtoll(json_string_value(v), &end, 10);
        if (!*end)
            return x;
    }
    return dflt;
}

double jnum(json_t *obj, const char *path, double dflt)
{
    json_t *v = jget(obj, path);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

bool jtrue(json_t *obj, const char *path) { return json_is_true(jget(obj, path)); }

bool jhas(json_t *obj, const char *path)
{
    json_t *v = jget(obj, path);
    return v && !json_is_null(v) && !json_is_false(v);
}

/* The names the libraries themselves use, so users can search for them: the
 * shim's one table (shim/status.def).  cuDNN 9 numbers from 1000 up, cuDNN 8
 * below 15, so a cuDNN code tells which numbering it is. */
enum status_lib { CU, RT, DNN9, DNN8 };
static const struct code { unsigned char lib; long long v; const char *name; } codes[] = {
#define CG_STATUS(lib, value, name) {lib, value, #name},
#include "status.def"
#undef CG_STATUS
};

static const char *lookup(enum status_lib lib, long long v)
{
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].lib == lib && codes[i].v == v)
            return codes[i].name;
    return NULL;
}

const char *fmt_status_name(const char *fn, long long status)
{
    if (fn && strncmp(fn, "cudnn", 5) == 0) {
        const char *n = lookup(DNN9, status);
        return n ? n : lookup(DNN8, status);
    }
    if (fn && strncmp(fn, "cuda", 4) == 0)
        return lookup(RT, status);
    return lookup(CU, status);
}

char *fmt_size(long long b, char *buf, size_t n)
{
    if (b < 0)
        snprintf(buf, n, "?");
    else if (b >= 1ll << 30)
        snprintf(buf, n, "%.1f GiB", b / (double)(1ll << 30));
    else if (b >= 1ll << 20)
        snprintf(buf, n, "%.0f MiB", b / (double)(1ll << 20));
    else if (b >= 1024)
        snprintf(buf, n, "%.0f KiB", b / 1024.0);
    else
        snprintf(buf, n, "%lld bytes", b);
    return buf;
}

/* cuDNN 9 encodes 9.19.0 as 91900, cuDNN 8 encodes 8.9.7 as 8907. */
char *fmt_cudnn_ver(long long v, char *buf, size_t n)
{
    if (v >= 90000)
        snprintf(buf, n, "%lld.%lld.%lld", v / 10000, v / 100 % 100, v % 100);
    else if (v > 0)
        snprintf(buf, n, "%lld.%lld.%lld", v / 1000, v / 100 % 10, v % 100);
    else
        snprintf(buf, n, "?");
    return buf;
}

/* CUDA encodes 12.4 as 12040. */
char *fmt_cuda_ver(long long v, char *buf, size_t n)
{
    if (v > 0)
        snprintf(buf, n, "%lld.%lld", v / 1000, v % 1000 / 10);
    else
        snprintf(buf, n, "?");
    return buf;
}

const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : (p ? p : "");
}

char *dir_name(const char *p, char *buf, size_t n)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    if (!s)
        snprintf(buf, n, ".");
    else if (s == p)
        snprintf(buf, n, "/");
    else
        snprintf(buf, n, "%.*s", (int)(s - p), p);
    return buf;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fputs("convguard: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    return memcpy(xrealloc(NULL, n), s ? s : "", n);
}

char *xasprintf(const char *fmt, ...)
{
    struct sbuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    b.s = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b.s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return b.s;
}

void sb_addn(struct sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void sb_add(struct sbuf *b, const char *s) { sb_addn(b, s, strlen(s)); }

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *tmp = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_addn(b, tmp, (size_t)n);
    free(tmp);
}

char *sb_take(struct sbuf *b)
{
    char *s = b->s ? b->s : xstrdup("");
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

/* ---- natural order: "node2" before "node10" */
int natural_cmp(const char *a, const char *b)
{
    const char *a0 = a, *b0 = b;
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            const char *x = a, *y = b;
            while (*x == '0')
                x++;
            while (*y == '0')
                y++;
            const char *xe = x, *ye = y;
            while (isdigit((unsigned char)*xe))
                xe++;
            while (isdigit((unsigned char)*ye))
                ye++;
            if (xe - x != ye - y)
                return xe - x < ye - y ? -1 : 1;
            int c = memcmp(x, y, (size_t)(xe - x));
            if (c)
                return c < 0 ? -1 : 1;
            a = xe, b = ye;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++, b++;
    }
    if (*a || *b)
        return *a ? 1 : -1;
    return strcmp(a0, b0); /* "node01" and "node1": still an order */
}
