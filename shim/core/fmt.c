/* fmt.c - small allocation-free string helpers.  They take no locks and call
 * no stdio, so the trace writer and the crash handler can use them anywhere. */
#include <string.h>
#include <unistd.h>

#include "core/core.h"

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

/* A line about to go to the terminal, made harmless in place: C0 controls,
 * DEL, C1 controls (U+0080..U+009F, which some terminals take as CSI, OSC,
 * ...), bytes that are not UTF-8 and the bidirectional overrides
 * (U+202A..U+202E, U+2066..U+2069, which reorder what is shown) become '?',
 * one per byte.  Paths and values come from the environment and the loader:
 * anyone who can name a file can put these in them. */
void cg_term_safe(char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c >= 0xc2 && c < 0xe0) ? 2 : (c >= 0xe0 && c < 0xf0) ? 3
                   : (c >= 0xf0 && c <= 0xf4) ? 4 : 0;
        bool ok = len && i + len <= n;
        unsigned cp = len == 1 ? c : c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
        for (size_t k = 1; ok && k < len; k++) {
            ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
            cp = cp << 6 | ((unsigned char)s[i + k] & 0x3f);
        }
        if (ok)
            ok = !(cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (cp >= 0x202a && cp <= 0x202e) ||
                   (cp >= 0x2066 && cp <= 0x2069) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
                   (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff);
        if (!ok)
            len = len && i + len <= n ? len : 1;
        for (size_t k = 0; !ok && k < len; k++)
            s[i + k] = '?';
        i += len;
    }
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
    cg_term_safe(line, n);
    line[n++] = '\n';
    ssize_t r = write(2, line, n);
    (void)r;
}
