/* export.c - the override layer: every exported CUDA name, and nothing else.
 *
 * For each hook and each slot of its family this file defines two entry
 * functions: one exported under the slot's symbol version (PLT route), one
 * handed out by dlsym/cuGetProcAddress (routes.c).  They only count and
 * forward: the wrapper cg_w_<name> in the concern's file does the rest.
 *
 * Why non-default versions (cudnnCreate@libcudnn.so.9, one '@'): a program
 * linked against libcudnn.so.9 asks for exactly that version and binds to us,
 * while cuDNN's sub-libraries ask for cudnnGetStream@libcudnn_graph.so.9 and
 * bind to the real one, and an unversioned dlsym(RTLD_DEFAULT, "cudnnCreate")
 * never sees us at all, as if the shim were not there.  libcuda.so.1 has no
 * symbol versions, so the driver's names are exported plainly. */
#include "loader/loader.h"


/* A handed-out entry whose library has gone (unloaded under the program's
 * feet) fails the way the library itself fails when it is missing. */
#define CG_MISSING_CUDNN CUDNN_STATUS_NOT_INITIALIZED
#define CG_MISSING_CUDART cudaErrorInsufficientDriver
#define CG_MISSING_DRV CUDA_ERROR_NOT_INITIALIZED

/* Two entries per hook and slot, one per route:
 *  - the exported one (cg_x_<slot>_<name>, or the driver's plain name) is what
 *    a program's PLT binds to; it forwards to what that reference would have
 *    bound to without the shim (bind.c): the slot's library, wrapped, or a
 *    framework's stub, untouched;
 *  - the handed-out one (cg_d_<slot>_<name>) is what dlsym and
 *    cuGetProcAddress give in place of the library's own function, and
 *    forwards to that function.
 * One entry cannot serve both: under TensorFlow the same name reaches its
 * stub through the PLT and the library through the stub's dlsym.
 *
 * The fast path of both: a load, a test, a counter, a forward.  Everything
 * else is kept out of line, in a cold function that is told the program's
 * return address (where the call came from): finding the target, and forwarding
 * untouched while the shim is not tracing or the target is not the library's
 * (the tables the fast paths read are filled only with wrapped targets, and
 * only while tracing: real.c, bind.c). */
