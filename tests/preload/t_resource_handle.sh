# t_resource_handle.sh - cudnnCreate: why it failed, in bytes (resource layer).
# The TensorFlow-like example (examples/conv_tflike.c: dlopen + dlsym) against
# the test doubles: no driver, a GPU held by another process (with and without
# NVML), cuDNN 8 numbering; then the real cuDNN 9.19 / cudart 13 of this machine.
# Every run is also made without the shim: the program's output must be identical.
source "$(dirname "$0")/../lib.sh"
EX=$BUILD_DIR/examples/conv_tflike
D9=$DOUBLES/cudnn9 D8=$DOUBLES/cudnn8 RT=$DOUBLES/cudart DRV=$DOUBLES/cuda NVML=$DOUBLES/nvml
export CG_CONV_SHAPE=2,4,8,8,4,3,3 CONVGUARD_QUIET=1

# same NAME ENV... : runs the example with and without the shim; the trace dir is $WORK/NAME
same() {
    local name=$1; shift
    env "$@" "$EX" >"$WORK/$name.plain" 2>&1
    env "$@" CONVGUARD_DIR="$WORK/$name" LD_PRELOAD="$SHIM" "$EX" >"$WORK/$name.shim" 2>&1
    mkdir -p "$WORK/$name"
    check "$name: the program's output is the same with and without the shim" \
        diff "$WORK/$name.plain" "$WORK/$name.shim"
    T=$(trace_of "$WORK/$name")
    check "$name: trace valid, seq without gaps" traces_valid "$WORK/$name"
}
H='(map(select(.ev=="cudnn_handle" and .fn=="cudnnCreate")) | .[0])'
# cause NAME JQ: the report of $WORK/NAME (the one diagnosis, tools/analysis/diagnose.c: the
# shim writes facts, no likely_cause) satisfies JQ; $seq is the failed create's seq
cause() {
    local seq
    seq=$(jq -s "$H | .seq" "$(trace_of "$WORK/$1")")
    "$BUILD_DIR/convguard" report --json "$WORK/$1" | jq -e --argjson seq "${seq:-null}" "$2" >/dev/null
}

# ---- no driver: libcuda.so.1 is not loadable
same nodrv LD_LIBRARY_PATH=$D9:$RT:$NVML
check "nodrv: the program saw cudnnCreate fail with 1001" grep -q "cudnnCreate = 1001" "$WORK/nodrv.shim"
check "nodrv: ...and still got cuDNN's reason from cudnnGetLastErrorString" \
    grep -q 'cudnnGetLastErrorString: "cudaGetDeviceCount(&count) != cudaSuccess"' "$WORK/nodrv.shim"
check "nodrv: cudnn_handle: status, status_name, ok false, reason" jqt "$T" "$H"'
    | .status == 1001 and .status_name == "CUDNN_STATUS_NOT_INITIALIZED" and .ok == false
      and .reason == "cudaGetDeviceCount(&count) != cudaSuccess"'
check "nodrv: driver not_loaded, device count unknown, memory from NVML (no context to ask)" jqt "$T" "$H"'
    | .driver == "not_loaded" and .device_count == null and .mem == {"free": 1073741824, "total": 1073741824, "source": "nvml"}'
check "nodrv: cudnn_handle points at the failed libcuda.so.1 load (driver_load_seq), no likely_cause" jqt "$T" '
    (map(select(.ev=="dlopen" and .name=="libcuda.so.1" and .ok==false)) | .[0].seq) as $s
    | $s != null and ('"$H"' | .driver_load_seq == $s and .likely_cause == null)'
check "nodrv: the report says handle_no_driver about the failed create" cause nodrv \
    '.findings[0] | .rule == "handle_no_driver" and .seq == $seq'
check "nodrv: cudaMalloc's failure recorded with its size (35)" jqt "$T" '
    map(select(.ev=="alloc_failed" and .fn=="cudaMalloc" and .status==35 and .bytes==2048
        and .status_name=="cudaErrorInsufficientDriver" and .route=="dlsym")) | length == 4'

same nodrv_nonvml LD_LIBRARY_PATH=$D9:$RT
check "nodrv_nonvml: no driver and no NVML: memory unknown, said so" jqt "$T" "$H"'
    | .mem == {"free": null, "total": null, "source": "unknown"} and .compute_capability == null'
check "nodrv_nonvml: the report says handle_no_driver" cause nodrv_nonvml '.findings[0].rule == "handle_no_driver"'

