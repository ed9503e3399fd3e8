/* libs.c - which CUDA-family libraries are mapped, from where, and how they
 * came to be loaded.  Each library is recorded once, as a `lib` event, when it
 * first appears in the link map (at start, or after a dlopen that brought it
 * in directly or as a dependency); each dlopen of a CUDA-family name is a
 * `dlopen` event.  Failed attempts that a later success of the same library
 * follows (cuDNN tries .so.9.19.0, .so.9.19, then .so.9) are benign probes. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

static struct cg_lib libs[CG_MAX_LIBS];
static int nlibs;
/* cuda/drvlog.c's cg_drvlog_on_load, handed over by cg_libs_init: a libcuda.so.1
 * recorded gets the driver's log callback (the driver layer sits above this one) */
static const char *(*driver_loaded)(const struct cg_obj *o);
/* Recursive: recording a library may call into it (versions.c), and a load it
 * triggers comes back through dlopen on the same thread. */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* The gate first, then the lock: sections under the lock ask the loader and
 * the driver (gated calls), and a fork's prepare waits for gated threads
 * while holding nothing of ours, so this order can never wait in a circle
 * (forkgate.c). */
static void table_lock(void)
{
    cg_fork_gate_enter();
    pthread_mutex_lock(&lock);
}

static void table_unlock(void)
{
    pthread_mutex_unlock(&lock);
    cg_fork_gate_leave();
}

/* Failed loads not (yet) followed by a success of the same stem. */
#define MAX_PROBES 32
static struct probe {
    char stem[96];
    char names[512]; /* JSON array body, e.g. "a","b" */
    int count;
    bool has_seq;    /* the seq and text of the last failure written as an event */
    uint64_t seq;
    char err[256];
    char last_name[160];
    const void *last_caller;
    bool listed; /* candidates already written with a failure */
    bool damaged; /* a failure other than "absent": never resolved by a later success */
} probes[MAX_PROBES];

/* What the loader's words (dlerror) say.  Only "absent" - the very name
 * asked was in no folder searched - is how probes fail; any other failure
 * (a file too short or not ELF, of the wrong class, an undefined symbol, a
 * GLIBC version not found, permission denied, a dependency absent) is a
 * file that is there and broken or of the wrong build: the likely root
 * cause, whatever loads later.  `named` gets the object the words name. */
static const char *error_kind(const char *file, const char *err, char *named, size_t cap)
{
    named[0] = 0;
    if (!err)
        return "other";
    const char *req = strstr(err, "(required by ");
    size_t n = strcspn(err, ":");
    if (req) { /* version `GLIBC_2.38' not found (required by /path/libx.so) */
        req += 13;
        n = strcspn(req, ")");
        if (n < cap) {
            memcpy(named, req, n);
            named[n] = 0;
        }
    } else if (n < cap && err[n] == ':') {
        memcpy(named, err, n);
        named[n] = 0;
    }
    if (strstr(err, "No such file or directory"))
        return strcmp(cg_basename(named), cg_basename(file)) == 0 ? "absent" : "dependency_absent";
    if (strstr(err, "file too short"))
        return "too_short";
    if (strstr(err, "invalid ELF header"))
        return "bad_elf";
    if (strstr(err, "wrong ELF class"))
        return "wrong_class";
    if (strstr(err, "undefined symbol"))
        return "undefined_symbol";
    if (strstr(err, "version `") && strstr(err, "not found"))
        return "version_not_found";
    if (strstr(err, "Permission denied"))
        return "permission";
    return "other";
}

/* cuDNN's dispatcher repeats its probes on the first call of every function:
 * an attempt already written (same name, same outcome) is counted, not
 * written again.  */
#define MAX_SEEN 128
static struct seen {
    char name[160];
    char outcome[256]; /* the path loaded, or the error */
    bool ok;
} seen[MAX_SEEN];
static int nseen;
static _Atomic uint64_t repeats;

