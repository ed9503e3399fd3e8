# t_fallback_legacy.sh - CONVGUARD_FALLBACK=1 on cuDNN's legacy convolution API (fallback_cudnn.c),
# on the test doubles with client_fallback (tests/clients/client_fallback.c): each path fails without
# the fallback, completes with it, and computes the same convolution as an unconstrained run (the
# doubles really compute it on the CPU).
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/fallback_lib.sh"
C=$CLIENTS/client_fallback
FB_REF_ENV="LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/nvml"

# 1. Get*_v7: cuDNN's first choice needs 512 MiB, ~16 MiB are free: the fitting algorithm comes first.
#    The program asks for one result only: the fallback must reach the algorithm needing no workspace.
FB_BAD_ENV="CGTEST_GPU_HELD_MB=1000" FB_ON_ENV=""
scenario v7 reorder_algos "$C" v7
check "v7: algorithm 2 (512 MiB) asked, algorithm 0 (no workspace) given, limit from free memory" jqt "$T" '
    map(select(.ev=="fallback")) | .[0] | .fn == "cudnnGetConvolutionForwardAlgorithm_v7"
    and .algo_asked == 2 and .algo_given == 0 and .asked == 536870912 and .given == 0
    and .limit_source == "free_memory" and .limit < 16777216 and .retries == 1'
check "v7: the program ran algorithm 0" grep -q "^cudnnConvolutionForward(algo 0, workspace 0) = 0" "$WORK/v7.on"
check "v7: conv_algos shows the order the program got" jqt "$T" '
    map(select(.ev=="conv_algos")) | .[0].algos | map(.algo) == [0]'

# 1b. all three asked for, CONVGUARD_WORKSPACE_LIMIT_MB=100: algorithm 1 (64 MiB) first, order kept otherwise
mkdir -p "$WORK/v7all"
env $FB_REF_ENV CLIENT_REQ=3 CONVGUARD_FALLBACK=1 CONVGUARD_WORKSPACE_LIMIT_MB=100 CONVGUARD_DIR="$WORK/v7all" \
    LD_PRELOAD="$SHIM" "$C" v7 >"$WORK/v7all.out" 2>/dev/null
check "v7 limit: the list the program got is 1, 0, 2 (fitting ones first, cuDNN's order otherwise)" \
    grep -qz "algo 1 status 0 workspace 67108864.*algo 0 status 0 workspace 0.*algo 2 status 0 workspace 536870912" "$WORK/v7all.out"
check "v7 limit: limit_source CONVGUARD_WORKSPACE_LIMIT_MB, 100 MiB, no extra call" jqt "$(trace_of "$WORK/v7all")" '
    map(select(.ev=="fallback")) | length == 1 and .[0].limit == 104857600
    and .[0].limit_source == "CONVGUARD_WORKSPACE_LIMIT_MB" and .[0].retries == 0 and .[0].algo_given == 1'

# 2. Find (cuDNN allocates): fails with ALLOC_FAILED (4003) -> answered from the filtered heuristics
FB_BAD_ENV="CGTEST_GPU_HELD_MB=1000 CGTEST_FIND_UPFRONT=1" FB_ON_ENV=""
scenario find heuristics_instead_of_find "$C" find
check "find: without fallback Find returned 4003" grep -q "^Find = 4003" "$WORK/find.bad"
check "find: with it, status 0 and algorithm 0 first" grep -qz "Find = 0, returned 3.  algo 0 status 0 workspace 0" "$WORK/find.on"
check "find: conv_algos records the status the program got (0)" jqt "$T" '
    map(select(.ev=="conv_algos" and .api=="find")) | .[0].status == 0'

# 3. FindEx: a 256 MiB workspace and cuDNN failing above 32 MiB -> halved 3 times, same buffer
FB_BAD_ENV="CGTEST_FINDEX_MAX_WS_MB=32" FB_ON_ENV=""
scenario findex smaller_workspace "$C" findex
check "findex: asked 256 MiB, given 32 MiB after 3 retries" jqt "$T" '
    map(select(.ev=="fallback")) | .[0] | .asked == 268435456 and .given == 33554432 and .retries == 3
    and .fn == "cudnnFindConvolutionForwardAlgorithmEx"'
check "findex: conv_algos shows the workspace of the try that worked" jqt "$T" '
    map(select(.ev=="conv_algos" and .api=="find_ex")) | .[0].workspace_limit == 33554432 and .[0].status == 0'
# halving down to zero: cuDNN failing for any workspace above 0
mkdir -p "$WORK/findex0"
env $FB_REF_ENV CGTEST_FINDEX_MAX_WS_MB=0 CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/findex0" LD_PRELOAD="$SHIM" \
    "$C" findex >"$WORK/findex0.out" 2>/dev/null
check "findex to zero: completes with the workspace given as 0" jqt "$(trace_of "$WORK/findex0")" '
    map(select(.ev=="fallback")) | .[0] | .given == 0 and .outcome == "ok" and .retries == 9'
check "findex to zero: same result" diff <(grep '^y sum' "$WORK/findex.ref") <(grep '^y sum' "$WORK/findex0.out")
# never succeeding: the program gets the last status, the event says so
mkdir -p "$WORK/findexno"
env $FB_REF_ENV CGTEST_FINDEX_MAX_WS_MB=0 CGTEST_ALGO_WS_MB=8,64,512 CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/findexno" \
    LD_PRELOAD="$SHIM" "$C" findex >"$WORK/findexno.out" 2>/dev/null
