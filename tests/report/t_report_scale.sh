# t_report_scale.sh - `convguard report` on a job's worth of ranks, made from a
# real JAX trace by gen_ranks.py: processes that share a finding told once with
# a compact list, the odd one told apart, the first failure named and what the
# others' failures look like next to it; bad input at scale (cut lines, files
# that are not JSON, empty files, 10,000 files).  Memory: t_report_memory.sh.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
GEN=$ROOT/tests/report/gen_ranks.py
gen() { python3 "$GEN" "$@" >/dev/null; }
# peak_mb OUT CMD...: exit status and peak RSS in MB of CMD (stdout and stderr to OUT), from getrusage
peak_mb() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
print("%d %d" % (rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))
PY
}
# the rank whose failure came first by the files' own clocks: start wall time + t of the failure
first_rank() {
    python3 - "$1" "$2" <<'PY'
import json, os, sys
best = None
for n in os.listdir(sys.argv[1]):
    start, fail = None, None
    for line in open(os.path.join(sys.argv[1], n)):
        e = json.loads(line)
        if e["ev"] == "start":
            start = e
        elif fail is None and (e["ev"] == sys.argv[2] or (e["ev"] == "dlopen" and e.get("ok") is False and "libcuda" in e.get("name", ""))):
            fail = e
    if fail:
        w = start["wall_time"] + start["wall_time_ns"] / 1e9 + fail["t"]
        if best is None or w < best[0]:
            best = (w, start["rank"])
print(best[1])
PY
}

# ---- all ranks the same: one line, one finding, no consequence
S=$WORK/same
gen "$S" --ranks 200 --hosts 25 --size 30000
"$CG" report "$S" >"$WORK/out"
check "same: exit 1, one problem" bash -c "test $? = 1 && grep -q '^convguard report: 200 processes on 25 hosts: 1 problem$' '$WORK/out'"
check "same: the 200 ranks share one table line" \
    grep -q "^  200 processes: ranks 0-199 on node0-node24: python3 tests/gpu/fb_conv.py jax" "$WORK/out"
check "same: the finding is told once, for all of them" \
    bash -c "test \$(grep -c '^\[resource\]' '$WORK/out') = 1 && grep -A1 '^\[resource\] this process.s own memory pool' '$WORK/out' | tr -s ' \n' ' ' | grep -q '(200 processes: ranks 0-199 on node0-node24)'"
r=$(first_rank "$S" code_load_failed)
check "same: the first failure is the rank that failed first by its clock (rank $r)" \
    grep -q "^first failure: rank $r (node[0-9]*:[0-9]*), 7.1 s after its start" "$WORK/out"
check "same: the others failed the same way: not consequences" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q '199 others failed the same way, [0-9.-]* s later (ranks [0-9,-]* on node0-node24): the same problem in each process, not a consequence'"
check "same: host clocks noted as uncertain" bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q 'the order across hosts is uncertain'"
check "same: the whole report in under 30 lines" test "$(wc -l <"$WORK/out")" -lt 30
"$CG" report --all "$S" >"$WORK/all"
check "same --all: one line per process" test "$(grep -c '^  rank [0-9]* (node[0-9]*:' "$WORK/all")" = 200
check "same --all: hosts in natural order (node2 before node10)" \
    bash -c "grep -o '^  rank [0-9]* (node[0-9]*' '$WORK/all' | awk -F'node' '{print \$2}' | sort -n -c"
"$CG" report --json "$S" >"$WORK/j"
check "same --json: one group of 200, one finding, the compact list" \
    jq -e '(.groups | length) == 1 and .groups[0].count == 200 and .groups[0].who == "ranks 0-199 on node0-node24" and (.findings | length) == 1 and .findings[0].count == 200' "$WORK/j"
check "same --json: first_failure names rank $r, the others same_cause" \
    jq -e --argjson r "$r" '.processes[.first_failure.process].rank == $r and .first_failure.after[0].kind == "same_cause" and .first_failure.after[0].count == 199' "$WORK/j"
check "same --json: findings keep their fields (processes, seq, facts)" \
    jq -e '.findings[0] | (.processes | length) == 200 and .rule == "own_pool_took_memory" and (.facts.pool > 0) and .seq != null' "$WORK/j"
