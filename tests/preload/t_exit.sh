# t_exit.sh - a process that leaves through _exit or _Exit (Python's
# os._exit, multiprocessing's fork workers, a signal handler) has its exit
# line (shim.c's lifecycle hooks): its status, once; a vfork child writes
# none; the report of a fork pool whose workers left that way is complete.
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip_all "no python3"
DRV=$DOUBLES/cuda/libcuda.so.1

# ---- os._exit(3) after loading the libcuda double
D=$WORK/osexit
mkdir -p "$D"
CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 -c "import os, ctypes; ctypes.CDLL('$DRV'); os._exit(3)" 2>"$WORK/err"
rc=$?
T=$(trace_of "$D")
check "os._exit: the status is the program's (rc $rc)" test $rc = 3
check "os._exit: the last line is the exit line, via _exit, exit_status 3" \
    jqt "$T" '.[-1].ev == "exit" and .[-1].via == "_exit" and .[-1].exit_status == 3 and .[-1].failures == 0'
check "os._exit: one exit line" jqt "$T" '[.[] | select(.ev == "exit")] | length == 1'
check "os._exit: valid lines" trace_lines_valid "$T"
check "os._exit: nothing on stderr" test ! -s "$WORK/err"
# the status _exit was given is the process's outcome (analysis/outcome.c): exit 3 is a failure
check "os._exit: the report says the process failed (exit 3), the trace complete" \
    bash -c "'$BUILD_DIR/convguard' report '$D' | grep -q 'failed (exit 3)' && ! '$BUILD_DIR/convguard' report '$D' | grep -q incomplete"

# ---- _Exit through dlsym(RTLD_DEFAULT), and an atexit handler calling os._exit
D=$WORK/Exit
mkdir -p "$D"
CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 -c "import ctypes; ctypes.CDLL('$DRV'); ctypes.CDLL(None)._Exit(5)"
check "_Exit: exit_status 5" jqt "$(trace_of "$D")" '.[-1].ev == "exit" and .[-1].exit_status == 5'
D=$WORK/atexit
mkdir -p "$D"
CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 -c "import os, ctypes, atexit; ctypes.CDLL('$DRV'); atexit.register(os._exit, 7)"
rc=$?
check "atexit handler calling os._exit: rc 7, one exit line, with status 7" \
    bash -c "[ $rc = 7 ] && jq -e -s '[.[] | select(.ev == \"exit\")] | length == 1 and .[-1].exit_status == 7' '$(trace_of "$D")'"

# ---- a process that wrote nothing: still no file
D=$WORK/none
mkdir -p "$D"
CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 -c "import os; os._exit(0)"
check "os._exit of a process that touched no CUDA library: no file" test -z "$(ls "$D")"

# ---- a fork pool whose workers load the double and leave through os._exit
D=$WORK/pool
mkdir -p "$D"
cat >"$WORK/pool.py" <<EOF
import ctypes, multiprocessing as mp, sys
def work(i):
    drv = ctypes.CDLL("$DRV")
    return drv.cuInit(0)
if __name__ == "__main__":
    p = mp.get_context("fork").Pool(3)
    r = p.map(work, range(12))
    p.close()  # the workers leave through os._exit (a `with` block would terminate them: SIGTERM)
    p.join()
    sys.exit(0 if r == [0] * 12 else 1)
EOF
CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 "$WORK/pool.py"
rc=$?
report=$("$BUILD_DIR/convguard" report "$D" 2>&1)
check "pool: the run succeeded (rc $rc)" test $rc = 0
check "pool: each worker's trace ends with its exit line (via _exit)" \
    bash -c "n=0; for f in \$(grep -l forked_from '$D'/*.jsonl); do jq -e -s '.[-1].ev == \"exit\" and .[-1].via == \"_exit\"' \$f >/dev/null || exit 1; n=\$((n+1)); done; [ \$n -ge 1 ]"
check "pool: the report is not incomplete, no problem found" \
    bash -c '! grep -q incomplete <<<"$1" && grep -q "no problem found" <<<"$1"' _ "$report"

