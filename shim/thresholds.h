/* thresholds.h - the numbers the diagnosis (tools/analysis/diagnose.c) and
 * the shim's fallback policy (shim/cudnn/cudnn.c) share, so that the shim's
 * trigger and the CLI's cause cannot drift apart (issue 27).  Header-only;
 * tools/ compile it with -Ishim. */
#ifndef CONVGUARD_THRESHOLDS_H
#define CONVGUARD_THRESHOLDS_H

/* Below this much free GPU memory a failed cudnnCreate (other than a
 * BAD_PARAM or NOT_SUPPORTED one) is put down to memory: a CUDA context alone
 * takes a few hundred MiB on current GPUs, before cuDNN's own needs, so with
 * less than 1 GiB free the create has no room; doctor warns of a GPU that
 * full for the same reason. */
#define CG_LOW_FREE_BYTES (1ll << 30)

#endif
