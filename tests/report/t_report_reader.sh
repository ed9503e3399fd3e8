# t_report_reader.sh - the trace reader survives what real trace files hold:
# a cut last line, garbage, lines over 1 MiB, bytes that are not UTF-8, and
# traces of other convguard versions (unknown events and fields, missing ones).
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
SRC=$ROOT/tests/report/traces/handle_memory_held.jsonl
names_rule() { "$CG" report --json "$1" 2>/dev/null | jq -e '.findings[0].rule == "handle_memory_held"' >/dev/null; }

# a last line cut in the middle (the process was killed while writing)
f=$WORK/cut.jsonl
cat "$SRC" >"$f"
printf '{"ev":"call_failed","seq":10,"t":0.5,"fn":"cudaMal' >>"$f"
check "cut last line: the rest is read" names_rule "$f"
check "cut last line: counted, not an error" bash -c "'$CG' report --json '$f' | jq -e '.processes[0].read.last_line_cut == true and .processes[0].read.bad_lines == 0'"
check "cut last line: the text report says so" bash -c "'$CG' report '$f' | grep -q 'the last line was cut off'"

# garbage between events
f=$WORK/garbage.jsonl
{ head -3 "$SRC"; echo 'this is not json'; echo '[1,2,3]'; echo '{"no_ev":true}'; printf '\x00\x01\x02\n'; echo '{"ev":'; tail -n +4 "$SRC"; } >"$f"
check "garbage lines: the events around them are read" names_rule "$f"
check "garbage lines: 5 counted" bash -c "'$CG' report --json '$f' | jq -e '.processes[0].read.bad_lines == 5'"

# a line over 1 MiB (a huge argv, say) and one over it in an unknown event
f=$WORK/huge.jsonl
python3 - "$SRC" "$f" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
start = json.loads(lines[0]); start["argv"] = ["python3"] + ["x" * 1000] * 1500
out = [json.dumps(start)] + lines[1:4] + [json.dumps({"ev": "future_event", "seq": 4, "blob": "y" * (2 << 20)})] + lines[4:]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
check "huge lines (>1 MiB): read" names_rule "$f"
check "huge lines: counted" bash -c "'$CG' report --json '$f' | jq -e '.processes[0].read.huge_lines == 2'"

# bytes that are not UTF-8 inside strings (paths are bytes)
f=$WORK/latin1.jsonl
sed 's|/home/u/venv|/home/j\xf6rg/venv|g; s|"reason":"cudaMalloc failed"|"reason":"bad \xff\xfe bytes"|' "$SRC" >"$f"
check "non-UTF-8 bytes: the lines still parse" names_rule "$f"
check "non-UTF-8 bytes: shown as '?'" bash -c "'$CG' report -v '$f' | grep -q '/home/j?rg/venv'"

# a trace from another convguard version: unknown events and fields, missing fields
f=$WORK/other_version.jsonl
cat >"$f" <<'T'
{"ev":"start","seq":0,"convguard":"9.9.9","pid":77,"host":"h","new_field":{"a":[1,2]},"env":{}}
{"ev":"gpu_power","seq":1,"watts":700}
{"ev":"lib","seq":2,"path":"/opt/cuda/libcudart.so.13","family":"cudart","version":"thirteen"}
{"ev":"dlopen","seq":3,"name":"libcuda.so.1","ok":false,"error":"libcuda.so.1: cannot open shared object file: No such file or directory"}
{"ev":"cudnn_handle","seq":4,"fn":"cudnnCreate","status":1001,"ok":false,"likely_cause":"no_driver"}
{"ev":"call_failed","seq":5}
{"ev":"exit"}
T
"$CG" report --json "$f" >"$WORK/j" 2>"$WORK/err"
check "other version: exit 1, no crash" test $? = 1
check "other version: still finds the missing driver" jq -e '.findings[0].rule == "handle_no_driver"' "$WORK/j"
check "other version: stem added to an old dlopen failure" bash -c "'$CG' report '$f' | grep -q 'libcuda.so.1 could not be loaded'"

