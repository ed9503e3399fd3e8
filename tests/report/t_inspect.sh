# t_inspect.sh - `convguard inspect PID` on live processes: one that mapped
# the real cuDNN (its version read from the files, nothing run in it), one
# with cuDNN parts of two versions (the real dispatcher and the test double's
# graph part), one with two copies of the real libcudnn.so.9, one with no CUDA
# library, and each bad PID: the words, the JSON fields and the exit codes
# (0 ok, 1 problems, 2 usage, 3 not a pid, 4 no such process, 5 permission,
# 6 no CUDA library).
source "$(dirname "$0")/../lib.sh"
export COLUMNS=1000 # lines whole, for the greps below; the width itself: t_width.sh
CG=$BUILD_DIR/convguard
REAL=${CG_REAL_CUDA_LIB:-/usr/local/cuda/lib}
PY=$(command -v python3) || skip_all "no python3"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT
# live PYCODE...: a python3 that runs the code, then sleeps; waits until it is ready
live() {
    rm -f "$WORK/ready"
    "$PY" -c "$1
open('$WORK/ready', 'w').close()
import time; time.sleep(60)" &
    PIDS+=($!)
    LIVE=$!
    for _ in $(seq 100); do [ -e "$WORK/ready" ] && return 0; sleep 0.05; done
    return 1
}
rc_of() { "$@" >/dev/null 2>&1; echo $?; }

# 1. no CUDA library at all
live "import json"
out=$("$CG" inspect $LIVE 2>"$WORK/err"); rc=$?
check "no CUDA: exit status 6" test $rc = 6
check "no CUDA: stderr says so" grep -q "process $LIVE has no CUDA library mapped" "$WORK/err"
check "no CUDA: the text says none are mapped" grep -q "CUDA libraries mapped now: none" <<<"$out"
check "no CUDA: the shim is said not to be preloaded" grep -q "convguard: not preloaded" <<<"$out"
"$CG" inspect --json $LIVE >"$WORK/j" 2>/dev/null
check "no CUDA: JSON libraries empty, exit_status 6, pid" jq -e ".libraries == [] and .exit_status == 6 and .pid == $LIVE" "$WORK/j"
check "no CUDA: GPU memory unknown here (no NVML), with the reason" jq -e '.gpu_memory.known == false and (.gpu_memory.why | test("libnvidia-ml"))' "$WORK/j"

# 2. bad PIDs
check "not a number: exit 3" test "$(rc_of "$CG" inspect abc)" = 3
check "not a number: the message names it" bash -c "'$CG' inspect 12x 2>&1 | grep -q \"'12x' is not a process id\""
check "zero: exit 3" test "$(rc_of "$CG" inspect 0)" = 3
check "negative: exit 3" test "$(rc_of "$CG" inspect -- -5)" = 3
check "no PID: usage, exit 2" test "$(rc_of "$CG" inspect)" = 2
"$PY" -c 'pass' & gone=$!; wait $gone
check "a process that exited: exit 4" test "$(rc_of "$CG" inspect $gone)" = 4
check "a process that exited: the message" bash -c "'$CG' inspect $gone 2>&1 | grep -q 'no process $gone'"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    cp "$CG" "$WORK/cg" && chmod 755 "$WORK" "$WORK/cg"
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$WORK/cg" inspect $LIVE 2>&1); rc=$?
    check "another user's process: exit 5" test $rc = 5
    check "another user's process: the message says whose and what to do" grep -q "belongs to another user (uid 0).*sudo" <<<"$out"
elif [ -r /proc/1/status ] && ! [ -r /proc/1/environ ]; then
    check "another user's process (pid 1): exit 5" test "$(rc_of "$CG" inspect 1)" = 5
else
    echo "  (cannot make another user's process here: permission check skipped)"
fi

