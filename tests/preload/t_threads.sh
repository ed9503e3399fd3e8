# t_threads.sh - 64 threads x 100,000 hooked calls (cuMemFree_v2 succeeding;
# every 100th failing, cuMemRelease and cuMemAlloc_v2 in turn, each writing
# an event), with a fork in the middle: no torn or interleaved line, counters
# exact in parent and child, no deadlock.  CG_THREADS_ITERS scales the calls
# (make check-tsan).  Under ASan (CG_SANITIZED) without the fork: GCC 12's
# ASan allocator is not fork-safe (a child of a busy multithreaded process
# can hang in malloc, with or without the shim).
source "$(dirname "$0")/../lib.sh"
P=$ROBUST/prog_threads
N=64
I=${CG_THREADS_ITERS:-100000}
F=100
export LD_LIBRARY_PATH=$DOUBLES/cuda
D=$WORK/t
mkdir -p "$D"
FORK=${CG_THREADS_FORK-fork} # check-tsan: forkfirst
[ -n "${CG_SANITIZED:-}" ] && FORK=
out=$(CONVGUARD_REPEATS=0 CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM timeout 60 "$P" $N $I $F $FORK); rc=$?
check "no deadlock, every call returned what the double returns (rc $rc)" test $rc = 0
check "program output unchanged" test "$out" = "calls=$((N * I)) fails=$((N * (I / F))) wrong=0"
# timeout(1) runs with the shim too and leaves its own (CPU-only) trace
ours=$(grep -l '"exe":"[^"]*/prog_threads"' "$D"/*.jsonl)
parent=$(grep -L '"forked_from"' $ours)
child=$(grep -l '"forked_from"' $ours)
check "two traces: the parent's and the forked child's" test "$(echo "$parent" | wc -w) $(echo "$child" | wc -w)" = "1 $([ -n "$FORK" ] && echo 1 || echo 0)"
check "every line of each is one whole JSON object" bash -c "jq -c . $parent $child >/dev/null && [ \$(jq -c . $parent $child | wc -l) = \$(cat $parent $child | wc -l) ]"
check "seq: sorted, 0..n-1 in each file (no line lost or doubled)" traces_valid "$D"
R=$((N * (I / F / 2))) # failing cuMemRelease calls (as many cuMemAlloc_v2)
check "parent: one call_failed line per failed cuMemRelease" jqt "$parent" "map(select(.ev == \"call_failed\" and .fn == \"cuMemRelease\")) | length == $R"
check "parent: alloc_failed lines (the first 256 written, the rest counted)" \
    jqt "$parent" "(map(select(.ev == \"alloc_failed\")) | length) == ([256, $R] | min) and .[-1].gpu_mem.alloc_failed_unwritten == $R - ([256, $R] | min)"
check "parent: exit.calls and exit.fails exact" jqt "$parent" "map(select(.ev==\"exit\"))[0] | .calls.cuMemFree_v2 == $((N * (I - I / F))) and .calls.cuMemRelease == $R and .calls.cuMemAlloc_v2 == $R and .fails.cuMemRelease == $R and .fails.cuMemAlloc_v2 == $R and .events_dropped == 0"
check "parent: events from all $N threads" jqt "$parent" "[.[] | select(.ev==\"call_failed\") | .tid] | unique | length == $N"
if [ -n "$FORK" ]; then
check "child: start links to the parent (forked_from, ppid)" \
    jq -e -s --slurpfile p "$parent" '.[0].ev == "start" and .[0].forked_from == $p[0].pid and .[0].ppid == $p[0].pid' "$child"
check "child: its own counts only (4 threads x 1000 calls)" \
    jqt "$child" 'map(select(.ev=="exit"))[0] | .calls.cuMemFree_v2 == 3960 and .calls.cuMemRelease == 20 and .calls.cuMemAlloc_v2 == 20 and .fails.cuMemRelease == 20'
check "child: 20 call_failed lines, first line start (opened once by racing threads)" \
    jqt "$child" '(map(select(.ev == "call_failed")) | length == 20) and (map(select(.ev=="start")) | length == 1) and .[0].ev == "start"'
fi
finish
