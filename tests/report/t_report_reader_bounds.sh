# t_report_reader_bounds.sh - what a trace folder or a path may be that no
# trace is (issue 26, items 5 and 6): links that loop back (`latest -> .`),
# a FIFO or a device named on the command line, a file of NUL bytes (what a
# crash of the machine leaves on ext4), a line of hundreds of MiB.  The
# reader takes each folder and file once, opens only regular files without
# ever waiting, and holds a bounded part of any line.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
SRC=$ROOT/tests/report/traces/handle_memory_held.jsonl
HEALTHY=$ROOT/tests/report/healthy/single.jsonl
[ -x /usr/bin/time ] || skip_all "no /usr/bin/time (.ci/run installs it)"
nprocs() { "$CG" report --json "$@" 2>/dev/null | jq '.processes | length'; }
# ms CMD...: runs it, prints the wall-clock milliseconds it took
ms() { local t0; t0=$(date +%s%N); "$@" >/dev/null 2>&1; echo $((($(date +%s%N) - t0) / 1000000)); }
# max_rss_kb CMD...: its maximum resident set size (GNU time)
max_rss_kb() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2}'; }

# ---- links in a trace folder (item 5)
mkdir -p "$WORK/one" && cp "$SRC" "$WORK/one/h-1.jsonl" && ln -s . "$WORK/one/latest"
check "latest -> . : one process, not five" test "$(nprocs "$WORK/one")" = 1

mkdir -p "$WORK/twelve" && cp "$SRC" "$WORK/twelve/h-1.jsonl"
for i in $(seq 1 12); do ln -s . "$WORK/twelve/l$i"; done
check "12 links to . : one process, not 22,621" test "$(nprocs "$WORK/twelve")" = 1
t=$(ms "$CG" report "$WORK/twelve")
check "12 links to . : well under a second ($t ms)" test "$t" -lt 1000

# links nested down the tree, each back to the top, and a run folder reached twice
mkdir -p "$WORK/nest/a/b/c/d" "$WORK/nest/runs/r1"
cp "$SRC" "$WORK/nest/runs/r1/h-1.jsonl"
cp "$HEALTHY" "$WORK/nest/a/b/h-2.jsonl"
for d in a a/b a/b/c a/b/c/d; do
    for i in $(seq 1 12); do ln -s "$WORK/nest" "$WORK/nest/$d/up$i"; done
done
ln -s runs/r1 "$WORK/nest/latest"
check "nested links back to the top, a folder linked twice: each file once (2)" test "$(nprocs "$WORK/nest")" = 2
"$CG" report --json "$WORK/nest" >"$WORK/j" 2>/dev/null
check "a folder reached by its name and by a link: read once, named by its real path" \
    jq -e --arg f "$WORK/nest/runs/r1/h-1.jsonl" '[.processes[].file | select(endswith("h-1.jsonl"))] == [$f]' "$WORK/j"

# a file given twice, and under two names
ln -s "$WORK/one/h-1.jsonl" "$WORK/alias.jsonl"
check "one file named twice and by a link: one process" \
    test "$(nprocs "$WORK/one/h-1.jsonl" "$WORK/one/h-1.jsonl" "$WORK/alias.jsonl")" = 1

# ---- what no trace is (item 6)
mkfifo "$WORK/fifo.jsonl"
timeout 10 "$CG" report "$WORK/fifo.jsonl" >"$WORK/out" 2>&1
rc=$?
check "a FIFO named on the command line: returns at once (exit 2, not a hang: $rc)" test $rc = 2
check "a FIFO: says what it is" grep -q "fifo.jsonl: a FIFO (named pipe), not a trace file" "$WORK/out"
mkfifo "$WORK/run.stderr"
timeout 10 "$CG" report "$SRC" "$WORK/run.stderr" >/dev/null 2>&1
rc=$?
check "a FIFO named like a capture beside a trace: the trace is reported (exit 1, not a hang: $rc)" test $rc = 1
timeout 10 "$CG" report /dev/zero >"$WORK/out" 2>&1
rc=$?
check "a device: not read (exit 2, not a hang: $rc)" bash -c "test $rc = 2 && grep -q 'a character device' '$WORK/out'"

# 1 GiB of NUL bytes, no newline: a sparse file, as a crash of the machine leaves one
truncate -s 1G "$WORK/nul.jsonl"
t0=$(date +%s%N)
rss=$(max_rss_kb "$CG" report "$WORK/nul.jsonl")
t=$((($(date +%s%N) - t0) / 1000000))
check "1 GiB of NUL bytes: bounded memory (max RSS $rss KB < 50 MB) and fast ($t ms < 2 s)" \
    test "${rss:-999999}" -lt 50000 -a "$t" -lt 2000
"$CG" report "$WORK/nul.jsonl" >"$WORK/out" 2>&1
check "1 GiB of NUL bytes: said to be NUL bytes, a file cut by a crash, not an empty file" \
    bash -c "grep -q '1.0 GiB of NUL bytes (a file cut by a crash' '$WORK/out' && ! grep -q 'empty file' '$WORK/out'"

# a whole trace whose end the crash turned into NUL bytes (written ones, not a hole): read, said, no clean run
f=$WORK/nul_tail.jsonl
{ head -n 10 "$HEALTHY"; head -c 64M /dev/zero; } >"$f"
"$CG" report --json "$f" >"$WORK/j" 2>/dev/null
check "a trace with 64 MiB of NULs after its lines: its events are read" \
    jq -e '.processes[0].read.events == 10 and .processes[0].read.nul_bytes == 67108864' "$WORK/j"
"$CG" report "$f" >"$WORK/out" 2>&1
check "a trace with a NUL tail: noted, and never 'no problem found' (exit 1)" \
    bash -c "test $? = 1 && grep -q '64 MiB of NUL bytes' '$WORK/out' && ! grep -q 'no problem found' '$WORK/out'"

# a line of 200 MiB between events: skipped and counted, never held
f=$WORK/long.jsonl
{ head -n 3 "$SRC"; head -c $((200 << 20)) /dev/zero | tr '\0' x; echo; tail -n +4 "$SRC"; } >"$f"
rss=$(max_rss_kb "$CG" report "$f")
check "a 200 MiB line: bounded memory (max RSS $rss KB < 50 MB)" test "${rss:-999999}" -lt 50000
"$CG" report --json "$f" >"$WORK/j" 2>/dev/null
check "a 200 MiB line: skipped and counted, the events around it read" \
    jq -e '.processes[0].read.long_lines == 1 and .findings[0].rule == "handle_memory_held"' "$WORK/j"
"$CG" report "$f" >"$WORK/out" 2>&1
check "a 200 MiB line: the note says so" grep -q "1 line over 4 MiB skipped" "$WORK/out"
finish
