# t_fdhostile.sh - a host that closes or reuses the shim's descriptor, or
# runs under tight limits (issue 26 items 1 and 13).  The trace goes on
# (reopened by its path, after a trace_gap event), the host's own file holds
# exactly what the host wrote, and the host can open as many files and
# allocate as much memory as without the shim.
source "$(dirname "$0")/../lib.sh"
P=$ROBUST/prog_fdhostile
D=$DOUBLES
export CGTEST_CUDNN_CREATE_STATUS=4 # cudnnCreate fails: CUDNN_STATUS_INTERNAL_ERROR
export CONVGUARD_QUIET=1
HOST_DATA=$(printf 'host line 1\nhost line 2')

# host MODE NAME [THREADS]: runs it without and with the shim; same stdout, same status (1)
host() {
    local mode=$1 name=$2
    "$P" "$D" "$mode" "$WORK/$name.plainfile" "${@:3}" > "$WORK/$name.plain" 2>&1; echo $? >> "$WORK/$name.plain"
    run_shim "$WORK/$name" "$P" "$D" "$mode" "$WORK/$name.file" "${@:3}" > "$WORK/$name.shim" 2>&1; echo $? >> "$WORK/$name.shim"
}
# the failure, then the exit event, after one trace_gap of REASON
gap_then_rest() { # NAME REASON FAILURES
    local T
    T=$(trace_of "$WORK/$1") && jqt "$T" "
        ([.[] | select(.ev == \"trace_gap\")] | length == 1 and .[0].reason == \"$2\" and .[0].lost == 0) and
        ([.[] | select(.ev == \"cudnn_handle\" and .status == 4)] | length == $3) and
        .[-1].ev == \"exit\" and .[-1].events_dropped == 0"
}

# 1. closerange(3, 1024) after libcuda loaded (python-daemon, servers)
host closerange cr
check "closerange: output and status as without the shim" diff "$WORK/cr.plain" "$WORK/cr.shim"
check "closerange: trace_gap (fd closed, nothing lost), then the failure and the exit event" gap_then_rest cr "fd closed" 1
check "closerange: the host's file holds exactly its own data" test "$(cat "$WORK/cr.file")" = "$HOST_DATA"
check "closerange: trace valid (every line one object, seq gap-free)" traces_valid "$WORK/cr"

# 2. the host's file dup2'd onto the trace's descriptor (`exec 100>log`)
host dup2 d2
check "dup2: the host took the trace's descriptor (100)" grep -qx 'host fd 100' "$WORK/d2.shim"
check "dup2: the host's failed run's status (1)" test "$(tail -1 "$WORK/d2.shim")" = 1
check "dup2: trace_gap (fd reused), then the failure and the exit event" gap_then_rest d2 "fd reused" 1
check "dup2: the host's file on descriptor 100 holds exactly its own data" test "$(cat "$WORK/d2.file")" = "$HOST_DATA"
check "dup2: trace valid" traces_valid "$WORK/d2"

# 3. eight threads find the descriptor gone at once: one reopens
host closerange cr8 8
check "8 threads: output and status as without the shim" diff "$WORK/cr8.plain" "$WORK/cr8.shim"
check "8 threads: one trace_gap, all 8 failures, the exit event" gap_then_rest cr8 "fd closed" 8
check "8 threads: trace valid" traces_valid "$WORK/cr8"

# 4. the crash handler is the first to find it gone
run_shim "$WORK/crash" "$P" "$D" crash "$WORK/crash.file" > /dev/null 2>&1
T=$(trace_of "$WORK/crash")
check "crash: trace_gap, then the crash event (written from the signal handler)" \
    jqt "$T" 'any(.[]; .ev == "trace_gap" and .reason == "fd closed") and .[-1].ev == "crash" and .[-1].signal == 11'

# 5. no descriptor free when the events come: counted, said by the trace_gap
#    once one is free again, and the events after that written
(ulimit -n 512; host exhaust ex 2)
T=$(trace_of "$WORK/ex")
check "no descriptor free: output and status as without the shim" diff "$WORK/ex.plain" "$WORK/ex.shim"
check "no descriptor free: one trace_gap whose lost count is the exit event's events_dropped (> 0)" \
    jqt "$T" '[.[] | select(.ev == "trace_gap")] as $g | ($g | length == 1) and $g[0].lost > 0 and $g[0].lost == .[-1].events_dropped'
check "no descriptor free: the failures after the descriptors came back, and the exit event" \
    jqt "$T" '([.[] | select(.ev == "cudnn_handle" and .status == 4)] | length == 2) and .[-1].ev == "exit"'
check "no descriptor free: every line one JSON object" trace_lines_valid "$T"

# 6. ulimit -n 16: the shim holds no descriptor (each event opens the file),
#    so the host opens as many files as without it; the trace is whole
(ulimit -n 16; host count n16)
check "ulimit -n 16: the host opens as many files as without the shim" diff "$WORK/n16.plain" "$WORK/n16.shim"
check "ulimit -n 16: the host opened some (the limit, less stdio and its loads)" grep -qE '^opened (9|1[0-3])$' "$WORK/n16.plain"
T=$(trace_of "$WORK/n16")
check "ulimit -n 16: the trace has start, the failure and the exit event" \
    jqt "$T" '.[0].ev == "start" and any(.[]; .ev == "cudnn_handle" and .status == 4) and .[-1].ev == "exit" and .[-1].events_dropped == 0'
check "ulimit -n 16: trace valid" traces_valid "$WORK/n16"
check "ulimit -n 16, closerange: output and status as without the shim, trace whole" \
    bash -c "ulimit -n 16; $(declare -f host run_shim); P=$P D=$D WORK=$WORK SHIM=$SHIM; host closerange n16c && diff '$WORK/n16c.plain' '$WORK/n16c.shim' && jq -e -s '.[-1].ev == \"exit\" and ([.[] | select(.ev == \"trace_gap\")] | length == 0)' '$WORK'/n16c/*.jsonl"

# 7. ulimit -v 12000: the shim's records and memory tables (3.3 MiB) are mapped only when a
#    wrapper that reads them is first handed out (a backend call, a driver
#    allocation), so with libcuda and cuDNN loaded a 1 MiB malloc still works,
#    as without the shim.  (The shim's image itself still takes about 1.4 MiB
#    of the limit: docs/robustness.md.)
(ulimit -v 12000; host malloc v12)
check "ulimit -v 12000, libcuda and cuDNN loaded: a 1 MiB malloc works, as without the shim" \
    bash -c "grep -qx 'malloc of 1 MiB: ok' '$WORK/v12.plain' && grep -qx 'malloc of 1 MiB: ok' '$WORK/v12.shim'"
check "ulimit -v 12000: the trace has start and the exit event" \
    jqt "$(trace_of "$WORK/v12")" '.[0].ev == "start" and .[-1].ev == "exit"'
# the shim's own image: only the graph descriptor table (4 MiB) is still static
check "the shim's bss is under 5.5 MiB (the records and memory tables are mapped on first use)" \
    bash -c "[ \$(size -A '$SHIM_SO' | awk '\$1 == \".bss\" {print \$2}') -lt 5767168 ]"
finish
