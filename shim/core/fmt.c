/* fmt.c - small allocation-free string helpers.  They take no locks and call
 * no stdio, so the trace writer and the crash handler can use them anywhere. */
#include <string.h>
#include <unistd.h>

#include "cg.h"

size_t cg_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = src ? strlen(src) : 0;
    if (cap == 0)
        return n;
    size_t k = n < cap - 1 ? n : cap - 1;
    if (k)
        memcpy(dst, src, k);
    dst[k] = 0;
    return n;
}

size_t cg_append(char *dst, size_t cap, size_t n, const char *src)
{
    /* past the end already: nothing is written, the length still counts src */
    return n + cg_strlcpy(n < cap ? dst + n : dst, src, n < cap ? cap - n : 0);
}

size_t cg_append_u(char *dst, size_t cap, size_t n, unsigned long long v)
{
    char d[24];
    d[cg_utoa(d, v)] = 0;
    return cg_append(dst, cap, n, d);
}

size_t cg_utoa(char *dst, unsigned long long v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        dst[i] = tmp[n - 1 - i];
    return n;
}

const char *cg_basename(const char *path)
{
    if (!path)
        return "";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

bool cg_starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

void cg_warn(const char *msg1, const char *msg2)
{
    /* Warnings go out even with CONVGUARD_QUIET: they report bad input. */
    char line[1024];
    size_t n = cg_strlcpy(line, "convguard: warning: ", sizeof line);
    n = cg_append(line, sizeof line, n, msg1);
    n = cg_append(line, sizeof line, n, msg2);
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    /* values come from the environment: no terminal control characters */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[n++] = '\n';
    ssize_t r = write(2, line, n);
    (void)r;
}
