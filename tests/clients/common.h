/* common.h - shared by convguard's test clients (tests/clients/README.md).
 *
 * Every client prints a canonical log, one fact per line, so that a run with
 * LD_PRELOAD=build/libconvguard.so and one without can be diffed byte for
 * byte: return values, dlerror() texts ("(null)" when none), yes/no for
 * pointer comparisons, never an address, pid or time; and at the end the
 * sorted set of shared objects mapped (print_maps), without libconvguard.
 * The doubles' device memory is host memory, so clients fill it directly
 * where a framework would cudaMemcpy. */
#ifndef CGTEST_CLIENT_COMMON_H
#define CGTEST_CLIENT_COMMON_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_double.h"
#include "cudnn_double.h"

#define UNUSED __attribute__((unused))
#define MIB ((size_t)1 << 20)

static UNUSED const char *dlerr(void)
{
    const char *e = dlerror();
    return e ? e : "(null)";
}

static UNUSED int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* CGTEST_MAPS_IGNORE=a:b: leave out objects whose file name contains one of
 * these (added for `make check-sanitize`, whose sanitizer-built shim brings
 * libasan, libubsan, libstdc++... into every process it is preloaded in). */
static UNUSED int ignored(const char *base)
{
    const char *v = getenv("CGTEST_MAPS_IGNORE");
    char item[128];
    while (v && *v) {
        size_t n = strcspn(v, ":");
        if (n && n < sizeof item) {
            memcpy(item, v, n);
            item[n] = 0;
            if (strstr(base, item))
                return 1;
        }
        v += n + (v[n] == ':');
    }
    return 0;
}

/* "maps: <path>" for every distinct shared object in /proc/self/maps. */
static UNUSED void print_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], *paths[512];
    int n = 0;

    if (!f) {
        printf("maps: (unreadable)\n");
        return;
    }
    while (fgets(line, sizeof line, f) && n < 512) {
        char *p = strchr(line, '/'), *base;
        if (!p)
            continue;
        p[strcspn(p, "\n")] = 0;
        base = strrchr(p, '/');
        if (!strstr(base, ".so") || strstr(p, "libconvguard") || ignored(base))
            continue;
        paths[n++] = strdup(p);
    }
    fclose(f);
    qsort(paths, (size_t)n, sizeof *paths, cmp_str);
    for (int i = 0; i < n; i++) {
        if (!i || strcmp(paths[i], paths[i - 1]))
            printf("maps: %s\n", paths[i]);
    }
    for (int i = 0; i < n; i++)
        free(paths[i]);
}

/* ---- a small convolution and its reference, written independently of the
 * double (gather form for every direction) */
enum { N = 2, C = 3, H = 7, W = 7, K = 4, R = 3, S = 3, PAD = 1, STR = 2, DIL = 1 };
enum { P = (H + 2 * PAD - ((R - 1) * DIL + 1)) / STR + 1, Q = (W + 2 * PAD - ((S - 1) * DIL + 1)) / STR + 1 };
#define XLEN (N * C * H * W)
#define WLEN (K * C * R * S)
#define YLEN (N * K * P * Q)

static UNUSED void fill(float *v, int n, int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = (float)((i * seed + 3) % 17 - 8) / 8.0f;
}

/* Cross-correlation; y = alpha * conv + beta * y. */
static UNUSED void ref_fwd(const float *x, const float *w, float *y, float alpha, float beta)
{
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int p = 0; p < P; p++)
                for (int q = 0; q < Q; q++) {
                    double acc = 0;
                    for (int c = 0; c < C; c++)
                        for (int r = 0; r < R; r++)
                            for (int s = 0; s < S; s++) {
                                int h = p * STR - PAD + r * DIL, v = q * STR - PAD + s * DIL;
                                if (h >= 0 && h < H && v >= 0 && v < W)
                                    acc += x[((n * C + c) * H + h) * W + v] * w[((k * C + c) * R + r) * S + s];
                            }
                    float *o = &y[((n * K + k) * P + p) * Q + q];
                    *o = alpha * (float)acc + (beta != 0 ? beta * *o : 0);
                }
}

static UNUSED void ref_bwd_data(const float *w, const float *dy, float *dx)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int v = 0; v < W; v++) {
                    double acc = 0;
                    for (int k = 0; k < K; k++)
                        for (int r = 0; r < R; r++)
                            for (int s = 0; s < S; s++) {
                                int ph = h + PAD - r * DIL, pw = v + PAD - s * DIL;
                                if (ph < 0 || pw < 0 || ph % STR || pw % STR || ph / STR >= P || pw / STR >= Q)
                                    continue;
                                acc += dy[((n * K + k) * P + ph / STR) * Q + pw / STR] *
                                       w[((k * C + c) * R + r) * S + s];
                            }
                    dx[((n * C + c) * H + h) * W + v] = (float)acc;
                }
}

static UNUSED void ref_bwd_filter(const float *x, const float *dy, float *dw)
{
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++)
                for (int s = 0; s < S; s++) {
                    double acc = 0;
                    for (int n = 0; n < N; n++)
                        for (int p = 0; p < P; p++)
                            for (int q = 0; q < Q; q++) {
                                int h = p * STR - PAD + r * DIL, v = q * STR - PAD + s * DIL;
                                if (h >= 0 && h < H && v >= 0 && v < W)
                                    acc += x[((n * C + c) * H + h) * W + v] * dy[((n * K + k) * P + p) * Q + q];
                            }
                    dw[((k * C + c) * R + r) * S + s] = (float)acc;
                }
}

static UNUSED const char *same(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++) {
        float d = a[i] - b[i], m = b[i] < 0 ? -b[i] : b[i];
        if (d > 1e-4f * (1.0f + m) || -d > 1e-4f * (1.0f + m))
            return "mismatch";
    }
    return "ok";
}

#endif
