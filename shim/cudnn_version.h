/* cudnn_version.h - THE cuDNN version encoder, one for the shim and the CLI
 * (tools/ compile it with -Ishim, as status.def): cuDNN's own numbering, what
 * cudnnGetVersion() answers.  cuDNN 9 encodes 9.19.0 as 91900 (major*10000),
 * cuDNN 8 and 7 encode 8.9.7 as 8907 (major*1000).  Header-only and without
 * libc calls, so that the shim's loader can use it under its lock. */
#ifndef CONVGUARD_CUDNN_VERSION_H
#define CONVGUARD_CUDNN_VERSION_H

/* major, minor, patch -> cuDNN's number; -1 if not a cuDNN version
 * (cuDNN 7 was the first with this numbering, and no part goes past 99). */
static inline long long cg_cudnn_version_of(long long major, long long minor, long long patch)
{
    if (major < 7 || major > 99 || minor < 0 || minor > 99 || patch < 0 || patch > 99)
        return -1;
    return major >= 9 ? major * 10000 + minor * 100 + patch : major * 1000 + minor * 100 + patch;
}

/* "9.19.0.56", "9.19.0", "9.19" -> 91900; "8.9.7" -> 8907; -1 for "9" (a
 * major alone, as in libcudnn.so.9, names no version) or no version.  What
 * follows major.minor[.patch] (a build number, "-foo") is not read. */
static inline long long cg_cudnn_version_parse(const char *v)
{
    long long part[3] = {-1, -1, 0};
    for (int i = 0; v && i < 3 && *v >= '0' && *v <= '9'; i++) {
        part[i] = 0;
        while (*v >= '0' && *v <= '9' && part[i] <= 99)
            part[i] = part[i] * 10 + (*v++ - '0');
        if (*v != '.')
            break;
        v++;
    }
    return cg_cudnn_version_of(part[0], part[1], part[2]);
}
#endif
