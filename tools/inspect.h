/* inspect.h - what `convguard inspect` (inspect.c) needs from its helpers. */
#ifndef CONVGUARD_INSPECT_H
#define CONVGUARD_INSPECT_H
#include <elf.h>
#include <stddef.h>

/* ---- elf_file.c: a shared object read from disk, never loaded */
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
/* the bytes of a defined dynamic symbol, NULL when absent or outside the file */
const void *elf_file_sym(const struct elf_file *e, const char *name, size_t *size);
const char *elf_file_soname(const struct elf_file *e); /* NULL: none */
/* a cuDNN part's own version from its data symbol (cudnn_versions.def), as
 * cudnnGetVersion encodes it; -1: none (the dispatcher has none) */
long long elf_file_cudnn_version(const struct elf_file *e);

/* exit statuses of `convguard inspect` (docs/cli.md) */
enum {
    INSPECT_OK = 0,
    INSPECT_PROBLEMS = 1,
    INSPECT_USAGE = 2,
    INSPECT_NOT_A_PID = 3,
    INSPECT_NO_PROCESS = 4,
    INSPECT_PERMISSION = 5,
    INSPECT_NO_CUDA = 6,
};
#endif
