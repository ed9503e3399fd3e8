/* libfaultwrite.c - TEST DOUBLE of a filling disk, preloaded before the
 * shim (LD_PRELOAD=libfaultwrite.so:libconvguard.so).  It wraps write(2) for
 * descriptors whose file name ends in ".jsonl" (the traces) and lets through
 * CGTEST_WRITE_OK_BYTES bytes in all (default 0).  After that:
 *   CGTEST_WRITE_FAULT=enospc   every write fails with ENOSPC
 *   CGTEST_WRITE_FAULT=short    the write that crosses the limit writes only
 *                               the bytes up to it (a partial line, as a
 *                               full disk does), later ones fail with ENOSPC
 * Other descriptors are untouched.  Not thread-safe beyond what the tests
 * need (one writer thread). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long long left = -1;

static int is_trace(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 6)
        return 0;
    path[n] = 0;
    return strcmp(path + n - 6, ".jsonl") == 0;
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void *buf, size_t n)
{
    if (is_trace(fd)) {
        const char *mode = getenv("CGTEST_WRITE_FAULT");
        if (left < 0) {
            const char *ok = getenv("CGTEST_WRITE_OK_BYTES");
            left = ok ? atoll(ok) : 0;
        }
        if ((size_t)left < n && mode) {
            if (strcmp(mode, "short") == 0 && left > 0) {
                long r = syscall(SYS_write, fd, buf, (size_t)left);
                left = 0;
                return r;
            }
            errno = ENOSPC;
            return -1;
        }
        left -= (long long)n;
    }
    return syscall(SYS_write, fd, buf, n);
}
