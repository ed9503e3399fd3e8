/* codeimage.c - what a GPU code image handed to the driver holds: for each
 * piece, machine code (SASS) for an sm_XY or PTX for a compute_XY, and the
 * PTX's ISA version.  Read from the headers only (nothing is decompressed),
 * once per load call, never on a hot path.
 *
 * Why: with lazy loading (the default since CUDA 12.x) a fatbinary holding
 * only sm_80 machine code loads without error on a 9.0 GPU and fails later,
 * at a kernel lookup or launch no hook sees (measured on the H200: 209 from
 * cuLibraryGetKernel).  The load call is the one place where the mismatch
 * can be seen, once per module, at no cost on the launch path.
 *
 * Formats (facts of NVIDIA's fatbinary format as cuobjdump reads it):
 *  - a fatbinary: u32 magic 0xBA55ED50, u16 version, u16 header size, u64
 *    size of the entries; each entry: u16 kind (1 PTX, 2 or 0x10 ELF),
 *    u16, u32 entry header size, u64 payload size, ..., at 24 u16 minor and
 *    u16 major version (the PTX ISA of a PTX entry), at 28 u32 SM
 *    architecture; the next entry follows the payload;
 *  - the wrapper cudart registers (u32 magic 0x466243B1, u32 version, the
 *    fatbinary's address);
 *  - a cubin: an ELF whose e_flags carry the SM architecture (bits 8-15
 *    from ELF ABI version 8 on, bits 0-7 before);
 *  - PTX text: ".version X.Y" and ".target sm_XY" near its start. */
#include <string.h>

#include "cuda/cuda.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_WRAPPER_MAGIC 0x466243B1u
#define MAX_ENTRIES 256 /* entries looked at per fatbinary */
#define PTX_SCAN 4096   /* bytes of PTX text looked at for .version/.target */

static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void add(struct cg_code_desc *d, int kind, unsigned arch, unsigned isa_major, unsigned isa_minor)
{
    for (int i = 0; i < d->n; i++)
        if (d->e[i].kind == kind && d->e[i].arch == arch && d->e[i].isa_major == isa_major &&
            d->e[i].isa_minor == isa_minor)
            return;
    if (d->n >= CG_CODE_ENTRIES) {
        d->more++;
        return;
    }
    d->e[d->n++] = (struct cg_code_entry){(unsigned char)kind, (unsigned short)arch, (unsigned char)isa_major,
                                          (unsigned char)isa_minor};
}

static void fatbin(const unsigned char *p, struct cg_code_desc *d)
{
    uint16_t hsize = rd16(p + 6);
    uint64_t size = rd64(p + 8);
    d->format = CG_CODE_FATBIN;
    /* a header or size no fatbinary has: say nothing rather than read on */
    if (hsize < 16 || hsize > 256 || size > (1ull << 32))
        return;
    const unsigned char *e = p + hsize, *end = p + hsize + size;
    for (int i = 0; i < MAX_ENTRIES && e + 32 <= end; i++) {
        uint16_t kind = rd16(e);
        uint32_t ehsize = rd32(e + 4);
        uint64_t payload = rd64(e + 8);
        if (ehsize < 32 || ehsize > 4096 || payload > size)
            break;
        unsigned arch = rd32(e + 28);
        if (kind == 1)
            add(d, CG_CODE_PTX, arch, rd16(e + 26), rd16(e + 24));
        else if (kind == 2 || kind == 0x10)
            add(d, CG_CODE_SASS, arch, 0, 0);
        e += ehsize + payload;
    }
}

static unsigned digits(const char *s, const char **end)
{
    unsigned v = 0;
    while (*s >= '0' && *s <= '9' && v < 100000)
        v = v * 10 + (unsigned)(*s++ - '0');
    *end = s;
    return v;
}

static void ptx_text(const char *s, struct cg_code_desc *d)
{
    unsigned major = 0, minor = 0, arch = 0;
    d->format = CG_CODE_PTX_TEXT;
    for (size_t i = 0; i < PTX_SCAN && s[i]; i++) {
        if (s[i] != '.' || (i && s[i - 1] != '\n'))
            continue;
        const char *q;
        if (strncmp(s + i, ".version ", 9) == 0) {
            major = digits(s + i + 9, &q);
            if (*q == '.')
                minor = digits(q + 1, &q);
        } else if (strncmp(s + i, ".target sm_", 11) == 0) {
            arch = digits(s + i + 11, &q);
            break; /* .target follows .version */
        }
    }
    if (arch || major)
        add(d, CG_CODE_PTX, arch, major, minor);
}