"$CG" report --html "$WORK/same.html" "$S" >/dev/null
check "same --html: the group's processes folded in <details>" \
    bash -c "grep -q '<details><summary>200 processes: ranks 0-199 on node0-node24' '$WORK/same.html'"
check "same --html: the first failure on the page" grep -q "<h2>First failure</h2>" "$WORK/same.html"

# ---- one odd rank: told apart from all the others
O=$WORK/odd
gen "$O" --ranks 200 --hosts 25 --size 30000 --scenario odd --odd 37
"$CG" report "$O" >"$WORK/out"
check "odd: rank 37 has its own table line with cuDNN 9.14.0" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q ' rank 37 (node4:10037): python3 tests/gpu/fb_conv.py jax cuDNN 9.14.0'"
check "odd: the others in one line" grep -q "^  199 processes: ranks 0-36,38-199 on node0-node24:" "$WORK/out"
check "odd: 'rank 37: cuDNN 9.14 from /usr/lib..., the others 9.19'" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q 'cuDNN differs: 9.14.0 from /usr/lib/x86_64-linux-gnu/libcudnn.so.9 in rank 37 (node4:10037); 9.19.0 from /opt/torch/[^ ]*/libcudnn.so.9 in the 199 others (ranks 0-36,38-199 on node0-node24)'"
"$CG" report --json "$O" >"$WORK/j"
check "odd --json: the odd value first, with its count" \
    jq -e '.inconsistencies[0].values[0] == {"value": "9.14.0 from /usr/lib/x86_64-linux-gnu/libcudnn.so.9", "processes": ["rank 37 (node4:10037)"], "count": 1, "who": "rank 37 (node4:10037)"} and .inconsistencies[0].values[1].count == 199' "$WORK/j"

# ---- two causes: each told once; the first failure and the other cause apart
T=$WORK/two
gen "$T" --ranks 200 --hosts 25 --size 30000 --scenario two
"$CG" report "$T" >"$WORK/out"
check "two: both findings, each for its half" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q 'no NVIDIA driver: cuDNN cannot create its handle (100 processes: ranks 100-199 on node12-node24)' && tr -s ' \n' ' ' <'$WORK/out' | grep -q 'nothing was left for cuDNN and the GPU code (100 processes: ranks 0-99 on node0-node12)'"
r=$(first_rank "$T" code_load_failed_never)
check "two: the first failure is a rank without driver (rank $r): it fails at once" \
    bash -c "grep -q '^first failure: rank $r (node[0-9]*:[0-9]*), 0.0[0-9]* s after its start' '$WORK/out' && test $r -ge 100"
check "two: the other half failed later with another cause, a problem of their own" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q '100 processes failed later with another cause, [0-9.-]* s later (ranks 0-99 on node0-node12; this process.s own memory pool took the GPU'"

# ---- one rank fails, the others are killed later: consequences
C=$WORK/cascade
gen "$C" --ranks 200 --hosts 25 --size 30000 --scenario cascade --odd 37
"$CG" report "$C" >"$WORK/out"
check "cascade: rank 37 failed first" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q 'first failure: rank 37 (node4:10037), 7.1 s after its start ([0-9: -]*\.[0-9]* UTC): #[0-9]* cuModuleLoadData -> CUDA_ERROR_OUT_OF_MEMORY (2)[^;]*; problem: this process.s own memory pool took the GPU'"
check "cascade: the killed ones are consequences" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q '133 processes killed by a signal (SIGABRT 133), 59[0-9]-60[0-9] s later (ranks [0-9,-]* and [0-9]* more on node0-node24): most likely consequences of the failure of rank 37 (node4:10037)'"
check "cascade: those without an exit line too" \
    bash -c "tr -s ' \n' ' ' <'$WORK/out' | grep -q '66 processes stopped without an exit line (killed, e.g. by SIGKILL from the launcher), 59[0-9]-60[0-9] s later'"
"$CG" report --json "$C" >"$WORK/j"
check "cascade --json: kinds killed (133) and stopped (66)" \
    jq -e '[.first_failure.after[] | [.kind, .count]] == [["killed", 133], ["stopped", 66]] and .first_failure.after[0].signals.SIGABRT == 133' "$WORK/j"

# ---- natural order of hosts for processes without a rank
N=$WORK/natural
mkdir -p "$N"
for h in node10 node2 node1; do
    sed "s/\"host\":\"node-a\"/\"host\":\"$h\"/; s/\"rank\":0/\"rank\":null/" "$ROOT/tests/report/ranks/node-a-r0-9000.jsonl" >"$N/$h-9000.jsonl"
