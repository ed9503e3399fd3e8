/* search.c - what a failed dlopen could have found.
 *
 * For a load that failed, list every file that exists in each directory of
 * glibc's search order for that caller, with the version its name carries:
 * DT_RPATH (when the caller has no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH,
 * /etc/ld.so.cache, then the default directories.  $ORIGIN is expanded to
 * the caller's directory.  This runs only on failures. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

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

/* Does a file name belong to the library `stem` ("libnvrtc.so")?  Its name
 * without ".so" followed by '.' or '-': libnvrtc.so.12 and the hashed copies
 * wheels ship (libnvrtc-672ee683.so.11.2), not libcudnn_graph for libcudnn. */
static bool same_library(const char *name, const char *stem)
{
    size_t sl = strlen(stem);
    if (sl > 3 && strcmp(stem + sl - 3, ".so") == 0)
        sl -= 3;
    return strncmp(name, stem, sl) == 0 && (name[sl] == '.' || name[sl] == '-');
}

/* Directories already listed for this failure (resolved), so that the
 * folders that were not searched are listed once, apart. */
#define MAX_LISTED 24
struct listed {
    char dir[MAX_LISTED][512];
    int n;
};

static void note_listed(struct listed *l, const char *dir)
{
    char real[PATH_MAX];
    if (!l || l->n >= MAX_LISTED)
        return;
    cg_strlcpy(l->dir[l->n++], realpath(dir, real) ? real : dir, sizeof l->dir[0]);
}

static bool was_listed(const struct listed *l, const char *dir)
{
    char real[PATH_MAX];
    const char *d = realpath(dir, real) ? real : dir;
    for (int i = 0; l && i < l->n; i++)
        if (strcmp(l->dir[i], d) == 0)
            return true;
    return false;
}

static struct listed *listing; /* of the failure being described; under libs.c's lock */

static void list_dir_as(struct cg_ev *e, const char *dir, size_t dlen, const char *source, const char *stem,
                        bool searched)
{
    char path[1024];
    if (dlen == 0 || dlen >= sizeof path)
        return;
    memcpy(path, dir, dlen);
    path[dlen] = 0;
    note_listed(listing, path);
    cg_ev_open(e, NULL, '{');
    cg_ev_str(e, "dir", path);
    cg_ev_str(e, "source", source);
    cg_ev_open(e, "files", '[');
    DIR *d = opendir(path);
    int n = 0;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) && n < MAX_FILES_PER_DIR) {
            if (!same_library(de->d_name, stem))
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
    if (!searched)
        cg_ev_bool(e, "searched", false);
    cg_ev_close(e, '}');
}