#define CG_ENTRY_BODY(table, slot, ret, name, args, slow)                                                     \
    {                                                                                                          \
        cg_t_##name real = (cg_t_##name)atomic_load_explicit(&table[slot][CG_H_##name], memory_order_acquire); \
        if (CG_UNLIKELY(!real))                                                                                \
            return CG_NOT_WRAPPED_##table(slot, name, args, slow);                                             \
        atomic_fetch_add_explicit(&cg_count[CG_H_##name].calls, 1, memory_order_relaxed);                     \
        return cg_w_##name(real, __builtin_return_address(0), CG_UNPAREN args);                                \
    }
/* Not to be wrapped (the fast table is empty): a handed-out entry goes to
 * its cold path; an exported one first tries the definition every PLT caller
 * reaches untouched (a framework's stub: TensorFlow's every driver call), a
 * load and a tail call, then its cold path. */
#define CG_NOT_WRAPPED_cg_real(slot, name, args, slow) slow(__builtin_return_address(0), CG_UNPAREN args)
#define CG_NOT_WRAPPED_cg_plt(slot, name, args, slow)                                                         \
    ({                                                                                                         \
        cg_t_##name plain_ = (cg_t_##name)atomic_load_explicit(&cg_plt_plain[slot][CG_H_##name],              \
                                                                memory_order_acquire);                         \
        plain_ ? plain_ args : slow(__builtin_return_address(0), CG_UNPAREN args);                             \
    })

/* The handed-out entry's cold path: the slot library's function. */
#define CG_SLOW_LIB(slot, fam, ret, name, params, args, self)                                                 \
    static __attribute__((noinline, cold)) ret cg_slow_##self(const void *cg_caller_, CG_UNPAREN params)      \
    {                                                                                                          \
        cg_t_##name real = (cg_t_##name)atomic_load_explicit(&cg_real[slot][CG_H_##name], memory_order_acquire); \
        if (!real && !(real = (cg_t_##name)cg_real_in_lib(slot, CG_H_##name)))                                 \
            return (ret)CG_MISSING_##fam;                                                                      \
        atomic_fetch_add_explicit(&cg_count[CG_H_##name].calls, 1, memory_order_relaxed);                     \
        if (!atomic_load_explicit(&cg.traced, memory_order_relaxed))                                           \
            return real args;                                                                                  \
        return cg_w_##name(real, cg_caller_, CG_UNPAREN args);                                                 \
    }
/* The exported entry's cold path: a definition every caller reaches that is
 * not to be wrapped (a stub) is one more load; the rest asks bind.c.  A
 * forward that is not wrapped is not counted: what the stub reaches in the
 * library comes back through a handed-out entry and is counted there. */
#define CG_SLOW_PLT(slot, fam, ret, name, params, args, self)                                                 \
    static __attribute__((noinline, cold)) ret cg_pslow_##self(const void *cg_caller_, CG_UNPAREN params)     \
    {                                                                                                          \
        cg_t_##name cg_fn_ = (cg_t_##name)atomic_load_explicit(&cg_plt_plain[slot][CG_H_##name], memory_order_acquire); \
        if (cg_fn_)                                                                                                \
            return cg_fn_ args;                                                                                    \
        bool cg_wrap_;                                                                                             \
        if (!(cg_fn_ = (cg_t_##name)cg_bind_plt(slot, CG_H_##name, cg_caller_, &cg_wrap_)))                                \
            return (ret)cg_bind_unbound(slot, CG_H_##name, cg_caller_);                                            \
        if (!cg_wrap_)                                                                                             \
            return cg_fn_ args;                                                                                    \
        atomic_fetch_add_explicit(&cg_count[CG_H_##name].calls, 1, memory_order_relaxed);                     \
        return cg_w_##name(cg_fn_, cg_caller_, CG_UNPAREN args);                                                       \
    }

/* The version goes on the entry with gcc's symver attribute (gcc >= 10; it
 * survives LTO); clang has no such attribute and takes the assembler's
 * .symver instead (zig cc: the portable build of packaging/). */
#if defined(__clang__)
#define CG_SYMVER(fn, sym)
#define CG_SYMVER_ASM(fn, sym) __asm__(".symver " #fn ", " sym);
#else
#define CG_SYMVER(fn, sym) __attribute__((symver(sym)))
#define CG_SYMVER_ASM(fn, sym)
#endif

/* Versioned entries: cg_x_<slot>_<name>, exported as name@<version>. */
#define CG_VENTRY(slot, tag, ver, fam, ret, name, params, args)                                               \
    CG_SLOW_LIB(slot, fam, ret, name, params, args, tag##_##name)                                              \
    static ret cg_d_##tag##_##name params CG_ENTRY_BODY(cg_real, slot, ret, name, args, cg_slow_##tag##_##name) \
    CG_SLOW_PLT(slot, fam, ret, name, params, args, tag##_##name)                                              \
    __attribute__((visibility("default"))) CG_SYMVER(cg_x_##tag##_##name, #name "@" ver)                     \
    ret cg_x_##tag##_##name params CG_ENTRY_BODY(cg_plt, slot, ret, name, args, cg_pslow_##tag##_##name)     \
    CG_SYMVER_ASM(cg_x_##tag##_##name, #name "@" ver)

#define CG_ENTRIES_CUDNN(ret, name, params, args)                                                             \
    CG_VENTRY(CG_SLOT_CUDNN9, cudnn9, "libcudnn.so.9", CUDNN, ret, name, params, args)                       \
    CG_VENTRY(CG_SLOT_CUDNN8, cudnn8, "libcudnn.so.8", CUDNN, ret, name, params, args)
#define CG_ENTRIES_CUDART(ret, name, params, args)                                                            \
    CG_VENTRY(CG_SLOT_CUDART13, cudart13, "libcudart.so.13", CUDART, ret, name, params, args)                \
    CG_VENTRY(CG_SLOT_CUDART12, cudart12, "libcudart.so.12", CUDART, ret, name, params, args)                \
    CG_VENTRY(CG_SLOT_CUDART11, cudart11, "libcudart.so.11.0", CUDART, ret, name, params, args)
/* The driver's exported entries carry the real name, unversioned. */
#define CG_ENTRIES_DRV(ret, name, params, args)                                                               \
    CG_SLOW_LIB(CG_SLOT_DRV, DRV, ret, name, params, args, drv_##name)                                         \
    static ret cg_d_drv_##name params CG_ENTRY_BODY(cg_real, CG_SLOT_DRV, ret, name, args, cg_slow_drv_##name) \
    CG_SLOW_PLT(CG_SLOT_DRV, DRV, ret, name, params, args, drv_##name)                                         \
    CG_EXPORT ret name params CG_ENTRY_BODY(cg_plt, CG_SLOT_DRV, ret, name, args, cg_pslow_drv_##name)

/* CG_HOOK_EXEC (the legacy convolution executions, 13 or 18 arguments): the
 * entry makes the real call itself instead of inlining a wrapper, so that gcc
 * copies the stack arguments for it with `push mem` and keeps nothing in
 * callee-saved registers: the register arguments and real go to a
 * thread-local with plain stores (cg_exec_save), and a failure hands the
 * cold cg_wf_<name> (cudnn.c) the addresses of the entry's own stack
 * arguments, which the callee cannot have changed (it owns only the copies). */
#define CG_EXEC_FIRST(a, ...) (a)
#define CG_EXEC_STAMP CG_EXEC_FIRST
#define CG_EXEC_BODY(table, slot, ret, name, args, regs, stack, slow)                                         \
    {                                                                                                          \
        cg_t_##name real = (cg_t_##name)atomic_load_explicit(&table[slot][CG_H_##name], memory_order_acquire); \
        if (CG_UNLIKELY(!real))                                                                                \
            return CG_NOT_WRAPPED_##table(slot, name, args, slow);                                             \
        atomic_fetch_add_explicit(&cg_count[CG_H_##name].calls, 1, memory_order_relaxed);                     \
        cg_exec_save((const void *)real, CG_EXEC_STAMP stack, CG_UNPAREN regs);                                 \
        ret r = real args;                                                                                     \
        if (CG_UNLIKELY(r != 0))                                                                               \
            return cg_wf_##name(r, CG_UNPAREN stack);                                                          \
        return r;                                                                                              \
    }
#define CG_XVENTRY(slot, tag, ver, fam, ret, name, params, args, regs, stack)                                 \
    CG_SLOW_LIB(slot, fam, ret, name, params, args, tag##_##name)                                              \
    static ret cg_d_##tag##_##name params                                                                      \
        CG_EXEC_BODY(cg_real, slot, ret, name, args, regs, stack, cg_slow_##tag##_##name)                      \
    CG_SLOW_PLT(slot, fam, ret, name, params, args, tag##_##name)                                              \
    __attribute__((visibility("default"))) CG_SYMVER(cg_x_##tag##_##name, #name "@" ver)                     \
    ret cg_x_##tag##_##name params                                                                             \
        CG_EXEC_BODY(cg_plt, slot, ret, name, args, regs, stack, cg_pslow_##tag##_##name)                      \
    CG_SYMVER_ASM(cg_x_##tag##_##name, #name "@" ver)
#define CG_XENTRIES_CUDNN(ret, name, params, args, regs, stack)                                               \
    CG_XVENTRY(CG_SLOT_CUDNN9, cudnn9, "libcudnn.so.9", CUDNN, ret, name, params, args, regs, stack)         \
    CG_XVENTRY(CG_SLOT_CUDNN8, cudnn8, "libcudnn.so.8", CUDNN, ret, name, params, args, regs, stack)

#define CG_HOOK(fam, ret, name, params, args) CG_ENTRIES_##fam(ret, name, params, args)
#define CG_HOOK_PLAIN CG_HOOK
#define CG_HOOK_EXEC(fam, ret, name, params, args, regs, stack) CG_XENTRIES_##fam(ret, name, params, args, regs, stack)
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN
#undef CG_HOOK_EXEC

/* Generated wrappers for CG_HOOK_PLAIN: the call, and an event on failure. */
#define CG_HOOK(fam, ret, name, params, args)
#define CG_HOOK_PLAIN(fam, ret, name, params, args)                                                           \
    ret cg_w_##name(cg_t_##name real, CG_CALLER, CG_UNPAREN params)                                            \
    {                                                                                                          \
        ret r = real args;                                                                                     \
        if (CG_UNLIKELY(r != 0))                                                                               \
            cg_failed_call(CG_H_##name, (long long)r);                                                       \
        return r;                                                                                              \
    }
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN

/* The table dlsym and cuGetProcAddress hand out: the handed-out entries. */
#define CG_EREF_CUDNN(name)                                                                                    \
    [CG_SLOT_CUDNN9][CG_H_##name] = (void *)cg_d_cudnn9_##name, [CG_SLOT_CUDNN8][CG_H_##name] = (void *)cg_d_cudnn8_##name,
#define CG_EREF_CUDART(name)                                                                                   \
    [CG_SLOT_CUDART13][CG_H_##name] = (void *)cg_d_cudart13_##name,                                            \
    [CG_SLOT_CUDART12][CG_H_##name] = (void *)cg_d_cudart12_##name,                                            \
    [CG_SLOT_CUDART11][CG_H_##name] = (void *)cg_d_cudart11_##name,
#define CG_EREF_DRV(name) [CG_SLOT_DRV][CG_H_##name] = (void *)cg_d_drv_##name,
void *const cg_entry[CG_NSLOTS][CG_NHOOKS] = {
#define CG_HOOK(fam, ret, name, params, args) CG_EREF_##fam(name)
#define CG_HOOK_PLAIN CG_HOOK
#include "hooks.def"
#undef CG_HOOK
#undef CG_HOOK_PLAIN
};
