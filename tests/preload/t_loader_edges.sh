# t_loader_edges.sh - the loader's edges that a wrong shim would pass
# unnoticed (issue 13): the flags a program gives dlopen/dlmopen reach the
# loader unchanged, checked by what each flag does; a hooked name that
# nothing defines ends the program as the loader would; the
# cudaGetDriverEntryPoint route on its own; and the trace's framing under
# many threads writing long events at once, read line by line.
source "$(dirname "$0")/../lib.sh"
L=$BUILD_DIR/loader
D=$DOUBLES
export CONVGUARD_QUIET=1
unset LD_LIBRARY_PATH

# 1. flags, by behaviour: identical with and without the shim, and each
#    behaviour is the flag's own (so that a flag lost on the way would show)
if [ -n "${CG_SANITIZED:-}" ]; then
    echo "  (under ASan: section 1 skipped, the sanitizer runtime refuses RTLD_DEEPBIND)"
else
"$L/dlflags" "$L" > "$WORK/flags.plain" 2>&1
run_shim "$WORK/flags" "$L/dlflags" "$L" > "$WORK/flags.shim" 2>&1
check "flags: every result identical with and without the shim" diff "$WORK/flags.plain" "$WORK/flags.shim"
has() { grep -qxF "$1" "$WORK/flags.shim"; }
check "RTLD_LAZY: a library with an unresolved symbol loads" has "RTLD_LAZY, unresolved symbol: loaded"
check "RTLD_NOW: the same library does not, with the loader's reason" has "RTLD_NOW, unresolved symbol: undefined symbol: cgtest_nowhere"
check "RTLD_DEEPBIND: the library binds to its own definition first" has "RTLD_DEEPBIND: who() = 2"
check "without RTLD_DEEPBIND: to the program's" has "without RTLD_DEEPBIND: who() = 1"
check "RTLD_NODELETE: still loaded after dlclose, state kept" has "  after dlclose: still loaded, bump = 2"
check "without RTLD_NODELETE: unloaded by dlclose" has "  after dlclose: gone, mapped = 0"
check "RTLD_NOLOAD: NULL, no error text, nothing mapped" has "RTLD_NOLOAD, not loaded: NULL, dlerror = (null), mapped = 0"
check "dlmopen(LM_ID_NEWLM): a namespace of its own (dlinfo)" has "dlmopen(LM_ID_NEWLM): handle, dlinfo = 0, new namespace = yes"
check "dlmopen(LM_ID_NEWLM): its own copy, its own state" bash -c "grep -qxF '  bump in the base namespace = 1, 2; in the new one = 1' '$WORK/flags.shim' && grep -qxF '  two copies: yes' '$WORK/flags.shim'"
fi

# 2. a hooked name nothing defines: the loader's "symbol lookup error" and
#    status 127 at the call, word for word; the trace says which call
"$L/unbound" "$L" strong > "$WORK/ub.plain" 2> "$WORK/ub.plain.err"; rp=$?
run_shim "$WORK/ub" "$L/unbound" "$L" strong > "$WORK/ub.shim" 2> "$WORK/ub.shim.err"; rs=$?
check "unbound: exit status 127 without the shim, and the same with it" test "$rp:$rs" = "127:127"
check "unbound: the loader's message without the shim" grep -q "symbol lookup error: .*libunbound.so: undefined symbol: cuMemAllocAsync$" "$WORK/ub.plain.err"
check "unbound: stdout and stderr identical with the shim" bash -c "diff '$WORK/ub.plain' '$WORK/ub.shim' && diff '$WORK/ub.plain.err' '$WORK/ub.shim.err'"
T=$(trace_of "$WORK/ub")
check "unbound: a call_unbound event names the function and the caller" jqt "$T" 'any(.[]; .ev=="call_unbound" and .fn=="cuMemAllocAsync" and .weak==false and (.caller|endswith("libunbound.so")))'
check "unbound: trace valid" traces_valid "$WORK/ub"
# defined after all (the driver double in the global scope): both reach it
"$L/unbound" "$L" strong "$D/cuda/libcuda.so.1" > "$WORK/ubd.plain" 2>&1
run_shim "$WORK/ubd" "$L/unbound" "$L" strong "$D/cuda/libcuda.so.1" > "$WORK/ubd.shim" 2>&1
check "unbound, then defined: the driver's own answer (3, not initialized), with and without the shim" \
    bash -c "grep -qx 'call_it = 3' '$WORK/ubd.plain' && diff '$WORK/ubd.plain' '$WORK/ubd.shim'"
# a weak reference: NULL without the shim (the program does not call); with
# it the shim's definition is there, so the call comes and gets 302 (docs/hooks.md)
"$L/unbound" "$L" weak > "$WORK/ubw.plain" 2>&1
run_shim "$WORK/ubw" "$L/unbound" "$L" weak > "$WORK/ubw.shim" 2>&1
check "unbound, weak: no call without the shim" grep -qx 'call_it = -1' "$WORK/ubw.plain"
check "unbound, weak: CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND (302) with it, and an event" \
    bash -c "grep -qx 'call_it = 302' '$WORK/ubw.shim' && jq -e -s 'any(.[]; .ev==\"call_unbound\" and .weak and .status==302)' $WORK/ubw/*.jsonl"

