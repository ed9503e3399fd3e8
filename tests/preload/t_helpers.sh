# t_helpers.sh - helper processes leave no file (issue 28 item 4): a shell, a
# compiler's --version, a process that touches no CUDA library and fails
# nothing; a CUDA tool (XLA runs `ptxas --version` dozens of times) leaves one
# file per parent and tool, which is all the report needs of it; a helper that
# crashes leaves its file.
source "$(dirname "$0")/../lib.sh"
PTXAS=/usr/local/cuda/bin/ptxas
D=$WORK/plain
mkdir -p "$D"
CONVGUARD_DIR=$D LD_PRELOAD=$SHIM sh -c 'true; cc --version >/dev/null 2>&1; python3 -c pass 2>/dev/null; exit 0'
check "a shell, cc --version, python3 -c pass: no file" test -z "$(ls "$D")"
if [ -x "$PTXAS" ]; then
    D=$WORK/ptxas
    mkdir -p "$D"
    out=$(CONVGUARD_DIR=$D LD_PRELOAD=$SHIM sh -c "for i in 1 2 3 4 5; do $PTXAS --version; done" 2>"$WORK/err")
    check "5 runs of ptxas --version under one parent: their output unchanged" \
        test "$out" = "$(for i in 1 2 3 4 5; do $PTXAS --version; done)"
    check "5 runs of ptxas --version under one parent: one file, <host>-<ppid>.ptxas-<hash>.jsonl" \
        bash -c "[ \$(ls '$D' | wc -l) = 1 ] && ls '$D' | grep -qE '^[^/]+-[0-9]+\.ptxas-[0-9a-f]{8}\.jsonl$'"
    check "the one file: start with cuda_tool and the tool's path, then exit" \
        jqt "$(trace_of "$D")" '.[0].ev == "start" and .[0].cuda_tool.name == "ptxas" and (.[0].exe | endswith("/ptxas")) and .[-1].ev == "exit"'
    check "one exit line on stderr, naming that file (the others write none)" \
        bash -c "[ \$(grep -c '^convguard:' '$WORK/err') = 1 ] && grep -q '\.ptxas-' '$WORK/err'"
    D=$WORK/ptxas2
    mkdir -p "$D"
    CONVGUARD_DIR=$D LD_PRELOAD=$SHIM sh -c "$PTXAS --version; sh -c '$PTXAS --version'" >/dev/null 2>&1
    check "another parent: its own file" test "$(ls "$D" | wc -l)" = 2
else
    echo "  (ptxas part skipped: no $PTXAS)"
fi
D=$WORK/crash
mkdir -p "$D"
CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)' 2>/dev/null
check "a helper that crashes (no CUDA library): its file, start then crash" \
    jqt "$(trace_of "$D")" '.[0].ev == "start" and any(.[]; .ev == "crash")'
finish