# 2b. root without CAP_SYS_PTRACE (a container's default, issue 26 item 14): the
# kernel's real reason, not "another user (uid 0)".  Whether the kernel refuses
# depends on it (and on its security modules): each case first asks the kernel
# itself (head of the map), then checks inspect's words where it refused and
# that inspect read the process where it did not.
NOPTRACE=(setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace)
# denied CASE PID WORDS [PREFIX...]: the map cannot be read: exit 5, WORDS said, never "another user (uid 0)"
denied() {
    local name=$1 pid=$2 words=$3 out rc; shift 3
    if "$@" head -c1 /proc/$pid/maps >/dev/null 2>&1; then
        check "$name: the kernel lets it read the map, and so does inspect (exit 6: no CUDA)" \
            test "$(rc_of "$@" "$CG" inspect $pid)" = 6
        return
    fi
    out=$("$@" "$CG" inspect $pid 2>&1); rc=$?
    check "$name: exit 5" test $rc = 5
    check "$name: says why ($words)" grep -q -- "$words" <<<"$out"
    check "$name: not 'another user (uid 0)'" bash -c '! grep -q "another user (uid 0)" <<<"$1"' _ "$out"
}
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && "${NOPTRACE[@]}" true 2>/dev/null &&
   [ $(( (0x$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 19) & 1 )) = 1 ]; then
    # pid 1: root, with capabilities a container's root lacks
    denied "pid 1 from root without CAP_SYS_PTRACE" 1 'holds capabilities convguard lacks.*without CAP_SYS_PTRACE.*--cap-add=SYS_PTRACE' "${NOPTRACE[@]}"
    denied "pid 1 from root with CAP_SYS_PTRACE" 1 'refused although this process has CAP_SYS_PTRACE (a security module'
    live "import json"
    denied "a root process with more capabilities" $LIVE 'holds capabilities convguard lacks' "${NOPTRACE[@]}"
    # the same capabilities as the reader, but not dumpable
    rm -f "$WORK/ready"
    "${NOPTRACE[@]}" "$PY" -c "import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
open('$WORK/ready', 'w').close()
time.sleep(60)" & PIDS+=($!); nodump=$!
    for _ in $(seq 100); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
    denied "a process that is not dumpable" $nodump 'is not dumpable.*PR_SET_DUMPABLE.*without CAP_SYS_PTRACE' "${NOPTRACE[@]}"
    # another uid really
    setpriv --reuid=1234 --regid=1234 --clear-groups sleep 60 & PIDS+=($!); other=$!
    for _ in $(seq 100); do [ "$(stat -c %u /proc/$other 2>/dev/null)" = 1234 ] && break; sleep 0.05; done
    denied "another uid, from root without CAP_SYS_PTRACE" $other \
        'belongs to another user (uid 1234) and convguard runs without CAP_SYS_PTRACE' "${NOPTRACE[@]}"
else
    echo "  (not root with CAP_SYS_PTRACE and setpriv: capability checks skipped)"
fi

[ -e "$REAL/libcudnn.so.9" ] && [ -e "$REAL/libcudnn_graph.so.9" ] ||
    { echo "  (no real cuDNN 9 in $REAL: live cuDNN checks skipped)"; finish; exit $?; }

# 3. the real cuDNN, loaded by its bare name as programs do
export LD_LIBRARY_PATH=$REAL
live "import ctypes; ctypes.CDLL('libcudnn.so.9'); ctypes.CDLL('libcudart.so.13')"
unset LD_LIBRARY_PATH
real_dir=$(dirname "$(readlink -f "$REAL/libcudnn.so.9")")
out=$("$CG" inspect $LIVE 2>&1); rc=$?
check "real cuDNN: exit 0 (no problem)" test $rc = 0
check "real cuDNN: libcudnn.so.9 9.19.0 and, on the next line, its folder" \
    bash -c "grep -A1 -E 'cuDNN +libcudnn.so.9 +9\.19\.0' <<<\"\$1\" | grep -qE '^ +in $real_dir'" _ "$out"