/* true when this attempt was already written; otherwise remembers it */
static bool seen_before(const char *name, bool ok, const char *outcome)
{
    if (!outcome)
        outcome = "";
    for (int i = 0; i < nseen; i++)
        if (seen[i].ok == ok && strcmp(seen[i].name, name) == 0 && strcmp(seen[i].outcome, outcome) == 0) {
            atomic_fetch_add_explicit(&repeats, 1, memory_order_relaxed);
            return true;
        }
    if (nseen < MAX_SEEN && strlen(name) < sizeof seen[0].name && strlen(outcome) < sizeof seen[0].outcome) {
        cg_strlcpy(seen[nseen].name, name, sizeof seen[0].name);
        cg_strlcpy(seen[nseen].outcome, outcome, sizeof seen[0].outcome);
        seen[nseen++].ok = ok;
    }
    return false;
}

uint64_t cg_libs_repeats(void) { return atomic_load(&repeats); }

static const char *const prefixes[] = {
    "libcudnn", "libcudart", "libcuda.so", "libcublas", "libnvrtc", "libnvidia-ml", "libnvJitLink",
};

static int family_of_name(const char *path)
{
    const char *b = cg_basename(path);
    if (cg_starts_with(b, "libcudnn"))
        return CG_FAM_CUDNN;
    if (cg_starts_with(b, "libcudart"))
        return CG_FAM_CUDART;
    if (cg_starts_with(b, "libcuda.so"))
        return CG_FAM_DRV;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (cg_starts_with(b, prefixes[i]))
            return CG_FAM_OTHER;
    /* CONVGUARD_EXTRA_LIBS=libcufft,libnccl widens the set */
    const char *p = cg_cfg.extra_libs;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n && strncmp(b, p, n) == 0)
            return CG_FAM_OTHER;
        p += n + (comma ? 1 : 0);
    }
    return -1;
}

bool cg_lib_is_traced_name(const char *path) { return family_of_name(path) >= 0; }

int cg_caller_family(const void *caller)
{
    struct cg_obj o;
    if (!caller || !cg_objsnap_find_obj(caller, &o))
        return -1;
    const char *so = o.dyn ? cg_elf_soname(&o) : NULL;
    return family_of_name(so ? so : o.name);
}

static const char *family_name(int f)
{
    static const char *const names[] = {"cudnn", "cudart", "driver", "other"};
    return f >= 0 && f <= CG_FAM_OTHER ? names[f] : "other";
}

