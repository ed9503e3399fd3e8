# t_report_incomplete.sh - a trace that cannot show how its process ended is
# never "no problem found" (issue 26, item 1): no exit line (a host that
# closed convguard's descriptor, a kill, _exit), lost lines (seq gaps, the
# shim's trace_gap marker, events_dropped), an exit line counting failures
# the trace does not hold.  The report says what is missing and exits 1.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
SRC=$ROOT/tests/report/healthy/single.jsonl # 11 lines, seq 0-10, the exit line last

# incomplete FILE: exit status 1, no "no problem found" in text, JSON or HTML
incomplete() {
    "$CG" report "$1" >"$WORK/out" 2>&1
    [ $? = 1 ] || return 1
    ! grep -q "no problem found" "$WORK/out" || return 1
    "$CG" report --json "$1" >"$WORK/json" 2>/dev/null
    jq -e '(.incomplete | length) >= 1' "$WORK/json" >/dev/null || return 1
    "$CG" report --html "$WORK/page.html" "$1" >/dev/null 2>&1
    ! grep -q "no problem found" "$WORK/page.html"
}
# says TEXT: the JSON's incomplete text holds it (the text report wraps lines)
says() { jq -e --arg t "$1" 'any(.incomplete[]; .text | contains($t))' "$WORK/json" >/dev/null; }

"$CG" report "$SRC" >"$WORK/out" 2>&1
check "the whole trace: no problem found, exit 0" bash -c "test $? = 0 && grep -q 'no problem found' '$WORK/out'"
check "the whole trace: nothing incomplete in JSON" bash -c "'$CG' report --json '$SRC' | jq -e '.incomplete == []'"

# what a host that loads libcuda, closes every descriptor and fails cudnnCreate leaves: start, lib, dlopen
f=$WORK/closed.jsonl
head -n 3 "$SRC" >"$f"
check "cut before its exit line: incomplete, exit 1" incomplete "$f"
check "cut before its exit line: says where it stops" says "the trace of pid 7000 is incomplete: it stops after #2 dlopen, 0.030 s"
check "cut before its exit line: says why it may be" says "without an exit line: the process may have crashed, been killed"
check "cut before its exit line: and that convguard's file may have been closed" says "closed or reused convguard's file descriptor"
check "cut before its exit line: the head line says incomplete" \
    grep -q "^convguard report: .*: no failure recorded, but the trace is incomplete" "$WORK/out"

# a line lost in the middle, the exit line there
f=$WORK/gap.jsonl
grep -v '"seq":5,' "$SRC" >"$f"
check "a seq gap: incomplete, exit 1" incomplete "$f"
check "a seq gap: says 1 line is missing" says "1 line of it is missing (gaps in seq)"

# the shim's marker after it re-opened its file (issue 26: trace_gap {lost, reason})
f=$WORK/trace_gap.jsonl
{
    head -n 10 "$SRC"
    echo '{"ev":"trace_gap","seq":10,"t":0.45,"pid":7000,"tid":7000,"lost":2,"reason":"descriptor closed by the program"}'
    tail -n 1 "$SRC" | sed 's/"seq":10,/"seq":11,/'
} >"$f"
check "a trace_gap event (seq without gaps, exit line there): incomplete, exit 1" incomplete "$f"
check "a trace_gap event: says how many and why" says "the shim lost 2 events (descriptor closed by the program)"
check "a trace_gap event: counted in read" jq -e '.processes[0].read.trace_gaps == 1 and .processes[0].read.lost == 2' "$WORK/json"

# a reason that would be markup or a terminal sequence comes out plain
f=$WORK/trace_gap_esc.jsonl
{
    head -n 10 "$SRC"
    echo '{"ev":"trace_gap","seq":10,"t":0.45,"lost":1,"reason":"\u001b[31m<b>x</b>\u0007"}'
    tail -n 1 "$SRC" | sed 's/"seq":10,/"seq":11,/'
} >"$f"
"$CG" report "$f" >"$WORK/out" 2>&1
"$CG" report --html "$WORK/esc.html" "$f" >/dev/null 2>&1
check "a trace_gap reason: shown, without its escape bytes" \
    bash -c "grep -q '(?\[31m?b?x?/b??)' '$WORK/out' && ! grep -q $'\x1b' '$WORK/out' && ! grep -q $'\x07' '$WORK/out'"
check "a trace_gap reason: shown on the page, without its markup" \
    bash -c "grep -q '(?\[31m?b?x?/b??)' '$WORK/esc.html' && ! grep -q '<b>x' '$WORK/esc.html'"

