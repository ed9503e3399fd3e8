# t_drvlog.sh - the CUDA driver's own error messages (Error Log Management, CUDA 12.9+) in the
# trace: the shim registers one callback with the host's libcuda (shim/cuda/drvlog.c) and describes the
# code images handed to the load calls (shim/cuda/codeimage.c).  Measured on the H200: code with only
# sm_80 machine code loads (lazy loading) and fails at cuLibraryGetKernel (209), a call with no
# hook; the driver says so in words.  The libcuda double logs its failures the same way
# (tests/doubles/README.md); build/doubles/cuda-nolog is a driver without the API.
source "$(dirname "$0")/../lib.sh"
C=$CLIENTS/client_drvlog
CG=$BUILD_DIR/convguard
export CONVGUARD_QUIET=1
D=$DOUBLES/cuda
run() { # name env... -- mode args: runs with and without the shim; $WORK/name.{plain,out}, trace dir $WORK/name
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    env LD_LIBRARY_PATH=$D "${envs[@]}" "$C" "$@" > "$WORK/$name.plain" 2> "$WORK/$name.plain.err"
    echo $? > "$WORK/$name.plain.rc"
    mkdir -p "$WORK/$name"
    env LD_LIBRARY_PATH=$D "${envs[@]}" CONVGUARD_DIR="$WORK/$name" LD_PRELOAD="$SHIM" "$C" "$@" \
        > "$WORK/$name.out" 2> "$WORK/$name.err"
    echo $? > "$WORK/$name.rc"
}
same() { diff "$WORK/$1.plain" "$WORK/$1.out" && diff "$WORK/$1.plain.rc" "$WORK/$1.rc"; }

# 1. code for another GPU, lazy loading: the load works, the kernel lookup fails (no hook)
run arch -- arch
T=$(trace_of "$WORK/arch")
check "arch: output and exit status unchanged by the shim" same arch
check "arch: the lib event says the callback is registered" jqt "$T" \
    'map(select(.ev=="lib" and .family=="driver")) | length == 1 and .[0].driver_log == "registered"'
H=", to get more information when using CUDA Driver APIs use the CU_JIT_ERROR_LOG_BUFFER and CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES parameters"
check "arch: the driver's words, in order, as driver_log events (the H200's sequence)" jq -e -s --arg h "$H" '
    [.[] | select(.ev=="driver_log") | .message] == ["Error handling fatbinary" + $h,
     "No available relocatable PTX entries for GPU", "No device code available for GPU ISA 90",
     "Kernel (_Z6kernelPf) cannot be found in library due to compilation error" + $h,
     "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel"]' "$T"
check "arch: the Returning line gives fn, status, the driver's name for it, and no hook saw the call" jqt "$T" '
    [.[] | select(.ev=="driver_log" and .status)] | length == 1 and .[0].fn == "cuLibraryGetKernel"
    and .[0].status == 209 and .[0].status_name == "CUDA_ERROR_NO_BINARY_FOR_GPU" and .[0].hooked == false
    and .[0].level == "error" and (.[0].tid | type) == "number"'
check "arch: the 209 names the image that has nothing for this GPU: sm_80 machine code, no PTX, GPU 9.0" jqt "$T" '
    first(.[] | select(.ev=="driver_log" and .status==209)) | .code_no_fit == [{"fn":"cuLibraryLoadData",
    "caller":"(main program)","image":{"format":"fatbin","sass":["sm_80"],"ptx":[],"device":"9.0","fits_device":false}}]'
check "arch: exit counts the messages and the failure no hook saw" jqt "$T" '
    .[-1].ev == "exit" and .[-1].driver_log == {"messages":5,"written":5,"not_written":0,"own":0,"probes":0,"notes":0,"held":0}
    and .[-1].failures == 1 and .[-1].code_images.described == 1 and .[-1].code_images.no_fit == 1'
