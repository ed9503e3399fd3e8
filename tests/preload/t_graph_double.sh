# t_graph_double.sh - the graph (backend) API layer against the test double:
# plans tried and refused (NOT_SUPPORTED, BAD_PARAM), the plan that ran and
# its workspace, every plan failing, execution failing for lack of memory,
# on the dlsym route (JAX/TF) and the PLT route (PyTorch).  The program's
# output, cuDNN's reasons included, must be the same with and without the shim.
source "$(dirname "$0")/../lib.sh"
export LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/cudart
export CLIENT_CUDNN=$DOUBLES/cudnn9/libcudnn.so.9
export CONVGUARD_QUIET=1
unset CGTEST_PLAN_RULES CGTEST_EXEC_ALLOC_MB CGTEST_GPU_HELD_MB CGTEST_HEUR_COUNT

# same_output NAME CLIENT ARGS...: runs it with and without the shim; trace in $WORK/NAME
same_output() {
    local name=$1; shift
    "$@" >"$WORK/$name.plain" 2>&1
    run_shim "$WORK/$name" "$@" >"$WORK/$name.shim" 2>&1
    check "$name: program output unchanged by the shim" cmp "$WORK/$name.plain" "$WORK/$name.shim"
    check "$name: trace valid, seq without gaps" traces_valid "$WORK/$name"
    T=$(trace_of "$WORK/$name")
}
plan_ev='map(select(.ev=="graph_plan"))'

# ---- default: heuristics give 4 configs; 0 not supported, 1 bad param, 2 finalizes (256 MiB)
same_output dlsym "$CLIENTS/client_graph" conv
check "dlsym: the program saw both refusals" grep -q "finalize plan 1 = 2000 reason: engine 1: bad parameter" "$WORK/dlsym.plain"
check "dlsym: one graph_plan for three executions (nothing per step)" jqt "$T" "$plan_ev | length == 1"
check "dlsym: graph_plan names engine 2, its workspace, the heuristics rank" jqt "$T" \
    "$plan_ev | .[0] | .engine == 2 and .workspace == 268435456 and .heuristics_rank == 2 and .fn == \"cudnnBackendExecute\""
check "dlsym: graph_plan counts: 4 returned, 3 tried, 1 finalized, 1 not supported, 1 other" jqt "$T" \
    "$plan_ev | .[0] | .heuristics_returned == 4 and .plans_tried == 3 and .plans_finalized == 1 and .plans_not_supported == 1 and .plans_failed_other == 1 and .finalized_workspaces == [268435456]"
check "dlsym: graph_plan describes the convolution though the graph was destroyed before execution" jqt "$T" \
    "$plan_ev | .[0].ops == [{op:\"convolution_forward\",tensors:[{role:\"x\",dims:[2,3,7,7],dtype:\"CUDNN_DATA_FLOAT\",uid:120},{role:\"w\",dims:[4,3,3,3],dtype:\"CUDNN_DATA_FLOAT\",uid:119},{role:\"y\",dims:[2,4,4,4],dtype:\"CUDNN_DATA_FLOAT\",uid:121}],conv:{spatial_dims:2,pre_padding:[1,1],post_padding:[1,1],stride:[2,2],dilation:[1,1],mode:\"cross_correlation\",compute_type:\"CUDNN_DATA_FLOAT\"}}]"
check "dlsym: the BAD_PARAM plan is a graph_finalize_failed with cuDNN's reason and engine 1" jqt "$T" \
    '(map(select(.ev=="graph_plan"))[0].graph) as $g | map(select(.ev=="graph_finalize_failed")) | length == 1 and .[0].desc_type == "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR" and .[0].status == 2000 and .[0].status_name == "CUDNN_STATUS_BAD_PARAM" and .[0].reason == "engine 1: bad parameter (CGTEST_PLAN_RULES)" and .[0].engine == 1 and .[0].graph == $g'
check "dlsym: the NOT_SUPPORTED plan is counted, not written, not a failure" jqt "$T" \
    'map(select(.status == 3000)) | length == 0'
check "dlsym: exit: graph summary, the plan ran 3 times" jqt "$T" \
    '.[-1].graph | .graphs == 1 and .plans_finalized == 1 and .plans_not_supported == 1 and .plans_failed_other == 1 and .plans_executed == 1 and .untracked == 0 and .plans[0].executions == 3 and .plans[0].engine == 2'
check "dlsym: exit: failures counts the BAD_PARAM plan only" jqt "$T" '.[-1].failures == 1 and .[-1].fails.cudnnBackendFinalize == 2'

# ---- PLT route, the engine read back by the program (cudnn-frontend's plan tag)
CLIENT_TAG=1 same_output plt "$CLIENTS/client_graph_plt" conv
check "plt: route was the PLT" grep -q "route: plt" "$WORK/plt.plain"
check "plt: graph_plan as on the dlsym route" jqt "$T" \
    "$plan_ev | length == 1 and .[0].engine == 2 and .[0].workspace == 268435456 and .[0].plans_tried == 3"
check "plt: the program's GetLastErrorString calls went through the shim" jqt "$T" '.[-1].calls.cudnnGetLastErrorString == 3'
check "plt: the shim's read-backs left no reason behind" grep -qx 'last error at the end: ""' "$WORK/plt.shim"

# ---- engines built by hand by global index (no heuristics)
same_output manual "$CLIENTS/client_graph" manual
check "manual: graph_plan without heuristics" jqt "$T" \
    "$plan_ev | length == 1 and .[0].engine == 2 and .[0].heuristics_returned == 0 and .[0].heuristics_rank == null and .[0].plans_tried == 3"

