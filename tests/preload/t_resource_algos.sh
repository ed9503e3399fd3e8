# t_resource_algos.sh - legacy convolution algorithm lookups and executions
# (conv_algos, conv_exec_failed): decoded descriptors, every returned
# algorithm, workspace against free memory, the seeds' signature.
# The TensorFlow-like example (examples/conv_tflike.c) and client_tflike
# against the test doubles; each run also without the shim: identical output.
source "$(dirname "$0")/../lib.sh"
EX=$BUILD_DIR/examples/conv_tflike
D9=$DOUBLES/cudnn9 D8=$DOUBLES/cudnn8 RT=$DOUBLES/cudart DRV=$DOUBLES/cuda NVML=$DOUBLES/nvml
export CG_CONV_SHAPE=2,4,8,8,4,3,3 CONVGUARD_QUIET=1

same() { # NAME PROGRAM ENV... : with and without the shim; trace dir $WORK/NAME
    local name=$1 prog=$2; shift 2
    env "$@" "$prog" >"$WORK/$name.plain" 2>&1
    mkdir -p "$WORK/$name"
    env "$@" CONVGUARD_DIR="$WORK/$name" LD_PRELOAD="$SHIM" "$prog" >"$WORK/$name.shim" 2>&1
    check "$name: the program's output is the same with and without the shim" \
        diff "$WORK/$name.plain" "$WORK/$name.shim"
    T=$(trace_of "$WORK/$name")
    check "$name: trace valid, seq without gaps" traces_valid "$WORK/$name"
}
A() { echo "(map(select(.ev==\"conv_algos\" and .fn==\"$1\")) | .[0])"; }
V7=$(A cudnnGetConvolutionForwardAlgorithm_v7)
FX=$(A cudnnFindConvolutionForwardAlgorithmEx)

# ---- healthy, two steps: the first lookup of each shape is written, not the repeats
same healthy "$EX" LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML CG_CONV_STEPS=2
check "healthy: one conv_algos per lookup function (6), though each ran twice" jqt "$T" '
    (map(select(.ev=="conv_algos")) | length == 6 and all(.[]; .signature == null and .status == 0))
    and (.[-1].calls.cudnnGetConvolutionForwardAlgorithm_v7 == 2)'
check "healthy: forward v7 decodes x, w, y and the convolution" jqt "$T" "$V7"'
    | .op == "forward" and .api == "get_v7"
      and .x == {"dims": [2,4,8,8], "dtype": "float", "layout": "NCHW"}
      and .w == {"dims": [4,4,3,3], "dtype": "float", "layout": "NCHW"}
      and .y == {"dims": [2,4,8,8], "dtype": "float", "layout": "NCHW"}
      and .conv == {"pad": [1,1], "stride": [1,1], "dilation": [1,1], "mode": "cross_correlation",
                    "compute_type": "float", "groups": 1, "math_type": "default"}'
check "healthy: every returned algorithm with status, time, workspace, determinism, math type" jqt "$T" "$V7"'
    | .requested == 16 and .returned == 3 and (.algos | map([.algo, .algo_name, .status_name, .time_ms, .workspace, .determinism, .math_type]))
      == [[2, "GEMM", "CUDNN_STATUS_SUCCESS", -1, 536870912, "deterministic", "default"],
          [1, "IMPLICIT_PRECOMP_GEMM", "CUDNN_STATUS_SUCCESS", -1, 67108864, "deterministic", "default"],
          [0, "IMPLICIT_GEMM", "CUDNN_STATUS_SUCCESS", -1, 0, "deterministic", "default"]]'
check "healthy: free/total from the driver at the lookup" jqt "$T" "$V7"'
    | .mem.source == "driver" and .mem.total == 1073741824 and .mem.free > 1000000000 and .algos_over_free == 0'
check "healthy: FindEx: the workspace passed, times measured" jqt "$T" "$FX"'
    | .api == "find_ex" and .workspace_limit == 536870912 and .algos_over_limit == 0
      and (.algos | map(.time_ms)) == [0.5, 1, 2]'
check "healthy: backward data / filter: dx is x, dy is y, dw is w" jqt "$T" '
    map(select(.ev=="conv_algos" and .op!="forward")) | length == 4
    and all(.[]; .x.dims == [2,4,8,8] and .y.dims == [2,4,8,8] and .w.dims == [4,4,3,3])
    and (map(select(.op=="backward_data")) | .[0].algos[0].algo_name == "FFT")
    and (map(select(.op=="backward_filter")) | .[0].algos[1].algo_name == "ALGO_1")'