# 3. cudaGetDriverEntryPoint on its own: a runtime whose own driver functions
#    bypass the shim (CGTEST_CUDART_RAW_DLSYM=1), so only that function's
#    wrapper can make the calls through what it returns visible
export LD_LIBRARY_PATH=$D/cudart:$D/cuda
CGTEST_CUDART_RAW_DLSYM=1 "$L/entrypoint" > "$WORK/ep.plain" 2>&1
CGTEST_CUDART_RAW_DLSYM=1 run_shim "$WORK/ep" "$L/entrypoint" > "$WORK/ep.shim" 2>&1
check "entry points: every status identical with and without the shim" diff "$WORK/ep.plain" "$WORK/ep.shim"
T=$(trace_of "$WORK/ep")
check "entry points: the runtime's own driver lookups bypassed the shim (none counted)" jqt "$T" '.[-1].calls | has("cuGetProcAddress_v2") | not'
check "entry points: the two calls through cudaGetDriverEntryPoint's cuMemAlloc counted" jqt "$T" '.[-1].calls.cuMemAlloc_v2 == 2 and .[-1].calls.cuMemFree_v2 == 1'
check "entry points: the 2 GiB one is an alloc_failed by the entry_point route" jqt "$T" 'any(.[]; .ev=="alloc_failed" and .fn=="cuMemAlloc_v2" and .status==2 and .route=="entry_point")'
unset LD_LIBRARY_PATH

# 4. framing: 8 threads x 150 failed loads of traced names, each event a few
#    KiB (48 LD_LIBRARY_PATH folders listed as candidates), a timer
#    interrupting the threads' system calls all along; every line must be one
#    JSON object, read line by line, and none lost
llp=$(for i in $(seq 1 48); do printf '/nonexistent/convguard-burst/folder/number/%02d/lib:' "$i"; done)
LD_LIBRARY_PATH=$llp run_shim "$WORK/burst" "$L/burst" 8 150 signals > "$WORK/burst.out" 2>&1
check "burst: the program ran as without the shim" grep -qx '8 threads x 150 failed loads, 0 unexpected successes' "$WORK/burst.out"
T=$(trace_of "$WORK/burst")
check "burst: every line is exactly one JSON object, ending in a newline" trace_lines_valid "$T"
check "burst: lines of more than a page among them" test "$(awk 'length > 4096' "$T" | wc -l)" -gt 100
check "burst: all 1200 failed loads written, seq gap-free, nothing dropped" bash -c "
    [ \$(jq -c 'select(.ev==\"dlopen\" and .ok==false)' '$T' | wc -l) = 1200 ] && jq -e -s '.[-1].events_dropped == 0' '$T' >/dev/null" 
check "burst: trace valid" traces_valid "$WORK/burst"
# the reader itself: a line of two glued objects, or an empty line, is refused
printf '{"ev":"a","seq":0}{"ev":"b","seq":1}\n' > "$WORK/glued.jsonl"
printf '{"ev":"a","seq":0}\n\n{"ev":"b","seq":1}\n' > "$WORK/empty.jsonl"
check "framing check refuses two objects glued on one line" bash -c "! trace_lines_valid '$WORK/glued.jsonl'"
check "framing check refuses an empty line" bash -c "! trace_lines_valid '$WORK/empty.jsonl'"

# 5. errno after dlerror(): glibc's sets it to the failure's code (ENOENT,
#    EMFILE, EISDIR; an undefined symbol has none); the shim's kept copy of a
#    text it had to read must do the same.  Every step, with and without the
#    shim: the cuDNN double (its functions dlopen a missing sub-library at
#    their first call) and the real cuDNN when there is one.
"$L/dlerrno" "$D" "$D/cudnn9/libcudnn.so.9" > "$WORK/errno.plain" 2>&1
run_shim "$WORK/errno" "$L/dlerrno" "$D" "$D/cudnn9/libcudnn.so.9" > "$WORK/errno.shim" 2>&1
check "errno after dlerror(): the program measured what it should (ENOENT after a missing library)" \
    grep -qx '  dlerror: libcudnn_missing_for_test.so.9: cannot open shared object file: No such file or directory; errno 2' "$WORK/errno.plain"
check "errno after dlerror(): EMFILE after a dlopen without a free descriptor" \
    grep -q 'Too many open files; errno 24$' "$WORK/errno.plain"
check "errno after each loader call and each dlerror(): identical with and without the shim (doubles)" \
    diff "$WORK/errno.plain" "$WORK/errno.shim"
REAL_CUDNN=/usr/local/cuda/lib64/libcudnn.so.9
if [ -e "$REAL_CUDNN" ] && [ -z "${CG_SANITIZED:-}" ]; then
    "$L/dlerrno" "$D" "$REAL_CUDNN" > "$WORK/errno-real.plain" 2>&1
    run_shim "$WORK/errno-real" "$L/dlerrno" "$D" "$REAL_CUDNN" > "$WORK/errno-real.shim" 2>&1
    check "errno after each loader call and each dlerror(): identical with and without the shim (real cuDNN)" \
        bash -c "grep -q '^cudnnCreate (call 2)' '$WORK/errno-real.plain' && diff '$WORK/errno-real.plain' '$WORK/errno-real.shim'"
else
    echo "  (no real cuDNN in /usr/local/cuda: its errno comparison skipped)"
fi
finish