# ---- every plan refused
CGTEST_PLAN_RULES="0:notsup,1:badparam,2:notsup,3:notsup" same_output allfail "$CLIENTS/client_graph" conv
check "allfail: graph_all_plans_failed once, as soon as every config was tried" jqt "$T" \
    'map(select(.ev=="graph_all_plans_failed")) | length == 1 and .[0].when == "every_config_tried" and .[0].plans_tried == 4 and .[0].plans_not_supported == 3 and .[0].plans_failed_other == 1 and .[0].plans_finalized == 0'
check "allfail: it names the last reason and the operation" jqt "$T" \
    'map(select(.ev=="graph_all_plans_failed"))[0] | .last_status_name == "CUDNN_STATUS_NOT_SUPPORTED" and .last_reason == "engine 3: not supported (CGTEST_PLAN_RULES)" and .ops[0].op == "convolution_forward"'
check "allfail: no graph_plan" jqt "$T" "$plan_ev | length == 0"
CGTEST_PLAN_RULES="0:notsup,1:notsup,2:notsup,3:notsup" same_output allfail_manual "$CLIENTS/client_graph" manual
check "allfail_manual: without heuristics, written when the graph is destroyed" jqt "$T" \
    'map(select(.ev=="graph_all_plans_failed")) | length == 1 and .[0].when == "graph_destroyed" and .[0].plans_not_supported == 4'

# ---- benchmark: every candidate finalized and run once, then the chosen one
CLIENT_ALL_PLANS=1 CGTEST_PLAN_RULES="0:ws=64,1:notsup,2:ws=256,3:ws=0" same_output bench "$CLIENTS/client_graph" conv
check "bench: one graph_plan per candidate that ran" jqt "$T" "$plan_ev | length == 3 and (map(.engine) | sort) == [0,2,3]"
check "bench: finalized_workspaces of the graph" jqt "$T" "$plan_ev | .[-1].finalized_workspaces | sort == [0,67108864,268435456]"
check "bench: exit shows which plan kept running" jqt "$T" \
    '.[-1].graph.plans | (map(select(.executions == 3)) | map(.engine)) == [0] and (map(select(.executions == 1)) | length) == 2'

# ---- execution fails: cuDNN cannot allocate 900 MiB; 200 MiB held by another process
CGTEST_EXEC_ALLOC_MB=900 CGTEST_GPU_HELD_MB=200 same_output oom "$CLIENTS/client_graph" conv
check "oom: the program saw the real status and reason" grep -q "execute = 4004 reason: cudnnBackendExecute: could not allocate 943718400 bytes" "$WORK/oom.plain"
check "oom: one graph_exec_failed for three failed executions" jqt "$T" \
    'map(select(.ev=="graph_exec_failed")) | length == 1 and .[0].status_name == "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED" and (.[0].reason | startswith("cudnnBackendExecute: could not allocate"))'
check "oom: free and total bytes from the driver, the plan's workspace and engine" jqt "$T" \
    'map(select(.ev=="graph_exec_failed"))[0] | .mem == {free: 855638016, total: 1073741824, source: "driver"} and .workspace == 268435456 and .engine == 2 and .workspace_given == true'
check "oom: the report says conv_workspace_exceeds_free (the cause is the CLI's: no likely_cause)" bash -c \
    "jq -e -s 'map(select(.ev==\"graph_exec_failed\"))[0].likely_cause == null' '$T' >/dev/null && '$BUILD_DIR/convguard' report --json '$WORK/oom' | jq -e '.findings[0].rule == \"conv_workspace_exceeds_free\"'"
check "oom: exit counts all three and the two not written" jqt "$T" \
    '.[-1].graph.exec_failures == 3 and .[-1].graph.failures_not_written == 2 and .[-1].fails.cudnnBackendExecute == 3'

# ---- a 900 MiB workspace that does not fit, not given to Execute
CLIENT_NO_WS=1 CGTEST_PLAN_RULES=0:ws=900 CGTEST_GPU_HELD_MB=200 same_output nows "$CLIENTS/client_graph" conv
check "nows: workspace_missing, and it would not have fit" jqt "$T" \
    'map(select(.ev=="graph_exec_failed"))[0] | .workspace_given == false and .workspace == 943718400 and .mem.free == 855638016 and .mem.total == 1073741824'
check "nows: the report says lookup_workspace" bash -c "'$BUILD_DIR/convguard' report --json '$WORK/nows' | jq -e '.findings[0].rule == \"lookup_workspace\"'"

# ---- recorded into a CUDA graph instead of executed
CLIENT_POPULATE=1 same_output populate "$CLIENTS/client_graph_plt" conv
check "populate: graph_plan at the first recording" jqt "$T" "$plan_ev | length == 1 and .[0].fn == \"cudnnBackendPopulateCudaGraph\" and .[0].engine == 2"

# ---- the JAX-like client: plugin without DT_NEEDED, driver entry points, dlsym
LD_LIBRARY_PATH=$DOUBLES/cudnn9:$DOUBLES/cuda same_output jaxlike "$CLIENTS/client_jaxlike" "$CLIENTS/plugin_jaxlike.so"
check "jaxlike: the tensor without dimensions, with cuDNN's reason" jqt "$T" \
    'map(select(.ev=="graph_finalize_failed" and .desc_type=="CUDNN_BACKEND_TENSOR_DESCRIPTOR"))[0] | .reason == "_nbDims < 1" and .tensor.dims == []'
check "jaxlike: graph_plan, then the execution without workspace" jqt "$T" \
    '(map(select(.ev=="graph_plan"))[0] | .engine == 2 and .workspace == 268435456) and (map(select(.ev=="graph_exec_failed"))[0] | .workspace_given == false and .workspace == 268435456)'
finish