check "real cuDNN: the CUDA runtime 13.0 listed" grep -qE "CUDA runtime +libcudart.so.13 +13\.0" <<<"$out"
check "real cuDNN: LD_LIBRARY_PATH of the process shown" grep -q "LD_LIBRARY_PATH=\"$REAL\"" <<<"$out"
"$CG" inspect --json $LIVE >"$WORK/j"
check "real cuDNN JSON: version 91900, file, dir, a version source" jq -e --arg d "$real_dir" 'any(.libraries[]; .file == "libcudnn.so.9" and .version == 91900 and .dir == $d and .kind == "cudnn" and (.version_source | IN("data", "file_name", "wheel", "folder")))' "$WORK/j"
check "real cuDNN JSON: problems 0, findings [], env, argv" jq -e '.problems == 0 and .findings == [] and .env.LD_LIBRARY_PATH != null and (.argv | length) == 3' "$WORK/j"
check "real cuDNN: nothing ran in it (it mapped no part that cudnnGetVersion would load)" bash -c "! grep -q libcudnn_graph /proc/$LIVE/maps"
# the HTML page of the snapshot
check "real cuDNN: --html writes a page" bash -c "'$CG' inspect --html '$WORK/p.html' $LIVE >/dev/null && grep -q '<html' '$WORK/p.html'"

# 4. parts of two versions: the real dispatcher (9.19.0) and a graph part
#    whose file is named 9.1.0 (the test double, under its real name)
if [ -e "$DOUBLES/cudnn9/libcudnn_graph.so.9" ]; then
    mkdir -p "$WORK/old" && cp "$DOUBLES/cudnn9/libcudnn_graph.so.9" "$WORK/old/libcudnn_graph.so.9.1.0"
    ln -s libcudnn_graph.so.9.1.0 "$WORK/old/libcudnn_graph.so.9"
    live "import ctypes; ctypes.CDLL('$REAL/libcudnn.so.9'); ctypes.CDLL('$WORK/old/libcudnn_graph.so.9')"
    out=$("$CG" inspect $LIVE 2>&1); rc=$?
    check "two versions: exit 1 (a problem)" test $rc = 1
    check "two versions: the part's own version from its file name, in its folder" bash -c "grep -A1 -E 'libcudnn_graph.so.9.1.0 +9\.1\.0 \(its file name\)' <<<\"\$1\" | grep -qE '^ +in $WORK/old'" _ "$out"
    check "two versions: the report's rule says two installs are mixed" grep -q "two cuDNN installs are mixed in one process" <<<"$out"
    flat=$(tr -s ' \n' '  ' <<<"$out")
    check "two versions: the cause names both versions" grep -qF "(9.19.0) took its part $WORK/old/libcudnn_graph.so.9.1.0 (9.1.0)" <<<"$flat"
    "$CG" inspect --json $LIVE >"$WORK/j"
    check "two versions JSON: rule cudnn_sublib_mismatch, problems 1" jq -e '.problems == 1 and [.findings[].rule] == ["cudnn_sublib_mismatch"]' "$WORK/j"
else
    fail "two versions: the test doubles are not built (make doubles)"
fi

# 5. two copies of the real libcudnn.so.9
mkdir -p "$WORK/copy" && cp "$REAL/libcudnn.so.9" "$WORK/copy/"
live "import ctypes; ctypes.CDLL('$REAL/libcudnn.so.9'); ctypes.CDLL('$WORK/copy/libcudnn.so.9')"
"$CG" inspect --json $LIVE >"$WORK/j"; rc=$?
check "two copies: exit 1" test $rc = 1
check "two copies: rule cudnn_multiple_copies naming both files" jq -e --arg c "$WORK/copy/libcudnn.so.9" 'any(.findings[]; .rule == "cudnn_multiple_copies" and (.cause | contains($c)))' "$WORK/j"

# 6. preloaded shim: where its trace is
mkdir -p "$WORK/logs"
export CONVGUARD_DIR=$WORK/logs LD_PRELOAD=$SHIM LD_LIBRARY_PATH=$REAL CONVGUARD_QUIET=1
live "import ctypes; ctypes.CDLL('libcudnn.so.9')"
unset CONVGUARD_DIR LD_PRELOAD LD_LIBRARY_PATH CONVGUARD_QUIET
"$CG" inspect --json $LIVE >"$WORK/j"
[ -n "${CG_DEBUG:-}" ] && jq .convguard "$WORK/j" && ls -la "$WORK/logs"
check "shim: preloaded, its trace file found in CONVGUARD_DIR" jq -e --arg d "$WORK/logs" --arg tail "-$LIVE.jsonl" '.convguard.preloaded and .convguard.trace_dir == $d and (.convguard.trace | startswith($d + "/") and endswith($tail))' "$WORK/j"
check "shim: the trace named exists and is this process's" bash -c "f=\$(jq -r .convguard.trace '$WORK/j'); [ -e \"\$f\" ] && head -1 \"\$f\" | jq -e '.pid == $LIVE'"
check "shim: the text says where the trace is" grep -qF "its trace: $WORK/logs/" <<<"$("$CG" inspect $LIVE | tr -s ' \n' '  ')"