check "arch: every line valid, seq without gaps" traces_valid "$WORK/arch"
"$CG" report "$T" 2>&1 | tr -s ' \n' '  ' > "$WORK/arch.report"
check "arch: the report lists cuLibraryGetKernel's 209 as a failure" grep -q "cuLibraryGetKernel -> CUDA_ERROR_NO_BINARY_FOR_GPU (209)" "$WORK/arch.report"
check "arch: the report names the architecture mismatch with the image and the GPU" grep -q "sm_80 machine code and no PTX; this GPU is 9.0" "$WORK/arch.report"
check "arch: the report quotes the driver" grep -qF '"No device code available for GPU ISA 90"' "$WORK/arch.report"
check "arch: one finding, of the runtime layer (not memory)" bash -c "grep -q '1 problem ' '$WORK/arch.report' && grep -qF '[runtime] the GPU code was built for other GPUs' '$WORK/arch.report'"

# the same with the message carrying the log file's prefix ([time][tid][CUDA][E] words)
run prefix CGTEST_LOG_PREFIX=1 -- arch
check "prefix: the words and the Returning line are read through the prefix" jqt "$(trace_of "$WORK/prefix")" '
    [.[] | select(.ev=="driver_log")] | length == 5 and .[2].message == "No device code available for GPU ISA 90"
    and .[4].fn == "cuLibraryGetKernel" and .[4].status == 209'

# 2. the same through cuModuleLoadData, two architectures
run module -- module
T=$(trace_of "$WORK/module")
check "module: both architectures listed, the lookup's 209 from the log" jqt "$T" '
    first(.[] | select(.ev=="driver_log" and .status==209)) | .fn == "cuModuleGetFunction"
    and .code_no_fit[0].image.sass == ["sm_80","sm_86"] and .code_no_fit[0].fn == "cuModuleLoadData"'

# 3. PTX of a newer toolkit: a hooked call fails (222); its event carries the driver's messages
run ptx -- ptx
T=$(trace_of "$WORK/ptx")
check "ptx: output unchanged" same ptx
check "ptx: code_load_failed names 222 from the one table and describes the PTX (ISA 9.9 for compute_90)" jqt "$T" '
    first(.[] | select(.ev=="code_load_failed")) | .status == 222 and .status_name == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
    and .image == {"format":"ptx","sass":[],"ptx":[{"arch":"compute_90","isa":"9.9"}],"device":"9.0","fits_device":true}'
check "ptx: the failure event points to the driver's three messages just before it, same thread" jqt "$T" '
    (map(select(.ev=="driver_log")) | map(.seq)) as $s | first(.[] | select(.ev=="code_load_failed")) as $f
    | $f.driver_log == $s and ($s | length) == 3 and all(.[] | select(.ev=="driver_log"); .tid == $f.tid and .seq < $f.seq)'
check "ptx: the Returning line is of a hooked call" jqt "$T" 'any(.[]; .ev=="driver_log" and .status==222 and .hooked==true)'
"$CG" report "$T" 2>&1 | tr -s ' \n' '  ' > "$WORK/ptx.report"
check "ptx: one failure, not two (the log line is the hooked call's)" bash -c \
    "[ \$(grep -o ' -> CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)' '$WORK/ptx.report' | wc -l) = 1 ]"
check "ptx: the report names the newer toolkit and quotes the driver" bash -c \
    "grep -q 'newer CUDA' '$WORK/ptx.report' && grep -qF '\"JIT compilation failed\"' '$WORK/ptx.report'"

# 4. code that runs: no log event, nothing else changes.  The driver still speaks in a run that
# works (measured on the H200): PyTorch's cuCtxGetDevice on threads with no context (201, a question
# answered "no") and JAX's "Duplicate entry kernels named ..." (a note of a load that worked): the
# one is counted as a probe, the other as a note, neither written nor a failure
run ok -- ok
T=$(trace_of "$WORK/ok")
check "ok: output and exit status unchanged" same ok
check "ok: no driver_log event, no failure; exit counts the probe (2 messages) and the notes (one per load)" jqt "$T" '
    all(.[]; .ev != "driver_log") and .[-1].failures == 0
    and .[-1].driver_log == {"messages":4,"written":0,"not_written":0,"own":0,"probes":2,"notes":2,"held":0}
    and .[-1].code_images == {"described":2,"no_fit":0}'
check "ok: the report finds no problem" "$CG" report "$T"

