/* elf_file.c - facts read from a shared object's file on disk, without
 * loading it: its DT_SONAME and the bytes of a data symbol (cuDNN's parts
 * carry their version as data: 00 13 09 = 9.19.0).  `convguard inspect`
 * reads the files another process mapped; loading them here would run their
 * constructors (and cuDNN's would load its parts), so nothing is loaded.
 * 64-bit little-endian ELF only (x86_64, aarch64); anything else: unknown. */
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/elf_file.h"
#include "cudnn_version.h"

int elf_file_open(const char *path, struct elf_file *e)
{
    memset(e, 0, sizeof *e);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return -1;
    }
    /* mapped, not read: a 500 MB cuBLAS costs only the pages looked at */
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    e->map = m, e->size = (size_t)st.st_size;
    const Elf64_Ehdr *h = m;
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_ident[EI_DATA] != ELFDATA2LSB || h->e_shentsize != sizeof(Elf64_Shdr) ||
        h->e_phentsize != sizeof(Elf64_Phdr) || h->e_shoff > e->size ||
        (size_t)h->e_shnum * sizeof(Elf64_Shdr) > e->size - h->e_shoff || h->e_phoff > e->size ||
        (size_t)h->e_phnum * sizeof(Elf64_Phdr) > e->size - h->e_phoff) {
        elf_file_close(e);
        return -1;
    }
    e->sh = (const Elf64_Shdr *)((const char *)m + h->e_shoff);
    e->nsh = h->e_shnum;
    e->ph = (const Elf64_Phdr *)((const char *)m + h->e_phoff);
    e->nph = h->e_phnum;
    return 0;
}

void elf_file_close(struct elf_file *e)
{
    if (e->map)
        munmap(e->map, e->size);
    memset(e, 0, sizeof *e);
}

/* a section's bytes, NULL when it lies outside the file */
static const void *section(const struct elf_file *e, size_t i, size_t *len)
{
    if (i >= e->nsh || e->sh[i].sh_type == SHT_NOBITS || e->sh[i].sh_offset > e->size ||
        e->sh[i].sh_size > e->size - e->sh[i].sh_offset)
        return NULL;
    *len = e->sh[i].sh_size;
    return (const char *)e->map + e->sh[i].sh_offset;
}

static const char *str_at(const char *strs, size_t len, size_t off)
{
    return off < len && memchr(strs + off, 0, len - off) ? strs + off : NULL;
}

/* the file offset of a virtual address, through the loadable segments */
static const void *at_vaddr(const struct elf_file *e, Elf64_Addr va, size_t want)
{
    for (size_t i = 0; i < e->nph; i++) {
        const Elf64_Phdr *p = &e->ph[i];
        if (p->p_type != PT_LOAD || va < p->p_vaddr || va - p->p_vaddr >= p->p_filesz)
            continue;
        Elf64_Off off = p->p_offset + (va - p->p_vaddr);
        if (off > e->size || want > e->size - off || want > p->p_filesz - (va - p->p_vaddr))
            return NULL;
        return (const char *)e->map + off;
    }
    return NULL;
}

/* the bytes of a defined dynamic symbol, NULL when absent or outside the file */
static const void *elf_file_sym(const struct elf_file *e, const char *name, size_t *size)
{
    for (size_t i = 0; i < e->nsh; i++) {
        if (e->sh[i].sh_type != SHT_DYNSYM || e->sh[i].sh_entsize != sizeof(Elf64_Sym))
            continue;
        size_t slen = 0, tlen = 0;
        const Elf64_Sym *syms = section(e, i, &slen);
        const char *strs = section(e, e->sh[i].sh_link, &tlen);
        if (!syms || !strs)
            return NULL;
        for (size_t k = 0; k < slen / sizeof *syms; k++) {
            const char *n = str_at(strs, tlen, syms[k].st_name);
            if (!n || strcmp(n, name) != 0 || syms[k].st_shndx == SHN_UNDEF || !syms[k].st_size)
                continue;
            if (size)
                *size = syms[k].st_size;
            return at_vaddr(e, syms[k].st_value, syms[k].st_size);
        }
    }
    return NULL;
}

const char *elf_file_soname(const struct elf_file *e)
{
    for (size_t i = 0; i < e->nsh; i++) {
        if (e->sh[i].sh_type != SHT_DYNAMIC || e->sh[i].sh_entsize != sizeof(Elf64_Dyn))
            continue;
        size_t dlen = 0, tlen = 0;
        const Elf64_Dyn *d = section(e, i, &dlen);
        const char *strs = section(e, e->sh[i].sh_link, &tlen);
        if (!d || !strs)
            return NULL;
        for (size_t k = 0; k < dlen / sizeof *d && d[k].d_tag != DT_NULL; k++)
            if (d[k].d_tag == DT_SONAME)
                return str_at(strs, tlen, d[k].d_un.d_val);
    }
    return NULL;
}

/* cuDNN's parts carry their version as data: bytes patch, minor, major */
long long elf_file_cudnn_version(const struct elf_file *e)
{
    static const char *const names[] = {
#define CG_CUDNN_VERSION_DATA(sym, shim) #sym,
#include "cudnn_versions.def" /* the shim's table too (shim/) */
#undef CG_CUDNN_VERSION_DATA
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t sz = 0;
        const unsigned char *v = elf_file_sym(e, names[i], &sz);
        if (v && sz >= 3 && cg_cudnn_version_of(v[2], v[1], v[0]) > 0)
            return cg_cudnn_version_of(v[2], v[1], v[0]);
    }
    return -1;
}
