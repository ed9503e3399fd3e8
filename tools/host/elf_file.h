/* elf_file.h - elf_file.c: a shared object read from disk, never loaded
 * (host/: `convguard inspect` reads the files another process mapped,
 * `convguard doctor` the cuDNN parts beside a dispatcher). */
#ifndef CONVGUARD_ELF_FILE_H
#define CONVGUARD_ELF_FILE_H
#include <elf.h>
#include <stddef.h>

struct elf_file {
    void *map;
    size_t size;
    const Elf64_Shdr *sh;
    size_t nsh;
    const Elf64_Phdr *ph;
    size_t nph;
};
int elf_file_open(const char *path, struct elf_file *e); /* 0, -1: unreadable or not 64-bit LE ELF */
void elf_file_close(struct elf_file *e);
const char *elf_file_soname(const struct elf_file *e); /* NULL: none */
/* a cuDNN part's own version from its data symbol (cudnn_versions.def), as
 * cudnnGetVersion encodes it; -1: none (the dispatcher has none) */
long long elf_file_cudnn_version(const struct elf_file *e);

#endif
