# t_report_escape.sh - no string from a trace (or /proc, or a folder) reaches
# a page as markup or a terminal as a control sequence (issue 26, items 3 and
# 4; docs/robustness.md "Output"): every string field of every event kind the
# reader keeps, given a payload (tests/report/inject.py: the HTML parsed by an
# HTML5 parser, the text and JSON checked), then `convguard run`'s report on
# failure with a crafted argv and library path and with a trace planted in its
# folder, `inspect` of a process with a crafted argv and library path, and
# `doctor` with a library in a folder whose name holds controls.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
# html5lib (Debian python3-html5lib, .ci/run) may be in another python3 than the first on PATH
PY=
for p in python3 /usr/bin/python3; do
    command -v "$p" >/dev/null && "$p" -c 'import html5lib' 2>/dev/null && { PY=$p; break; }
done
if [ -z "$PY" ]; then
    PY=$(command -v python3) || skip_all "no python3"
    echo "  note t_report_escape: no html5lib (apt-get install python3-html5lib): Python's html.parser parses the pages"
fi

"$PY" "$ROOT/tests/report/inject.py" "$CG" "$ROOT" "$WORK" >"$WORK/inject.log" 2>&1
rc=$?
grep -E "FAIL|stopping|event kinds" "$WORK/inject.log"
check "every string field of every event kind, given markup and controls: our elements only, no raw control, valid JSON" test $rc = 0

# clean FILE [FROM]: true when FILE (from its first line starting with FROM) holds no C0 control
# but newline, no DEL, no C1 control (as UTF-8 or as one byte) and no bytes that are not UTF-8
cat >"$WORK/clean.py" <<'PY'
import re, sys
data = open(sys.argv[1], 'rb').read()
if len(sys.argv) > 2:
    data = b'\n' + data
    at = data.find(b'\n' + sys.argv[2].encode())
    data = data[at + 1:] if at >= 0 else b''
try:
    text = data.decode('utf-8')
except UnicodeDecodeError:
    sys.exit(1)
sys.exit(1 if re.search('[\x00-\x09\x0b-\x1f\x7f\x80-\x9f]', text) else 0)
PY
clean() { "$PY" "$WORK/clean.py" "$@"; }
ESC_DIR="$WORK/$(printf 'lib\033]0;owned\007\033[2J')"
mkdir -p "$ESC_DIR"
cp "$(ldconfig -p | sed -n 's/.*libm\.so\.6 (libc6,x86-64[^)]*) => //p' | head -1)" "$ESC_DIR/libcudart.so.13"
EVIL_NAME=$(printf 'libcudnn_x\033[2J\302\2331m\233\177\nconvguard report: forged: no problem found.so.9')

# `convguard run`: a program whose argv and library path carry controls, and a load that fails
if [ -x "$UNIT/prog_basic" ]; then
    "$CG" run --dir "$WORK/r" -- "$UNIT/prog_basic" load "$ESC_DIR/libcudart.so.13" "$EVIL_NAME" \
        >/dev/null 2>"$WORK/run.err"
    check "run: the failure is reported" grep -q "^convguard report: " "$WORK/run.err"
    check "run: the report holds no raw ESC, C1, DEL or other control" clean "$WORK/run.err" "convguard report: "
    check "run: the report shows them escaped (\\x1b, \\u009b, \\x7f, \\n)" bash -c "grep -q 'libcudnn_x\\\\x1b\[2J\\\\u009b1m\\\\u009b\\\\x7f\\\\nconvguard report: forged' '$WORK/run.err'"
    check "run: no value forged a line of the report" bash -c "! grep -q '^convguard report: forged' '$WORK/run.err'"
else
    echo "  skip t_report_escape: build/unit/prog_basic missing (make test builds it): run not checked"
fi

# `convguard run` reading a trace planted in its folder (a folder others can write)
mkdir -p "$WORK/shared"
"$PY" - "$ROOT/tests/report/traces/load_cudnn_failed.jsonl" "$WORK/planted.jsonl" <<'PY'
import json, sys, time
P = '\x1b[2J\x1b]0;owned\x07\u009b\x7f\nconvguard: no problem found'
def spoil(v):
    if isinstance(v, str): return v + P
    if isinstance(v, dict): return {k: x if k == 'ev' else spoil(x) for k, x in v.items()}
    if isinstance(v, list): return [spoil(x) for x in v]
    return v
