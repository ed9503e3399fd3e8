/* util.c - JSON accessors that never fail, status names, sizes and versions
 * as people write them, and a growing string. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

json_t *jget(json_t *obj, const char *path)
{
    char key[128];
    while (obj && path && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key || !json_is_object(obj))
            return NULL;
        memcpy(key, path, n);
        key[n] = 0;
        obj = json_object_get(obj, key);
        path = dot ? dot + 1 : NULL;
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

/* The names the libraries themselves use, so users can search for them. */
struct code { long long v; const char *name; };
static const struct code cudnn_codes[] = {
    {0, "CUDNN_STATUS_SUCCESS"}, {1001, "CUDNN_STATUS_NOT_INITIALIZED"},
    {1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"}, {1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"},
    {1004, "CUDNN_STATUS_DEPRECATED"}, {1005, "CUDNN_STATUS_LICENSE_ERROR"},
    {1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS"}, {1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"},
    {1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"}, {2000, "CUDNN_STATUS_BAD_PARAM"},
    {3000, "CUDNN_STATUS_NOT_SUPPORTED"}, {4000, "CUDNN_STATUS_INTERNAL_ERROR"},
    {4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"},
    {4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"},
    {5000, "CUDNN_STATUS_EXECUTION_FAILED"}, {5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER"},
    /* cuDNN 8 numbering */
    {1, "CUDNN_STATUS_NOT_INITIALIZED"}, {2, "CUDNN_STATUS_ALLOC_FAILED"}, {3, "CUDNN_STATUS_BAD_PARAM"},
    {4, "CUDNN_STATUS_INTERNAL_ERROR"}, {5, "CUDNN_STATUS_INVALID_VALUE"}, {6, "CUDNN_STATUS_ARCH_MISMATCH"},
    {7, "CUDNN_STATUS_MAPPING_ERROR"}, {8, "CUDNN_STATUS_EXECUTION_FAILED"}, {9, "CUDNN_STATUS_NOT_SUPPORTED"},
    {10, "CUDNN_STATUS_LICENSE_ERROR"}, {-1, NULL}};
static const struct code cudart_codes[] = {
    {0, "cudaSuccess"}, {1, "cudaErrorInvalidValue"}, {2, "cudaErrorMemoryAllocation"},
    {3, "cudaErrorInitializationError"}, {34, "cudaErrorStubLibrary"},
    {35, "cudaErrorInsufficientDriver"}, {36, "cudaErrorCallRequiresNewerDriver"},
    {100, "cudaErrorNoDevice"}, {101, "cudaErrorInvalidDevice"}, {209, "cudaErrorNoKernelImageForDevice"},
    {222, "cudaErrorUnsupportedPtxVersion"}, {304, "cudaErrorOperatingSystem"},
    {803, "cudaErrorSystemDriverMismatch"}, {804, "cudaErrorCompatNotSupportedOnDevice"},
    {999, "cudaErrorUnknown"}, {-1, NULL}};
static const struct code driver_codes[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {4, "CUDA_ERROR_DEINITIALIZED"}, {34, "CUDA_ERROR_STUB_LIBRARY"},
    {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"}, {500, "CUDA_ERROR_NOT_FOUND"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"}, {999, "CUDA_ERROR_UNKNOWN"}, {-1, NULL}};

const char *status_name(const char *fn, long long status)
{
    const struct code *c = driver_codes;
    if (fn && strncmp(fn, "cudnn", 5) == 0)
        c = cudnn_codes;
    else if (fn && strncmp(fn, "cuda", 4) == 0)
        c = cudart_codes;
    for (; c->name; c++)
        if (c->v == status)
            return c->name;
    return NULL;
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
