/* safedir.h - who may write the trace folder: the one rule, in safedir.c,
 * compiled into the shim and into the convguard command (tools/tools.mk), so
 * that `convguard run` refuses exactly what the shim refuses.  libc alone:
 * no malloc, no stdio, no shim names; one caller at a time per struct. */
#ifndef CG_SAFEDIR_H
#define CG_SAFEDIR_H
#include <stddef.h>

enum cg_sd_why {
    CG_SD_OK,
    CG_SD_RELATIVE,      /* not an absolute path (the working folder is unknown) */
    CG_SD_TOO_LONG,      /* the path, a name in it or a link's target */
    CG_SD_MISSING,       /* a folder on the way does not exist */
    CG_SD_NOT_DIR,       /* a file on the way, or a dangling link at the end */
    CG_SD_LINK_FOREIGN,  /* a symlink owned by neither us nor root */
    CG_SD_DIR_FOREIGN,   /* a folder on the way owned by neither us nor root */
    CG_SD_DIR_SHARED,    /* a folder on the way others may write, not sticky */
    CG_SD_LOOP,          /* more than 40 symlinks */
    CG_SD_CREATE,        /* the missing trace folder could not be made (err) */
    CG_SD_NOT_OURS,      /* the trace folder is neither ours nor root's sticky one */
    CG_SD_NOT_WRITABLE,  /* (err: EROFS, EACCES) */
    CG_SD_OPEN,          /* a folder or link could not be opened (err) */
};

struct cg_safedir {
    enum cg_sd_why why;
    int err;            /* errno of the call that failed, else 0 */
    unsigned owner;     /* the owner of what was refused (LINK_FOREIGN, DIR_FOREIGN, NOT_OURS) */
    char at[1024];      /* where it was refused, as walked ("" when it is the path itself) */
    char rest[4096];    /* scratch: what is left to walk */
    char link[4096];    /* scratch: a link's target */
};

/* Walks PATH from / with openat (never resolving a name in one step) and
 * returns an O_PATH descriptor of the trace folder, or -1 with r->why.  The
 * rule (docs/robustness.md, "The trace folder"): every folder on the way
 * belongs to us or root and is writable by no one else unless it is sticky
 * (/tmp) or our own user-private group's; a symlink is followed only if it
 * belongs to us or root; the trace folder itself is ours (or root's sticky
 * one) and writable.  A missing last folder of PATH is made (0700) when
 * CREATE, never its parents. */
int cg_safedir_open(const char *path, int create, struct cg_safedir *r);

/* "<path>: <where> <why>" in out (cut to cap, always terminated); its length */
size_t cg_safedir_explain(const struct cg_safedir *r, const char *path, char *out, size_t cap);

#endif
