/* libfile.c - what a file a process maps is, read from the file and never
 * loaded: a CUDA library's kind (cuDNN, the runtime, the driver, the other
 * CUDA libraries), its soname, and its own version: the data symbol of
 * cuDNN's parts (elf_file.c), the dotted version in its name, or the
 * dist-info of the wheel it came in; a cuDNN dispatcher takes the version of
 * the part beside it. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host/host.h"
#include "cudnn_version.h"

/* ---- what a mapped file is */
static const struct libfile_kind kinds[] = {
    {"libcudnn", "cudnn", "cudnn", "cuDNN", "nvidia_cudnn"},
    {"libcudart", "cudart", "cudart", "CUDA runtime", "nvidia_cuda_runtime"},
    {"libcuda.so", "driver", "driver", "driver", NULL},
    {"libcublasLt", "cublasLt", "other", "cuBLASLt", "nvidia_cublas"},
    {"libcublas", "cublas", "other", "cuBLAS", "nvidia_cublas"},
    {"libnvrtc", "nvrtc", "other", "NVRTC", "nvidia_cuda_nvrtc"},
    {"libnccl", "nccl", "other", "NCCL", "nvidia_nccl"},
    {"libnvJitLink", "nvjitlink", "other", "nvJitLink", "nvidia_nvjitlink"},
    {"libcufft", "cufft", "other", "cuFFT", "nvidia_cufft"},
    {"libcurand", "curand", "other", "cuRAND", "nvidia_curand"},
    {"libcusolver", "cusolver", "other", "cuSOLVER", "nvidia_cusolver"},
    {"libcusparse", "cusparse", "other", "cuSPARSE", "nvidia_cusparse"},
    {"libcupti", "cupti", "other", "CUPTI", "nvidia_cuda_cupti"},
    {"libnvidia-ml", "nvml", "other", "NVML", NULL},
};

const struct libfile_kind *libfile_kind_of(const char *base)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(base, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
            return &kinds[i];
    return NULL;
}

/* ---- versions, read from files */
/* "13.0.96" -> 13000 (CUDA's encoding: major*1000 + minor*10) */
static long long cuda_encode(const char *v)
{
    char *end;
    long long maj = strtoll(v, &end, 10);
    if (end == v || *end != '.' || maj < 7 || maj > 99)
        return -1;
    long long min = strtoll(end + 1, NULL, 10);
    return min >= 0 && min < 100 ? maj * 1000 + min * 10 : -1;
}

/* the dotted version in a file's own name after ".so." (libcudnn.so.9.19.0:
 * "9.19.0"), "" when the name carries only the soname's major */
static const char *name_version(const char *base)
{
    const char *so = strstr(base, ".so.");
    if (!so || !strchr(so + 4, '.'))
        return "";
    return so + 4;
}

/* The wheel a file came in: a `<prefix>*-<version>.dist-info` near it
 * (site-packages for nvidia/<pkg>/lib, or a `dist-info` folder beside lib/)
 * whose RECORD names this file with this size. */
static bool wheel_version(const char *rpath, const char *prefix, long long size, char *out, size_t cap)
{
    char dir[PATH_MAX];
    dir_name(rpath, dir, sizeof dir);
    const char *base = base_name(rpath);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "/%s,", base);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return false;
        *slash = 0;
        for (int sub = 0; sub < 2; sub++) {
            char d[PATH_MAX + 16];
            snprintf(d, sizeof d, "%s%s", dir, sub ? "/dist-info" : "");
            DIR *dd = opendir(d);
            if (!dd)
                continue;
            struct dirent *de;
            bool found = false;
            while (!found && (de = readdir(dd))) {
                size_t len = strlen(de->d_name);
                if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 || len < 11 ||
                    strcmp(de->d_name + len - 10, ".dist-info") != 0 || !strchr(de->d_name, '-'))
                    continue;
                char rec[PATH_MAX * 2];
                snprintf(rec, sizeof rec, "%s/%s/RECORD", d, de->d_name);
                size_t n;
                char *r = file_read_all(rec, &n, 4 << 20);
                for (char *hit = r ? strstr(r, want) : NULL; hit && !found; hit = strstr(hit + 1, want)) {
                    char *eol = strchr(hit, '\n'), *comma = eol ? eol : hit + strlen(hit);
                    while (comma > hit && comma[-1] != ',')
                        comma--;
                    found = strtoll(comma, NULL, 10) == size;
                }
                free(r);
                if (found) {
                    const char *v = strchr(de->d_name, '-') + 1;
                    snprintf(out, cap, "%.*s", (int)(strlen(v) - 10), v);
                }
            }
            closedir(dd);
            if (found)
                return true;
        }
    }
    return false;
}