void cg_code_describe(const void *image, struct cg_code_desc *d)
{
    memset(d, 0, sizeof *d);
    if (!image)
        return;
    const unsigned char *p = image;
    uint32_t magic = rd32(p);
    if (magic == FATBIN_WRAPPER_MAGIC) {
        const void *inner;
        memcpy(&inner, p + 8, sizeof inner);
        if (!inner || rd32(inner) != FATBIN_MAGIC)
            return;
        p = inner;
        magic = FATBIN_MAGIC;
    }
    if (magic == FATBIN_MAGIC) {
        fatbin(p, d);
    } else if (memcmp(p, "\177ELF", 4) == 0) {
        d->format = CG_CODE_CUBIN;
        uint32_t flags = rd32(p + 48);
        add(d, CG_CODE_SASS, p[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff, 0, 0);
    } else {
        /* PTX is text: comments, then directives */
        const char *s = image;
        if ((s[0] == '/' && s[1] == '/') || s[0] == '.' || s[0] == '\n' || s[0] == '\t' || s[0] == ' ')
            ptx_text(s, d);
    }
}

/* sm_XY runs on X.N for N >= Y (one major); compute_XY is compiled by the
 * driver for any GPU of XY or later. */
int cg_code_fits(const struct cg_code_desc *d, int cc_major, int cc_minor)
{
    if (cc_major < 0 || d->format == CG_CODE_UNKNOWN || (!d->n && !d->more))
        return -1;
    unsigned cc = (unsigned)(cc_major * 10 + cc_minor);
    for (int i = 0; i < d->n; i++) {
        unsigned a = d->e[i].arch;
        if (d->e[i].kind == CG_CODE_SASS && a / 10 == (unsigned)cc_major && a % 10 <= (unsigned)cc_minor)
            return 1;
        if (d->e[i].kind == CG_CODE_PTX && a && a <= cc)
            return 1;
    }
    return d->more ? -1 : 0;
}

static const char *const format_names[] = {"unknown", "fatbin", "cubin", "ptx"};

void cg_ev_code_desc(struct cg_ev *e, const char *key, const struct cg_code_desc *d, int cc_major, int cc_minor)
{
    char b[32];
    cg_ev_open(e, key, '{');
    cg_ev_str(e, "format", format_names[d->format]);
    cg_ev_open(e, "sass", '[');
    for (int i = 0; i < d->n; i++)
        if (d->e[i].kind == CG_CODE_SASS) {
            size_t n = cg_strlcpy(b, "sm_", sizeof b);
            b[n + cg_utoa(b + n, d->e[i].arch)] = 0;
            cg_ev_str(e, NULL, b);
        }
    cg_ev_close(e, ']');
    cg_ev_open(e, "ptx", '[');
    for (int i = 0; i < d->n; i++)
        if (d->e[i].kind == CG_CODE_PTX) {
            cg_ev_open(e, NULL, '{');
            size_t n = cg_strlcpy(b, "compute_", sizeof b);
            b[n + cg_utoa(b + n, d->e[i].arch)] = 0;
            cg_ev_str(e, "arch", d->e[i].arch ? b : NULL);
            n = cg_utoa(b, d->e[i].isa_major);
            b[n++] = '.';
            b[n + cg_utoa(b + n, d->e[i].isa_minor)] = 0;
            cg_ev_str(e, "isa", b);
            cg_ev_close(e, '}');
        }
    cg_ev_close(e, ']');
    if (d->more)
        cg_ev_i64(e, "more", d->more);
    int fits = cg_code_fits(d, cc_major, cc_minor);
    if (cc_major >= 0) {
        size_t n = cg_utoa(b, (unsigned)cc_major);
        b[n++] = '.';
        b[n + cg_utoa(b + n, (unsigned)cc_minor)] = 0;
        cg_ev_str(e, "device", b);
    }
    if (fits >= 0)
        cg_ev_bool(e, "fits_device", fits == 1);
    cg_ev_close(e, '}');
}
