# t_fallback_reserve.sh - CONVGUARD_RESERVE_MB with CONVGUARD_FALLBACK=1: a framework that sizes its
# pool from free memory (JAX's preallocation, TensorFlow's BFC) is told N MiB less, so cudnnCreate
# still gets its memory.  client_fallback reserve: cudaMemGetInfo (PLT) or cuMemGetInfo_v2 (dlsym),
# 99% of the free memory preallocated, then cudnnCreate (needing 32 MiB here), then a convolution.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/fallback_lib.sh"
C=$CLIENTS/client_fallback
FB_REF_ENV="LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/nvml CGTEST_CUDNN_HANDLE_MB=32"
FB_BAD_ENV="CLIENT_MEM_FRACTION=0.99"
FB_ON_ENV="CONVGUARD_RESERVE_MB=64"
# the reference: the same program taking less (nothing is held when it starts)
FB_REF_ENV_SAVED=$FB_REF_ENV
FB_REF_ENV="$FB_REF_ENV CLIENT_MEM_FRACTION=0.5"
scenario reserve_rt reserve_headroom "$C" reserve
check "reserve_rt: without it cudnnCreate failed (exit 2)" grep -q "^exit 2" "$WORK/reserve_rt.bad"
check "reserve_rt: free under-reported by 64 MiB on cudaMemGetInfo, once (one event)" jqt "$T" '
    map(select(.ev=="fallback")) | length == 1 and .[0].fn == "cudaMemGetInfo"
    and .[0].asked - .[0].given == 67108864 and .[0].limit_source == "CONVGUARD_RESERVE_MB"'
check "reserve_rt: counted once, not again inside cudart's cuMemGetInfo (depth)" jqt "$T" \
    '.[-1].fallback_reserve_reports == 1'
FB_ON_ENV="CONVGUARD_RESERVE_MB=64 CLIENT_MEMINFO=drv"
FB_BAD_ENV="CLIENT_MEM_FRACTION=0.99 CLIENT_MEMINFO=drv"
scenario reserve_drv reserve_headroom "$C" reserve
check "reserve_drv: the driver route (dlsym'ed cuMemGetInfo_v2) is under-reported too" jqt "$T" '
    map(select(.ev=="fallback")) | .[0].fn == "cuMemGetInfo_v2" and .[0].asked - .[0].given == 67108864'
FB_REF_ENV=$FB_REF_ENV_SAVED

# a reserve too small: cudnnCreate still fails, and the event says the reserve was not enough
mkdir -p "$WORK/small"
env $FB_REF_ENV CONVGUARD_RESERVE_MB=8 CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/small" LD_PRELOAD="$SHIM" "$C" reserve \
    >"$WORK/small.out" 2>/dev/null
T=$(trace_of "$WORK/small")
check "reserve too small: the program still fails (exit 2)" grep -q "^exit 2" "$WORK/small.out"
check "reserve too small: reserve_exhausted for cudnnCreate, with its status" jqt "$T" '
    map(select(.ev=="fallback" and .action=="reserve_exhausted" and .fn=="cudnnCreate")) | length == 1
    and .[0].outcome == 4000 and (.[0].why | test("too small"))'
check "reserve too small: ...and for cuDNN's own allocation (cuMemAlloc_v2 from libcudnn)" jqt "$T" '
    map(select(.ev=="fallback" and .action=="reserve_exhausted" and .fn=="cuMemAlloc_v2")) | .[0].asked == 33554432'

# the reserve without CONVGUARD_FALLBACK=1 changes nothing
env $FB_REF_ENV CLIENT_MEMINFO=drv "$C" reserve >"$WORK/plain.out" 2>/dev/null
mkdir -p "$WORK/nofb"
env $FB_REF_ENV CLIENT_MEMINFO=drv CONVGUARD_RESERVE_MB=64 CONVGUARD_DIR="$WORK/nofb" LD_PRELOAD="$SHIM" "$C" reserve \
    >"$WORK/nofb.out" 2>/dev/null
check "reserve set, fallback unset: same output (same failure) as without the shim" diff "$WORK/plain.out" "$WORK/nofb.out"
check "reserve set, fallback unset: no fallback event" jqt "$(trace_of "$WORK/nofb")" \
    'map(select(.ev=="fallback")) | length == 0'
# client_memroutes reads free memory on every route: with fallback unset the numbers are untouched
if [ -x "$CLIENTS/client_memroutes" ]; then
    env LD_LIBRARY_PATH=$DOUBLES/cuda "$CLIENTS/client_memroutes" >"$WORK/mr.plain" 2>/dev/null
    mkdir -p "$WORK/mr"
    env LD_LIBRARY_PATH=$DOUBLES/cuda CONVGUARD_RESERVE_MB=64 CONVGUARD_DIR="$WORK/mr" LD_PRELOAD="$SHIM" \
        "$CLIENTS/client_memroutes" >"$WORK/mr.shim" 2>/dev/null
    check "client_memroutes, reserve without fallback: identical output" diff "$WORK/mr.plain" "$WORK/mr.shim"
fi
finish
