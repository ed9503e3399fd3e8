/* cudnn_desc.h - INTERIM SUBSET of branch `res`'s shim/cudnn_desc.h (same
 * names, same meaning): cuDNN's functions the shim calls itself on failure
 * paths, and cuDNN 9's last error string, taken and handed back.  When
 * merging `res`: take res's cudnn_desc.h and cudnn_desc.c whole (a superset:
 * legacy descriptor getters, enum names) and drop these. */
#ifndef CONVGUARD_CUDNN_DESC_H
#define CONVGUARD_CUDNN_DESC_H

#include "cg.h"

/* cuDNN's functions the shim calls itself, from the sub-library of the
 * slot's cuDNN that implements them (never the dispatcher, whose first call
 * of a function dlopen()s: that would write events and touch dlerror()).
 * NULL where no loaded sub-library has it. */
struct cg_cudnn_fns {
    void (*last_error)(char *, size_t); /* cuDNN 9 only */
};
/* `real` is the wrapped function: its library tells which copy to search. */
void cg_cudnn_fns(int slot, const void *real, struct cg_cudnn_fns *out);
/* The slot a real cuDNN function pointer belongs to. */
int cg_cudnn_slot_of(int hook, const void *real);

/* cuDNN 9 clears its last error string when it is read.  take: reads it into
 * out and keeps it for the program, whose next cudnnGetLastErrorString call
 * gets the same text (cg_w_cudnnGetLastErrorString).  drop: reads and
 * forgets what the shim's own calls since take may have left. */
void cg_cudnn_reason_take(const struct cg_cudnn_fns *f, char *out, size_t cap);
void cg_cudnn_reason_drop(const struct cg_cudnn_fns *f);
#endif