# ---- another process holds the GPU: the 8 MiB handle scratch cannot be had
sleep 60 & HOLDER=$!
same held LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML CGTEST_GPU_HELD_MB=1020 CGTEST_HOLDER_PID=$HOLDER
check "held: the program saw INTERNAL_ERROR and cuDNN's reason" \
    grep -q 'cudnnGetLastErrorString: "cudnnCreate: could not allocate handle workspace"' "$WORK/held.shim"
check "held: the allocation inside cudnnCreate: 8 MiB, entry point, from libcudnn_graph.so.9" jqt "$T" '
    map(select(.ev=="alloc_failed")) | length == 1 and (.[0] | .fn == "cuMemAlloc_v2" and .bytes == 8388608
        and .route == "entry_point" and (.caller | endswith("/libcudnn_graph.so.9")) and .status_name == "CUDA_ERROR_OUT_OF_MEMORY"
        and .mem.source == "driver" and .mem.free < 8388608 and .exceeds_free == true)'
check "held: cudnn_handle names the holder (pid, name, bytes) from NVML" jqt "$T" "$H"'
    | .holders == [{"pid": '"$HOLDER"', "name": "sleep", "bytes": 1069547520}] and .nvml == "ok"'
check "held: free/total from the driver, device count, compute capability" jqt "$T" "$H"'
    | .mem.source == "driver" and .mem.total == 1073741824 and .mem.free < 8388608
      and .device_count == 1 and .driver == "loaded" and .compute_capability == "9.0"'
check "held: cudnn_handle's facts: the allocation that failed during it (-> alloc_failed), others' bytes" jqt "$T" '
    (map(select(.ev=="alloc_failed")) | .[0].seq) as $s | '"$H"'
    | .alloc_failure == {"fn": "cuMemAlloc_v2", "bytes": 8388608, "status": 2, "seq": $s, "during": true}
      and .others_bytes == 1069547520 and .likely_cause == null'
check "held: the report says handle_memory_held, naming the holder" cause held \
    '.findings[0] | .rule == "handle_memory_held" and .seq == $seq and (.cause | contains("'"$HOLDER"'"))'
check "held: NVML (loaded by the shim for the report) is recorded as a library" jqt "$T" '
    map(select(.ev=="lib" and .soname=="libnvidia-ml.so.1" and (.via|contains("convguard")))) | length == 1'
check "held: NVML was loaded only after the first failure" jqt "$T" '
    (map(select(.ev=="lib" and .soname=="libnvidia-ml.so.1")) | .[0].seq) > (map(select(.ev=="cudnn_handle" and .ok)) | length) and
    (map(select(.ev=="lib" and .soname=="libnvidia-ml.so.1")) | .[0].seq) < (map(select(.ev=="alloc_failed")) | .[0].seq)'
kill "$HOLDER" 2>/dev/null

# ---- the same without NVML: no holders, said so; the cause is still memory
same held_nonvml LD_LIBRARY_PATH=$D9:$RT:$DRV CGTEST_GPU_HELD_MB=1020
check "held_nonvml: holders null, nvml says why" jqt "$T" "$H"'
    | .holders == null and (.nvml | startswith("libnvidia-ml.so.1 not loadable: "))'
check "held_nonvml: the failed allocation, no others' bytes (no NVML)" jqt "$T" "$H"'
    | .alloc_failure.during == true and .others_bytes == null and .mem.total == 1073741824'
check "held_nonvml: the report says handle_out_of_memory" cause held_nonvml \
    '.findings[0] | .rule == "handle_out_of_memory" and .seq == $seq'
same held_nvmlfail LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML CGTEST_GPU_HELD_MB=1020 CGTEST_NVML_FAIL=1
check "held_nvmlfail: nvmlInit_v2's failure is said" jqt "$T" "$H"'
    | .holders == null and .nvml == "nvmlInit_v2 failed: Driver Not Loaded"'

# ---- a failure that is not an allocation's: little free memory is blamed only for memory-like statuses
same lowfree LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML CGTEST_GPU_HELD_MB=1000 CGTEST_CUDNN_CREATE_STATUS=4000
check "lowfree: INTERNAL_ERROR with 24 MiB free: memory held by the other process, no event to point at" jqt "$T" "$H"'
    | .status == 4000 and .alloc_failure == null and .mem.free < 1073741824 and .others_bytes == 1048576000'
check "lowfree: the report says handle_memory_held (less than 1 GiB free, pid 4242 holds most)" cause lowfree \
    '.findings[0] | .rule == "handle_memory_held" and .seq == $seq and (.cause | contains("4242"))'
