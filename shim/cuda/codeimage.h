/* codeimage.h - what a GPU code image holds (codeimage.c), for the load
 * calls (codeload.c) and the driver's log (drvlog.c). */
#ifndef CONVGUARD_CODEIMAGE_H
#define CONVGUARD_CODEIMAGE_H

#include "cg.h"

enum cg_code_format { CG_CODE_UNKNOWN, CG_CODE_FATBIN, CG_CODE_CUBIN, CG_CODE_PTX_TEXT };
enum { CG_CODE_SASS = 1, CG_CODE_PTX = 2 };
#define CG_CODE_ENTRIES 16
struct cg_code_entry {
    unsigned char kind;             /* CG_CODE_SASS or CG_CODE_PTX */
    unsigned short arch;            /* 80: sm_80 / compute_80; 0 unknown */
    unsigned char isa_major, isa_minor; /* PTX ISA version (PTX only) */
};
struct cg_code_desc {
    int format;                     /* enum cg_code_format */
    int n, more;                    /* distinct entries kept, and beyond CG_CODE_ENTRIES */
    struct cg_code_entry e[CG_CODE_ENTRIES];
};
/* Reads the image's headers (fatbinary, its cudart wrapper, cubin, PTX text). */
void cg_code_describe(const void *image, struct cg_code_desc *d);
/* 1: something in it runs on a GPU of this compute capability, 0: nothing
 * does, -1: unknown (capability or contents not known). */
int cg_code_fits(const struct cg_code_desc *d, int cc_major, int cc_minor);
/* "key":{"format","sass":["sm_80"],"ptx":[{"arch","isa"}],"device":"9.0","fits_device"} */
void cg_ev_code_desc(struct cg_ev *e, const char *key, const struct cg_code_desc *d, int cc_major, int cc_minor);

/* codeload.c: images that loaded but hold nothing this GPU can run (lazy
 * loading fails later, at a kernel lookup or launch): "code_no_fit":[...]
 * into an event (the driver's 209), without calling the driver. */
void cg_codeload_ev_no_fit(struct cg_ev *e);
void cg_codeload_exit(struct cg_ev *e);     /* exit: "code_images":{...} when any was loaded */
void cg_codeload_after_fork(void);
#endif
