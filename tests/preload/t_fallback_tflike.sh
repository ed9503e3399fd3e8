# t_fallback_tflike.sh - the two GPU fallback scenarios of tests/gpu/run.sh, on the
# test doubles: examples/conv_tflike as older TensorFlow (cuDNN's first _v7
# algorithm with exactly its workspace; the GPU preallocated) fails without the
# fallback and completes with it, with the unconstrained run's results.
source "$(dirname "$0")/../lib.sh"
D=$DOUBLES
EX=$BUILD_DIR/examples/conv_tflike
[ -x "$EX" ] || skip_all "examples not built"
unset LD_LIBRARY_PATH
export CONVGUARD_QUIET=1
base=(env LD_LIBRARY_PATH=$D/cudnn9:$D/cudart:$D/cuda CG_TF_FIRST_ALGO=1 CG_CONV_SHAPE=2,3,8,8,4,3,3)
results() { grep -E '^  result' "$1"; }
run() { # NAME ENV... : with the shim
    local n=$1; shift
    "${base[@]}" "$@" CONVGUARD_DIR=$WORK/$n LD_PRELOAD=$SHIM "$EX" > "$WORK/$n.out" 2>&1
    echo $? > "$WORK/$n.rc"
}
"${base[@]}" "$EX" > "$WORK/ref.out" 2>&1
check "reference run (no shim, no pressure) succeeds" test $? = 0
check "reference run: three result checksums (forward, backward data, backward filter)" test "$(results "$WORK/ref.out" | wc -l)" = 3

# 1. preallocated after cudnnCreate, 100 MiB left: the first algorithm wants 512 MiB
run bad CG_TF_LEAVE_MB=100
run on CG_TF_LEAVE_MB=100 CONVGUARD_FALLBACK=1
check "v7: without fallback 'No algorithm worked' (rc 3)" bash -c "[ \$(cat $WORK/bad.rc) = 3 ] && grep -q 'No algorithm worked' $WORK/bad.out"
check "v7: with fallback rc 0, an algorithm needing no workspace first" bash -c "[ \$(cat $WORK/on.rc) = 0 ] && grep -q 'first algorithm 0, workspace 0 bytes: ok' $WORK/on.out"
check "v7: results equal the reference" test "$(results "$WORK/on.out")" = "$(results "$WORK/ref.out")"
check "v7: three reorder_algos fallback events" jqt "$(trace_of "$WORK/on")" '[.[] | select(.ev=="fallback" and .action=="reorder_algos")] | length == 3'

# 2. preallocated before cudnnCreate, 16 MiB left; only the reserve may act (huge limit)
run rbad CG_TF_PREALLOC_FIRST=1 CG_TF_LEAVE_MB=16
run ron CG_TF_PREALLOC_FIRST=1 CG_TF_LEAVE_MB=16 CONVGUARD_FALLBACK=1 CONVGUARD_RESERVE_MB=600 CONVGUARD_WORKSPACE_LIMIT_MB=1000000
check "reserve: without it rc 3" test "$(cat "$WORK/rbad.rc")" = 3
check "reserve: with CONVGUARD_RESERVE_MB=600 rc 0 and the reference's results" bash -c "[ \$(cat $WORK/ron.rc) = 0 ] && [ \"\$(grep -E '^  result' $WORK/ron.out)\" = \"\$(grep -E '^  result' $WORK/ref.out)\" ]"
check "reserve: a reserve_headroom fallback event, no reorder" jqt "$(trace_of "$WORK/ron")" 'any(.[]; .ev=="fallback" and .action=="reserve_headroom") and all(.[]; .action != "reorder_algos")'
finish
