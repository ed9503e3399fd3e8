# t_report_ranks.sh - a directory of traces from 4 ranks on 2 hosts: one line
# per rank, and what differs between them (rank 3's cuDNN, node-b's driver).
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
D=$ROOT/tests/report/ranks

"$CG" report "$D" >"$WORK/out"
check "exit 1: inconsistencies are problems" test $? = 1
check "one line per rank" test "$(grep -c '^  rank [0-3] (node-[ab]:900[0-3])' "$WORK/out")" = 4
check "header: 4 processes on 2 hosts" grep -q "4 processes on 2 hosts" "$WORK/out"
check "rank 3 loaded another cuDNN, named as the odd one out" \
    grep -q "cuDNN differs: 9.14.0 from /usr/lib/x86_64-linux-gnu/libcudnn.so.9 in rank 3 (node-b:9003);" "$WORK/out"
check "node-b has an older driver" grep -q "driver for CUDA 12.8 in host node-b" "$WORK/out"
# node-b's driver (CUDA 12.8) is older than the runtime its ranks load (13.0), and rank 3's system
# cuDNN is built for CUDA 12.9: the facts say so (analysis/diagnose.c, issue 27; the shim would
# have written both verdicts, the fixture has none), each told once
check "node-b: the driver older than the runtime, told once for ranks 2 and 3" \
    test "$(grep -c '^\[library\] the NVIDIA driver is older than the CUDA runtime (rank 2 (node-b:9002), rank 3$' "$WORK/out")" = 1
check "rank 3 alone: its cuDNN is built for another CUDA major" \
    grep -q '^\[library\] cuDNN is built for another CUDA major version (rank 3 (node-b:9003))' "$WORK/out"
check "ranks 0 and 1 (node-a) stay ok" test "$(grep -cE '^  rank [01] .* ok$' "$WORK/out")" = 2
check "at most 32 lines: one line per rank, each finding told once" test "$(wc -l <"$WORK/out")" -le 32

"$CG" report --json "$D" >"$WORK/j"
check "--json: 2 inconsistencies (cuDNN, driver)" jq -e '[.inconsistencies[].what] == ["cuDNN", "NVIDIA driver"]' "$WORK/j"
check "--json: ranks 0..3 in order" jq -e '[.processes[].rank] == [0,1,2,3]' "$WORK/j"
check "--json: the odd value lists rank 3 only" \
    jq -e '.inconsistencies[0].values[0].processes == ["rank 3 (node-b:9003)"]' "$WORK/j"

# the same set given as files, and with a per-host sub-directory layout
mkdir -p "$WORK/shared/node-a" "$WORK/shared/node-b"
cp "$D"/node-a-* "$WORK/shared/node-a/"
cp "$D"/node-b-* "$WORK/shared/node-b/"
"$CG" report --json "$WORK/shared" >"$WORK/j2"
check "sub-directories per host are read too" jq -e '(.processes | length) == 4' "$WORK/j2"
"$CG" report "$D"/node-a-*.jsonl >"$WORK/out"
check "ranks 0 and 1 alone agree: exit 0" test $? = 0

# real traces of a two-rank torchrun job on two H200s (tests/gpu/run.sh cli): the launcher maps
# libcudnn without using it (no version), which is no inconsistency
R=$ROOT/tests/report/ranks_torchrun
"$CG" report "$R" >"$WORK/tr"
check "torchrun, 2 ranks + launcher: exit 0, no problem" test $? = 0
check "torchrun: both ranks listed with cuDNN 9.19.0" test "$(grep -cE '^rank [01] ' "$WORK/tr")" = 2
check "torchrun: no inconsistency reported" bash -c "! grep -q 'inconsistent' '$WORK/tr'"
"$CG" report --json "$R" >"$WORK/trj"
check "torchrun --json: ranks 0 and 1" jq -e '[.processes[].rank | select(. != null)] == [0,1]' "$WORK/trj"
finish
