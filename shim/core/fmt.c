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
    n += cg_strlcpy(line + n, msg1 ? msg1 : "", sizeof line - n);
    if (n < sizeof line)
        n += cg_strlcpy(line + n, msg2 ? msg2 : "", sizeof line - n);
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
