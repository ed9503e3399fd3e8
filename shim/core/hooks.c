/* hooks.c - the hook table's state and the failure accounting, the one low
 * place every layer counts in: which libraries (slots) and functions (hooks)
 * exist, their real functions, per-hook call and failure counters, and the
 * number of failures the exit line reports.  The entries (export.c) read the
 * tables on every call; everything that sees a call fail says so with
 * cg_failed() (or cg_failed_call(), which also writes the plain event). */
#include <errno.h>

#include "core/core.h"

const struct cg_slot_info cg_slots[CG_NSLOTS] = {
    [CG_SLOT_CUDNN9] = {"libcudnn.so.9", "libcudnn.so.9", CG_FAM_CUDNN},
    [CG_SLOT_CUDNN8] = {"libcudnn.so.8", "libcudnn.so.8", CG_FAM_CUDNN},
    [CG_SLOT_CUDART13] = {"libcudart.so.13", "libcudart.so.13", CG_FAM_CUDART},
    [CG_SLOT_CUDART12] = {"libcudart.so.12", "libcudart.so.12", CG_FAM_CUDART},
    [CG_SLOT_CUDART11] = {"libcudart.so.11.0", "libcudart.so.11.0", CG_FAM_CUDART},
    [CG_SLOT_DRV] = {"libcuda.so.1", NULL, CG_FAM_DRV},
};

const struct cg_hook_info cg_hooks[CG_NHOOKS] = {
#define CG_HOOK(fam, ret, name, params, args) [CG_H_##name] = {#name, CG_FAM_##fam},
#define CG_HOOK_PLAIN CG_HOOK
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN
};

_Atomic(void *) cg_real[CG_NSLOTS][CG_NHOOKS];
_Atomic uint32_t cg_real_gen;
struct cg_counter cg_count[CG_NHOOKS];
static _Atomic uint64_t failures;

void cg_failed(int hook, enum cg_fail how)
{
    if (hook >= 0)
        atomic_fetch_add_explicit(&cg_count[hook].fails, 1, memory_order_relaxed);
    if (how == CG_FAIL_REPORTED)
        atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
}

uint64_t cg_failures(void) { return atomic_load(&failures); }

void cg_failures_reset(void) { atomic_store(&failures, 0); }

void cg_ev_begin_call(struct cg_ev *e, char *storage, size_t cap, const char *name, int hook)
{
    cg_ev_begin(e, storage, cap, name);
    cg_ev_str(e, "fn", cg_hooks[hook].name);
}

void cg_failed_call(int hook, long long status)
{
    int saved = errno;
    char b[1024];
    struct cg_ev e;
    cg_failed(hook, CG_FAIL_REPORTED);
    cg_ev_begin_call(&e, b, sizeof b, "call_failed", hook);
    cg_ev_i64(&e, "status", status);
    cg_ev_end(&e);
    errno = saved;
}