# the shim counted events it could not write
f=$WORK/dropped.jsonl
sed 's/"events_dropped":0/"events_dropped":3/' "$SRC" >"$f"
check "events_dropped in the exit line: incomplete, exit 1" incomplete "$f"
check "events_dropped: says how many" says "the shim could not write 3 events"

# the exit line counts failures that are not in the trace (the shim's stderr said "2 failures")
f=$WORK/uncounted.jsonl
sed 's/"failures":0/"failures":2/' "$SRC" >"$f"
check "exit.failures without a failure in the trace: incomplete, exit 1" incomplete "$f"
check "exit.failures without a failure: says so" says "its exit line counts 2 failures, and none of them is in the trace"

# several processes: one whole, one cut
mkdir -p "$WORK/two"
cp "$ROOT/tests/report/healthy/bash-parent.jsonl" "$WORK/two/"
head -n 5 "$ROOT/tests/report/healthy/python-child.jsonl" >"$WORK/two/python-child.jsonl"
check "two processes, one cut: incomplete, exit 1" incomplete "$WORK/two"
check "two processes, one cut: names the cut one" says "the trace of pid 7002 is incomplete"

# how a trace without exit line ended can be known: a crash event, a later image (exec)
check "a crash without exit line is not called incomplete" bash -c \
    "'$CG' report --json '$ROOT/tests/report/traces/crashed.jsonl' | jq -e '.incomplete == []'"
mkdir -p "$WORK/exec"
head -n 1 "$SRC" >"$WORK/exec/gpu1-7000.jsonl"
sed 's/"wall_time":1790000000,/"wall_time":1790000001,/' "$SRC" >"$WORK/exec/gpu1-7000.2.jsonl"
"$CG" report "$WORK/exec" >"$WORK/out" 2>&1
check "an image replaced by exec is not incomplete: no problem found, exit 0" \
    bash -c "test $? = 0 && grep -q 'no problem found' '$WORK/out'"

# the real thing: a host that loads libcuda, closes every descriptor, then goes on (issue 26); whatever
# the shim saves of it (nothing more, or a trace_gap marker after re-opening its file), never a clean run
if command -v python3 >/dev/null && [ -e "$DOUBLES/cuda/libcuda.so.1" ]; then
    run_shim "$WORK/closer" python3 -c "import ctypes, os
ctypes.CDLL('$DOUBLES/cuda/libcuda.so.1'); os.closerange(3, 1024)
c = ctypes.CDLL('$DOUBLES/cudnn9/libcudnn.so.9'); c.cudnnCreate(ctypes.byref(ctypes.c_void_p()))" >/dev/null 2>&1
    check "a host that closed convguard's descriptor: incomplete, exit 1" incomplete "$WORK/closer"
else
    fail "closerange: python3 or the libcuda double missing (make doubles)"
fi

# convguard run: a program whose trace stops without its exit line (SIGKILL,
# which nothing can catch) is not "no problem found"; one that left through
# os._exit(0) has its exit line (the shim's _exit hook): no false alarm
if command -v python3 >/dev/null && [ -e "$DOUBLES/cuda/libcuda.so.1" ]; then
    CONVGUARD_DIR=$WORK/run "$CG" run -- python3 -c \
        "import ctypes, os, signal; ctypes.CDLL('$DOUBLES/cuda/libcuda.so.1'); os.kill(os.getpid(), signal.SIGKILL)" >"$WORK/out" 2>&1
    check "run: SIGKILL keeps its exit status 137" test $? = 137
    check "run: a trace without exit line is reported, not 'no problem found'" \
        bash -c "! grep -q 'no problem found' '$WORK/out' && grep -q 'killed by SIGKILL' '$WORK/out' && grep -qE 'the trace of pid [0-9]* is incomplete|no exit line' '$WORK/out'"
    CONVGUARD_DIR=$WORK/run0 "$CG" run -- python3 -c \
        "import ctypes, os; ctypes.CDLL('$DOUBLES/cuda/libcuda.so.1'); os._exit(0)" >"$WORK/out0" 2>&1
    check "run: os._exit(0) keeps its exit status 0" test $? = 0
    check "run: os._exit(0): its exit line is there, the run complete: no problem found" \
        bash -c "grep -q 'no problem found' '$WORK/out0' && ! grep -q 'is incomplete' '$WORK/out0'"
else
    fail "run: python3 or the libcuda double missing (make doubles)"
fi
finish
