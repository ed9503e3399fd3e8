# t_resource_mem.sh - GPU memory on the three routes (alloc_failed, exit
# gpu_mem): PLT cudaMalloc (whose cuMemAlloc_v2 inside cudart is wrapped too:
# counted once), dlsym cuMemAlloc_v2 / cuMemCreate, and the same from
# cuGetProcAddress_v2.  client_memroutes against the test doubles (1 GiB GPU);
# each run also without the shim: identical output.
source "$(dirname "$0")/../lib.sh"
C=$CLIENTS/client_memroutes
export LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/nvml CONVGUARD_QUIET=1

same() { # MODE
    "$C" "$1" >"$WORK/$1.plain" 2>&1
    mkdir -p "$WORK/$1"
    CONVGUARD_DIR="$WORK/$1" LD_PRELOAD="$SHIM" "$C" "$1" >"$WORK/$1.shim" 2>&1
    check "$1: every status and out-parameter the same with and without the shim" \
        diff "$WORK/$1.plain" "$WORK/$1.shim"
    T=$(trace_of "$WORK/$1")
    check "$1: trace valid, seq without gaps" traces_valid "$WORK/$1"
}
F() { echo "(map(select(.ev==\"alloc_failed\" and .fn==\"$1\")))"; }

same plt
check "plt: a failed cudaMalloc: route plt, 2 GiB, status and name" jqt "$T" "$(F cudaMalloc)"'
    | length == 1 and (.[0] | .route == "plt" and .bytes == 2147483648 and .status == 2
        and .status_name == "cudaErrorMemoryAllocation" and .caller == "(main program)"
        and (.caller_offset | startswith("0x")))'
check "plt: ...with the driver's status inside cudart, and no second event for it" jqt "$T" "$(F cudaMalloc)"'
    | .[0].driver_status == 2 and .[0].driver_status_name == "CUDA_ERROR_OUT_OF_MEMORY"' 
check "plt: no alloc_failed for the nested cuMemAlloc_v2" jqt "$T" "$(F cuMemAlloc_v2)"' | length == 0'
check "plt: free/total at that moment (driver), live/largest of this process (no peak: see docs/performance.md)" jqt "$T" "$(F cudaMalloc)"'
    | .[0] | .mem == {"free": 1068498944, "total": 1073741824, "source": "driver"} and .exceeds_free
      and .live == 5242880 and .largest_ok == 4194304 and (has("peak") | not)'
check "plt: cudaMallocAsync too" jqt "$T" "$(F cudaMallocAsync)"'
    | length == 1 and .[0].route == "plt" and .[0].live == 1048576'
check "plt: exit gpu_mem counts each allocation once (cudart's inner cuMemAlloc_v2 not again)" jqt "$T" '
    .[-1] | .gpu_mem == {"live": 1048576, "allocs": 3, "frees": 2, "largest_ok": 4194304,
        "alloc_failures": 2, "alloc_failed_unwritten": 0, "untracked": 0, "unknown_frees": 0}
      and .calls.cuMemAlloc_v2 == 3 and .calls.cudaMalloc == 3'
check "plt: the holder list came from NVML (nobody else holds memory)" jqt "$T" "$(F cudaMalloc)"'
    | .[0].holders == [] and .[0].nvml == "ok"'

same dlsym
check "dlsym: cuMemAlloc_v2 from dlsym: route dlsym" jqt "$T" "$(F cuMemAlloc_v2)"'
    | length == 1 and (.[0] | .route == "dlsym" and .bytes == 2147483648 and .status_name == "CUDA_ERROR_OUT_OF_MEMORY"
        and .live == 5242880 and (has("driver_status_name") | not))'
check "dlsym: cuMemCreate from dlsym: route dlsym" jqt "$T" "$(F cuMemCreate)"'
    | length == 1 and .[0].route == "dlsym" and .[0].bytes == 2147483648 and .[0].live == 1048576'
check "dlsym: exit gpu_mem (cuMemCreate/cuMemRelease counted)" jqt "$T" '
    .[-1].gpu_mem | .live == 1048576 and .allocs == 3 and .frees == 2 and .alloc_failures == 2'
check "dlsym: a failed free is a call_failed, not an allocation failure" jqt "$T" '
    map(select(.ev=="call_failed" and .fn=="cuMemFree_v2" and .status==1)) | length == 1'
check "dlsym: a free of NULL (it succeeds) is neither a free nor an unknown block" jqt "$T" '
    .[-1] | .calls.cuMemFree_v2 == 3 and .gpu_mem.frees == 2 and .gpu_mem.unknown_frees == 0'

# a free that fails leaves the block allocated: still in live (both tables: the 4 MiB cuMemAlloc_v2
# block and the 2 MiB cuMemCreate handle, whose frees fail; live is worked out from the tables)
export CGTEST_FREE_FAIL=2
rm -rf "$WORK/dlsym"
same dlsym
unset CGTEST_FREE_FAIL
check "free fails: a call_failed with the driver's status, for cuMemFree_v2 and cuMemRelease" jqt "$T" '
    [.[] | select(.ev=="call_failed" and .status==719) | .fn] == ["cuMemFree_v2", "cuMemRelease"]'
check "free fails: the blocks are still counted in live, at the next failure and at exit" jqt "$T" '
    (.[-1].gpu_mem | .live == 7340032 and .frees == 0 and .unknown_frees == 0 and .untracked == 0
        and .largest_ok == 4194304)
      and ('"$(F cuMemCreate)"' | .[0].live == 5242880)'