/* one mapped CUDA file: its own version, read from the file */
json_t *libfile_describe(const char *root, const struct libfile_kind *k, const char *path, bool deleted,
                         unsigned long long inode)
{
    char rpath[PATH_MAX + 64], d[PATH_MAX];
    snprintf(rpath, sizeof rpath, "%s%s", root, path);
    const char *base = base_name(path);
    json_t *l = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:b}", "path", path, "dir", dir_name(path, d, sizeof d),
                          "file", base, "kind", k->kind, "family", k->family, "label", k->label, "inode",
                          (json_int_t)inode, "deleted", deleted);
    struct stat st;
    bool have = stat(rpath, &st) == 0;
    if (have && (unsigned long long)st.st_ino != inode && !deleted)
        json_object_set_new(l, "replaced", json_true());
    struct elf_file e;
    bool elf = !deleted && elf_file_open(rpath, &e) == 0;
    const char *soname = elf ? elf_file_soname(&e) : NULL;
    json_object_set_new(l, "soname", json_string(soname ? soname : base));
    long long ver = -1;
    const char *src = NULL;
    char text[64] = "";
    const char *fv = name_version(base);
    if (*fv)
        json_object_set_new(l, "file_version", json_string(fv));
    if (strcmp(k->kind, "cudnn") == 0) {
        if (elf && (ver = elf_file_cudnn_version(&e)) > 0)
            src = "data";
        else if ((ver = cg_cudnn_version_parse(fv)) > 0)
            src = "file_name";
        else if (have && k->wheel && wheel_version(rpath, k->wheel, st.st_size, text, sizeof text) &&
                 (ver = cg_cudnn_version_parse(text)) > 0)
            src = "wheel";
        if (ver > 0)
            fmt_cudnn_ver(ver, text, sizeof text);
    } else {
        if (*fv)
            snprintf(text, sizeof text, "%s", fv), src = "file_name";
        else if (have && k->wheel && wheel_version(rpath, k->wheel, st.st_size, text, sizeof text))
            src = "wheel";
        if (src && strcmp(k->kind, "cudart") == 0)
            ver = cuda_encode(text);
    }
    if (elf)
        elf_file_close(&e);
    json_object_set_new(l, "version", ver > 0 ? json_integer(ver) : json_null());
    json_object_set_new(l, "version_text", *text ? json_string(text) : json_null());
    json_object_set_new(l, "version_source", src ? json_string(src) : json_null());
    return l;
}

/* A cuDNN file with no version of its own (the dispatcher libcudnn.so.9 has
 * none to read without running it) takes the version of a part of the same
 * major in the same folder: one folder, one install. */
void libfile_folder_versions(const char *root, json_t *libs)
{
    size_t i, j;
    json_t *l, *o;
    json_array_foreach(libs, i, l) {
        if (strcmp(jstr(l, "kind", ""), "cudnn") || jint(l, "version", -1) > 0)
            continue;
        const char *so = strstr(jstr(l, "soname", ""), ".so.");
        long long from = -1;
        const char *who = NULL;
        json_array_foreach(libs, j, o) {
            const char *oso = strstr(jstr(o, "soname", ""), ".so.");
            if (j != i && !strcmp(jstr(o, "kind", ""), "cudnn") && jint(o, "version", -1) > 0 && so && oso &&
                !strcmp(so, oso) && !strcmp(jstr(o, "dir", ""), jstr(l, "dir", "-"))) {
                from = jint(o, "version", -1), who = jstr(o, "file", "?");
                break;
            }
        }
        char sib[PATH_MAX + 64], *whobuf = NULL;
        if (from < 0 && so) {
            /* not mapped yet: the graph part on disk beside it */
            static const char *const parts[] = {"libcudnn_graph", "libcudnn_ops_infer", "libcudnn_ops"};
            for (size_t k = 0; k < 3 && from < 0; k++) {
                snprintf(sib, sizeof sib, "%s%s/%s%s", root, jstr(l, "dir", ""), parts[k], so);
                struct elf_file e;
                if (elf_file_open(sib, &e) == 0) {
                    from = elf_file_cudnn_version(&e);
                    elf_file_close(&e);
                    if (from > 0)
                        who = whobuf = xasprintf("%s%s", parts[k], so);
                }
            }
        }
        if (from > 0) {
            char v[32];
            json_object_set_new(l, "version", json_integer(from));
            json_object_set_new(l, "version_text", json_string(fmt_cudnn_ver(from, v, sizeof v)));
            json_object_set_new(l, "version_source", json_string("folder"));
            json_object_set_new(l, "version_from", json_string(who));
        }
        free(whobuf);
    }
}

/* A dispatcher's own version: that of the graph part beside it (the
 * dispatcher has none to read without loading a part), read from the file;
 * -1 when its folder has none. */
long long libfile_cudnn_own_version(const char *dispatcher)
{
    char fd[PATH_MAX];
    dir_name(dispatcher, fd, sizeof fd);
    const char *so = strstr(base_name(dispatcher), ".so.");
    long long own = -1;
    static const char *const parts[] = {"libcudnn_graph", "libcudnn_ops_infer"};
    for (size_t k = 0; k < 2 && own < 0 && so; k++) {
        char *sib = xasprintf("%s/%s.so.%.*s", fd, parts[k], (int)strcspn(so + 4, "."), so + 4);
        struct elf_file e;
        if (elf_file_open(sib, &e) == 0) {
            own = elf_file_cudnn_version(&e);
            elf_file_close(&e);
        }
        free(sib);
    }
    return own;
}

