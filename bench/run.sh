#!/usr/bin/env bash
# bench/run.sh - what the shim adds to each hot call, in instructions
# (callgrind: exact and repeatable) and in nanoseconds (wall clock, this
# machine).  The program and its environment are identical in both runs but
# for LD_PRELOAD (empty in the baseline), so only the shim differs.
# Usage: bench/run.sh [MODE...]
set -u
cd "$(dirname "$0")/.."
B=build/bench/hotpath
SHIM=$PWD/build/libconvguard.so
[ -x $B ] && [ -e "$SHIM" ] || { echo "run: make bench"; exit 2; }
modes=${*:-cudaMalloc cuMemAlloc_plt cuMemAlloc_ep cuMemAlloc_dlsym create execute convfwd dlsym_cu dlsym_other}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
envrun() { # PRELOAD cmd...
    env -i PATH=/usr/bin:/bin CONVGUARD_QUIET=1 CONVGUARD_DIR=$T/traces LD_PRELOAD="$1" "${@:2}"
}
ir() { # PRELOAD MODE N -> instructions of the whole run
    envrun "$1" valgrind --tool=callgrind --callgrind-out-file=$T/cg.out "$B" "$2" "$3" 2>&1 >/dev/null |
        awk '/refs:/ {gsub(",", "", $NF); print $NF}'
}
have_vg=0
command -v valgrind >/dev/null && have_vg=1
printf '%-18s %14s %14s %12s %12s %10s\n' mode "instr/call" "added instr" "ns/call" "ns (shim)" "added ns"
for m in $modes; do
    added="-" base="-"
    if [ $have_vg = 1 ]; then
        p1=$(ir "" $m 1000); p2=$(ir "" $m 3000)
        s1=$(ir "$SHIM" $m 1000); s2=$(ir "$SHIM" $m 3000)
        base=$(( (p2 - p1) / 2000 ))
        added=$(( ((s2 - s1) - (p2 - p1)) / 2000 ))
    fi
    # nanoseconds: best of 5 runs of 200000 iterations each
    best() { local b=""; for i in 1 2 3 4 5; do v=$(envrun "$1" $B $m 200000 | awk '{print $3}'); b=$(echo "$b $v" | tr ' ' '\n' | grep . | sort -g | head -1); done; echo $b; }
    np=$(best ""); ns=$(best "$SHIM")
    printf '%-18s %14s %14s %12s %12s %10s\n' $m $base $added $np $ns $(awk -v a=$ns -v b=$np 'BEGIN{printf "%.1f", a-b}')
done
echo "(a call = one iteration of the mode: cudaMalloc+cudaFree, cuMemAlloc_v2+cuMemFree_v2, create+destroy, one execute, one convolution, one dlsym)"