done
"$CG" report --json "$N" >"$WORK/j"
check "hosts sort naturally: node1, node2, node10" jq -e '[.processes[].host] == ["node1", "node2", "node10"]' "$WORK/j"

# ---- bad input at scale: 10,000 files, some cut, some not JSON, some empty
B=$WORK/bad
python3 - "$ROOT/tests/report/ranks/node-a-r0-9000.jsonl" "$B" <<'PY'
import os, sys
src = open(sys.argv[1]).read()
os.makedirs(sys.argv[2])
for r in range(10000):
    host = "node%d" % (r // 8)
    body = src.replace('"host":"node-a"', '"host":"%s"' % host).replace('"rank":0', '"rank":%d' % r)
    body = body.replace('"pid":9000', '"pid":%d' % (20000 + r)).replace('"RANK":"0"', '"RANK":"%d"' % r)
    if r % 200 == 7:      # killed while writing: the last line cut in the middle
        body = body.rstrip("\n")[:-40]
    name = "%s-r%d-%d.jsonl" % (host, r, 20000 + r)
    if r % 1000 == 3:     # not a trace: a program's log written into the folder
        body = "".join("step %d loss 0.%d\n" % (k, k) for k in range(50))
    if r % 1000 == 5:     # empty: the job died before the shim wrote
        body = ""
    open(os.path.join(sys.argv[2], name), "w").write(body)
PY
out=$(peak_mb "$WORK/badout" timeout 600 "$CG" report "$B")
rc=${out% *}
check "10,000 files: no crash (exit 0 or 1, got $rc)" test "$rc" -le 1
check "10,000 files: the healthy ones counted in one line" \
    bash -c "tr -s ' \n' ' ' <'$WORK/badout' | grep -q ' 9930 processes: ranks 0-2,4,6,8-206,208-406,[0-9,-]* and [0-9]* more on node0-node1249: python3 -u train.py cuDNN 9.19.0 cudart 13.0 driver 13.0 ok'"
check "10,000 files: the ones cut short in another line" \
    bash -c "tr -s ' \n' ' ' <'$WORK/badout' | grep -q ' 50 processes: ranks 7,207,407,607,807,1007,1207,1407 and 42 more on [^:]*: python3 -u train.py cuDNN 9.19.0 cudart 13.0 driver 13.0 no failure, no exit line'"
# notes are wrapped at the width like the rest: their continuation lines (4 spaces) joined back
sed -e ':a' -e 'N' -e '$!ba' -e 's/\n    / /g' "$WORK/badout" >"$WORK/badnotes"
check "10,000 files: cut last lines noted once, with their count and some of the files" \
    grep -q "^note: 50 processes: ranks 7,207,407,607,807,1007,1207,1407 and 42 more on [^:]*: the last line was cut off, no exit line (killed, still running, or convguard's file closed) (.*/node0-r7-20007.jsonl, .* and 47 more)$" "$WORK/badnotes"
check "10,000 files: files that are not JSON noted once" \
    grep -q "^note: 10 files: no convguard events in it (no line is a JSON event) (" "$WORK/badnotes"
check "10,000 files: empty files noted once" grep -q "^note: 10 files: no convguard events in it (an empty file) (" "$WORK/badnotes"
check "10,000 files: a short report (under 40 lines)" test "$(wc -l <"$WORK/badout")" -lt 40
"$CG" report --json "$B" >"$WORK/badj" 2>/dev/null
check "10,000 files --json: 9980 processes, 20 unreadable, 50 cut" \
    jq -e '(.processes | length) == 9980 and (.unreadable | length) == 20 and ([.processes[] | select(.read.last_line_cut)] | length) == 50' "$WORK/badj"
"$CG" report --html "$WORK/bad.html" "$B" >/dev/null 2>&1
check "10,000 files --html: written, the processes folded" \
    bash -c "test -s '$WORK/bad.html' && grep -q '<details><summary>9930 processes:' '$WORK/bad.html'"
check "10,000 files --html: under 8 MB" test "$(stat -c %s "$WORK/bad.html")" -lt 8000000
rm -rf "$B"

# ---- bounded memory (10,000 and 100,000 processes, a 2 GB set): tests/report/t_report_memory.sh
finish