same archfail LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML CGTEST_GPU_HELD_MB=1000 CGTEST_CUDNN_CREATE_STATUS=3007
check "archfail: NOT_SUPPORTED_ARCH_MISMATCH is not put down to memory" jqt "$T" "$H"'
    | .status_name == "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH" and .reason == "injected by CGTEST_CUDNN_CREATE_STATUS"'
check "archfail: the report says handle_failed, not a memory cause" cause archfail '.findings[0].rule == "handle_failed"'
same nodevice LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML CGTEST_NO_DEVICE=1 CGTEST_GPU_HELD_MB=1000
check "nodevice: cuInit failed: driver_not_initialized, not memory" jqt "$T" "$H"'
    | .status == 1001 and .driver == "not_initialized" and .device_count_status == "CUDA_ERROR_NOT_INITIALIZED"'
check "nodevice: the report names no memory cause" cause nodevice \
    '[.findings[].rule] | (index("handle_memory_held") == null and index("handle_out_of_memory") == null)'

# ---- cuDNN 8 numbering: 4 is INTERNAL_ERROR there; no cudnnGetLastErrorString
same cudnn8 LD_LIBRARY_PATH=$D8:$RT:$DRV:$NVML CGTEST_GPU_HELD_MB=1020 CG_CUDNN=libcudnn.so.8
check "cudnn8: status 4 named in cuDNN 8 numbering, reason null" jqt "$T" "$H"'
    | .status == 4 and .status_name == "CUDNN_STATUS_INTERNAL_ERROR" and .reason == null and .alloc_failure.during == true'
check "cudnn8: the report says another process held the memory (alloc_memory_held)" cause cudnn8 \
    '[.findings[].rule] | index("alloc_memory_held")'

# ---- healthy: a create and a destroy, nothing else of this layer
same healthy LD_LIBRARY_PATH=$D9:$RT:$DRV:$NVML
check "healthy: cudnn_handle for cudnnCreate and cudnnDestroy, ok" jqt "$T" '
    [map(select(.ev=="cudnn_handle")) | .[] | [.fn, .ok, .status_name]]
    == [["cudnnCreate", true, "CUDNN_STATUS_SUCCESS"], ["cudnnDestroy", true, "CUDNN_STATUS_SUCCESS"]]'
check "healthy: no failure events, NVML never loaded" jqt "$T" '
    map(select(.ev=="alloc_failed" or .ev=="conv_exec_failed" or .ev=="call_failed"
        or (.ev=="lib" and .soname=="libnvidia-ml.so.1"))) | length == 0'
check "healthy: exit gpu_mem balances (every allocation freed)" jqt "$T" '
    .[-1].gpu_mem | .live == 0 and .allocs == .frees and .allocs > 0 and .largest_ok > 0 and .alloc_failures == 0'

# ---- the real cuDNN 9.19 and cudart 13 of this machine (no driver here)
LIB=${CUDNN_DIR:-/usr/local/cuda/lib}
if [ -e "$LIB/libcudnn.so.9" ] && [ -e "$LIB/libcudart.so.13" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    same real LD_LIBRARY_PATH=$LIB
    check "real: cudnnCreate really returns 1001, with cuDNN's own reason, which the program still reads" \
        grep -q 'cudnnGetLastErrorString: "cudaGetDeviceCount(&count) != cudaSuccess"' "$WORK/real.shim"
    check "real: the pending dlerror() cudart left is still the program's" \
        grep -q "dlerror after the allocations: libcuda.so.1: cannot open shared object file" "$WORK/real.shim"
    check "real: cudnn_handle 1001 tied to the libcuda.so.1 load that failed" jqt "$T" '
        (map(select(.ev=="dlopen" and .name=="libcuda.so.1" and .ok==false)) | .[0].seq) as $s | '"$H"'
        | .status == 1001 and .status_name == "CUDNN_STATUS_NOT_INITIALIZED"
          and .reason == "cudaGetDeviceCount(&count) != cudaSuccess"
          and .driver_load_seq == $s and .driver == "not_loaded"'
    check "real: the report says handle_no_driver" cause real '.findings[0] | .rule == "handle_no_driver" and .seq == $seq'
    check "real: cudaMalloc returns the real 35, recorded with its size" jqt "$T" '
        map(select(.ev=="alloc_failed")) | length == 6 and all(.[]; .fn == "cudaMalloc" and .status == 35
            and .status_name == "cudaErrorInsufficientDriver") and (map(.bytes) == [2048, 2048, 576, 576, 2048, 2048])'
else
    echo "  (real cuDNN part skipped: no $LIB/libcudnn.so.9 + libcudart.so.13, or a driver is installed)"
fi
finish
