# t_newcomer.sh - what a new user meets in the first hour (issue 29): the
# report of a new run is about that run, a cause never shows an event's name,
# `run` of a missing command says so plainly, a run that traced nothing leaves
# no folder, `--html -` and "wrote F", the help of every command.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
TF=$CLIENTS/client_tflike
[ -x "$CG" ] && [ -x "$TF" ] || skip_all "CLI or clients not built (make all doubles clients)"
D=$DOUBLES
export LD_LIBRARY_PATH=$D/cudnn9:$D/cudart:$D/cuda:$D/nvml

# ---- old traces do not confuse the next report (item 4)
mkdir -p "$WORK/job" && cd "$WORK/job" || exit 1
CGTEST_GPU_TOTAL_MB=1024 CGTEST_GPU_HELD_MB=1020 "$CG" run -- "$TF" >/dev/null 2>&1 # fails: no memory for cuDNN
sleep 1.5 # the user fixes the job, and runs it again
CGTEST_GPU_TOTAL_MB=1024 CGTEST_GPU_HELD_MB=0 "$CG" run -- "$TF" >/dev/null 2>&1
"$CG" report >"$WORK/r1" 2>&1
check "report with no argument: the latest run alone (1 process)" bash -c "! grep -q '2 processes' '$WORK/r1'"
check "... and it says so, with the flag for all" grep -q "the latest of 2 runs in ./convguard-logs" "$WORK/r1"
check "... naming --all-runs" grep -q -- "--all-runs" "$WORK/r1"
check "... the earlier run's problem is not in it" bash -c "! grep -q \"no GPU memory left for cuDNN's handle\" '$WORK/r1'"
"$CG" report convguard-logs/ >"$WORK/r1b" 2>&1
check "report convguard-logs/ (README's line): the latest run too" grep -q "the latest of 2 runs" "$WORK/r1b"
"$CG" report --all-runs >"$WORK/r2" 2>&1
check "--all-runs: both runs, both processes" grep -q "2 processes" "$WORK/r2"
check "--all-runs: no note about runs left out" bash -c "! grep -q 'latest of' '$WORK/r2'"
"$CG" report --json >"$WORK/r3.json" 2>"$WORK/r3.err"
check "--json: stdout stays JSON (one process), the note on stderr" \
    bash -c "jq -e '.processes | length == 1' '$WORK/r3.json' && grep -q 'latest of 2 runs' '$WORK/r3.err'"
CONVGUARD_DIR=$WORK/job/convguard-logs bash -c "cd / && '$CG' report" >"$WORK/r4" 2>&1
check "no argument reads \$CONVGUARD_DIR" grep -q "the latest of 2 runs in $WORK/job/convguard-logs" "$WORK/r4"
cd "$WORK" || exit 1

# a process and the child it started an hour later are one run, whatever the time between;
# an unrelated process that ran in between is an earlier run
mkdir -p "$WORK/tree"
mk() { # SRC PID PPID WALL -> a copy of the rule trace SRC as that process of host h
    jq -c --argjson pid "$2" --argjson ppid "$3" --argjson wall "$4" \
        '.pid = $pid | if .ev == "start" then .ppid = $ppid | .wall_time = $wall | .host = "h" else . end' \
        "$ROOT/tests/report/traces/$1.jsonl" > "$WORK/tree/h-$2.jsonl"
}
mk handle_out_of_memory 100 1 1000
mk alloc_failed 300 1 2000
mk conv_exec_failed 101 100 5000
"$CG" report "$WORK/tree" >"$WORK/t1" 2>&1
check "a child started long after its parent: one run with it (2 processes)" grep -q "2 processes" "$WORK/t1"
check "... the unrelated process in between is left out, and said" grep -q "the latest of 2 runs" "$WORK/t1"

# ---- a cause never shows an event's name (item 4)
names=$(grep -oE '^`[a-z_]+`' "$ROOT/docs/trace-format.md" | tr -d '`' | grep _ | sort -u)
leaks=""
for f in "$ROOT"/tests/report/traces/*.jsonl; do
    "$CG" report --json "$f" 2>/dev/null | jq -r '.findings[] | .title, .symptom, .cause, .fix' > "$WORK/texts"
    for n in $names; do
        grep -qw "$n" "$WORK/texts" && leaks="$leaks $(basename "$f"):$n"
    done
done
check "no finding of the rule traces names an event kind (conv_exec_failed ...):${leaks:- none}" test -z "$leaks"

# ---- report -v: the dispatcher libcudnn.so.9 has no version of its own: what it runs as, never "?" (item 11)
"$CG" report -v "$ROOT/tests/report/traces/conv_exec_failed.jsonl" >"$WORK/v" 2>&1
check "report -v: libcudnn.so.9 shown with the version it runs as, not '?'" \
    bash -c "grep -q 'libcudnn.so.9 (runs as 9.19.0' '$WORK/v' && ! grep -qE '^    /.* \? [^ ]+$' '$WORK/v'"

# ---- run of a command that does not exist; a run that traced nothing (item 11)
mkdir -p "$WORK/e" && cd "$WORK/e" || exit 1
"$CG" run -- nonexistent-cmd-cg >/dev/null 2>"$WORK/e1"
rc=$?
check "run -- nonexistent: exit 127" test $rc = 127
check "... says 'cannot run nonexistent-cmd-cg: No such file'" grep -q "cannot run nonexistent-cmd-cg: No such file" "$WORK/e1"
check "... no shell phrase, no 'GPU was never used'" bash -c "! grep -qE 'shell|never used' '$WORK/e1'"
check "... and no folder left behind" test ! -e convguard-logs
"$CG" run -- true 2>/dev/null
check "a run that traced nothing leaves no empty ./convguard-logs" test ! -e convguard-logs
# a run that fails with no CUDA in it (a child killed, the parent exits 3): told as failed, never as nothing
"$CG" run -- python3 -c 'import subprocess, sys
r = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
sys.exit(3 if r.returncode else 0)' >/dev/null 2>"$WORK/e2"
rc=$?
check "a failed run with no CUDA: exit 3 kept, said to have failed, not in CUDA; never 'no problem found' or 'never used'" \
    bash -c "[ $rc = 3 ] && grep -q '^convguard: the program failed, .*it did not fail in CUDA, cuDNN or the GPU' '$WORK/e2' && ! grep -qE 'no problem found|never used' '$WORK/e2'"
mkdir convguard-logs
"$CG" run -- true 2>/dev/null
check "... but a folder that was there stays" test -d convguard-logs
cd "$WORK" || exit 1

# ---- --html - and --html F (item 7)
T1=$ROOT/tests/report/traces/handle_out_of_memory.jsonl
(cd "$WORK" && "$CG" report --html - "$T1" >"$WORK/page.html" 2>"$WORK/h.err")
check "--html -: the page on stdout" grep -q "</html>" "$WORK/page.html"
check "--html -: no file named '-'" test ! -e "$WORK/-"
check "--html -: no text report mixed into it" bash -c "! grep -q '^convguard report' '$WORK/page.html'"
"$CG" report --html "$WORK/p2.html" "$T1" >/dev/null 2>"$WORK/h2.err"
check "--html F: says where the page went" grep -q "wrote $WORK/p2.html" "$WORK/h2.err"
"$CG" report --json --html - "$T1" >/dev/null 2>&1
check "--json with --html -: a usage error (both on stdout)" test $? = 2
finish
