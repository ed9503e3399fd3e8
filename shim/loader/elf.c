/* elf.c - reading loaded objects straight from memory.
 *
 * The shim must learn sonames, RUNPATHs and symbol addresses without calling
 * dlopen/dlsym/dlinfo: those reset the calling thread's dlerror() state and
 * can change what the program sees.  dl_iterate_phdr does neither, but it
 * takes the loader's dl_load_write_lock, which a fork() must never find
 * taken (forkgate.c): every call of it is gated against fork, and the
 * frequent question "which object holds this address?" is answered from the
 * shim's own copy of the link map (objsnap.c: cg_objsnap_find_obj) wherever
 * that copy knows.  Nothing here reads that copy: it is made from this file's
 * walk of the objects. */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "loader/loader.h"

static void fill(const struct dl_phdr_info *info, struct cg_obj *o)
{
    o->base = info->dlpi_addr;
    o->name = info->dlpi_name ? info->dlpi_name : "";
    o->phdr = info->dlpi_phdr;
    o->phnum = info->dlpi_phnum;
    o->dyn = NULL;
    o->start = UINTPTR_MAX;
    o->end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            o->dyn = (const void *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_LOAD) {
            uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
            if (s < o->start)
                o->start = s;
            if (e > o->end)
                o->end = e;
        }
    }
}

/* dl_iterate_phdr through cg_dl's pointer once known, gated against fork (forkgate.c) */
static int gated_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    int (*real)(int (*)(struct dl_phdr_info *, size_t, void *), void *) =
        __atomic_load_n(&cg_dl.dl_iterate_phdr, __ATOMIC_ACQUIRE);
    cg_fork_gate_enter();
    int r = real ? real(cb, arg) : dl_iterate_phdr(cb, arg);
    cg_fork_gate_leave();
    return r;
}

struct each_ctx {
    int (*fn)(const struct cg_obj *, void *);
    void *arg;
};

static int each_cb(struct dl_phdr_info *info, size_t size, void *p)
{
    (void)size;
    struct each_ctx *c = p;
    struct cg_obj o;
    fill(info, &o);
    return c->fn(&o, c->arg);
}

int cg_elf_each_obj(int (*fn)(const struct cg_obj *o, void *arg), void *arg)
{
    struct each_ctx c = {fn, arg};
    return gated_iterate_phdr(each_cb, &c);
}


/* glibc relocates most d_ptr entries of the in-memory dynamic section on
 * x86-64; the vDSO's and some other loaders' are left relative. */
static uintptr_t dptr(const struct cg_obj *o, uintptr_t v)
{
    return v < o->base ? v + o->base : v;
}

static const ElfW(Dyn) *dyn_find(const struct cg_obj *o, ElfW(Sxword) tag)
{
    for (const ElfW(Dyn) *d = o->dyn; d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == tag)
            return d;
    return NULL;
}

static const char *strtab(const struct cg_obj *o)
{
    const ElfW(Dyn) *d = dyn_find(o, DT_STRTAB);
    return d ? (const char *)dptr(o, d->d_un.d_ptr) : NULL;
}

const char *cg_elf_soname(const struct cg_obj *o)
{
    const ElfW(Dyn) *d = dyn_find(o, DT_SONAME);
    const char *s = strtab(o);
    return d && s ? s + d->d_un.d_val : NULL;
}

const char *cg_elf_runpath(const struct cg_obj *o, bool *is_rpath)
{
    const char *s = strtab(o);
    const ElfW(Dyn) *d = dyn_find(o, DT_RUNPATH);
    *is_rpath = false;
    if (!d) {
        d = dyn_find(o, DT_RPATH);
        *is_rpath = d != NULL;
    }
    return d && s ? s + d->d_un.d_val : NULL;
}

const char *cg_elf_needed(const struct cg_obj *o, int i)
{
    const char *s = strtab(o);
    for (const ElfW(Dyn) *d = o->dyn; s && d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_NEEDED && i-- == 0)
            return s + d->d_un.d_val;
    return NULL;
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = h * 33 + *p;
    return h;
}