# a start line only, no seq at all, an empty file, a missing path
f=$WORK/bare.jsonl
echo '{"ev":"start"}' >"$f"
"$CG" report "$f" >/dev/null 2>&1
check "a lone start line: read (exit 0 or 1, not a crash)" test $? -le 1
: >"$WORK/empty.jsonl"
"$CG" report "$WORK/empty.jsonl" >/dev/null 2>&1
check "an empty file alone: exit 2" test $? = 2
"$CG" report "$WORK/nope.jsonl" >/dev/null 2>&1
check "a missing path: exit 2" test $? = 2
(cd "$WORK" && CONVGUARD_DIR= "$CG" report >"$WORK/o" 2>&1)
check "no path and no ./convguard-logs: exit 2, saying where it looked" \
    bash -c "test \$? = 0; (cd '$WORK' && CONVGUARD_DIR= '$CG' report >/dev/null 2>&1); test \$? = 2 && grep -q './convguard-logs' '$WORK/o'"
mkdir -p "$WORK/cl/convguard-logs" && cp "$SRC" "$WORK/cl/convguard-logs/"
(cd "$WORK/cl" && env -u CONVGUARD_DIR "$CG" report >"$WORK/o" 2>&1)
check "no path: reads ./convguard-logs" grep -q "^convguard report: " "$WORK/o"
CONVGUARD_DIR=$WORK/cl/convguard-logs "$CG" report >"$WORK/o" 2>&1
check "no path: reads \$CONVGUARD_DIR" grep -q "^convguard report: " "$WORK/o"
"$CG" report "$SRC" "$WORK/empty.jsonl" >"$WORK/out" 2>&1
check "a readable trace beside an empty one: reported, the empty one noted" grep -q "empty.jsonl: no convguard events" "$WORK/out"

# seq gaps (lines lost) are noted
f=$WORK/gaps.jsonl
grep -v '"seq":3,' "$SRC" >"$f"
check "seq gap: noted" bash -c "'$CG' report '$f' | grep -q '1 line lost'"
# two threads' lines written out of seq order lose nothing (a JAX trace got "2 lines lost")
f=$WORK/order.jsonl
awk 'NR == 3 { held = $0; next } { print } NR == 5 { print held }' "$SRC" >"$f"
check "seq only out of order: read in full, no line lost" bash -c \
    "'$CG' report --json '$f' | jq -e '.processes[0].read.seq_gaps == 0' >/dev/null && ! '$CG' report '$f' | grep -q 'lost'"
awk 'NR == 3 { held = $0; next } NR == 6 { next } { print } NR == 5 { print held }' "$SRC" >"$f"
check "out of order and one missing: 1 line lost" bash -c "'$CG' report '$f' | grep -q '1 line lost'"
# a process that exec'd: its first file has no exit line, the same pid's later file goes on
mkdir -p "$WORK/exec"
python3 - "$SRC" "$WORK/exec" <<'PYEOF'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pid = evs[0]["pid"]
first = [e for e in evs if e["ev"] == "start"]
second = [dict(e) for e in evs]
for e in second:
    if e["ev"] == "start":
        e["wall_time"] = e.get("wall_time", 0) + 1
open(sys.argv[2] + "/h-%d.jsonl" % pid, "w").write("".join(json.dumps(e) + "\n" for e in first))
open(sys.argv[2] + "/h-%d.2.jsonl" % pid, "w").write("".join(json.dumps(e) + "\n" for e in second))
PYEOF
check "exec: the image replaced by exec is not reported as killed" bash -c "! '$CG' report '$WORK/exec' | grep -q 'no exit line'"
lone=$(ls "$WORK"/exec/*.jsonl | grep -v '\.2\.jsonl$')
check "a lone trace without exit line is still noted" bash -c "'$CG' report '$lone' | grep -q 'no exit line'"
finish
