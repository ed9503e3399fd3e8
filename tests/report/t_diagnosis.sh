# t_diagnosis.sh - one diagnosis, in one place (issue 27 item 0): the shim
# records facts, tools/analysis/diagnose.c says what they mean, for report,
# inspect and convguard.check() alike.
#  1. a live process under the shim (the cuDNN doubles, a dispatcher 9.0.0
#     beside a graph part 9.1.0, both versions in their files' names): the
#     report of its trace, `inspect PID`, and check() inside it (its inspect
#     and its trace) give the same rule and severity; its trace holds facts,
#     no verdict or likely_cause.
#  2. every recorded trace that holds an older shim's verdicts or
#     likely_cause: with those taken out, the facts alone give the same
#     findings, word for word.
#  3. an older trace's verdict is read as it is, not told twice.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
R=$ROOT/tests/report
D9=$DOUBLES/cudnn9
PY=$(command -v python3) || skip_all "no python3"
[ -e "$D9/libcudnn.so.9" ] || skip_all "no cuDNN doubles (make doubles)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT

# ---- 1. a live process: report, inspect, check()
X=$WORK/cudnn
mkdir -p "$X" && cp "$D9"/* "$X/"
mv "$X/libcudnn.so.9" "$X/libcudnn.so.9.0.0" && ln -s libcudnn.so.9.0.0 "$X/libcudnn.so.9"
mv "$X/libcudnn_graph.so.9" "$X/libcudnn_graph.so.9.1.0" && ln -s libcudnn_graph.so.9.1.0 "$X/libcudnn_graph.so.9"
cat >"$WORK/live.py" <<'PYEOF'
import ctypes, json, sys, time
lib = ctypes.CDLL(sys.argv[1] + "/libcudnn.so.9")
h = ctypes.c_void_p()
rc = lib.cudnnCreate(ctypes.byref(h))
import convguard
c = convguard.check()
json.dump({"rc": rc, "dict": c.to_dict()}, open(sys.argv[2], "w"))
open(sys.argv[2] + ".ready", "w").close()
time.sleep(60)
PYEOF
PYTHONPATH=$ROOT/python CONVGUARD_BIN=$CG CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/traces LD_PRELOAD=$SHIM \
    LD_LIBRARY_PATH=$DOUBLES/cudart:$DOUBLES/cuda "$PY" "$WORK/live.py" "$X" "$WORK/check.json" &
PIDS+=($!)
LIVE=$!
for _ in $(seq 200); do [ -e "$WORK/check.json.ready" ] && break; sleep 0.05; done
check "live: the process ran cudnnCreate (0) and check()" jq -e '.rc == 0' "$WORK/check.json"
T=$(trace_of "$WORK/traces")
check "live: its trace holds the facts: the dispatcher 90000 and the graph part 90100 (their files' names)" jqt "$T" \
    'any(.[]; .ev=="lib" and .soname=="libcudnn.so.9" and .version==90000) and any(.[]; .ev=="lib" and .soname=="libcudnn_graph.so.9" and .version==90100)'
check "live: ... and no verdict, no likely_cause (the shim judges nothing)" jqt "$T" \
    'all(.[]; .ev != "verdict" and (has("likely_cause") | not))'
"$CG" report --json "$WORK/traces" >"$WORK/report.json" 2>/dev/null
"$CG" inspect --json "$LIVE" >"$WORK/inspect.json" 2>/dev/null
said() { jq -c "[$2.findings[] | [.rule, .severity]]" "$WORK/$1.json"; }
check "live: the report of its trace: parts of two versions, an error ($(said report ''))" \
    jq -e '[.findings[] | [.rule, .severity]] == [["cudnn_sublib_mismatch", "error"]]' "$WORK/report.json"
check "live: inspect PID says the same ($(said inspect ''))" test "$(said inspect '')" = "$(said report '')"
check "live: check()'s inspect says the same ($(said check '.dict.inspect'))" test "$(said check '.dict.inspect')" = "$(said report '')"
check "live: check()'s trace says the same ($(said check '.dict.trace'))" test "$(said check '.dict.trace')" = "$(said report '')"

# ---- 2. an older shim's verdicts and likely_cause taken out: the facts give the same findings
n=0 same=0 differ=""
for f in "$R"/traces/*.jsonl "$R"/corpus/*/*.jsonl; do
    grep -q '"verdict"\|likely_cause' "$f" || continue
    n=$((n + 1))
    jq -c 'select(.ev != "verdict") | del(.likely_cause)' "$f" >"$WORK/facts.jsonl"
    # lib_replaced_on_disk was a verdict: the same fact is now a lib_changed event
    jq -c 'select(.ev == "verdict" and .kind == "lib_replaced_on_disk") | .ev = "lib_changed" | del(.kind, .detail)' "$f" >>"$WORK/facts.jsonl"
    a=$("$CG" report --json "$f" 2>/dev/null | jq -c '[.findings[] | [.rule, .cause, .fix]]')
    b=$("$CG" report --json "$WORK/facts.jsonl" 2>/dev/null | jq -c '[.findings[] | [.rule, .cause, .fix]]')
    if [ "$a" = "$b" ]; then same=$((same + 1)); else differ="$differ ${f#$R/}"; fi
done
check "facts alone: $same of $n recorded traces with verdicts or likely_cause give the same findings${differ:+ (not:$differ)}" \
    test "$n" -gt 20 -a "$same" = "$n"

# ---- 3. an older trace's verdict, read as it is and once
"$CG" report --json "$R/traces/cudnn_multiple_copies.jsonl" >"$WORK/old.json" 2>/dev/null
vseq=$(jq -s 'map(select(.ev == "verdict" and .kind == "cudnn_multiple_copies"))[0].seq' "$R/traces/cudnn_multiple_copies.jsonl")
check "old verdict: one cudnn_multiple_copies finding, at the old verdict's seq ($vseq)" \
    jq -e --argjson s "$vseq" '[.findings[] | select(.rule == "cudnn_multiple_copies")] | length == 1 and .[0].seq == $s' "$WORK/old.json"
# an older shim's trace without likely_cause (before it existed): one cause, not two
"$CG" report --json "$R/precedence/handle_memory_held--handle_out_of_memory.old.jsonl" >"$WORK/nocause.json" 2>/dev/null
check "no likely_cause: 200 MiB free, another process holds 84 GB: memory held, and only that" \
    jq -e '[.findings[].rule] == ["handle_memory_held"]' "$WORK/nocause.json"
finish