check "findex hopeless: the program still fails (exit 3), the event's outcome is the status" eval "
    grep -q '^exit 3' '$WORK/findexno.out' && jq -e -s 'map(select(.ev==\"fallback\")) | .[0].outcome == 4003
    and .[0].outcome_name == \"CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED\"' '$(trace_of "$WORK/findexno")'"

# 4. execution with a workspace too small for the algorithm (BAD_PARAM) -> once more with algorithm 0
# (the reference: the same algorithm with the 512 MiB it needs)
FB_REF_ENV="LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/nvml CLIENT_WS_MB=512" FB_BAD_ENV="CLIENT_WS_MB=64" FB_ON_ENV=""
scenario exec other_algorithm "$C" exec
FB_REF_ENV="LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/nvml"
check "exec: algo 2 asked (needs 512 MiB), algo 0 given; no conv_exec_failed since it was rescued" jqt "$T" '
    (map(select(.ev=="fallback")) | .[0] | .algo_asked == 2 and .algo_given == 0 and .asked == 536870912
     and (.why | test("BAD_PARAM")))
    and (map(select(.ev=="conv_exec_failed")) | length == 0)'
# the same after a first execution, so that the failing one goes through the entry's fast path
# (its failure path reads the stack arguments where the program put them)
mkdir -p "$WORK/execwarm"
env $FB_REF_ENV CLIENT_WS_MB=64 CLIENT_WARM=1 CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/execwarm" LD_PRELOAD="$SHIM" \
    "$C" exec >"$WORK/execwarm.out" 2>/dev/null
check "exec after a warm-up: algo 2 asked, algo 0 given, same result" eval "
    grep -q '^warm-up = 0' '$WORK/execwarm.out' && grep -q '^exit 0' '$WORK/execwarm.out' &&
    diff <(grep '^y sum' '$WORK/exec.ref') <(grep '^y sum' '$WORK/execwarm.out') >/dev/null &&
    jq -e -s '(map(select(.ev==\"fallback\")) | .[0] | .algo_asked == 2 and .algo_given == 0
    and .asked == 536870912 and .given == 0 and (.why | test(\"67108864 were given\")))
    and (map(select(.ev==\"conv_exec_failed\")) | length == 0) and .[-1].calls.cudnnConvolutionForward == 2' '$(trace_of "$WORK/execwarm")'"
# a callback re-entering cudnnConvolutionForward on the same thread while the program's own call is
# inside cuDNN (a profiler's): the inner call is its own (rescued), and the outer one's failure path
# sees that the thread-local it would read belongs to the inner call, so it steps aside (no retry,
# no arguments read from it): the program gets what it would have got without the shim
mkdir -p "$WORK/reenter"
env $FB_REF_ENV CLIENT_WS_MB=64 CLIENT_WARM=1 CLIENT_REENTER=1 "$C" exec >"$WORK/reenter.plain" 2>/dev/null
env $FB_REF_ENV CLIENT_WS_MB=64 CLIENT_WARM=1 CLIENT_REENTER=1 CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/reenter" \
    LD_PRELOAD="$SHIM" "$C" exec >"$WORK/reenter.out" 2>/dev/null
check "re-entered on the same thread: the callback ran, the outer call still fails as without the shim (exit 3)" eval "
    grep -q '^re-entering callback set' '$WORK/reenter.out' && grep -q '^exit 3' '$WORK/reenter.plain' &&
    grep -q '^exit 3' '$WORK/reenter.out'"
check "re-entered: the inner call rescued (one fallback event), the outer one a call_failed, no retry for it" jqt "$(trace_of "$WORK/reenter")" '
    (map(select(.ev=="fallback")) | length == 1) and
    (map(select(.ev=="call_failed" and .fn=="cudnnConvolutionForward" and .status==2000)) | length == 1) and
    .[-1].calls.cudnnConvolutionForward == 3'
# an algorithm that cannot run for another reason is left alone
mkdir -p "$WORK/execbad"
env $FB_REF_ENV CLIENT_ALGO=7 CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/execbad" LD_PRELOAD="$SHIM" "$C" exec \
    >"$WORK/execbad.out" 2>/dev/null
check "exec, not for workspace (algo 7 unsupported): no retry, no fallback event, conv_exec_failed" jqt "$(trace_of "$WORK/execbad")" '
    (map(select(.ev=="fallback")) | length == 0) and (map(select(.ev=="conv_exec_failed")) | length == 1)'

# 5. the TensorFlow-like example, healthy, with CONVGUARD_FALLBACK=1: nothing to rescue, nothing changes
EX=$BUILD_DIR/examples/conv_tflike
if [ -x "$EX" ]; then
    L="LD_LIBRARY_PATH=$DOUBLES/cudnn9:$DOUBLES/cudart:$DOUBLES/cuda:$DOUBLES/nvml CG_CONV_SHAPE=2,4,8,8,4,3,3"
    env $L "$EX" >"$WORK/tf.plain" 2>/dev/null
    mkdir -p "$WORK/tf"
    env $L CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/tf" LD_PRELOAD="$SHIM" "$EX" >"$WORK/tf.fb" 2>/dev/null
    check "healthy conv_tflike with fallback on: identical output, no fallback event" eval "
        diff '$WORK/tf.plain' '$WORK/tf.fb' && jq -e -s 'map(select(.ev==\"fallback\")) | length == 0' '$(trace_of "$WORK/tf")'"
fi
finish
