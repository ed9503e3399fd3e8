# t_basic.sh - one trace per process, start and exit events, fork and exec,
# exit status, errno and dlerror untouched, the exit line.
source "$(dirname "$0")/../lib.sh"
P=$UNIT/prog_basic

# a process that never touches a CUDA-family library: no file, no line
D=$WORK/nocuda
out=$(run_shim "$D" "$P" echo hello 2>"$WORK/err")
check "no CUDA library touched: output unchanged" test "$out" = "hello"
check "no CUDA library touched: no trace file" test -z "$(ls "$D")"
check "no CUDA library touched: nothing on stderr" test ! -s "$WORK/err"
D=$WORK/nocuda-fork
CONVGUARD_QUIET=1 run_shim "$D" "$P" fork >/dev/null
check "no CUDA library touched, fork and exec: still no file" bash -c \
    "CONVGUARD_QUIET=1 CONVGUARD_DIR='$D' LD_PRELOAD='$SHIM' '$P' exec >/dev/null; test -z \"\$(ls '$D')\""

# the rest: a process that loads the driver (the test double) at once
export PROG_CUDA_LIB=$DOUBLES/cuda/libcuda.so.1
D=$WORK/plain
out=$(run_shim "$D" "$P" echo hello 2>"$WORK/err")
T=$(trace_of "$D")
check "output unchanged" test "$out" = "hello"
check "one trace file named <host>-<pid>.jsonl" bash -c "[[ '$(basename "$T")' =~ ^[A-Za-z0-9._-]+-[0-9]+\.jsonl$ ]]"
check "trace file mode 0600" test "$(stat -c %a "$T")" = 600
check "lines are JSON, seq without gaps" traces_valid "$D"
check "first event is start with argv, exe, cwd, host, uid" jqt "$T" '.[0].ev == "start" and .[0].argv == ["'"$P"'","echo","hello"] and (.[0].exe|endswith("prog_basic")) and .[0].cwd and .[0].host and (.[0].uid|type=="number")'
check "start records LD_PRELOAD in env" jqt "$T" '.[0].env.LD_PRELOAD | contains("libconvguard")'
check "last event is exit" jqt "$T" '.[-1].ev == "exit" and .[-1].libs == 1'
check "the file was made at the first event: start, then the dlopen" jqt "$T" '.[0].ev == "start" and .[1].ev == "dlopen"'
check "start's wall time is the process's start, not the file's" jqt "$T" '.[0].wall_time <= now'
check "exit line names the driver and the trace" grep -q "convguard: libcuda.so.1 .*trace $T" "$WORK/err"

D=$WORK/quiet
CONVGUARD_QUIET=1 run_shim "$D" "$P" echo x 2>"$WORK/err" >/dev/null
check "CONVGUARD_QUIET=1 silences the exit line" test ! -s "$WORK/err"
check "CONVGUARD_QUIET=1: the trace is still written" test -n "$(trace_of "$D")"

D=$WORK/status
run_shim "$D" "$P" status 7 2>/dev/null
check "exit status unchanged" test $? = 7

D=$WORK/fork
out=$(CONVGUARD_QUIET=1 run_shim "$D" "$P" fork)
check "fork: program output unchanged" test "$out" = "$(printf 'child\nparent 0')"
check "fork: parent and child each have a trace" test "$(ls "$D"/*.jsonl | wc -l)" = 2
check "fork: both traces valid" traces_valid "$D"
parent=$(jq -s -r 'select(.[0].forked_from == null) | .[0].pid' "$D"/*.jsonl)
check "fork: child trace names its parent" jq -e -s --argjson p "$parent" '.[0].forked_from == $p and .[0].ppid == $p' $(grep -l forked_from "$D"/*.jsonl)

D=$WORK/exec
out=$(CONVGUARD_QUIET=1 run_shim "$D" "$P" exec)
check "exec: output of the new image" test "$out" = "after-exec"
check "exec: a fresh trace for the same pid (.2.jsonl)" bash -c "ls '$D' | grep -qE '^[^.]+-[0-9]+\.2\.jsonl$'"
check "exec: both traces valid" traces_valid "$D"

unset PROG_CUDA_LIB
D=$WORK/errno
a=$("$P" errno)
b=$(CONVGUARD_QUIET=1 run_shim "$D" "$P" errno)
check "errno and dlerror text unchanged by a traced failed dlopen" test "$a" = "$b"
check "the failed load is in the trace" jqt "$(trace_of "$D")" 'map(select(.ev=="dlopen" and .ok==false and .name=="libcudnn_missing_for_test.so.9")) | length == 1'
finish
