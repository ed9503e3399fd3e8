# t_fallback_graph.sh - CONVGUARD_FALLBACK=1 with CONVGUARD_WORKSPACE_LIMIT_MB on the graph API: an
# execution plan whose workspace (read with the real cudnnBackendGetAttribute after its real Finalize)
# is above the limit is refused with CUDNN_STATUS_NOT_SUPPORTED, and the program takes its next plan.
# client_graph (dlopen + dlsym, like JAX/TF) and client_graph_plt (PLT, like PyTorch) on the doubles.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/fallback_lib.sh"
FB_RESULT='^execute = '
FB_REF_ENV="LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/cudart CLIENT_CUDNN=$DOUBLES/cudnn9/libcudnn.so.9"
FB_REF_ENV="$FB_REF_ENV CGTEST_PLAN_RULES=0:ws=512,1:ws=256,2:ws=0,3:ws=16"
# constrained: a workspace above 100 MiB cannot be allocated (the program gives up, as on a full GPU)
FB_BAD_ENV="CLIENT_WS_MAX_MB=100 CONVGUARD_WORKSPACE_LIMIT_MB=64"
FB_ON_ENV=""
for c in client_graph client_graph_plt; do
    # the unconstrained reference may allocate anything
    scenario "$c" plan_refused "$CLIENTS/$c" conv
    check "$c: two plans refused (512 and 256 MiB), plan 2 chosen" eval "
        grep -q '^chosen plan 2' '$WORK/$c.on' && grep -q '^finalize plan 0 = 3000' '$WORK/$c.on' &&
        jq -e -s 'map(select(.ev==\"fallback\")) | map(.asked) == [536870912, 268435456]
            and all(.[]; .limit == 67108864 and .fn == \"cudnnBackendFinalize\")' '$T'"
    check "$c: without fallback plan 0 was chosen and its workspace could not be had" \
        grep -q "^workspace 536870912 cannot be allocated" "$WORK/$c.bad"
done
# with the limit but without CONVGUARD_FALLBACK=1 nothing is refused
mkdir -p "$WORK/nofb"
env $FB_REF_ENV CONVGUARD_WORKSPACE_LIMIT_MB=64 CONVGUARD_DIR="$WORK/nofb" LD_PRELOAD="$SHIM" "$CLIENTS/client_graph" conv \
    >"$WORK/nofb.out" 2>/dev/null
check "limit set, fallback unset: plan 0 finalizes and is chosen" grep -q "^chosen plan 0" "$WORK/nofb.out"
# fallback on but no limit set: free memory does not refuse plans (a framework's pool hides its free space)
mkdir -p "$WORK/nolim"
env $FB_REF_ENV CGTEST_GPU_HELD_MB=1000 CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/nolim" LD_PRELOAD="$SHIM" \
    "$CLIENTS/client_graph" conv >"$WORK/nolim.out" 2>/dev/null
check "fallback without a limit: plans are not refused by free memory" grep -q "^chosen plan 0" "$WORK/nolim.out"
finish
