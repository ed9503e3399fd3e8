# t_context.sh - a context that cannot be created (a full GPU at PyTorch's
# first .cuda(), JAX's backend start) and a driver without devices: seen on
# every route, the holder named, the program's results unchanged.
source "$(dirname "$0")/../lib.sh"
D=$DOUBLES
export CONVGUARD_QUIET=1
unset LD_LIBRARY_PATH
sleep 30 & HOLDER=$!
trap 'kill $HOLDER 2>/dev/null; rm -rf "$WORK"' EXIT

same() { # NAME ENV... -- CMD...: output identical with and without the shim
    local name=$1; shift
    local envs=() ; while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    env "${envs[@]}" "$@" > "$WORK/$name.plain" 2>/dev/null
    env "${envs[@]}" CONVGUARD_DIR=$WORK/$name LD_PRELOAD=$SHIM "$@" > "$WORK/$name.shim" 2>/dev/null
    # NVML is loaded (only) when a failure needs the holders: the one library
    # the shim adds to the map, by design (docs/hooks.md)
    diff <(cat "$WORK/$name.plain") <(grep -v '^maps: .*/libnvidia-ml.so.1$' "$WORK/$name.shim") >/dev/null
}

# PyTorch-like (PLT; cudart creates the context through the driver's entry points)
check "full GPU, PLT client: output unchanged" same torch LD_LIBRARY_PATH=$D/cuda:$D/nvml CGTEST_GPU_HELD_MB=1000 \
    CGTEST_CTX_MB=300 CGTEST_HOLDER_PID=$HOLDER -- "$CLIENTS/client_torchlike" "$CLIENTS/ext_torchlike.so"
T=$(trace_of "$WORK/torch")
check "full GPU: the failed context creation is an event with status and name" jqt "$T" '
    any(.[]; .ev=="context_failed" and .fn=="cuDevicePrimaryCtxRetain" and .status==2 and .status_name=="CUDA_ERROR_OUT_OF_MEMORY")'
check "full GPU: free memory (NVML: no context yet) and the holder's pid" jqt "$T" "
    first(.[] | select(.ev==\"context_failed\")) | .mem.source==\"nvml\" and .mem.free < 314572800
      and .likely_cause == null and any(.holders[]; .pid==$HOLDER)"
check "full GPU: the report says context_memory_held, naming the holder (analysis/diagnose.c)" bash -c \
    "'$BUILD_DIR/convguard' report --json '$WORK/torch' | jq -e '.findings[0] | .rule == \"context_memory_held\" and (.cause | contains(\"$HOLDER\"))'"
check "full GPU: counted as a failure at exit" jqt "$T" '.[-1].fails.cuDevicePrimaryCtxRetain >= 1 and .[-1].failures >= 1'

# JAX-like (driver functions through cuGetProcAddress_v2): no device
check "no device, entry-point client: output unchanged" same jax LD_LIBRARY_PATH=$D/cudnn9:$D/cuda CGTEST_NO_DEVICE=1 \
    -- "$CLIENTS/client_jaxlike" "$CLIENTS/plugin_jaxlike.so"
T=$(trace_of "$WORK/jax")
check "no device: cuInit's CUDA_ERROR_NO_DEVICE (100) is an event" jqt "$T" '
    any(.[]; .ev=="context_failed" and .fn=="cuInit" and .status==100 and .status_name=="CUDA_ERROR_NO_DEVICE")'

# enough room: no event at all
check "room for the context: output unchanged" same room LD_LIBRARY_PATH=$D/cuda CGTEST_CTX_MB=300 \
    -- "$CLIENTS/client_torchlike" "$CLIENTS/ext_torchlike.so"
check "room for the context: no context_failed event" jqt "$(trace_of "$WORK/room")" 'all(.[]; .ev != "context_failed")'
finish
