# t_repeat.sh - the same event again is counted, not written (shim/core/repeat.c):
# the first CONVGUARD_REPEATS (8) of an identical event are written, the rest
# go out as `repeated` events with their exact count, under 16 threads, across
# a fork, at a crash; the report of a folded trace says what the unfolded one
# says; a real cuDNN failing 100,000 times writes under 1 MB.
source "$(dirname "$0")/../lib.sh"
export LD_LIBRARY_PATH=$DOUBLES/cuda
P=$ROBUST/prog_threads
# jq: written events of kind K plus what `repeated` counted of it
total='def total(k): ([.[] | select(.ev == k)] | length) + ([.[] | select(.ev == "repeated" and .of == k) | .count] | add // 0);'

# ---- 16 threads x 20,000 calls, every 10th a failing cuMemRelease (a
# call_failed event each); a fork half-way whose child makes 400 of its own
D=$WORK/threads
mkdir -p "$D"
out=$(CG_FAIL_KIND=release CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM timeout 120 "$P" 16 20000 10 fork); rc=$?
check "threads: the program ran as without the shim (rc $rc)" test "$rc:$out" = "0:calls=320000 fails=32000 wrong=0"
parent=$(grep -L forked_from "$D"/*.jsonl)
child=$(grep -l '"forked_from"' "$D"/*.jsonl)
check "threads: two files, the parent's and the child's" test "$(ls "$D"/*.jsonl | wc -l)" = 2 -a -n "$parent" -a -n "$child"
check "threads: the parent wrote 8 call_failed lines, and counted the rest" \
    jqt "$parent" '[.[] | select(.ev == "call_failed")] | length == 8'
check "threads: parent: written + counted == 32000, exactly, == its exit's fails" \
    jqt "$parent" "$total"' total("call_failed") == 32000 and (.[] | select(.ev == "exit") | .fails.cuMemRelease) == 32000'
check "threads: child: written + counted == 400 (its own, none of the parent's)" \
    jqt "$child" "$total"' total("call_failed") == 400 and (.[] | select(.ev == "exit") | .fails.cuMemRelease) == 400'
check "threads: repeated carries of, the fields, the seq and t range" \
    jqt "$parent" '[.[] | select(.ev == "repeated")] | length >= 1 and all(.of == "call_failed" and .fields == {"fn": "cuMemRelease", "status": 1}
        and .first_seq <= .last_seq and .first_t <= .last_t and .count >= 1)'
check "threads: every line JSON; seqs 0..n-1 once, the counted ones included" traces_valid "$D"
check "threads: each repeated line precedes the next line written (exit last)" \
    jqt "$parent" '.[-1].ev == "exit" and .[-2].ev == "repeated"'

# ---- CONVGUARD_REPEATS=0: every one written
D=$WORK/all
mkdir -p "$D"
CG_FAIL_KIND=release CONVGUARD_REPEATS=0 CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$P" 2 1000 10 >/dev/null
check "REPEATS=0: 200 call_failed lines, no repeated" \
    jqt "$(trace_of "$D")" '([.[] | select(.ev == "call_failed")] | length) == 200 and all(.ev != "repeated")'
D=$WORK/three
mkdir -p "$D"
CG_FAIL_KIND=release CONVGUARD_REPEATS=3 CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$P" 2 1000 10 >/dev/null
check "REPEATS=3: 3 written, 197 counted" \
    jqt "$(trace_of "$D")" "$total"' ([.[] | select(.ev == "call_failed")] | length) == 3 and total("call_failed") == 200'

# ---- two identities in turn (release, alloc): both folded, both exact
D=$WORK/mixed
mkdir -p "$D"
CG_FAIL_KIND=mixed CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$P" 1 4000 10 >/dev/null
check "mixed: call_failed 200 and alloc_failed 200 (the shim's own cap: 256), 8 lines of each" \
    jqt "$(trace_of "$D")" "$total"' total("call_failed") == 200 and total("alloc_failed") == 200 and
        ([.[] | select(.ev == "call_failed")] | length) == 8 and ([.[] | select(.ev == "alloc_failed")] | length) == 8'

# ---- a crash after 100 identical failures: the count is written before the crash
D=$WORK/crash
mkdir -p "$D"
CG_FAIL_FIRST=100 CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$ROBUST/prog_crash" segv 2>/dev/null
T=$(trace_of "$D")
# (the double's driver logs each failure: its first 8 events point to their
# driver_log line and differ; drvlog.c writes 8 of one message, then none)
check "crash: 100 alloc failures in 16 lines and a repeated, before the crash line" \
    jqt "$T" "$total"' total("alloc_failed") == 100 and ([.[] | select(.ev == "alloc_failed")] | length) == 16 and
        (map(.ev) | index(["repeated"])) < (map(.ev) | index(["crash"]))'
check "crash: its last failure is one the repeated counted" \
    jqt "$T" '(.[] | select(.ev == "crash") | .last_failure) as $l | .[] | select(.ev == "repeated") | .first_seq <= $l and $l <= .last_seq'
folded=$("$BUILD_DIR/convguard" report "$D" 2>&1)
D=$WORK/crash0
mkdir -p "$D"
CG_FAIL_FIRST=100 CONVGUARD_REPEATS=0 CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$ROBUST/prog_crash" segv 2>/dev/null
unfolded=$("$BUILD_DIR/convguard" report "$D" 2>&1)
problems() { sed -n '/^\[/,/^note:/p' | grep -v '^note:'; }
check "report: the folded trace's problem, cause and fix are the unfolded one's, word for word" \
    test -n "$(problems <<<"$folded")" -a "$(problems <<<"$folded")" = "$(problems <<<"$unfolded")"
same_last() { grep -q 'after the' <<<"$folded" && [ "$(grep -o 'failure #[0-9]*' <<<"$folded")" = "$(grep -o 'failure #[0-9]*' <<<"$unfolded")" ]; }
check "report: the same last failure named (#seq of a counted event)" same_last
check "report: no line of the folded trace counted as lost, not incomplete" \
    bash -c '! grep -qE "gaps in seq|incomplete" <<<"$1"' _ "$folded"
check "report: the failures list counts the folded ones (100 alloc failures + the libcuda dlopen... > 90 more)" \
    grep -qE '\.\.\. and (9[0-9]) more' <<<"$folded"

# ---- real cuDNN 9 (no GPU: NOT_INITIALIZED), cudnnCreate failing 100,000 times
CUDNN=/usr/local/cuda/lib64/libcudnn.so.9
if [ -e "$CUDNN" ] && [ -e /usr/local/cuda/include/cudnn.h ] && ! ls /dev/nvidia0 >/dev/null 2>&1; then
    cat >"$WORK/create_loop.c" <<'EOF'
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), fails = 0;
    for (int i = 0; i < n; i++) {
        cudnnHandle_t h;
        if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
            fails++;
        else
            cudnnDestroy(h);
    }
    printf("%d\n", fails);
    return 0;
}
EOF
    cc -O2 -I/usr/local/cuda/include -o "$WORK/create_loop" "$WORK/create_loop.c" -L/usr/local/cuda/lib64 -lcudnn \
        -Wl,-rpath,/usr/local/cuda/lib64
    D=$WORK/cudnn
    mkdir -p "$D"
    out=$(env -u LD_LIBRARY_PATH CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM "$WORK/create_loop" 100000)
    T=$(trace_of "$D")
    check "real cuDNN: 100,000 failed creates, as without the shim" test "$out" = 100000
    check "real cuDNN: the trace is under 1 MB ($(stat -c %s "$T") bytes)" test "$(stat -c %s "$T")" -lt 1000000
    check "real cuDNN: 8 cudnn_handle lines + counted == 100000 == exit's fails" \
        jqt "$T" "$total"' total("cudnn_handle") == 100000 and ([.[] | select(.ev == "cudnn_handle")] | length) == 8
            and (.[] | select(.ev == "exit") | .fails.cudnnCreate) == 100000'
else
    echo "  (real cuDNN part skipped: no $CUDNN, or a GPU)"
fi
finish