static void flags_str(int flags, char *out, size_t cap)
{
    size_t n = cg_strlcpy(out, (flags & RTLD_NOW) ? "RTLD_NOW" : "RTLD_LAZY", cap);
    static const struct {
        int bit;
        const char *name;
    } f[] = {{RTLD_GLOBAL, "|RTLD_GLOBAL"}, {RTLD_NOLOAD, "|RTLD_NOLOAD"}, {RTLD_NODELETE, "|RTLD_NODELETE"},
             {RTLD_DEEPBIND, "|RTLD_DEEPBIND"}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (flags & f[i].bit)
            n = cg_append(out, cap, n, f[i].name);
    if (!(flags & RTLD_GLOBAL))
        cg_append(out, cap, n, "|RTLD_LOCAL");
}

/* "caller": the object a return address lies in, "caller_offset": where in it
 * (null when no loaded object holds it).  Shared by every event that names who
 * called: dlopen, alloc_failed, code_load_failed. */
void cg_ev_caller(struct cg_ev *e, const void *caller)
{
    struct cg_obj o;
    if (caller && cg_objsnap_find_obj(caller, &o)) {
        cg_ev_str(e, "caller", o.name[0] ? o.name : "(main program)");
        cg_ev_hex(e, "caller_offset", (uintptr_t)caller - o.base);
    } else {
        cg_ev_str(e, "caller", NULL);
    }
}

struct needed_ctx {
    const char *soname;
    char by[512];
    struct cg_obj obj;
};

static int needed_cb(const struct cg_obj *o, void *p)
{
    struct needed_ctx *c = p;
    for (int i = 0; o->dyn; i++) {
        const char *n = cg_elf_needed(o, i);
        if (!n)
            break;
        if (strcmp(n, c->soname) == 0) {
            cg_strlcpy(c->by, o->name[0] ? o->name : "(main program)", sizeof c->by);
            c->obj = *o;
            return 1;
        }
    }
    return 0;
}

/* The dlopen whose scan is recording libraries now (under the lock): its
 * caller is the object whose search order found them. */
static const void *scan_caller;

/* The version the file's real name carries: libcudnn.so.9 -> libcudnn.so.9.19.0
 * gives "9.19.0", libcuda.so.1 -> libcuda.so.580.95.05 gives "580.95.05". */
static bool file_version(const char *real, char *out, size_t cap)
{
    const char *v = cg_lib_name_version(real);
    if (!*v || strlen(v) >= cap)
        return false;
    cg_strlcpy(out, v, cap);
    return true;
}

/* "535.129.03" from /proc/driver/nvidia/version: the kernel module that is
 * loaded, which must match the user-space driver (libcuda) exactly. */
static bool kernel_module_version(char *out, size_t cap)
{
    int fd = open("/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char b[512];
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0)
        return false;
    b[n] = 0;
    return cg_nvidia_module_version(b, out, cap);
}

/* What the file on disk says: the folder it really is in, where a link led
 * to another one (where a part really came from: tools/analysis/diagnose.c
 * compares folders), the version its real name carries, the kernel module's
 * for the driver. */
static void ev_file_facts(struct cg_ev *e, const char *name, const struct cg_lib *l)
{
    char real[PATH_MAX], fv[64];
    bool have_real = realpath(name, real) != NULL;
    const char *rs = have_real ? strrchr(real, '/') : NULL, *ps = strrchr(l->path, '/');
    if (rs && (!ps || ps - l->path != rs - real || strncmp(real, l->path, (size_t)(rs - real)) != 0))
        cg_ev_strn(e, "real_dir", real, (size_t)(rs - real));
    if (have_real && file_version(real, fv, sizeof fv))
        cg_ev_str(e, "file_version", fv);
    if (l->family == CG_FAM_DRV && kernel_module_version(fv, sizeof fv))
        cg_ev_str(e, "kernel_module", fv);
}

static void record_lib(const struct cg_obj *o, const char *via, bool may_call)
{
    const char *so = o->dyn ? cg_elf_soname(o) : NULL;
    if (nlibs >= CG_MAX_LIBS)
        return;
    struct cg_lib *l = &libs[nlibs++];
    memset(l, 0, sizeof *l);
    l->base = o->base;
    l->start = o->start;
    l->end = o->end;
    cg_strlcpy(l->path, o->name, sizeof l->path);
    cg_strlcpy(l->soname, so ? so : cg_basename(o->name), sizeof l->soname);
    l->family = family_of_name(l->soname);
    if (l->family < 0)
        l->family = family_of_name(o->name);
    l->version = -1;
    l->built_for = -1;
    struct stat st;
    if (stat(o->name, &st) == 0) {
        l->dev = st.st_dev;
        l->ino = st.st_ino;
        l->size = st.st_size;
        l->mtime = (long long)st.st_mtime;
    }
    /* Versions first (they may answer from the library itself), then the event. */
    const char *driver_log = NULL;
    if (may_call) {
        cg_versions_on_load(o, l);
        driver_log = l->family == CG_FAM_DRV && driver_loaded ? driver_loaded(o) : NULL;
    }
    char b[4096];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "lib");
    cg_ev_str(&e, "path", l->path);
    cg_ev_str(&e, "soname", l->soname);
    cg_ev_str(&e, "family", family_name(l->family));
    if (l->ino) {
        cg_ev_i64(&e, "size", l->size);
        cg_ev_i64(&e, "mtime", l->mtime);
        cg_ev_u64(&e, "inode", l->ino);
        cg_ev_u64(&e, "dev", l->dev);
    }
    if (l->version >= 0)
        cg_ev_i64(&e, "version", l->version);
    if (l->version >= 0 && l->version_source)
        cg_ev_str(&e, "version_source", l->version_source);
    if (l->built_for >= 0)
        cg_ev_i64(&e, "cuda_built_for", l->built_for);
    ev_file_facts(&e, o->name, l);
    if (driver_log)
        cg_ev_str(&e, "driver_log", driver_log);
    struct needed_ctx nc = {.soname = l->soname};
    bool needed = cg_elf_each_obj(needed_cb, &nc);
    if (needed)
        cg_ev_str(&e, "needed_by", nc.by);
    cg_ev_str(&e, "via", via);
    /* the object whose search found it: the one that needs it, or the dlopen's caller */
    struct cg_obj asker;
    if (l->family != CG_FAM_OTHER || cg_starts_with(l->soname, "libcublas"))
        cg_search_shadowed(&e, l->path, l->soname,
                           needed ? &nc.obj : scan_caller && cg_objsnap_find_obj(scan_caller, &asker) ? &asker : NULL);
    cg_ev_end(&e);
}