# ---- a vfork child calling _exit writes nothing (it is the parent's memory);
# a signal handler calling _exit while the program fails in a loop
cat >"$WORK/prog.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static void on_alarm(int sig) { (void)sig; _exit(4); }
int main(int argc, char **argv)
{
    void *h = dlopen(argv[2], RTLD_NOW);
    int (*alloc)(unsigned long long *, size_t) = h ? (int (*)(unsigned long long *, size_t))dlsym(h, "cuMemAlloc_v2") : 0;
    if (!alloc)
        return 2;
    unsigned long long p;
    alloc(&p, 16); /* fails: no cuInit */
    if (strcmp(argv[1], "vfork") == 0) {
        pid_t c = vfork();
        if (c == 0)
            _exit(9);
        int st;
        waitpid(c, &st, 0);
        return WIFEXITED(st) && WEXITSTATUS(st) == 9 ? 0 : 1;
    }
    signal(SIGALRM, on_alarm);
    alarm(1);
    for (;;)
        alloc(&p, 16);
}
EOF
cc -O1 -o "$WORK/prog" "$WORK/prog.c" -ldl
D=$WORK/vfork
mkdir -p "$D"
CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$WORK/prog" vfork "$DRV"
rc=$?
T=$(trace_of "$D")
check "vfork: the child's _exit(9) reached the parent's waitpid (rc $rc)" test $rc = 0
check "vfork: one exit line, the parent's own at its end (no via _exit, no status 9)" \
    jqt "$T" '[.[] | select(.ev == "exit")] | length == 1 and (.[-1].via | not) and .[-1].ev == "exit"'
D=$WORK/signal
mkdir -p "$D"
CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM timeout 20 "$WORK/prog" loop "$DRV"
rc=$?
T=$(trace_of "$D")
check "signal handler calling _exit mid-loop: rc 4 (no hang)" test $rc = 4
check "signal handler: valid lines" trace_lines_valid "$T"
check "signal handler: one exit line with status 4 and the failures counted" \
    jqt "$T" '[.[] | select(.ev == "exit")] | length == 1 and .[-1].exit_status == 4 and .[-1].fails.cuMemAlloc_v2 > 100'
check "signal handler: the folded failures' count written before the exit line" \
    jqt "$T" '.[-2].ev == "repeated" and .[-2].of == "alloc_failed"' 
# ---- a forked child that fails without touching CUDA (multiprocessing's worker raises, prints its
# traceback and leaves through os._exit(1)) has a file of its own: its status is the run's fact;
# a child that succeeds that way still leaves none
D=$WORK/forkfail
mkdir -p "$D"
cat >"$WORK/forkfail.py" <<EOF
import ctypes, multiprocessing as mp
def bad():
    raise RuntimeError("the worker gives up")
def good():
    pass
if __name__ == "__main__":
    ctypes.CDLL("$DRV")
    ps = [mp.get_context("fork").Process(target=f) for f in (bad, good)]
    for p in ps: p.start()
    for p in ps: p.join()
EOF
CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 "$WORK/forkfail.py" 2>/dev/null
rc=$?
check "forked child: the parent exits 0 (rc $rc)" test $rc = 0
check "forked child: two files, the parent's and the failing child's" test "$(ls "$D" | wc -l)" = 2
check "forked child: the failing child's file has forked_from and its exit line with exit_status 1" \
    bash -c "cat '$D'/*.jsonl | jq -e -s '[.[] | select(.ev == \"exit\" and .via == \"_exit\" and .exit_status == 1)] | length == 1' >/dev/null && grep -q forked_from '$D'/*.jsonl"
check "forked child: the report counts it failed (exit 1)" \
    bash -c "'$BUILD_DIR/convguard' report '$D' | grep -q 'failed (exit 1)'"

# ---- /dev/shm as the process sees it: a 16 MiB one (a container's without --shm-size, made here in a
# private mount namespace) is in the start event; the machine's own (larger than 1 GiB) is not
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m --propagation private true 2>/dev/null; then
    D=$WORK/shm
    mkdir -p "$D"
    unshare -m --propagation private sh -c "mount -t tmpfs -o size=16m cgshm /dev/shm &&
        CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 -c \"import ctypes; ctypes.CDLL('$DRV')\""
    check "small /dev/shm: the start event has its size (16 MiB) and what is free" \
        jqt "$(trace_of "$D")" '.[0].ev == "start" and .[0].shm.total == 16777216 and .[0].shm.free >= 0'
    total=$(df -B1 --output=size /dev/shm 2>/dev/null | tail -1 | tr -d ' ')
    D=$WORK/shm-big
    mkdir -p "$D"
    CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM python3 -c "import ctypes; ctypes.CDLL('$DRV')"
    if [ -n "$total" ] && [ "$total" -ge $((1 << 30)) ]; then
        check "this machine's /dev/shm ($total bytes): not in the start event" \
            jqt "$(trace_of "$D")" '.[0].ev == "start" and (.[0] | has("shm") | not)'
    fi
fi

finish