# 7. a framework that mapped CUDA libraries but not the driver (PyTorch-like names)
mkdir -p "$WORK/sp/torch/lib" && cp "$REAL/libcudart.so.13" "$WORK/sp/torch/lib/" 
cc -shared -fPIC -o "$WORK/sp/torch/lib/libtorch_cuda.so" -x c - <<<'int torch_cuda_marker;' 2>/dev/null
live "import ctypes; ctypes.CDLL('$WORK/sp/torch/lib/libcudart.so.13'); ctypes.CDLL('$WORK/sp/torch/lib/libtorch_cuda.so')"
"$CG" inspect --json $LIVE >"$WORK/j"
check "framework without driver: PyTorch, CUDA build" jq -e 'any(.frameworks[]; .name == "torch" and .build == "cuda")' "$WORK/j"
check "framework without driver: rule gpu_not_used" jq -e '[.findings[].rule] == ["gpu_not_used"] and .exit_status == 1' "$WORK/j"
# GPU memory from NVML (the test double: 1024 MiB, 300 MiB held by the inspected process itself):
# free, total and this process's share each in its own place
live "import ctypes; ctypes.CDLL('$REAL/libcudnn.so.9')"
NV="env LD_LIBRARY_PATH=$DOUBLES/nvml CGTEST_GPU_TOTAL_MB=1024 CGTEST_GPU_HELD_MB=300 CGTEST_HOLDER_PID=$LIVE"
out=$($NV "$CG" inspect $LIVE 2>/dev/null)
check "NVML: the GPU line says free of total, then this process's share" \
    grep -q "GPU 0[^;]*: 724 MiB of 1.0 GiB free, this process 300 MiB" <<<"$out"
$NV "$CG" inspect --json $LIVE >"$WORK/j" 2>/dev/null
check "NVML: JSON gpu_memory known, bytes_held 300 MiB, the GPU's free 724 MiB" \
    jq -e '.gpu_memory.known and .gpu_memory.bytes_held == 314572800 and .gpu_memory.gpus[0].mem.free == 759169024 and .gpu_memory.gpus[0].this_process_bytes == 314572800' "$WORK/j"
# a kernel thread (an empty memory map): no crash (it was a double free), no diagnosis of a GPU it never needed
KT=$(for d in /proc/[0-9]*; do [ -r "$d/maps" ] && [ -z "$(head -c1 "$d/maps" 2>/dev/null)" ] && [ "$(cat "$d/comm" 2>/dev/null)" = kthreadd ] && echo "${d#/proc/}"; done 2>/dev/null | head -1)
if [ -n "$KT" ]; then
    "$CG" inspect "$KT" >"$WORK/kt" 2>&1; rc=$?
    check "kernel thread $KT: exit 6 (no CUDA library), no abort" test $rc = 6
    check "kernel thread: says it has no memory map, and \"no CUDA library mapped\" (exit 6), never \"no problem found\"" \
        bash -c "grep -q 'a kernel thread: no memory map' '$WORK/kt' && grep -q 'running now: no CUDA library mapped' '$WORK/kt'"
else
    echo "  (no kthreadd visible here: the kernel-thread case not checked)"
fi
# a process with no framework and no CUDA library: nothing to diagnose
live "import json"
"$CG" inspect --json $LIVE >"$WORK/j" 2>/dev/null
check "no framework, no CUDA: no finding (not 'the GPU was never used')" jq -e '.findings == [] and .problems == 0' "$WORK/j"

