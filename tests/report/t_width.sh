# t_width.sh - output fits the terminal (issue 29 item 8): the report, inspect
# and doctor wrap at $COLUMNS, else the terminal's width, else 80 (as git
# does); every --help fits 80 columns; paths are shown as meant (dir//file,
# a/b/../c), and a `python3 -c` program of several lines stays on one line.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
[ -x "$CG" ] || skip_all "CLI not built"
T=$ROOT/tests/report/traces

# too_wide W FILE: the lines over W columns that could have been broken: more than one word after the
# indent and a label ("fix:", "you see:"). A path longer than the line stays whole, as git leaves it.
# The report's first line (the head line: tools/out/text.c, reworked in issue 29's w1) is not counted.
too_wide() {
    awk -v w="$1" 'length > w && !/^convguard report: / {
        s = $0; sub(/^ +/, "", s); sub(/^(you see|cause|fix|libraries|failures|[a-z ]+):? +/, "", s)
        if (split(s, a, " ") > 1) { print length ": " $0; n++ } } END { exit n > 0 }' "$2"
}
bad=""
for f in "$T"/*.jsonl; do
    COLUMNS=80 "$CG" report "$f" >"$WORK/r80" 2>&1
    too_wide 80 "$WORK/r80" >"$WORK/wide" || bad="$bad $(basename "$f")"
done
check "COLUMNS=80: no report of the rule traces has a breakable line over 80 columns:${bad:- none}" test -z "$bad"
env -u COLUMNS "$CG" report "$T/conv_exec_failed.jsonl" >"$WORK/rpipe" 2>&1
check "not a terminal, no COLUMNS: 80 columns" too_wide 80 "$WORK/rpipe"
COLUMNS=200 "$CG" report "$T/conv_exec_failed.jsonl" >"$WORK/r200" 2>&1
check "COLUMNS=200: no line over 200" too_wide 200 "$WORK/r200"
check "COLUMNS=200: the cause on one line (wider than 80), so fewer lines than at 80" \
    bash -c "[ \$(wc -l <'$WORK/r200') -lt \$(wc -l <'$WORK/rpipe') ] && awk 'length > 100' '$WORK/r200' | grep -q cause"
if command -v script >/dev/null && command -v stty >/dev/null; then
    env -u COLUMNS script -qec "stty cols 120; '$CG' report '$T/conv_exec_failed.jsonl'" /dev/null >"$WORK/rtty" 2>&1
    tr -d '\r' <"$WORK/rtty" >"$WORK/rtty2"
    check "a terminal of 120 columns (TIOCGWINSZ): wrapped at 120, not 80" \
        bash -c "too_wide() { $(declare -f too_wide | sed 1,2d | sed '$d'); }; too_wide 120 '$WORK/rtty2' && awk 'length > 80' '$WORK/rtty2' | grep -q ."
fi

# --help of every command, and the top-level one, within 80 columns
for c in "" run report doctor smoke inspect shim-path; do
    "$CG" $c --help >"$WORK/h" 2>&1
    check "convguard $c --help: exit 0, every line within 80 columns" \
        bash -c "[ -s '$WORK/h' ] && ! awk 'length > 79' '$WORK/h' | grep -q ."
done
check "doctor --help: more than its usage line" test "$("$CG" doctor --help | wc -l)" -gt 3
check "smoke --help: more than its usage line" test "$("$CG" smoke --help | wc -l)" -gt 3
check "shim-path --help prints help, not the path" bash -c "'$CG' shim-path --help | grep -q '^usage: convguard shim-path'"
check "help run prints run's help" bash -c "'$CG' help run | grep -q '^usage: convguard run'"
check "-V is the version" bash -c "'$CG' -V | grep -q '^convguard [0-9]'"
check "--help names --no-capture and report --all-runs" \
    bash -c "'$CG' --help | grep -q -- --no-capture && '$CG' --help | grep -q -- '--all-runs'"

# doctor and inspect fit 80 columns too
env -u COLUMNS "$CG" doctor >"$WORK/d" 2>&1
check "doctor: no breakable line over 80 columns" too_wide 80 "$WORK/d"
PY=$(command -v python3)
if [ -n "$PY" ] && [ -r /usr/local/cuda/lib/libcudnn.so.9 ]; then
    "$PY" -c "import ctypes, time; ctypes.CDLL('/usr/local/cuda/lib/libcudnn.so.9'); open('$WORK/ready', 'w'); time.sleep(30)" &
    LIVE=$!
    for _ in $(seq 100); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
    env -u COLUMNS "$CG" inspect $LIVE >"$WORK/i" 2>&1
    kill $LIVE 2>/dev/null
    check "inspect: its table and lines fit 80 columns" too_wide 80 "$WORK/i"
fi

# paths as meant: "convguard-logs/" given, its files shown as convguard-logs/x, not convguard-logs//x
mkdir -p "$WORK/logs"
cp "$T/conv_exec_failed.jsonl" "$WORK/logs/h-1.jsonl"
(cd "$WORK" && "$CG" report logs/ >"$WORK/p1" 2>&1)
check "report logs/: logs/h-1.jsonl, never logs//h-1.jsonl" \
    bash -c "grep -q 'logs/h-1.jsonl' '$WORK/p1' && ! grep -q 'logs//' '$WORK/p1'"
# a library path with "../" in it (TensorFlow loads nvidia/cuda_runtime through ../../../): shown resolved
up='/venv/lib/python3.12/site-packages/tensorflow/python/platform/../../../nvidia/cuda_runtime/lib/libcudart.so.12'
jq -c --arg p "$up" 'if .ev == "lib" and .family == "cudart" then .path = $p else . end' "$T/conv_exec_failed.jsonl" \
    > "$WORK/up.jsonl"
jqt "$WORK/up.jsonl" 'any(.[]; .ev == "lib" and .family == "cudart")' || fail "the fixture has no cudart lib event"
COLUMNS=200 "$CG" report "$WORK/up.jsonl" >"$WORK/p2" 2>&1
check "a library path a/b/../../c: shown as the path it names" \
    bash -c "grep -q 'site-packages/nvidia/cuda_runtime/lib/libcudart.so.12' '$WORK/p2' && ! grep -q 'platform/\.\./' '$WORK/p2'"
"$CG" report --json "$WORK/up.jsonl" >"$WORK/p2.json" 2>/dev/null
check "... the JSON keeps the raw path" grep -qF 'platform/../../../nvidia' "$WORK/p2.json"
# a `python3 -c` program of several lines: the header stays one line, its first line then "..."
jq -c 'if .ev == "start" then .argv = ["python3", "-c", "import torch\nx = torch.zeros(1)\nprint(x)"] else . end' \
    "$T/conv_exec_failed.jsonl" > "$WORK/ml.jsonl"
"$CG" report "$WORK/ml.jsonl" >"$WORK/p3" 2>&1
check "a multi-line python3 -c: its first line and '...', on the header line" \
    grep -q '^convguard report: .*(python3 -c import torch\.\.\.)' "$WORK/p3"
check "... no escaped newline in the header" bash -c "! head -1 '$WORK/p3' | grep -qF '\\n'"
finish
