/* search.c - what a failed dlopen could have found.
 *
 * For a load that failed, list every file that exists in each directory of
 * glibc's search order for that caller, with the version its name carries:
 * DT_RPATH (when the caller has no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH,
 * /etc/ld.so.cache, then the default directories.  $ORIGIN is expanded to
 * the caller's directory.  This runs only on failures. */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg.h"
#include "libs.h"

size_t cg_lib_stem(const char *file, char *out, size_t cap)
{
    const char *b = cg_basename(file);
    const char *so = strstr(b, ".so");
    size_t n = so ? (size_t)(so - b) + 3 : strlen(b);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, b, n);
    out[n] = 0;
    return n;
}

const char *cg_lib_name_version(const char *file)
{
    const char *so = strstr(cg_basename(file), ".so.");
    return so ? so + 4 : "";
}

#define MAX_FILES_PER_DIR 16

static void list_dir(struct cg_ev *e, const char *dir, size_t dlen, const char *source, const char *stem)
{
    char path[1024];
    if (dlen == 0 || dlen >= sizeof path)
        return;
    memcpy(path, dir, dlen);
    path[dlen] = 0;
    cg_ev_open(e, NULL, '{');
    cg_ev_str(e, "dir", path);
    cg_ev_str(e, "source", source);
    cg_ev_open(e, "files", '[');
    DIR *d = opendir(path);
    int n = 0;
    if (d) {
        struct dirent *de;
        size_t sl = strlen(stem);
        while ((de = readdir(d)) && n < MAX_FILES_PER_DIR) {
            if (strncmp(de->d_name, stem, sl) != 0)
                continue;
            cg_ev_open(e, NULL, '{');
            cg_ev_str(e, "name", de->d_name);
            cg_ev_str(e, "version", cg_lib_name_version(de->d_name));
            cg_ev_close(e, '}');
            n++;
        }
        closedir(d);
    }
    cg_ev_close(e, ']');
    if (!d)
        cg_ev_bool(e, "missing", true);
    cg_ev_close(e, '}');
}

/* Splits a colon list, expanding $ORIGIN / ${ORIGIN}. */
static void list_path(struct cg_ev *e, const char *list, const char *origin, const char *source, const char *stem)
{
    const char *p = list;
    while (p && *p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char dir[1024];
        size_t k = 0;
        if (origin && n >= 7 && strncmp(p, "$ORIGIN", 7) == 0) {
            k = cg_strlcpy(dir, origin, sizeof dir);
            p += 7, n -= 7;
        } else if (origin && n >= 9 && strncmp(p, "${ORIGIN}", 9) == 0) {
            k = cg_strlcpy(dir, origin, sizeof dir);
            p += 9, n -= 9;
        }
        if (k < sizeof dir && k + n < sizeof dir) {
            memcpy(dir + k, p, n);
            list_dir(e, dir, k + n, source, stem);
        }
        p += n;
        if (*p == ':')
            p++;
    }
}

/* /etc/ld.so.cache, new format ("glibc-ld.so.cache1.1"): entries whose key
 * (a soname) starts with the stem. */
struct cache_entry {
    int32_t flags;
    uint32_t key, value, osversion;
    uint64_t hwcap;
};

static void list_cache(struct cg_ev *e, const char *stem)
{
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 48) {
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t size = (size_t)st.st_size;
    const char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return;
    static const char magic[] = "glibc-ld.so.cache1.1";
    const char *hdr = NULL;
    if (memcmp(m, magic, sizeof magic - 1) == 0) {
        hdr = m;
    } else if (memcmp(m, "ld.so-1.7.0", 11) == 0 && size > 16) {
        /* old format first: skip its entries (12 bytes each) to the new one */
        uint32_t n_old;
        memcpy(&n_old, m + 12, 4);
        size_t off = 16 + (size_t)n_old * 12;
        off = (off + 7) & ~(size_t)7;
        if (off + sizeof magic < size && memcmp(m + off, magic, sizeof magic - 1) == 0)
            hdr = m + off;
    }
    cg_ev_open(e, NULL, '{');
    cg_ev_str(e, "dir", "/etc/ld.so.cache");
    cg_ev_str(e, "source", "ld.so.cache");
    cg_ev_open(e, "files", '[');
    if (hdr) {
        uint32_t nlibs;
        memcpy(&nlibs, hdr + 20, 4);
        const struct cache_entry *ent = (const struct cache_entry *)(hdr + 48);
        size_t sl = strlen(stem);
        int listed = 0;
        for (uint32_t i = 0; i < nlibs && listed < MAX_FILES_PER_DIR; i++) {
            if ((const char *)&ent[i + 1] > m + size)
                break;
            /* string offsets count from the start of the new-format header */
            size_t ko = ent[i].key, vo = ent[i].value;
            const char *key = hdr + ko, *val = hdr + vo;
            if (key < m || key >= m + size || val < m || val >= m + size)
                continue;
            if (strnlen(key, (size_t)(m + size - key)) == (size_t)(m + size - key))
                continue;
            if (strncmp(key, stem, sl) != 0)
                continue;
            cg_ev_open(e, NULL, '{');
            cg_ev_str(e, "name", key);
            cg_ev_str(e, "path", val);
            cg_ev_str(e, "version", cg_lib_name_version(key));
            cg_ev_close(e, '}');
            listed++;
        }
    }
    cg_ev_close(e, ']');
    cg_ev_close(e, '}');
    munmap((void *)m, size);
}

static void origin_of(const char *path, char *out, size_t cap)
{
    char exe[1024];
    if (!path || !path[0]) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe;
    }
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, path, n);
    out[n] = 0;
}

void cg_search_candidates(struct cg_ev *e, const char *file, const void *caller)
{
    char stem[96];
    cg_lib_stem(file, stem, sizeof stem);
    cg_ev_open(e, "candidates", '[');
    if (strchr(file, '/')) {
        const char *slash = strrchr(file, '/');
        list_dir(e, file, (size_t)(slash - file) ? (size_t)(slash - file) : 1, "path", stem);
        cg_ev_close(e, ']');
        return;
    }
    struct cg_obj o;
    bool have = caller && cg_elf_find_obj(caller, &o) && o.dyn;
    char origin[1024] = "";
    bool is_rpath = false;
    const char *rp = NULL;
    if (have) {
        origin_of(o.name, origin, sizeof origin);
        rp = cg_elf_runpath(&o, &is_rpath);
    }
    if (rp && is_rpath)
        list_path(e, rp, origin, "RPATH", stem);
    const char *llp = getauxval(AT_SECURE) ? NULL : cg_getenv("LD_LIBRARY_PATH");
    if (llp)
        list_path(e, llp, NULL, "LD_LIBRARY_PATH", stem);
    if (rp && !is_rpath)
        list_path(e, rp, origin, "RUNPATH", stem);
    list_cache(e, stem);
    list_path(e, "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib", NULL,
              "default", stem);
    cg_ev_close(e, ']');
}
