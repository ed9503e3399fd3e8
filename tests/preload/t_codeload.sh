# t_codeload.sh - loading GPU code that fails for memory: what JAX says as "Failed to load in-memory
# CUBIN ... CUDA_ERROR_OUT_OF_MEMORY" when its preallocated pool left the code no room (seen on the
# H200: no allocation failed, the trace had to show the load).  client_memroutes pool starts like
# XLA (entry points): preallocates CG_POOL_FRACTION of the reported total, then cuModuleLoadData; the
# libcuda double's load needs CGTEST_CODE_MB free.
source "$(dirname "$0")/../lib.sh"
C=$CLIENTS/client_memroutes
[ -x "$C" ] || C=$BUILD_DIR/clients/client_memroutes
export CONVGUARD_QUIET=1
E="LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/nvml CGTEST_CODE_MB=16 CG_POOL_FRACTION=0.995"

env $E "$C" pool > "$WORK/plain" 2>/dev/null; rc_plain=$?
mkdir -p "$WORK/bad"
env $E CONVGUARD_DIR="$WORK/bad" LD_PRELOAD="$SHIM" "$C" pool > "$WORK/bad.out" 2>/dev/null; rc_bad=$?
check "pool leaving 5 MiB: the load fails without the shim (exit 1)" test $rc_plain = 1
check "...with the shim: the same exit status and output" bash -c "[ $rc_bad = 1 ] && diff '$WORK/plain' '$WORK/bad.out'"
T=$(trace_of "$WORK/bad")
check "code_load_failed: the function, its status and name, the caller" jqt "$T" '
    map(select(.ev=="code_load_failed")) | length == 1 and .[0].fn == "cuModuleLoadData" and .[0].status == 2
    and .[0].status_name == "CUDA_ERROR_OUT_OF_MEMORY" and .[0].caller == "(main program)"'
check "code_load_failed: free memory from the driver (a context is current) under 16 MiB" jqt "$T" '
    first(.[] | select(.ev=="code_load_failed")) | .mem.source == "driver" and .mem.free < 16777216
    and .mem.total == 1073741824'
check "code_load_failed: this process's own pool (largest allocation) is in the event" jqt "$T" '
    first(.[] | select(.ev=="code_load_failed")) | .gpu_mem.largest_ok > 1000000000 and .gpu_mem.live >= .gpu_mem.largest_ok'
check "exit: the failed load is counted" jqt "$T" '.[-1].fails.cuModuleLoadData == 1 and .[-1].failures >= 1'
"$BUILD_DIR/convguard" report --json "$T" > "$WORK/report.json" 2>/dev/null
check "report: the process's own pool is the cause" jq -e '.findings[0].rule == "own_pool_took_memory"' "$WORK/report.json"

# CONVGUARD_RESERVE_MB without CONVGUARD_FALLBACK=1 changes nothing
mkdir -p "$WORK/nofb"
env $E CONVGUARD_RESERVE_MB=64 CONVGUARD_DIR="$WORK/nofb" LD_PRELOAD="$SHIM" "$C" pool > "$WORK/nofb.out" 2>/dev/null
check "reserve without fallback: output unchanged (still fails)" diff "$WORK/plain" "$WORK/nofb.out"

# with the fallback the pool is sized from 64 MiB less: the code loads
mkdir -p "$WORK/on"
env $E CONVGUARD_FALLBACK=1 CONVGUARD_RESERVE_MB=64 CONVGUARD_DIR="$WORK/on" LD_PRELOAD="$SHIM" "$C" pool \
    > "$WORK/on.out" 2>/dev/null; rc_on=$?
check "fallback + reserve 64 MiB: the load works, exit 0" bash -c "[ $rc_on = 0 ] && grep -q '^cuModuleLoadData = 0 module set' '$WORK/on.out'"
T=$(trace_of "$WORK/on")
check "fallback: one reserve_headroom event for cuMemGetInfo_v2, no code_load_failed" jqt "$T" '
    (map(select(.ev=="fallback" and .action=="reserve_headroom" and .fn=="cuMemGetInfo_v2")) | length == 1)
    and all(.[]; .ev != "code_load_failed")'

# room enough: no event, output unchanged
E2="LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/nvml CGTEST_CODE_MB=16 CG_POOL_FRACTION=0.5"
env $E2 "$C" pool > "$WORK/room.plain" 2>/dev/null
mkdir -p "$WORK/room"
env $E2 CONVGUARD_DIR="$WORK/room" LD_PRELOAD="$SHIM" "$C" pool > "$WORK/room.out" 2>/dev/null
check "room for the code: output unchanged, exit 0" bash -c "diff '$WORK/room.plain' '$WORK/room.out' && grep -q 'cuModuleLoadData = 0' '$WORK/room.out'"
check "room for the code: no code_load_failed, the load counted" jqt "$(trace_of "$WORK/room")" '
    all(.[]; .ev != "code_load_failed") and .[-1].calls.cuModuleLoadData == 1'
finish