# 5. a driver without the API (before CUDA 12.9): said once, nothing else
D=$DOUBLES/cuda-nolog
run nolog -- arch
T=$(trace_of "$WORK/nolog")
check "nolog: output and exit status unchanged" same nolog
check "nolog: the lib event says unavailable; no driver_log event; no driver_log in exit" jqt "$T" '
    (map(select(.ev=="lib" and .family=="driver")) | .[0].driver_log == "unavailable")
    and all(.[]; .ev != "driver_log") and (.[-1] | has("driver_log") | not)'
check "nolog: the image is still described at exit" jqt "$T" '.[-1].code_images.no_fit_images[0].image.sass == ["sm_80"]'
run nolog_ok -- ok
check "nolog: a run that works is unchanged too" same nolog_ok
D=$DOUBLES/cuda

# 6. the program's own callback and CUDA_LOG_FILE keep every message
run own -- own
check "own: the program's callback gets every message, with and without the shim" same own
check "own: ...and it got them (5 for the kernel lookup, 3 for the PTX)" grep -q "^own callback: 8 messages$" "$WORK/own.out"
run logfile CUDA_LOG_FILE=stderr -- arch
strip() { sed -E 's/^\[[0-9:.]+\]\[[0-9]+\]//' "$1" | grep -v '^convguard'; }
check "CUDA_LOG_FILE=stderr: the same lines, with and without the shim" \
    bash -c "diff <(sed -E 's/^\[[0-9:.]+\]\[[0-9]+\]//' '$WORK/logfile.plain.err') <(sed -E 's/^\[[0-9:.]+\]\[[0-9]+\]//' '$WORK/logfile.err' | grep -v '^convguard')"
check "CUDA_LOG_FILE=stderr: ...5 of them" bash -c "[ \$(grep -c '\[CUDA\]\[E\]' '$WORK/logfile.err') = 5 ]"

# 7. a flood is counted, not written
run flood -- flood 20000
T=$(trace_of "$WORK/flood")
check "flood: output unchanged" same flood
check "flood: at most 8 events of one text, all 20000 messages counted" jqt "$T" '
    ([.[] | select(.ev=="driver_log")] | group_by(.message) | map(length) | max) <= 8
    and .[-1].driver_log.messages == 20000 and .[-1].driver_log.written + .[-1].driver_log.not_written == 20000
    and .[-1].driver_log.written == ([.[] | select(.ev=="driver_log")] | length)'
check "flood: the trace stays small" test "$(stat -c %s "$T")" -lt 65536

# 8. fork: the child's messages go to the child's trace
run fork -- fork
check "fork: output unchanged" same fork
child=$(grep -l '"forked_from"' "$WORK/fork"/*.jsonl)
parent=$(grep -L '"forked_from"' "$WORK/fork"/*.jsonl)
check "fork: the child's trace (it ends in _exit) has its 5 messages, the 209 from cuLibraryGetKernel last" jqt "$child" '
    [.[] | select(.ev=="driver_log")] | length == 5 and .[4].status == 209 and .[4].fn == "cuLibraryGetKernel"'
check "fork: the parent's has its 222 and not the child's 209" jqt "$parent" '
    any(.[]; .ev=="driver_log" and .status==222) and all(.[]; .ev != "driver_log" or .status != 209)'

# 9. what the driver says about the shim's own questions is not the program's
run nodev CGTEST_NO_DEVICE=1 -- arch
T=$(trace_of "$WORK/nodev")
check "nodev: cuInit's 100 from the log is tied to context_failed" jqt "$T" '
    (first(.[] | select(.ev=="driver_log" and .fn=="cuInit")) | .seq) as $s
    | first(.[] | select(.ev=="context_failed")) | .driver_log == [$s] and .status == 100'
check "nodev: the shim's own probes' messages are counted, not written" jqt "$T" '
    all(.[]; .ev != "driver_log" or .fn == "cuInit") and .[-1].driver_log.own >= 1'
run early -- early
check "early: a failure before cuInit is the program's: written" jqt "$(trace_of "$WORK/early")" '
    first(.[] | select(.ev=="driver_log")) | .fn == "cuDeviceGetCount" and .status == 3'
finish