/* Which objects a scan may call into (their version functions, the driver's
 * log registration).  An object shows in the loader's list as soon as it is
 * mapped, before it is relocated: another thread's dlopen may be half-way
 * through it, and in a child forked at that moment it stays half-loaded for
 * good (a call into it jumped to an unrelocated address: seen with cuDNN's
 * graph library in tests/robust/prog_forkstress).  Complete for sure: every
 * object at start, and the object a dlopen just returned with the ones its
 * DT_NEEDED entries brought (they follow it in the list: one pass collects
 * their sonames).  Others wait for their own dlopen to return; at exit they
 * are recorded without a call. */
/* A CUDA-family object mapped now that the table does not hold yet. */
static bool unseen_traced(const struct cg_obj *o)
{
    if (!o->name[0])
        return false;
    const char *so = o->dyn ? cg_elf_soname(o) : NULL;
    if (!cg_lib_is_traced_name(so ? so : o->name) && !cg_lib_is_traced_name(o->name))
        return false;
    for (int i = 0; i < nlibs; i++)
        if (!libs[i].unloaded && libs[i].base == o->base && strcmp(libs[i].path, o->name) == 0)
            return false;
    return true;
}

enum scan_calls { SCAN_CALL_ALL, SCAN_CALL_OPENED, SCAN_CALL_NONE };
#define SCAN_MAX_NEEDED 256

struct scan_ctx {
    const char *via;
    int added;
    enum scan_calls calls;
    const void *opened_dyn;             /* SCAN_CALL_OPENED: the object dlopen returned */
    const char *needed[SCAN_MAX_NEEDED]; /* sonames it brought in, directly or not */
    int nneeded;
};

static bool brought_in(const struct scan_ctx *c, const char *so)
{
    for (int i = 0; so && i < c->nneeded; i++)
        if (strcmp(c->needed[i], so) == 0)
            return true;
    return false;
}

static void add_needed(struct scan_ctx *c, const struct cg_obj *o)
{
    for (int i = 0; o->dyn && c->nneeded < SCAN_MAX_NEEDED; i++) {
        const char *n = cg_elf_needed(o, i);
        if (!n)
            break;
        c->needed[c->nneeded++] = n;
    }
}

static int scan_cb(const struct cg_obj *o, void *p)
{
    struct scan_ctx *c = p;
    bool complete = c->calls == SCAN_CALL_ALL;
    if (c->calls == SCAN_CALL_OPENED &&
        (o->dyn == c->opened_dyn || (o->dyn && brought_in(c, cg_elf_soname(o))))) {
        complete = true;
        add_needed(c, o);
    }
    if (unseen_traced(o) && (complete || c->calls == SCAN_CALL_NONE)) {
        record_lib(o, c->via, complete);
        c->added++;
    }
    return 0;
}

static void scan_locked(const char *via, enum scan_calls calls, const void *opened_dyn)
{
    struct scan_ctx c = {.via = via, .calls = calls, .opened_dyn = opened_dyn};
    cg_elf_each_obj(scan_cb, &c);
}

void cg_libs_scan(const char *reason)
{
    table_lock();
    scan_locked(reason, SCAN_CALL_ALL, NULL);
    table_unlock();
}

void cg_libs_scan_exit(void)
{
    table_lock();
    scan_locked("(exit)", SCAN_CALL_NONE, NULL);
    table_unlock();
}

void cg_libs_scan_opened(const char *reason, const void *opened_dyn)
{
    table_lock();
    scan_locked(reason, SCAN_CALL_OPENED, opened_dyn);
    table_unlock();
}

static struct probe *probe_find(const char *stem)
{
    for (int i = 0; i < MAX_PROBES; i++)
        if (probes[i].count && strcmp(probes[i].stem, stem) == 0)
            return &probes[i];
    return NULL;
}