# ---- issue 29: a CPU-only TensorFlow on a machine without a driver: the fix that works there, the build read
mkdir -p "$WORK/tf/tensorflow/python/platform"
cp "$DOUBLES/cudart/libcudart.so.13" "$WORK/tf/tensorflow/libcudart.so.13"
cc -shared -fPIC -o "$WORK/tf/tensorflow/python/_pywrap_tensorflow_internal.so" -x c - <<<'int tf_marker;' 2>/dev/null
printf "build_info = {'cuda_version': '', 'is_cuda_build': False, 'is_rocm_build': False}\n" \
    > "$WORK/tf/tensorflow/python/platform/build_info.py"
live "import ctypes; ctypes.CDLL('$WORK/tf/tensorflow/libcudart.so.13'); ctypes.CDLL('$WORK/tf/tensorflow/python/_pywrap_tensorflow_internal.so')"
TFPID=$LIVE
env -u LD_LIBRARY_PATH "$CG" inspect --json $TFPID >"$WORK/j" 2>/dev/null
check "TensorFlow: its build read from build_info.py (cpu), not '?'" jq -e 'any(.frameworks[]; .name == "tensorflow" and .build == "cpu")' "$WORK/j"
check "no driver on the machine: gpu_not_used's fix is the driver's (as doctor says), not tf.device" \
    jq -e '[.findings[] | select(.rule == "gpu_not_used") | .fix | test("install the NVIDIA driver") and (test("tf.device") | not)] == [true]' "$WORK/j"
# the same process where a driver loads (the double): the CPU-only build is the fix
env LD_LIBRARY_PATH=$DOUBLES/cuda "$CG" inspect --json $TFPID >"$WORK/j" 2>/dev/null
check "a driver here, a CPU-only TensorFlow: install its CUDA build" \
    jq -e '[.findings[] | select(.rule == "gpu_not_used") | .fix | test("tensorflow\\[and-cuda\\]")] == [true]' "$WORK/j"
# ---- issue 29: several PIDs (as `$(pgrep -f train.py)` gives), --pid, convguard's own processes skipped
live "import json"
A=$LIVE
"$CG" inspect $A $TFPID >"$WORK/o2" 2>"$WORK/err"; rc=$?
check "two PIDs: each inspected in turn" bash -c "grep -q 'pid $A ' '$WORK/o2' && grep -q 'pid $TFPID ' '$WORK/o2'"
check "two PIDs: exit 1 (one has a problem)" test $rc = 1
check "--pid N: as N (py-spy's spelling)" bash -c "'$CG' inspect --pid $A 2>/dev/null | grep -q 'pid $A '"
"$CG" inspect --json $A $TFPID >"$WORK/j2" 2>/dev/null
check "two PIDs --json: an array of two" jq -e -s '.[0] | length == 2 and .[0].pid > 0' "$WORK/j2"
check "no PID at all (an empty \$(pgrep ...)): a usage error that says so" \
    bash -c "'$CG' inspect 2>&1 | grep -q 'no PID given'; [ \${PIPESTATUS[0]} = 2 ]"
"$CG" run --quiet --dir "$WORK/runlogs" -- "$PY" -c "import time; time.sleep(30)  # cg-inspect-marker" 2>/dev/null &
PIDS+=($!)
for _ in $(seq 100); do [ "$(pgrep -f cg-inspect-marker | wc -l)" -ge 3 ] && break; sleep 0.05; done
# the program itself is inspected only once it has started (the shim mapped): before that,
# on a loaded machine, /proc shows it still exec'ing (CI's one failure of the check below)
for _ in $(seq 200); do
    for p in $(pgrep -f cg-inspect-marker); do grep -qs libconvguard "/proc/$p/maps" && break 2; done
    sleep 0.05
done
"$CG" inspect $(pgrep -f cg-inspect-marker) >"$WORK/o" 2>"$WORK/err"
check "under convguard run: pgrep finds 3 (run, its relay, the program)" test "$(pgrep -f cg-inspect-marker | wc -l)" = 3
check "... run and its signal relay skipped, each with a note" test "$(grep -c 'skipped: convguard' "$WORK/err")" = 2
check "... the program inspected" test "$(grep -c '^convguard inspect: pid' "$WORK/o")" = 1
finish