static void list_dir(struct cg_ev *e, const char *dir, size_t dlen, const char *source, const char *stem)
{
    list_dir_as(e, dir, dlen, source, stem, true);
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
            if (!same_library(key, stem))
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

/* A folder the loader does not search for this caller but that holds the
 * library: listed only when it has a file of that name's library, with
 * "searched": false, so the report can say where the file is. */
static void list_unsearched(struct cg_ev *e, const char *dir, const char *source, const char *stem)
{
    if (was_listed(listing, dir))
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    bool any = false;
    struct dirent *de;
    while (!any && (de = readdir(d)))
        any = same_library(de->d_name, stem);
    closedir(d);
    if (!any)
        return;
    list_dir_as(e, dir, strlen(dir), source, stem, false);
}

/* pip's CUDA wheels: <site-packages>/nvidia/<part>/lib, found from the path
 * of the object that asked (a framework inside site-packages). */
static void list_wheels(struct cg_ev *e, const char *obj_path, const char *stem)
{
    const char *sp = obj_path ? strstr(obj_path, "/site-packages/") : NULL;
    if (!sp)
        sp = obj_path ? strstr(obj_path, "/dist-packages/") : NULL;
    if (!sp)
        return;
    char base[768];
    size_t n = (size_t)(strchr(sp + 1, '/') - obj_path);
    if (n + 8 >= sizeof base)
        return;
    memcpy(base, obj_path, n);
    cg_strlcpy(base + n, "/nvidia", sizeof base - n);
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *de;
    int k = 0;
    while ((de = readdir(d)) && k < 24) {
        if (de->d_name[0] == '.')
            continue;
        char lib[1024];
        size_t m = cg_strlcpy(lib, base, sizeof lib);
        m += cg_strlcpy(lib + m, "/", m < sizeof lib ? sizeof lib - m : 0);
        m += cg_strlcpy(lib + m, de->d_name, m < sizeof lib ? sizeof lib - m : 0);
        if (m + 5 >= sizeof lib)
            continue;
        cg_strlcpy(lib + m, "/lib", sizeof lib - m);
        list_unsearched(e, lib, "wheel", stem);
        k++;
    }
    closedir(d);
}

void cg_search_candidates(struct cg_ev *e, const char *file, const void *caller)
{
    char stem[96];
    struct listed seen;
    seen.n = 0;
    listing = &seen;
    cg_lib_stem(file, stem, sizeof stem);
    cg_ev_open(e, "candidates", '[');
    if (strchr(file, '/')) {
        const char *slash = strrchr(file, '/');
        list_dir(e, file, (size_t)(slash - file) ? (size_t)(slash - file) : 1, "path", stem);
        cg_ev_close(e, ']');
        listing = NULL;
        return;
    }
    struct cg_obj o;
    bool have = caller && cg_objsnap_find_obj(caller, &o) && o.dyn;
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
    /* Where the file is although the loader did not look: the asker's own
     * folder (a library without a RUNPATH of $ORIGIN does not search it),
     * and pip's CUDA wheels next to a framework inside site-packages. */
    if (have && origin[0])
        list_unsearched(e, origin, "caller_dir", stem);
    if (have)
        list_wheels(e, o.name, stem);
    cg_ev_close(e, ']');
    listing = NULL;
    if (have) {
        cg_ev_str(e, "caller_runpath", rp && !is_rpath ? rp : NULL);
        if (rp && is_rpath)
            cg_ev_str(e, "caller_rpath", rp);
    }
}

/* A library recorded from a folder of LD_LIBRARY_PATH, which the loader
 * searches before the RUNPATH of the object that needed it: the copies of
 * the same soname that RUNPATH holds (the framework's own) lost.
 * Appends "shadowed":[{path, source}] when there is one. */
struct shadow_ctx {
    struct cg_ev *e;
    const char *soname, *loaded_real;
    int n;
};

static void shadow_dir(struct shadow_ctx *c, const char *dir, size_t n, const char *source)
{
    char p[1024], real[PATH_MAX];
    if (n + 2 + strlen(c->soname) >= sizeof p || c->n >= 4)
        return;
    memcpy(p, dir, n);
    p[n] = '/';
    cg_strlcpy(p + n + 1, c->soname, sizeof p - n - 1);
    if (!realpath(p, real) || strcmp(real, c->loaded_real) == 0)
        return;
    if (!c->n++)
        cg_ev_open(c->e, "shadowed", '[');
    cg_ev_open(c->e, NULL, '{');
    cg_ev_str(c->e, "path", p);
    cg_ev_str(c->e, "source", source);
    cg_ev_close(c->e, '}');
}

void cg_search_shadowed(struct cg_ev *e, const char *loaded, const char *soname, const struct cg_obj *needer)
{
    if (!needer || !needer->dyn || getauxval(AT_SECURE))
        return;
    const char *llp = cg_getenv("LD_LIBRARY_PATH");
    char dir[1024], real[PATH_MAX], origin[1024];
    origin_of(loaded, dir, sizeof dir);
    if (!llp || !*llp || !realpath(loaded, real))
        return;
    /* was it found in LD_LIBRARY_PATH? */
    bool in_llp = false;
    for (const char *p = llp; *p && !in_llp;) {
        size_t n = strcspn(p, ":");
        char d[1024], rd[PATH_MAX], rl[PATH_MAX];
        if (n && n < sizeof d) {
            memcpy(d, p, n);
            d[n] = 0;
            in_llp = realpath(d, rd) && realpath(dir, rl) && strcmp(rd, rl) == 0;
        }
        p += n + (p[n] == ':');
    }
    bool is_rpath;
    const char *rp = cg_elf_runpath(needer, &is_rpath);
    if (!in_llp || !rp || is_rpath) /* an RPATH is searched before LD_LIBRARY_PATH: it cannot lose */
        return;
    origin_of(needer->name, origin, sizeof origin);
    struct shadow_ctx c = {e, soname, real, 0};
    for (const char *p = rp; *p;) {
        size_t n = strcspn(p, ":");
        char d[1024];
        size_t k = 0;
        if (n >= 7 && strncmp(p, "$ORIGIN", 7) == 0)
            k = cg_strlcpy(d, origin, sizeof d), p += 7, n -= 7;
        else if (n >= 9 && strncmp(p, "${ORIGIN}", 9) == 0)
            k = cg_strlcpy(d, origin, sizeof d), p += 9, n -= 9;
        if (k + n < sizeof d) {
            memcpy(d + k, p, n);
            shadow_dir(&c, d, k + n, "RUNPATH");
        }
        p += n + (p[n] == ':');
    }
    if (c.n)
        cg_ev_close(e, ']');
}
