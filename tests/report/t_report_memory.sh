# t_report_memory.sh - the report's memory at scale (issue 28 item 2): a peak
# under 150 MB for 10,000 and 100,000 processes and for 2 GB of traces, and
# that reading alike processes as one (model/trace_read.c: a trace that equals
# another but for its own ids and times shares its events) changes nothing in
# what the report says.  The sets are written by gen_set (C, a few seconds for
# 2 GB); the speed goals are bench/report_scale.sh's.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
GEN=$BUILD_DIR/report/gen_set
REAL=$ROOT/tests/report/scale/jax_leftover.h200.jsonl
SMALL=$ROOT/tests/report/ranks/node-a-r0-9000.jsonl
[ -x "$CG" ] && [ -x "$GEN" ] || skip_all "convguard or gen_set not built (make build/report/gen_set)"
LIM=150
[ -z "${CG_SANITIZED:-}" ] || LIM=400 # ASan's shadow and redzones: bounded still, not the goal's number
# peak_mb OUT CMD...: exit status and peak RSS in MB of CMD (stdout and stderr to OUT), from getrusage
peak_mb() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
print("%d %d" % (rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))
PY
}
gen() { "$GEN" "$@" >/dev/null; }

# ---- alike processes read as one: the same report as each read whole.  Ranks out of
# step (their own times), every 50th its own GPU's free memory (no rank alike to it),
# two processes of another program, a rank whose last line was cut.
S=$WORK/alike
gen "$S" --template "$REAL" --procs 120 --hosts 15 --jitter 0.011
gen "$WORK/odd" --template "$REAL" --procs 120 --hosts 15 --jitter 0.011 --vary
for r in 0 50 100; do cp "$WORK/odd"/*-r$r-*.jsonl "$S/"; done # these ranks: their own free memory
gen "$WORK/other" --template "$ROOT/tests/report/traces/handle_memory_held.jsonl" --procs 2 --hosts 1
for f in "$WORK/other"/*.jsonl; do cp "$f" "$S/other-$(basename "$f")"; done
f=$(ls "$S"/node3-r30-*.jsonl) && head -c -60 "$f" >"$f.cut" && mv "$f.cut" "$f"
for mode in "" --json --all -v; do
    "$CG" report $mode "$S" >"$WORK/shared" 2>&1
    echo "exit $?" >>"$WORK/shared"
    CONVGUARD_REPORT_SHARE=0 "$CG" report $mode "$S" >"$WORK/whole" 2>&1
    echo "exit $?" >>"$WORK/whole"
    check "alike ranks read as one: the same report${mode:+ $mode} as each read whole" cmp "$WORK/shared" "$WORK/whole"
done
a=$(peak_mb "$WORK/o1" "$CG" report "$S") b=$(CONVGUARD_REPORT_SHARE=0 peak_mb "$WORK/o2" "$CG" report "$S")
check "... and holds less so: ${a#* } MB, each read whole ${b#* } MB" test $((${a#* } * 2)) -lt "${b#* }"
check "... a report of 122 processes (the check compared something)" \
    grep -q "^convguard report: 122 processes on 15 hosts" "$WORK/shared"
"$CG" report --json "$S" >"$WORK/j"
check "... each rank's first failure by its own clock (rank 7: 7 x 11 ms after rank 0's)" \
    jq -e '[.processes[] | select(.file | test("/node0-r[07]-1000[07].jsonl$")) | .failures[0].t] | length == 2 and (.[1] - .[0] - 0.077 | fabs) < 0.0005' "$WORK/j"
rm -rf "$S" "$WORK/odd" "$WORK/other"

# ---- 10,000 small processes, in step and out of step (each its own times)
for jitter in 0 0.0003; do
    S=$WORK/p10k
    gen "$S" --template "$SMALL" --procs 10000 --hosts 1250 --jitter $jitter
    out=$(peak_mb "$WORK/out" timeout 600 "$CG" report "$S")
    check "10,000 processes${jitter#0}: read (exit ${out% *}), all of them in the report" \
        bash -c "test ${out% *} = 0 && grep -q '^convguard report: 10000 processes on 1250 hosts' '$WORK/out'"
    check "10,000 processes (jitter $jitter): peak memory ${out#* } MB, under $LIM MB" test "${out#* }" -lt $LIM
    rm -rf "$S"
done

# ---- 100,000 small processes (300 MB)
S=$WORK/p100k
gen "$S" --template "$SMALL" --procs 100000 --hosts 12500
out=$(peak_mb "$WORK/out" timeout 900 "$CG" report "$S")
check "100,000 processes: read (exit ${out% *}), all of them in the report" \
    bash -c "test ${out% *} = 0 && grep -q '^convguard report: 100000 processes on 12500 hosts' '$WORK/out'"
check "100,000 processes: peak memory ${out#* } MB, under $LIM MB" test "${out#* }" -lt $LIM
rm -rf "$S"

# ---- 2 GB: 1000 ranks of the real trace, each padded to 2 MB with its own failed allocations
free_mb=$(df -Pm "$WORK" | awk 'NR==2{print $4}')
if [ "${free_mb:-0}" -lt 5120 ]; then
    echo "  skip $TEST_NAME: 2 GB set: only ${free_mb} MB free in $WORK (needs 5 GB)"
else
    S=$WORK/big
    gen "$S" --template "$REAL" --procs 1000 --hosts 126 --size 2000000 --pad alloc_failed
    size=$(du -sm "$S" | cut -f1)
    out=$(peak_mb "$WORK/out" timeout 900 "$CG" report "$S")
    check "2 GB set ($size MB): read (exit ${out% *}), the 1000 ranks' failures told once" \
        bash -c "test ${out% *} = 0 && grep -q '^convguard report: 1000 processes on 126 hosts' '$WORK/out' &&
                 grep -q 'another process holds the GPU memory (1000 processes: ranks 0-999 on node0-node125)' '$WORK/out'"
    check "2 GB set: peak memory ${out#* } MB, under $LIM MB" test "${out#* }" -lt $LIM
    out=$(peak_mb "$WORK/outj" timeout 900 "$CG" report --json "$S")
    check "2 GB set --json: peak memory ${out#* } MB, under $LIM MB" test "${out#* }" -lt $LIM
    check "2 GB set --json: every rank's 2 MB read, its failures past the kept ones counted" \
        jq -e '(.processes | length) == 1000 and ([.processes[].read.elided] | min) > 2000' "$WORK/outj"
    rm -rf "$S"
fi
finish