/* Name of the version a symbol index carries, NULL for base/unversioned. */
static const char *sym_version(const struct cg_obj *o, const char *str, uint16_t ndx)
{
    const ElfW(Dyn) *vd = dyn_find(o, DT_VERDEF);
    if (!vd || ndx <= 1)
        return NULL;
    const ElfW(Verdef) *def = (const ElfW(Verdef) *)dptr(o, vd->d_un.d_ptr);
    for (;;) {
        if (def->vd_ndx == ndx) {
            const ElfW(Verdaux) *aux = (const ElfW(Verdaux) *)((const char *)def + def->vd_aux);
            return str + aux->vda_name;
        }
        if (!def->vd_next)
            return NULL;
        def = (const ElfW(Verdef) *)((const char *)def + def->vd_next);
    }
}

void *cg_elf_sym(const struct cg_obj *o, const char *name, const char *ver)
{
    const ElfW(Dyn) *gh = dyn_find(o, DT_GNU_HASH), *st = dyn_find(o, DT_SYMTAB), *vs = dyn_find(o, DT_VERSYM);
    const char *str = strtab(o);
    if (!gh || !st || !str)
        return NULL;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)dptr(o, st->d_un.d_ptr);
    const uint16_t *versym = vs ? (const uint16_t *)dptr(o, vs->d_un.d_ptr) : NULL;
    const uint32_t *ht = (const uint32_t *)dptr(o, gh->d_un.d_ptr);
    uint32_t nbuckets = ht[0], symoffset = ht[1], bloom_size = ht[2];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)&ht[4];
    const uint32_t *buckets = (const uint32_t *)&bloom[bloom_size];
    const uint32_t *chain = &buckets[nbuckets];
    if (!nbuckets)
        return NULL;
    uint32_t h = gnu_hash(name);
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t ch = chain[i - symoffset];
        if ((ch | 1) == (h | 1)) {
            const ElfW(Sym) *s = &syms[i];
            if (s->st_shndx != SHN_UNDEF && s->st_value && cg_streq(str + s->st_name, name) &&
                ELF64_ST_TYPE(s->st_info) != STT_GNU_IFUNC) {
                uint16_t v = versym ? versym[i] : 1;
                const char *vn = versym ? sym_version(o, str, v & 0x7fff) : NULL;
                bool match = ver ? (vn && cg_streq(vn, ver)) : !(v & 0x8000);
                if (match)
                    return (void *)(o->base + s->st_value);
            }
        }
        if (ch & 1)
            return NULL;
    }
}

#if __ELF_NATIVE_CLASS == 64
#define CG_R_SYM ELF64_R_SYM
#else
#define CG_R_SYM ELF32_R_SYM
#endif
/* One relocation table: does an entry refer to the undefined symbol `name`? */
static bool rel_names(const struct cg_obj *o, const ElfW(Sym) *syms, const char *str, uintptr_t tab, size_t bytes,
                      size_t ent, const char *name)
{
    for (size_t off = 0; tab && ent && off + ent <= bytes; off += ent) {
        ElfW(Xword) info = ent == sizeof(ElfW(Rela)) ? ((const ElfW(Rela) *)(tab + off))->r_info
                                                     : ((const ElfW(Rel) *)(tab + off))->r_info;
        size_t idx = CG_R_SYM(info);
        if (idx && syms[idx].st_shndx == SHN_UNDEF && cg_streq(str + syms[idx].st_name, name))
            return true;
    }
    (void)o;
    return false;
}

