# t_graph_real.sh - NVIDIA's cuDNN 9 on this GPU-less machine: backend
# descriptors are created and finalized without a GPU.  An incomplete tensor
# descriptor fails to finalize with the real CUDNN_STATUS_BAD_PARAM and the
# real reason (cudnnGetLastErrorString, no CUDNN_LOGLEVEL_DBG needed); the
# trace shows the status, its name, the reason and the descriptor type, and
# the program still reads the same reason itself.
source "$(dirname "$0")/../lib.sh"
LIB=/usr/local/cuda/lib/libcudnn.so.9
[ -e $LIB ] || LIB=/usr/local/cuda/lib64/libcudnn.so.9
[ -e "$LIB" ] || skip_all "no real libcudnn.so.9"
export CLIENT_CUDNN=$LIB CONVGUARD_QUIET=1
unset CUDNN_LOGLEVEL_DBG CUDNN_LOGINFO_DBG CUDNN_LOGERR_DBG CUDNN_LOGWARN_DBG CUDNN_LOGDEST_DBG

"$CLIENTS/client_graph" badtensor >"$WORK/plain" 2>&1
run_shim "$WORK/t" "$CLIENTS/client_graph" badtensor >"$WORK/shim" 2>&1
T=$(trace_of "$WORK/t")
check "the real cuDNN said BAD_PARAM with its own reason" grep -qx "finalize tensor without dimensions = 2000 reason: _nbDims < 1" "$WORK/plain"
check "program output unchanged by the shim (reasons, and an empty second read)" cmp "$WORK/plain" "$WORK/shim"
check "trace valid, seq without gaps" traces_valid "$WORK/t"
check "NVIDIA's cuDNN 9 was traced (libcudnn_graph.so.9 answers its version)" jqt "$T" \
    'map(select(.ev=="lib" and .soname=="libcudnn_graph.so.9" and .version >= 90000)) | length == 1'
check "graph_finalize_failed: tensor type, BAD_PARAM, the real reason, no dimensions set" jqt "$T" \
    'map(select(.ev=="graph_finalize_failed"))[0] | .desc_type == "CUDNN_BACKEND_TENSOR_DESCRIPTOR" and .status == 2000 and .status_name == "CUDNN_STATUS_BAD_PARAM" and .reason == "_nbDims < 1" and .tensor.dims == []'
check "the second refusal: dimensions without strides" jqt "$T" \
    'map(select(.ev=="graph_finalize_failed"))[1] | .reason == "_nbDims != _nbStrides" and .tensor.dims == [1,2,3,4]'
check "GetAttribute on an unfinalized descriptor: call_failed with NOT_INITIALIZED and the attribute" jqt "$T" \
    'map(select(.ev=="call_failed" and .fn=="cudnnBackendGetAttribute"))[0] | .status_name == "CUDNN_STATUS_NOT_INITIALIZED" and .attr == 902 and .desc_type == "CUDNN_BACKEND_TENSOR_DESCRIPTOR"'
check "a reason the program reads after a later success is still there" grep -qx 'read after a later success: "_nbDims != _nbStrides"' "$WORK/shim"
check "exit: four failed calls, one descriptor created and destroyed" jqt "$T" \
    '.[-1] | .fails.cudnnBackendFinalize == 3 and .fails.cudnnBackendGetAttribute == 1 and .calls.cudnnBackendCreateDescriptor == 1 and .calls.cudnnBackendDestroyDescriptor == 1'

# seven refusals the real library gives without a GPU: the trace names each
# status as cudnnGetErrorString does and carries the same reason
"$CLIENTS/client_graph" failures >"$WORK/fplain" 2>&1
run_shim "$WORK/f" "$CLIENTS/client_graph" failures >"$WORK/fshim" 2>&1
T=$(trace_of "$WORK/f")
check "failures: program output unchanged by the shim" cmp "$WORK/fplain" "$WORK/fshim"
sed -n 's/^[^:]*: status \([0-9]*\) \([A-Z_]*\) reason: \(.*\)$/{"status":\1,"status_name":"\2","reason":"\3"}/p' \
    "$WORK/fplain" | jq -s 'map(.reason |= (if . == "" then null else . end))' >"$WORK/expected.json" # no text: null
check "failures: nine statuses seen by the program" jq -e 'length == 9' "$WORK/expected.json"
check "failures: each one in the trace with cuDNN's name and reason" jq -e -s --slurpfile x "$WORK/expected.json" \
    '[.[] | select(.status != null and .status != 0) | {status, status_name, reason}] as $t | all($x[0][]; . as $e | $t | index([$e]) != null)' "$T"
check "failures: create of an unknown type names the type number" jqt "$T" \
    'map(select(.fn=="cudnnBackendCreateDescriptor"))[0] | .desc_type == 9999 and .status_name == "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"'
check "failures: Execute of a NULL plan (NULL's table slot is reserved): graph_exec_failed, plan null" jqt "$T" \
    'map(select(.ev=="graph_exec_failed"))[0] | .status_name == "CUDNN_STATUS_BAD_PARAM" and .plan == null'
check "failures: a plan without engine config: graph_finalize_failed, plan fields null" jqt "$T" \
    'map(select(.ev=="graph_finalize_failed" and .desc_type=="CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR"))[0] | .status_name == "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED" and .graph == null and .engine == null'
finish
