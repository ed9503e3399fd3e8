/* cudnn_desc.c - INTERIM SUBSET of branch `res`'s shim/cudnn_desc.c (see
 * cudnn_desc.h): cuDNN 9's last error string, read from the sub-library that
 * implements it, kept for the program.  When merging `res`, take its
 * cudnn_desc.c whole.
 *
 * cuDNN 9 ships a small dispatcher, libcudnn.so.9, whose exported functions
 * dlopen() their sub-library at their first call.  The shim never calls the
 * dispatcher: it calls cudnnGetLastErrorString in libcudnn_graph.so.9, found
 * in the link map by soname, of the same major as the slot and preferably
 * from the dispatcher's own directory.  A sub-library that is not loaded is
 * never loaded by us.  The found pointer is cached per slot until the link
 * map changes. */
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "cudnn_desc.h"

static int gen_cb(struct dl_phdr_info *info, size_t size, void *p)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(uint64_t *)p = (uint64_t)info->dlpi_adds * 1000003u + (uint64_t)info->dlpi_subs;
    return 1;
}

/* Changes whenever an object is added to or removed from the link map. */
static uint64_t link_generation(void)
{
    uint64_t g = 0;
    dl_iterate_phdr(gen_cb, &g);
    return g;
}

struct sub_find {
    const char *dispatcher; /* "libcudnn.so.9" */
    const char *suffix;     /* ".so.9" */
    const char *dir;        /* the dispatcher's directory, with its '/' */
    size_t dirlen;
    const char *name;
    void *best;
    bool best_same_dir;
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int sub_cb(const struct cg_obj *o, void *p)
{
    struct sub_find *f = p;
    const char *so = o->dyn ? cg_elf_soname(o) : NULL;
    if (!so || !cg_starts_with(so, "libcudnn") || strcmp(so, f->dispatcher) == 0 || !ends_with(so, f->suffix))
        return 0;
    void *fn = cg_elf_sym(o, f->name, NULL);
    if (!fn)
        return 0;
    bool same = f->dirlen && strncmp(o->name, f->dir, f->dirlen) == 0 && !strchr(o->name + f->dirlen, '/');
    if (!f->best || (same && !f->best_same_dir)) {
        f->best = fn;
        f->best_same_dir = same;
    }
    return 0;
}

static void *sub_sym(int slot, const char *dir, size_t dirlen, const char *name)
{
    const char *so = cg_slots[slot].soname; /* "libcudnn.so.9" */
    struct sub_find f = {.dispatcher = so, .suffix = strstr(so, ".so."), .dir = dir, .dirlen = dirlen, .name = name};
    cg_elf_each_obj(sub_cb, &f);
    return f.best;
}

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t gen;
    const void *dispatcher_base;
    struct cg_cudnn_fns fns;
} cache[CG_NSLOTS];

void cg_cudnn_fns(int slot, const void *real, struct cg_cudnn_fns *out)
{
    struct cg_obj d;
    bool have = real && cg_elf_find_obj(real, &d);
    const void *base = have ? (const void *)d.base : NULL;
    uint64_t gen = link_generation();
    pthread_mutex_lock(&cache_lock);
    if (cache[slot].gen != gen || cache[slot].dispatcher_base != base) {
        char dir[512] = "";
        size_t dirlen = 0;
        const char *slash = have ? strrchr(d.name, '/') : NULL;
        if (slash && (size_t)(slash - d.name) + 1 < sizeof dir) {
            dirlen = (size_t)(slash - d.name) + 1;
            memcpy(dir, d.name, dirlen);
            dir[dirlen] = 0;
        }
        struct cg_cudnn_fns *c = &cache[slot].fns;
        c->last_error = slot == CG_SLOT_CUDNN9 ? (__typeof__(c->last_error))sub_sym(slot, dir, dirlen,
                                                                                      "cudnnGetLastErrorString")
                                               : NULL;
        cache[slot].gen = gen;
        cache[slot].dispatcher_base = base;
    }
    *out = cache[slot].fns;
    pthread_mutex_unlock(&cache_lock);
}

int cg_cudnn_slot_of(int hook, const void *real)
{
    return atomic_load_explicit(&cg_real[CG_SLOT_CUDNN8][hook], memory_order_relaxed) == real ? CG_SLOT_CUDNN8
                                                                                              : CG_SLOT_CUDNN9;
}

/* ---- cuDNN 9's last error string: read by us, still seen by the program */
static __thread char kept_reason[1024];
static __thread bool kept;

void cg_cudnn_reason_take(const struct cg_cudnn_fns *f, char *out, size_t cap)
{
    out[0] = 0;
    if (!f->last_error || cap == 0)
        return;
    f->last_error(out, cap);
    out[cap - 1] = 0;
    if (out[0]) {
        /* a newer message replaces an older one the program has not read, as in cuDNN */
        cg_strlcpy(kept_reason, out, sizeof kept_reason);
        kept = true;
    }
}

void cg_cudnn_reason_drop(const struct cg_cudnn_fns *f)
{
    char scratch[1024];
    if (f->last_error)
        f->last_error(scratch, sizeof scratch);
}

void cg_w_cudnnGetLastErrorString(cg_t_cudnnGetLastErrorString real, char *message, size_t max_size)
{
    real(message, max_size);
    /* cuDNN had nothing newer than the text the shim took: hand that over. */
    if (CG_UNLIKELY(kept) && message && max_size) {
        if (!message[0])
            cg_strlcpy(message, kept_reason, max_size);
        kept = false;
    }
}
