/* callas_x86_64.S - call a dynamic-loader function "as" another object.
 *
 * void *cg_call_as_asm(uintptr_t gadget, void *fn, void *a, void *b, void *c)
 *
 * glibc's dlopen/dlsym take the caller's identity from their return address:
 * it decides which RUNPATH resolves a bare name, what $ORIGIN means, which
 * namespace and scope RTLD_DEFAULT/RTLD_NEXT search, and the object named in
 * dlerror().  A wrapper that simply calls the real dlopen makes the shim the
 * caller and changes all of those.  So we enter fn with a return address that
 * lies inside the real caller: `gadget` is the address of a `ret` (0xc3) byte
 * in that object's code.  fn returns to the gadget, whose `ret` pops the
 * continuation we pushed beneath it and lands back here. */
#if defined(__x86_64__)
    .text
    .globl cg_call_as_asm
    .hidden cg_call_as_asm
    .type cg_call_as_asm, @function
cg_call_as_asm:
    .cfi_startproc
    mov %rsi, %rax          /* fn */
    mov %rdi, %r11          /* gadget */
    mov %rdx, %rdi          /* a */
    mov %rcx, %rsi          /* b */
    mov %r8, %rdx           /* c */
    lea 1f(%rip), %r10
    push %r10               /* where the gadget's ret goes */
    .cfi_adjust_cfa_offset 8
    push %r11               /* fn's return address: inside the caller */
    .cfi_adjust_cfa_offset 8
    jmp *%rax
1:
    .cfi_adjust_cfa_offset -16
    ret
    .cfi_endproc
    .size cg_call_as_asm, .-cg_call_as_asm
#endif
    .section .note.GNU-stack,"",@progbits