# ---- the seeds' failure: every algorithm wants more workspace than is free
same seeds "$EX" LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML CGTEST_GPU_HELD_MB=980 CGTEST_ALGO_WS_MB=64,128,512
check "seeds: the program failed to get an algorithm (exit 3)" grep -q "^exit 3" "$WORK/seeds.shim"
check "seeds: v7 marked all_algos_exceed_free_memory, workspaces against free bytes" jqt "$T" "$V7"'
    | .signature == "all_algos_exceed_free_memory" and .status == 0 and .algos_over_free == 3
      and .mem.free < 67108864 and ([.algos[].workspace] | min) > .mem.free'
check "seeds: ...with the holder named (NVML)" jqt "$T" "$V7"'
    | .holders == [{"pid": 4242, "name": null, "bytes": 1027604480}] and .nvml == "ok"'
check "seeds: each workspace cudaMalloc that failed, with its size and the free bytes" jqt "$T" '
    [map(select(.ev=="alloc_failed" and .fn=="cudaMalloc")) | .[] | .bytes] | .[0:4] == [536870912, 268435456, 134217728, 67108864]'
check "seeds: workspace allocations: route dlsym, caller the program, free < asked" jqt "$T" '
    map(select(.ev=="alloc_failed")) | all(.[]; .route == "dlsym" and .caller == "(main program)"
        and .exceeds_free == true and .mem.source == "driver" and .driver_status_name == "CUDA_ERROR_OUT_OF_MEMORY")'
# FindEx given a 32 MiB workspace: every algorithm needs more
check "seeds: FindEx with too small a workspace: all_algos_failed, the limit, each over it" jqt "$T" "$FX"'
    | .signature == "all_algos_failed" and .status == 4003
      and .status_name == "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"
      and .workspace_limit == 33554432 and .algos_over_limit == 3
      and all(.algos[]; .status_name == "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED")
      and (.reason | contains("workSpaceSizeInBytes too small"))'
check "seeds: the program still read cuDNN's reason itself" \
    grep -q 'cudnnGetLastErrorString: "no algorithm could get its workspace (workSpaceSizeInBytes too small)"' "$WORK/seeds.shim"
check "seeds: every failing lookup is written (3 FindEx), with the same shape" jqt "$T" '
    map(select(.ev=="conv_algos" and .api=="find_ex" and .signature=="all_algos_failed")) | length == 3'

# ---- cuDNN 8: the same failure, numbered the cuDNN 8 way, no reason
same seeds8 "$EX" LD_LIBRARY_PATH=$D8:$RT:$DRV:$NVML CGTEST_GPU_HELD_MB=980 CGTEST_ALGO_WS_MB=64,128,512 CG_CUDNN=libcudnn.so.8
check "seeds8: cuDNN 8 statuses: ALLOC_FAILED (2) for the call and each algorithm" jqt "$T" "$FX"'
    | .status == 2 and .status_name == "CUDNN_STATUS_ALLOC_FAILED" and .reason == null
      and all(.algos[]; .status_name == "CUDNN_STATUS_ALLOC_FAILED") and .signature == "all_algos_failed"'
check "seeds8: descriptors decoded by cuDNN 8's own getters" jqt "$T" "$V7"'
    | .x.dims == [2,4,8,8] and .w.dims == [4,4,3,3] and .conv.pad == [1,1] and .signature == "all_algos_exceed_free_memory"'

# ---- executions: only failures (client_tflike runs a forward with no workspace)
same exec "$CLIENTS/client_tflike" LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML
check "exec: conv_exec_failed: algorithm, workspace passed, status, reason, memory" jqt "$T" '
    map(select(.ev=="conv_exec_failed")) | length == 1 and (.[0] | .fn == "cudnnConvolutionForward"
        and .algo == 2 and .algo_name == "GEMM" and .workspace == 0 and .status == 2000
        and .status_name == "CUDNN_STATUS_BAD_PARAM" and (.reason | contains("workSpaceSizeInBytes (0)"))
        and .mem.source == "driver")'
check "exec: the successful executions wrote nothing" jqt "$T" '
    (.[-1].calls.cudnnConvolutionForward > 1) and (map(select(.ev=="conv_exec_failed")) | length == 1)'
check "exec: Find (not Ex) decoded too" jqt "$T" '
    map(select(.ev=="conv_algos" and .api=="find")) | length >= 1 and (.[0].x.dims | length == 4)'
finish