/* The fields every `dlopen` event starts with. */
static void dlopen_event(struct cg_ev *e, char *b, size_t cap, const char *file, int flags, const void *caller,
                         bool ok)
{
    char fl[96];
    flags_str(flags, fl, sizeof fl);
    cg_ev_begin(e, b, cap, "dlopen");
    cg_ev_str(e, "name", file);
    cg_ev_str(e, "flags", fl);
    cg_ev_caller(e, caller);
    cg_ev_bool(e, "ok", ok);
}

static int count_new_cb(const struct cg_obj *o, void *p)
{
    *(int *)p += unseen_traced(o);
    return 0;
}

void cg_libs_after_open(const char *file, int flags, const void *caller, void *handle, bool traced_name, bool added)
{
    struct link_map *lm = handle;
    char stem[96];
    cg_lib_stem(file, stem, sizeof stem);
    table_lock();
    const char *path = lm && lm->l_name && lm->l_name[0] ? lm->l_name : NULL;
    /* Other names (a Python extension module, say) are written only when
     * they brought a CUDA-family library in. */
    int fresh = 0;
    if (!traced_name && added)
        cg_elf_each_obj(count_new_cb, &fresh);
    bool repeat = traced_name && seen_before(file, true, path);
    struct probe *p = traced_name ? probe_find(stem) : NULL;
    if ((traced_name && !repeat) || fresh) {
        char b[4096];
        struct cg_ev e;
        dlopen_event(&e, b, sizeof b, file, flags, caller, true);
        cg_ev_str(&e, "path", path);
        if (p && p->names[0]) {
            cg_ev_open(&e, "benign_probes", '[');
            cg_ev_raw(&e, NULL, p->names);
            cg_ev_close(&e, ']');
        }
        cg_ev_end(&e);
    }
    if (p) {
        /* a broken file stays a failure: one, whatever was retried */
        p->count = p->damaged ? 1 : 0;
        p->names[0] = 0;
        p->listed = true;
    }
    if (added) { /* a library loaded before was scanned when it was loaded */
        scan_caller = caller;
        scan_locked(file, SCAN_CALL_OPENED, lm ? lm->l_ld : NULL);
        scan_caller = NULL;
    }
    table_unlock();
}

void cg_libs_open_failed(const char *file, int flags, const void *caller, const char *err)
{
    char stem[96], named[512];
    cg_lib_stem(file, stem, sizeof stem);
    const char *kind = error_kind(file, err, named, sizeof named);
    bool absent = strcmp(kind, "absent") == 0;
    bool probe_like = absent && cg_caller_family(caller) >= 0 && strchr(cg_lib_name_version(file), '.');
    table_lock();
    bool written = false;
    uint64_t written_seq = 0;
    if (!seen_before(file, false, err)) {
        char b[CG_EV_BUF];
        struct cg_ev e;
        dlopen_event(&e, b, sizeof b, file, flags, caller, false);
        cg_ev_str(&e, "error", err);
        cg_ev_str(&e, "stem", stem);
        cg_ev_str(&e, "error_kind", kind);
        if (!absent && named[0]) {
            cg_ev_str(&e, "error_file", named);
            struct stat st;
            if (strchr(named, '/') && stat(named, &st) == 0)
                cg_ev_i64(&e, "error_file_size", (long long)st.st_size);
        }
        /* cuDNN probes .so.9.19.0 and .so.9.19 before .so.9: a miss of a
         * name with a dotted version asked by a CUDA library itself is most
         * likely such a probe, and listing directories for each is costly
         * in bytes.  Its candidates are written at exit if no load of the
         * library ever succeeded. */
        if (probe_like)
            cg_ev_bool(&e, "likely_probe", true);
        else
            cg_search_candidates(&e, file, caller);
        cg_ev_end(&e);
        written = true;
        written_seq = e.seq;
    }
    struct probe *p = probe_find(stem);
    if (!p)
        for (int i = 0; i < MAX_PROBES && !p; i++)
            if (!probes[i].count) {
                p = &probes[i];
                cg_strlcpy(p->stem, stem, sizeof p->stem);
                p->names[0] = 0;
                p->has_seq = false;
                p->listed = false;
                p->damaged = false;
            }
    if (p && written) {
        p->has_seq = true;
        p->seq = written_seq;
        cg_strlcpy(p->err, err ? err : "", sizeof p->err);
    }
    if (p && !absent)
        p->damaged = true;
    if (p) {
        cg_strlcpy(p->last_name, file, sizeof p->last_name);
        p->last_caller = caller;
        if (!probe_like)
            p->listed = true;
    }
    if (p && !absent) {
        p->count++; /* not a probe: no later success lists it as one */
    } else if (p) {
        size_t n = strlen(p->names);
        char quoted[200];
        size_t qn = cg_strlcpy(quoted, "\"", sizeof quoted);
        qn = cg_append(quoted, sizeof quoted, qn, file);
        cg_append(quoted, sizeof quoted, qn, "\"");
        if (!strstr(p->names, quoted) && n + strlen(file) + 4 < sizeof p->names) {
            /* names are file names the program chose: keep them JSON-safe */
            char tmp[CG_EV_BUF];
            struct cg_ev q;
            q.buf = tmp;
            q.cap = sizeof tmp;
            q.len = 0;
            q.overflow = false;
            tmp[q.len++] = '[';
            cg_ev_str(&q, NULL, file);
            tmp[q.len] = 0;
            if (n)
                p->names[n++] = ',';
            cg_strlcpy(p->names + n, tmp + 1, sizeof p->names - n);
        }
        p->count++;
    }
    table_unlock();
}

