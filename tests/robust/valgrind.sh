#!/usr/bin/env bash
# valgrind.sh - memcheck over the test clients and host programs with the
# shim preloaded (make check-valgrind; not part of make test).  Each case runs
# without and with the shim: the shim must add no memcheck error (invalid
# read/write, uninitialised value, definite leak), and no error report may
# have a frame in the shim's sources.  Logs: build/valgrind/<case>.{plain,shim}.log
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${CG_BUILD:-$ROOT/build}
SHIM=$B/libconvguard.so
D=$B/doubles C=$B/clients R=$B/robust U=$B/unit
LOG=$B/valgrind
VALGRIND=${VALGRIND:-valgrind --leak-check=full --errors-for-leak-kinds=definite --child-silent-after-fork=yes}
rm -rf "$LOG" && mkdir -p "$LOG"
fails=0 n=0

# the sum over every process of the case (fork, exec: one log each)
errors() { cat "$1".*.log 2>/dev/null | sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' | awk '{s += $1; n++} END {if (n) print s}'; }
# vg NAME ENV=... -- CMD...: run CMD under memcheck without and with the shim
vg() {
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    n=$((n + 1))
    local out=$LOG/$name
    (env "${envs[@]}" $VALGRIND --trace-children=yes --fullpath-after="$ROOT/" --log-file="$out.plain.%p.log" \
        "$@" >"$out.plain.out" 2>&1; true) 2>/dev/null
    (env "${envs[@]}" CONVGUARD_QUIET=1 CONVGUARD_DIR="$LOG/traces" LD_PRELOAD="$SHIM" \
        $VALGRIND --trace-children=yes --fullpath-after="$ROOT/" --log-file="$out.shim.%p.log" \
        "$@" >"$out.shim.out" 2>&1; true) 2>/dev/null
    local a b
    a=$(errors "$out.plain") b=$(errors "$out.shim")
    if [ -z "$b" ] || [ "${b:-x}" != "${a:-y}" ] || cat "$out".shim.*.log | grep -qE '\(shim/([a-z_]+/)?[a-z_0-9]+\.[cS]:[0-9]+\)'; then
        echo "FAIL $name: memcheck errors without the shim ${a:-?}, with it ${b:-?} (logs $out.*.log)"
        cat "$out".shim.*.log | grep -E 'shim/([a-z_]+/)?[a-z_0-9]+\.[cS]:' | head -5
        fails=$((fails + 1))
    else
        echo "ok   $name: $b memcheck errors with the shim, as without it"
    fi
}
mkdir -p "$LOG/traces" "$LOG/copy"
ALL=LD_LIBRARY_PATH=$D/cudnn9:$D/cudart:$D/cuda
vg basic-echo -- "$U/prog_basic" echo hello
vg basic-fork -- "$U/prog_basic" fork
# (no exec case: valgrind cannot exec /proc/self/exe, which is itself)
vg basic-errno -- "$U/prog_basic" errno
vg routes LD_LIBRARY_PATH=$D/cuda -- "$R/prog_routes"
vg routes-fork LD_LIBRARY_PATH=$D/cuda -- "$R/prog_routes" fork
vg threads LD_LIBRARY_PATH=$D/cuda -- "$R/prog_threads" 8 2000 100 fork
vg crash-recover -- "$R/prog_crash" recover
vg crash-abort LD_LIBRARY_PATH=$D/cuda CG_FAIL_FIRST=1 -- "$R/prog_crash" abort
[ -x "$C/client_torchlike" ] && vg torch LD_LIBRARY_PATH=$D/cuda -- "$C/client_torchlike" "$C/ext_torchlike.so"
[ -x "$C/client_torchlike" ] && vg torch-nodriver -- "$C/client_torchlike" "$C/ext_torchlike.so"
[ -x "$C/client_tflike" ] && vg tf "$ALL" -- "$C/client_tflike"
[ -x "$C/client_tflike" ] && vg tf-pressure "$ALL" CGTEST_GPU_HELD_MB=1000 -- "$C/client_tflike"
[ -x "$C/client_jaxlike" ] && vg jax LD_LIBRARY_PATH=$D/cudnn9:$D/cuda -- "$C/client_jaxlike" "$C/plugin_jaxlike.so"
[ -x "$C/client_probe" ] && vg probe LD_LIBRARY_PATH=$D/cudnn9:$D/cuda -- "$C/client_probe"
[ -x "$C/client_cudnn8" ] && vg cudnn8-broken LD_LIBRARY_PATH=$D/cudnn8-broken:$D/cuda -- "$C/client_cudnn8"
[ -x "$C/client_memroutes" ] && vg memroutes "$ALL" -- "$C/client_memroutes"
echo
echo "valgrind: $((n - fails)) of $n cases clean"
[ $fails -eq 0 ]