same entry
check "entry: cuMemAlloc_v2 from cuGetProcAddress_v2: route entry_point" jqt "$T" "$(F cuMemAlloc_v2)"'
    | length == 1 and .[0].route == "entry_point" and .[0].caller == "(main program)"'
check "entry: cuMemCreate from cuGetProcAddress_v2: route entry_point" jqt "$T" "$(F cuMemCreate)"'
    | length == 1 and .[0].route == "entry_point"'
check "entry: exit gpu_mem" jqt "$T" '.[-1].gpu_mem | .live == 1048576 and .allocs == 3 and .frees == 2'

# PyTorch's expandable segments probe cuMemCreate for shareable handles and fall back when
# refused (CUDA_ERROR_NOT_PERMITTED): written, marked, not counted as the run's failure
CGTEST_MEMCREATE_DENY=1 "$C" dlsym >"$WORK/probe.plain" 2>&1
mkdir -p "$WORK/probe"
CGTEST_MEMCREATE_DENY=1 CONVGUARD_DIR="$WORK/probe" LD_PRELOAD="$SHIM" "$C" dlsym >"$WORK/probe.shim" 2>&1
check "probe: output the same with and without the shim" diff "$WORK/probe.plain" "$WORK/probe.shim"
T=$(trace_of "$WORK/probe")
check "probe: the refused cuMemCreate is written and marked a capability probe" jqt "$T" "$(F cuMemCreate)"'
    | length == 1 and .[0].status == 800 and .[0].status_name == "CUDA_ERROR_NOT_PERMITTED" and .[0].capability_probe'
check "probe: not counted among the run's failures (the 2 GiB cuMemAlloc_v2 and the bad free are)" jqt "$T" '
    .[-1].failures == ([.[] | select((.ev=="alloc_failed" and (.capability_probe|not)) or .ev=="call_failed")] | length)
      and .[-1].failures == 2'

# the pointer table under churn: 60000 allocations, 4096 alive at a time
same churn
read -r blocks left < <(sed -n 's/^churn: 0 failures, \([0-9]*\) blocks of \([0-9]*\) bytes still allocated$/\1 \2/p' "$WORK/churn.plain")
check "churn: the client ran clean, blocks left allocated" test "${blocks:-0}" -gt 1000
check "churn: live bytes at exit are exactly what is still allocated, nothing untracked" jqt "$T" '
    .[-1].gpu_mem | .live == '"${left:-0}"' and .allocs == 60000 and .frees == 60000 - '"${blocks:-0}"'
      and .untracked == 0 and .unknown_frees == 0 and .alloc_failures == 0'
# the table when blocks cross threads and freed addresses come back at once
# (the interleaving differs from run to run: compared with what the driver says)
mt() { # NAME MODE ALLOCS FAILURES [VAR=VALUE...]: one run of a threaded churn, checked
    local name=$1 mode=$2 allocs=$3 nfail=$4 blocks left
    shift 4
    mkdir -p "$WORK/$name"
    env "$@" CONVGUARD_DIR="$WORK/$name" LD_PRELOAD="$SHIM" "$C" "$mode" >"$WORK/$name.shim" 2>&1
    read -r blocks left < <(sed -n "s/^$mode: $nfail failures, info 0, \([0-9]*\) blocks of \([0-9]*\) bytes still allocated\$/\1 \2/p" "$WORK/$name.shim")
    check "$name: the client ran under the shim ($nfail failed frees), blocks left allocated" test "${blocks:-0}" -gt 0
    T=$(trace_of "$WORK/$name")
    check "$name: live at exit is what the driver says is allocated; every free matched" jqt "$T" '
        .[-1].gpu_mem | .live == '"${left:-0}"' and .allocs == '"$allocs"' and .frees == '"$allocs"' - '"${blocks:-0}"'
          and .untracked == 0 and .unknown_frees == 0 and .alloc_failures == 0'
}
mt churn_mt churn_mt 160000 0
# The same address freed by one thread and allocated and freed again by others
# before that first free has returned: the double gives up the CPU once it has
# the address back (CGTEST_FREE_YIELD).  Before a free marked its slot before
# the real call, every run of these found the wrong slot hundreds of times.
mt churn_mt_yield churn_mt 160000 0 CGTEST_FREE_YIELD=1
mt churn_hot churn_hot 800000 0 CGTEST_FREE_YIELD=1
# frees that fail meanwhile (their slot's mark taken off again: the retry finds it)
mt churn_hot_fail churn_hot 800000 50 CGTEST_FREE_YIELD=1 CGTEST_FREE_FAIL=50
# examples/gpu_hog (the "other process" of tests/gpu/run.sh) on the doubles' 1 GiB GPU
out=$(LD_LIBRARY_PATH=$DOUBLES/cudart:$DOUBLES/cuda "$BUILD_DIR/examples/gpu_hog" 100 0)
check "gpu_hog: holds all but 100 MiB through cudaMalloc" \
    bash -c "echo '$out' | grep -qE '^holding 9[0-9]{8} bytes, free 104857600 of 1073741824, pid [0-9]+$' && echo '$out' | grep -q cudaMalloc"
out=$(LD_LIBRARY_PATH=$DOUBLES/cuda "$BUILD_DIR/examples/gpu_hog" 300 0)
check "gpu_hog: without libcudart, through cuMemAlloc_v2" \
    bash -c "echo '$out' | grep -q 'free 314572800 of 1073741824' && echo '$out' | grep -q cuMemAlloc_v2"
finish