bool cg_libs_load_failure(const char *stem, uint64_t *seq, char *err, size_t cap)
{
    bool found = false;
    table_lock();
    struct probe *p = probe_find(stem);
    if (p && p->has_seq) {
        found = true;
        *seq = p->seq;
        cg_strlcpy(err, p->err, cap);
    }
    table_unlock();
    return found;
}

void cg_libs_unresolved_events(void)
{
    table_lock();
    for (int i = 0; i < MAX_PROBES; i++) {
        struct probe *p = &probes[i];
        if (!p->count || p->listed)
            continue;
        char b[CG_EV_BUF];
        struct cg_ev e;
        cg_ev_begin(&e, b, sizeof b, "load_unresolved");
        cg_ev_str(&e, "stem", p->stem);
        cg_ev_open(&e, "attempts", '[');
        cg_ev_raw(&e, NULL, p->names);
        cg_ev_close(&e, ']');
        /* the caller may be gone; list the search order without its RUNPATH then */
        struct cg_obj o;
        cg_search_candidates(&e, p->last_name, cg_objsnap_find_obj(p->last_caller, &o) ? p->last_caller : NULL);
        cg_ev_end(&e);
        p->listed = true;
    }
    table_unlock();
}

int cg_libs_unresolved_failures(void)
{
    int n = 0;
    table_lock();
    for (int i = 0; i < MAX_PROBES; i++)
        n += probes[i].count > 0; /* one per library, however often retried */
    table_unlock();
    return n;
}

struct alive_ctx {
    uintptr_t base;
    const char *path;
};
static int alive_cb(const struct cg_obj *o, void *p)
{
    struct alive_ctx *c = p;
    return o->base == c->base && strcmp(o->name, c->path) == 0;
}

void cg_libs_after_close(uintptr_t base)
{
    table_lock();
    for (int i = 0; i < nlibs; i++) {
        struct cg_lib *l = &libs[i];
        if (l->unloaded || l->base != base)
            continue;
        struct alive_ctx c = {base, l->path};
        if (cg_elf_each_obj(alive_cb, &c))
            continue;
        l->unloaded = true;
        /* forget real functions that lived in the unmapped library */
        for (int s = 0; s < CG_NSLOTS; s++)
            for (int h = 0; h < CG_NHOOKS; h++) {
                uintptr_t r = (uintptr_t)atomic_load(&cg_real[s][h]);
                if (r >= l->start && r < l->end) {
                    atomic_store(&cg_real[s][h], NULL);
                    atomic_fetch_add(&cg_real_gen, 1);
                }
            }
        char b[1024];
        struct cg_ev e;
        cg_ev_begin(&e, b, sizeof b, "lib_unloaded");
        cg_ev_str(&e, "path", l->path);
        cg_ev_end(&e);
    }
    table_unlock();
}