bool cg_elf_imports(const struct cg_obj *o, const char *name)
{
    const ElfW(Dyn) *st = dyn_find(o, DT_SYMTAB), *jr = dyn_find(o, DT_JMPREL), *jsz = dyn_find(o, DT_PLTRELSZ),
                    *jt = dyn_find(o, DT_PLTREL), *ra = dyn_find(o, DT_RELA), *rasz = dyn_find(o, DT_RELASZ),
                    *rl = dyn_find(o, DT_REL), *rlsz = dyn_find(o, DT_RELSZ);
    const char *str = strtab(o);
    if (!st || !str)
        return false;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)dptr(o, st->d_un.d_ptr);
    size_t jent = jt && jt->d_un.d_val == DT_REL ? sizeof(ElfW(Rel)) : sizeof(ElfW(Rela));
    if (jr && jsz && rel_names(o, syms, str, dptr(o, jr->d_un.d_ptr), jsz->d_un.d_val, jent, name))
        return true;
    if (ra && rasz && rel_names(o, syms, str, dptr(o, ra->d_un.d_ptr), rasz->d_un.d_val, sizeof(ElfW(Rela)), name))
        return true;
    return rl && rlsz && rel_names(o, syms, str, dptr(o, rl->d_un.d_ptr), rlsz->d_un.d_val, sizeof(ElfW(Rel)), name);
}

uintptr_t cg_elf_ret_gadget(const struct cg_obj *o)
{
    const ElfW(Phdr) *ph = o->phdr;
    for (int i = 0; i < o->phnum; i++) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) || !(ph[i].p_flags & PF_R))
            continue;
        const unsigned char *p = (const unsigned char *)(o->base + ph[i].p_vaddr);
        for (size_t k = 0; k < ph[i].p_filesz; k++)
            if (p[k] == 0xc3)
                return (uintptr_t)(p + k);
    }
    return 0;
}

/* Does o define symbol versions of its own (DT_VERDEF)?  A reference that
 * asks for a version also binds to an unversioned definition in an object
 * that defines none (bind.c). */
bool cg_elf_defines_versions(const struct cg_obj *o) { return dyn_find(o, DT_VERDEF) != NULL; }

/* How o refers to the undefined symbol `name`: STB_GLOBAL or STB_WEAK, -1
 * when it has no relocation against it.  Undefined symbols are not in the
 * hash table: the relocations name them, as in cg_elf_imports. */
static int rel_bind(const ElfW(Sym) *syms, const char *str, uintptr_t tab, size_t bytes, size_t ent, const char *name)
{
    for (size_t off = 0; tab && ent && off + ent <= bytes; off += ent) {
        ElfW(Xword) info = ent == sizeof(ElfW(Rela)) ? ((const ElfW(Rela) *)(tab + off))->r_info
                                                     : ((const ElfW(Rel) *)(tab + off))->r_info;
        size_t idx = CG_R_SYM(info);
        if (idx && syms[idx].st_shndx == SHN_UNDEF && cg_streq(str + syms[idx].st_name, name))
            return ELF64_ST_BIND(syms[idx].st_info);
    }
    return -1;
}

int cg_elf_import_bind(const struct cg_obj *o, const char *name)
{
    const ElfW(Dyn) *st = dyn_find(o, DT_SYMTAB), *jr = dyn_find(o, DT_JMPREL), *jsz = dyn_find(o, DT_PLTRELSZ),
                    *jt = dyn_find(o, DT_PLTREL), *ra = dyn_find(o, DT_RELA), *rasz = dyn_find(o, DT_RELASZ);
    const char *str = strtab(o);
    if (!st || !str)
        return -1;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)dptr(o, st->d_un.d_ptr);
    size_t jent = jt && jt->d_un.d_val == DT_REL ? sizeof(ElfW(Rel)) : sizeof(ElfW(Rela));
    int b = jr && jsz ? rel_bind(syms, str, dptr(o, jr->d_un.d_ptr), jsz->d_un.d_val, jent, name) : -1;
    if (b < 0 && ra && rasz)
        b = rel_bind(syms, str, dptr(o, ra->d_un.d_ptr), rasz->d_un.d_val, sizeof(ElfW(Rela)), name);
    return b;
}
