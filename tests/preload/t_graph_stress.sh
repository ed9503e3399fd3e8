# t_graph_stress.sh - 1,000,000 descriptor create/destroy pairs (JAX makes
# ~50,000 for one small convolution) through the shim: no failure, no event
# written, no descriptor left untracked, and no growth in memory.  Prints the
# cost per pair with and without the shim (a number, not an assertion).
source "$(dirname "$0")/../lib.sh"
export LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/cudart
export CLIENT_CUDNN=$DOUBLES/cudnn9/libcudnn.so.9 CONVGUARD_QUIET=1
N=1000000

"$CLIENTS/client_graph" stress $N >"$WORK/plain.out" 2>"$WORK/plain.err"
run_shim "$WORK/t" "$CLIENTS/client_graph" stress $N >"$WORK/shim.out" 2>"$WORK/shim.err"
T=$(trace_of "$WORK/t")
num() { sed -n "s/^$1 //p" "$2"; }
echo "  note t_graph_stress: ns per create+destroy pair on the double: $(num stress_ns_per_pair "$WORK/plain.err") without the shim, $(num stress_ns_per_pair "$WORK/shim.err") with it"
check "1,000,000 pairs, none failed" grep -qx "stress: $N pairs, 0 failed" "$WORK/shim.out"
check "the shim saw every call" jqt "$T" ".[-1].calls.cudnnBackendCreateDescriptor == ($N + 10000) and .[-1].calls.cudnnBackendDestroyDescriptor == ($N + 10000)"
check "no event but start, the libraries, exit" jqt "$T" 'map(.ev) | unique - ["start","lib","dlopen","exit"] == []'
check "no descriptor left untracked" jqt "$T" '.[-1].graph.untracked == 0 and .[-1].failures == 0'
growth=$(num stress_rss_growth_kb "$WORK/shim.err")
check "resident memory grew less than 1 MiB over 1,000,000 pairs (grew ${growth} KiB)" test "${growth:-99999}" -lt 1024

# two threads at once, 64 descriptors alive: the table's compare-and-swap paths
run_shim "$WORK/t2" "$CLIENTS/client_graph" stress $N 2 >"$WORK/two.out" 2>"$WORK/two.err"
T=$(trace_of "$WORK/t2")
check "two threads: none failed, none untracked, no event" jqt "$T" \
    '.[-1].graph.untracked == 0 and .[-1].failures == 0 and (map(.ev) | unique - ["start","lib","dlopen","exit"] == [])'
check "two threads: output" grep -qx "stress: $N pairs, 0 failed" "$WORK/two.out"
finish
