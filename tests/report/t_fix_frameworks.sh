# t_fix_frameworks.sh - a property of every report of tests/report's traces and corpus: the
# headline's fix names no knob of a framework the traced process did not run (issue 27 item 5;
# tools/rules/fw.c frame_fix).  The frameworks come from the traces' facts (fix_frameworks.py).
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
R=$ROOT/tests/report
command -v python3 >/dev/null || skip_all "no python3 (.ci/run installs it)"
export WORK
paths=("$R"/traces/*.jsonl "$R"/traces/*/ "$R"/corpus/*/ "$R"/precedence/*.jsonl)
python3 "$R/fix_frameworks.py" "$CG" "${paths[@]%/}" >"$WORK/out" 2>&1
rc=$?
grep -E "^BAD" "$WORK/out" | while read -r l; do echo "       $l"; done
checked=$(grep -c "^ok" "$WORK/out")
check "no headline fix names another framework's knobs" test $rc = 0
check "more than 100 traces checked ($checked)" test "$checked" -gt 100
finish
