#!/usr/bin/env bash
# bench/run.sh - what the shim costs, printed as a summary table:
#  1. each hot call: added instructions (callgrind: exact and repeatable) and
#     nanoseconds (wall clock, this machine).  The program and its environment
#     are identical in both runs but for LD_PRELOAD (empty in the baseline),
#     so only the shim differs.  Instructions are the slope between N=1000 and
#     N=3000 iterations, so start-up and exit cancel out.
#  2. steady-state trace volume: bytes the shim writes for 100,000 successful
#     hooked calls beyond what it writes for one (goal: 0).
#  3. start-up (bench/startup.sh): what the shim adds to a process start.
# Usage: bench/run.sh [MODE...]       (MODE: see bench/hotpath.c)
#        SHIM=/path/libconvguard.so bench/run.sh   compares another build
#        BENCH_SKIP_STARTUP=1 skips part 3.
set -u
cd "$(dirname "$0")/.."
B=build/bench/hotpath
SHIM=${SHIM:-$PWD/build/libconvguard.so}
[ -x $B ] && [ -e "$SHIM" ] || { echo "run: make bench"; exit 2; }
modes=${*:-cudaMalloc cuMemAlloc_plt cuMemAlloc_ep cuMemAlloc_dlsym create execute convfwd setattr getattr procaddr dlsym_cu dlsym_other dlsym_hooked dlsym_default dlopen_loaded stub_plt}
# stub_plt runs bench/stubpath.c (a framework's own stub between the program and libcuda)
prog() { case $1 in stub_*) echo build/bench/stubpath ;; *) echo $B ;; esac; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
envrun() { # PRELOAD cmd...   (LD_LIBRARY_PATH: for stubpath's stub; hotpath has an RPATH)
    env -i PATH=/usr/bin:/bin CONVGUARD_QUIET=1 CONVGUARD_DIR=$T/traces LD_PRELOAD="$1" \
        LD_LIBRARY_PATH=$PWD/build/doubles/cuda "${@:2}"
}
ir() { # PRELOAD MODE N -> instructions of the whole run
    envrun "$1" valgrind --tool=callgrind --callgrind-out-file=$T/cg.out "$(prog $2)" "$2" "$3" 2>&1 >/dev/null |
        awk '/refs:/ {gsub(",", "", $NF); print $NF}'
}
best() { # PRELOAD MODE -> best of 5 runs of 200000 iterations, ns per iteration
    for i in 1 2 3 4 5; do envrun "$1" $(prog $2) $2 200000 | awk '{print $3}'; done | sort -g | head -1
}
have_vg=0
command -v valgrind >/dev/null && have_vg=1
echo "== 1. hot calls (shim: $SHIM)"
printf '%-18s %11s %12s %9s %10s %9s   %s\n' mode "instr/iter" "added instr" "calls" "added/call" "ns/iter" "added ns"
for m in $modes; do
    added="-" base="-" per="-"
    case $m in cudaMalloc | cuMemAlloc_*) calls=2 ;; create) calls=2 ;; *) calls=1 ;; esac
    if [ $have_vg = 1 ]; then
        p1=$(ir "" $m 1000); p2=$(ir "" $m 3000)
        s1=$(ir "$SHIM" $m 1000); s2=$(ir "$SHIM" $m 3000)
        base=$(( (p2 - p1) / 2000 ))
        added=$(( ((s2 - s1) - (p2 - p1)) / 2000 ))
        per=$(( added / calls ))
    fi
    np=$(best "" $m); ns=$(best "$SHIM" $m)
    printf '%-18s %11s %12s %9s %10s %9s   %s\n' $m $base $added $calls $per $np \
        "$(awk -v a=$ns -v b=$np 'BEGIN{printf "%+.1f", a-b}')"
done
echo "(an iteration: cudaMalloc+cudaFree, cuMemAlloc_v2+cuMemFree_v2 by PLT / entry point / dlsym,"
echo " BackendCreate+Destroy, one Execute, one ConvolutionForward, one SetAttribute, one GetAttribute,"
echo " one cuGetProcAddress_v2, one dlsym of a cuDNN name / of printf; stub_plt: one cuMemGetInfo_v2 through"
echo " the program's PLT into a framework's stub and on to libcuda; goal: added/call <= 30)"

echo
echo "== 2. steady-state trace volume (bytes written by the shim)"
printf '%-18s %12s %14s %8s %14s\n' mode "1 iteration" "100000 iter." added "events added"
for m in cudaMalloc cuMemAlloc_ep create execute convfwd setattr getattr procaddr dlsym_cu; do
    sz=() ev=()
    for n in 1 100000; do
        rm -rf $T/traces
        envrun "$SHIM" $B $m $n >/dev/null
        sz+=("$(cat $T/traces/* 2>/dev/null | wc -c)")
        ev+=("$(cat $T/traces/* 2>/dev/null | wc -l)")
    done
    printf '%-18s %12s %14s %8s %14s\n' $m ${sz[0]} ${sz[1]} $(( sz[1] - sz[0] )) $(( ev[1] - ev[0] ))
done
echo "(the bytes added are the longer counts in the one exit event, e.g. \"calls\":100000; no event is added)"

if [ "${BENCH_SKIP_STARTUP:-0}" != 1 ]; then
    echo
    SHIM=$SHIM bench/startup.sh
fi