evs = [spoil(json.loads(l)) for l in open(sys.argv[1])]
evs[0]['wall_time'] = int(time.time()) + 60
open(sys.argv[2], 'w').write(''.join(json.dumps(e) + '\n' for e in evs))
PY
"$CG" run --dir "$WORK/shared" --no-capture -- sh -c 'cp "$1" "$2"; exit 3' sh "$WORK/planted.jsonl" \
    "$WORK/shared/gpu1-4100.jsonl" >/dev/null 2>"$WORK/planted.err"
check "planted trace: the failed run reports it" grep -q "^convguard report: " "$WORK/planted.err"
check "planted trace: no raw control in the report" clean "$WORK/planted.err" "convguard report: "
check "planted trace: no forged 'no problem found' line" bash -c "! grep -q '^convguard: no problem found' '$WORK/planted.err'"

# `inspect`: argv and a library path of a live process, read from /proc
rm -f "$WORK/ready"
"$PY" -c "import ctypes, sys, time; ctypes.CDLL(sys.argv[1]); open(sys.argv[2], 'w').close(); time.sleep(60)" \
    "$ESC_DIR/libcudart.so.13" "$WORK/ready" "$EVIL_NAME" &
live=$!
for _ in $(seq 100); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
"$CG" inspect $live >"$WORK/inspect.out" 2>&1
kill $live 2>/dev/null
check "inspect: it shows the library" grep -q "libcudart.so.13" "$WORK/inspect.out"
check "inspect: no raw control in what it prints" clean "$WORK/inspect.out"

# `doctor`: a copy found in a folder of LD_LIBRARY_PATH whose name holds controls
LD_LIBRARY_PATH=$ESC_DIR "$CG" doctor >"$WORK/doctor.out" 2>&1
check "doctor: it lists the copy" grep -q 'lib\\x1b\]0;owned\\x07\\x1b\[2J/libcudart.so.13' "$WORK/doctor.out"
check "doctor: no raw control in what it prints" clean "$WORK/doctor.out"

# a trace whose file name is not UTF-8 and holds controls: text escaped, JSON keeps the process
BAD="$WORK/$(printf 'gpu1-4100\377\033[2J.jsonl')"
cp "$ROOT/tests/report/traces/load_cudnn_failed.jsonl" "$BAD"
"$CG" report "$BAD" >"$WORK/badname.out" 2>&1
check "a file name that is not UTF-8: the text shows it escaped" grep -q 'gpu1-4100\\xff\\x1b\[2J.jsonl' "$WORK/badname.out"
"$CG" report --json "$BAD" >"$WORK/badname.json" 2>/dev/null
check "... and --json keeps the process, its file name with U+FFFD" jq -e '.processes[0].file | endswith("gpu1-4100\ufffd\u001b[2J.jsonl")' "$WORK/badname.json"

# a real browser's parse of a page whose every trace string carries the payload
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$CHROME" ]; then
    "$CG" report --html "$WORK/payload.html" "$ROOT/tests/fuzz/seeds/fuzz_html/lookup_workspace.payload.jsonl" >/dev/null
    timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/chrome" --no-first-run \
        --dump-dom "file://$WORK/payload.html" >"$WORK/dom.html" 2>/dev/null
    check "chromium: the payload page renders, the failure on it" grep -q "all_algos_exceed_free_memory" "$WORK/dom.html"
    check "chromium: the payload is text on it" grep -q "&lt;img src=x onerror=alert(1)&gt;" "$WORK/dom.html"
    check "chromium: no element of the payload in its DOM" bash -c "test -s '$WORK/dom.html' && ! grep -qiE '<(img|script|a)[ >]|<[a-z]+[^<>]* on[a-z]+=' '$WORK/dom.html'"
else
    echo "  skip t_report_escape: no chromium: the browser's parse not checked"
fi
finish
