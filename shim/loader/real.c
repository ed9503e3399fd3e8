/* real.c - reaching the real functions.
 *
 * The dynamic-loader functions are found by reading libc's (or, before glibc
 * 2.34, libdl's) symbol table from memory: the shim exports dlopen and dlsym
 * itself, so any call by name would come back to us.
 * A slot's real functions are read from the library the slot names
 * (libcudnn.so.9, ...), by its own symbol table and version: never by
 * RTLD_NEXT, which misses libraries loaded RTLD_LOCAL.  (What a call through
 * the PLT reaches is another question, answered in bind.c.) */
#include <link.h>
#include <string.h>

#include "loader/loader.h"

struct dl_find {
    const char *soname;
    struct cg_obj obj;
    int found;
};

static int by_soname(const struct cg_obj *o, void *p)
{
    struct dl_find *f = p;
    const char *so = o->dyn ? cg_elf_soname(o) : NULL;
    if (so && cg_streq(so, f->soname)) {
        if (!f->found)
            f->obj = *o;
        f->found++;
    }
    return 0;
}

/* The loader's own list (_r_debug), read without calling anything: this
 * runs inside the first dlsym of the process, which may come from a
 * sanitizer runtime that has not yet resolved the functions it intercepts
 * (dl_iterate_phdr among them).  Nothing is being loaded at that moment. */
static void *dl_sym(const char *name)
{
    static const char *libs[] = {"libc.so.6", "libdl.so.2"};
    for (size_t i = 0; i < 2; i++)
        for (struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
            struct cg_obj o = {.base = m->l_addr, .name = m->l_name ? m->l_name : "", .dyn = m->l_ld};
            const char *so = o.dyn ? cg_elf_soname(&o) : NULL;
            if (so && cg_streq(so, libs[i])) {
                void *p = cg_elf_sym(&o, name, NULL);
                if (p)
                    return p;
                break;
            }
        }
    return NULL;
}

bool cg_real_dl_init(void)
{
    if (cg_dl.dlsym)
        return true;
    cg_dl.dlopen = (void *(*)(const char *, int))dl_sym("dlopen");
    cg_dl.dlmopen = (void *(*)(long, const char *, int))dl_sym("dlmopen");
    cg_dl.dlvsym = (void *(*)(void *, const char *, const char *))dl_sym("dlvsym");
    cg_dl.dlerror = (char *(*)(void))dl_sym("dlerror");
    cg_dl.dlclose = (int (*)(void *))dl_sym("dlclose");
    __atomic_store_n(&cg_dl.dl_iterate_phdr,
                     (int (*)(int (*)(struct dl_phdr_info *, size_t, void *), void *))dl_sym("dl_iterate_phdr"),
                     __ATOMIC_RELEASE);
    void *s = dl_sym("dlsym");
    __atomic_store_n(&cg_dl.dlsym, (void *(*)(void *, const char *))s, __ATOMIC_RELEASE);
    return cg_dl.dlsym && cg_dl.dlopen && cg_dl.dlmopen && cg_dl.dlvsym && cg_dl.dlerror && cg_dl.dlclose;
}

#if defined(__x86_64__)
void *cg_call_as(const void *caller, void *fn, void *a, void *b, void *c)
{
    static char self_anchor;
    struct cg_obj o, self;
    if (caller && cg_objsnap_find_obj(caller, &o) && !(cg_objsnap_find_obj(&self_anchor, &self) && self.base == o.base)) {
        uintptr_t g = cg_elf_ret_gadget(&o);
        if (g)
            return cg_call_as_asm(g, fn, a, b, c);
    }
    return ((void *(*)(void *, void *, void *))fn)(a, b, c);
}
#else
/* Elsewhere the loader sees the shim as the caller: bare names resolve
 * without the caller's RUNPATH.  Documented in docs/hooks.md. */
void *cg_call_as(const void *caller, void *fn, void *a, void *b, void *c)
{
    (void)caller;
    return ((void *(*)(void *, void *, void *))fn)(a, b, c);
}
#endif

/* Real functions resolved while not tracing (before start, or inert): the
 * entries must not see them in cg_real, or they would trace. */
static _Atomic(void *) real_untraced[CG_NSLOTS][CG_NHOOKS];

void *cg_real_in_lib(int slot, int hook)
{
    /* (the tables the family's wrappers read first: they find them made) */
    bool traced = atomic_load(&cg.traced) && cg_lazytab_for(hook);
    _Atomic(void *) *cell = traced ? &cg_real[slot][hook] : &real_untraced[slot][hook];
    void *known = atomic_load(cell);
    if (known)
        return known;
    struct dl_find f = {.soname = cg_slots[slot].soname};
    cg_elf_each_obj(by_soname, &f);
    if (!f.found)
        return NULL;
    void *p = cg_elf_sym(&f.obj, cg_hooks[hook].name, cg_slots[slot].version_node);
    if (!p && cg_slots[slot].version_node)
        p = cg_elf_sym(&f.obj, cg_hooks[hook].name, NULL);
    if (p) {
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(cell, &expected, p))
            p = expected;
        else if (traced)
            atomic_fetch_add(&cg_real_gen, 1);
    }
    return p;
}

void cg_real_promote(void)
{
    for (int s = 0; s < CG_NSLOTS; s++)
        for (int h = 0; h < CG_NHOOKS; h++) {
            void *p = atomic_load(&real_untraced[s][h]), *expected = NULL;
            if (p && cg_lazytab_for(h) && atomic_compare_exchange_strong(&cg_real[s][h], &expected, p))
                atomic_fetch_add(&cg_real_gen, 1);
        }
}
