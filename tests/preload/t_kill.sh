# t_kill.sh - nothing is lost to SIGKILL: every event written before it is in
# the file as a whole line (each event is one write(2), nothing is buffered).
source "$(dirname "$0")/../lib.sh"
P=$ROBUST/prog_threads
export LD_LIBRARY_PATH=$DOUBLES/cuda
export CG_FAIL_KIND=release # cuMemRelease(0): one call_failed event per call

# 4 threads x 1000 failing calls, then the process SIGKILLs itself.
D=$WORK/k1
mkdir -p "$D"
out=$(CONVGUARD_REPEATS=0 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$P" 4 1000 1 kill 2>/dev/null); rc=$?
check "killed by SIGKILL (137), output unchanged" test "$rc $out" = "137 calls=4000 fails=4000 wrong=0"
T=$(trace_of "$D")
ends_nl() { [ "$(tail -c1 "$1" | od -An -tx1 | tr -d ' ')" = 0a ]; }
check "the file ends with a whole line" ends_nl "$T"
check "all 4000 failure events are in the file, each line one JSON object" \
    bash -c "[ \$(jq -c . $T | wc -l) = \$(wc -l < $T) ] && jq -e -s '.[0].ev == \"start\" and (map(select(.ev | endswith(\"_failed\"))) | length == 4000)' $T"
check "no exit line (killed), seq without gaps" jqt "$T" '(map(select(.ev=="exit")) | length == 0) and ([.[].seq] | sort == [range(0; length)])'

# 8 threads writing without end, killed from outside in the middle.
D=$WORK/k2
mkdir -p "$D"
CONVGUARD_REPEATS=0 CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$P" 8 0 1 forever >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
    T=$(ls "$D"/*.jsonl 2>/dev/null)
    [ -n "$T" ] && [ "$(wc -l < "$T")" -gt 20000 ] && break
    sleep 0.05
done
kill -KILL $pid
wait $pid 2>/dev/null
T=$(trace_of "$D")
# Only the line being written at the kill may be cut (a write spanning a page
# can stop at SIGKILL): then it is the last one and has no newline.
complete() { if [ "$(tail -c1 "$1" | od -An -tx1 | tr -d ' ')" = 0a ]; then cat "$1"; else sed '$d' "$1"; fi; }
check "killed mid-stream: more than 20000 lines written" test "$(wc -l < "$T")" -gt 20000
check "killed mid-stream: every complete line is one JSON object" bash -c "$(declare -f complete); [ \$(complete $T | jq -c . | wc -l) = \$(complete $T | wc -l) ]"
check "killed mid-stream: no seq twice" bash -c "$(declare -f complete); complete $T | jq -s -e '([.[].seq] | unique | length) == length'"
finish
