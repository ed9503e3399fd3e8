# t_outcome_property.sh - a failed run is never "no problem found" (issue 27
# item 1), as a property: over every case of the corpus and every test trace,
# and over random runs (gen_outcomes.py: processes with exit statuses, fatal
# signals, crash events, exception lines in their captured output, with and
# without failing calls).  Any process with a non-zero exit, a signal or an
# exception line of its own: the report says a problem, exits 1.  A run that
# succeeded (its end known and good): notes and warnings, never an error.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
command -v python3 >/dev/null || skip_all "python3 missing"

# what the files say happened, read without convguard: a capture's status for
# the program run started, a crash its signal went on to, an exception line
failed_by_files() { # DIR-or-trace -> 0 when a process of it failed
    python3 - "$1" <<'EOF'
import glob, json, os, sys
p = sys.argv[1]
d = p if os.path.isdir(p) else os.path.dirname(p)
traces = glob.glob(os.path.join(p, "**", "*.jsonl"), recursive=True) if os.path.isdir(p) else [p]
failed = False
for t in traces:
    evs = []
    for l in open(t, errors="replace"):
        try:
            evs.append(json.loads(l))
        except ValueError:
            pass
    if any(e.get("ev") == "crash" and e.get("next", "default") == "default" for e in evs) and \
            not any(e.get("ev") == "exit" for e in evs):
        failed = True
caps = glob.glob(os.path.join(d, "**", "*.stderr"), recursive=True)
for c in caps:
    raw = open(c, "rb").read()
    try:
        hdr = json.loads(raw.split(b"\n", 1)[0])
    except ValueError:
        continue
    starts = [json.loads(l).get("wall_time", 0) for t in traces for l in open(t, errors="replace")
              if l.startswith('{"ev":"start"')]
    if not any(hdr.get("start", 0) - 2 <= w <= hdr.get("end", 1e12) + 2 for w in starts):
        continue  # another run's capture in the same folder
    if hdr.get("status", 0) != 0 or b"Traceback (most recent call last):" in raw:
        failed = True
sys.exit(0 if failed else 1)
EOF
}

# ---- the corpus and the test traces
bad=0 n=0
for c in "$ROOT"/tests/report/corpus/*/ "$ROOT"/tests/report/traces/*.jsonl; do
    failed_by_files "$c" || continue
    n=$((n + 1))
    out=$("$CG" report "$c" 2>&1); rc=$?
    if [ $rc != 1 ] || echo "$out" | head -1 | grep -q "no problem found"; then
        bad=$((bad + 1)); echo "    $(basename "$c"): rc $rc: $(echo "$out" | head -1)"
    fi
done
check "every failed case of the corpus and the test traces ($n): a problem, exit 1" test $bad = 0

# ---- random runs
G=$WORK/gen
python3 "$ROOT/tests/report/gen_outcomes.py" "$G" 200 27 || fail "gen_outcomes.py"
bad_failed=0 bad_ok=0 nfailed=0 nok=0
while read -r run failed succeeded; do
    "$CG" report --json "$G/$run" >"$WORK/j" 2>/dev/null; rc=$?
    "$CG" report "$G/$run" >"$WORK/t" 2>/dev/null
    if [ "$failed" = true ]; then
        nfailed=$((nfailed + 1))
        if [ $rc != 1 ] || head -1 "$WORK/t" | grep -q "no problem found" || ! jq -e '.problems > 0' "$WORK/j" >/dev/null; then
            bad_failed=$((bad_failed + 1)); echo "    $run (failed): rc $rc: $(head -1 "$WORK/t")"
        fi
    fi
    if [ "$succeeded" = true ]; then
        nok=$((nok + 1))
        if ! jq -e '[.findings[] | select(.severity == "error")] | length == 0' "$WORK/j" >/dev/null; then
            bad_ok=$((bad_ok + 1)); echo "    $run (succeeded): $(jq -c '[.findings[] | select(.severity == "error") | .rule]' "$WORK/j")"
        fi
    fi
done < <(jq -r '.[] | "\(.run) \(.failed) \(.succeeded)"' "$G/manifest.json")
check "random runs: $nfailed failed ones all get a problem and exit 1" test $bad_failed = 0
check "random runs: $nok that succeeded get no error" test $bad_ok = 0
check "the generator made both kinds (at least 50 failed, 20 succeeded)" test $nfailed -ge 50 -a $nok -ge 20
finish