void cg_libs_step_aside(const char *name, void *real, void *first, const char *route)
{
    struct cg_obj a, b2;
    char b[2048];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "step_aside");
    cg_ev_str(&e, "fn", name);
    cg_ev_str(&e, "route", route);
    cg_ev_str(&e, "reason", "a second copy of the library: its functions are passed through unwrapped");
    cg_ev_str(&e, "this_copy", cg_objsnap_find_obj(real, &a) ? a.name : NULL);
    cg_ev_str(&e, "wrapped_copy", cg_objsnap_find_obj(first, &b2) ? b2.name : NULL);
    cg_ev_end(&e);
}

/* fork(): every section under the table's lock is inside the fork gate
 * (table_lock), so no thread is half-way through one when fork() copies the
 * process; the child still gets the lock fresh, as every shim lock. */
static void fork_child(void)
{
    static const pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP; /* no mutexattr: cg_atfork */
    memcpy(&lock, &fresh, sizeof lock);
}

void cg_libs_init(const char *(*on_driver)(const struct cg_obj *o))
{
    driver_loaded = on_driver;
    cg_atfork(NULL, NULL, fork_child);
}

void cg_libs_each(void (*fn)(struct cg_lib *l, void *arg), void *arg)
{
    table_lock();
    for (int i = 0; i < nlibs; i++)
        if (!libs[i].unloaded)
            fn(&libs[i], arg);
    table_unlock();
}

static void replaced_cb(struct cg_lib *l, void *arg)
{
    struct stat st;
    if (!l->ino || l->replaced_reported)
        return;
    bool gone = stat(l->path, &st) != 0;
    if (!gone && st.st_dev == l->dev && st.st_ino == l->ino && st.st_size == l->size &&
        (long long)st.st_mtime == l->mtime)
        return;
    l->replaced_reported = true;
    /* a fact (the file is not the one mapped); what it means is the CLI's */
    char b[2048];
    struct cg_ev e;
    cg_ev_begin(&e, b, sizeof b, "lib_changed");
    cg_ev_str(&e, "path", l->path);
    cg_ev_str(&e, "when", (const char *)arg);
    cg_ev_bool(&e, "deleted", gone);
    cg_ev_end(&e);
}

void cg_libs_check_replaced(const char *when) { cg_libs_each(replaced_cb, (void *)when); }

struct primary_ctx {
    char *out;
    size_t cap;
    int best;
};

static void primary_cb(struct cg_lib *l, void *arg)
{
    struct primary_ctx *c = arg;
    /* prefer libcudnn.so.N, then cudart, then the driver */
    int rank = cg_starts_with(l->soname, "libcudnn.so")   ? 4
               : l->family == CG_FAM_CUDNN             ? 3
               : l->family == CG_FAM_CUDART            ? 2
               : l->family == CG_FAM_DRV               ? 1
                                                       : 0;
    if (rank <= c->best)
        return;
    c->best = rank;
    bool cudnn = rank >= 3;
    size_t n = cg_strlcpy(c->out, l->soname, c->cap);
    /* the dispatcher's own version when its file told it (versions.c), else
     * what cudnnGetVersion answered (the graph part's) */
    int v = rank == 4 && l->version <= 0 ? cg_versions_cudnn() : (int)l->version;
    if (rank == 3)
        rank = 4; /* a cuDNN sub-library: its version reads like the dispatcher's */
    if (v > 0 && n < c->cap) {
        char d[48];
        size_t k = 0;
        d[k++] = ' ';
        int major, minor, patch;
        if (cudnn && v >= 90000) {
            major = v / 10000, minor = (v / 100) % 100, patch = v % 100;
        } else if (cudnn) {
            major = v / 1000, minor = (v / 100) % 10, patch = v % 100;
        } else {
            major = v / 1000, minor = (v % 1000) / 10, patch = -1;
        }
        k += cg_utoa(d + k, (unsigned)major);
        d[k++] = '.';
        k += cg_utoa(d + k, (unsigned)minor);
        if (patch >= 0) {
            d[k++] = '.';
            k += cg_utoa(d + k, (unsigned)patch);
        }
        d[k] = 0;
        n = cg_append(c->out, c->cap, n, d);
    }
    n = cg_append(c->out, c->cap, n, " (");
    n = cg_append(c->out, c->cap, n, l->path);
    cg_append(c->out, c->cap, n, ")");
}

const char *cg_libs_primary(char *out, size_t cap)
{
    struct primary_ctx c = {out, cap, -1};
    out[0] = 0;
    cg_libs_each(primary_cb, &c);
    return out;
}
