# t_env.sh - bad settings and bad trace directories: one clear warning on
# stderr, the program unchanged, never a crash.
source "$(dirname "$0")/../lib.sh"
P=$UNIT/prog_basic
# a trace file is made for a process that touches a CUDA-family library: prog_basic loads the driver double
export PROG_CUDA_LIB=$DOUBLES/cuda/libcuda.so.1

warns_once() { # VAR VALUE
    local err out
    out=$(env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/d LD_PRELOAD=$SHIM "$1=$2" "$P" echo same 2>"$WORK/err")
    [ "$out" = same ] && [ "$(grep -c "convguard: warning: $1" "$WORK/err")" = 1 ]
}
for v in CONVGUARD_WORKSPACE_LIMIT_MB CONVGUARD_RESERVE_MB CONVGUARD_MAX_MB; do
    for bad in abc -5 99999999999999999999 1.5 ""; do
        [ -z "$bad" ] && continue
        check "$v=$bad: one warning, output unchanged" warns_once "$v" "$bad"
    done
done
check "CONVGUARD_FALLBACK=maybe: one warning" warns_once CONVGUARD_FALLBACK maybe
# the usual spellings of a switch are taken, in any case (issue 29 item 5)
fallback_of() { # VALUE -> the trace's settings.fallback, and no warning
    rm -rf "$WORK/fl"
    env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/fl LD_PRELOAD=$SHIM "CONVGUARD_FALLBACK=$1" "$P" echo same >/dev/null 2>"$WORK/err"
    ! grep -q warning "$WORK/err" && jq -r -s '.[0].settings.fallback' "$WORK"/fl/*.jsonl
}
for v in 1 yes YES true On; do
    check "CONVGUARD_FALLBACK=$v turns fallback on, no warning" test "$(fallback_of "$v")" = true
done
for v in 0 no false OFF; do
    check "CONVGUARD_FALLBACK=$v keeps fallback off, no warning" test "$(fallback_of "$v")" = false
done
# the warning names the value given, what is accepted and the default (never a literal "<value>")
env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/d LD_PRELOAD=$SHIM CONVGUARD_FALLBACK=maybe CONVGUARD_MAX_MB=-5 \
    CONVGUARD_UNWIND=best "$P" echo same >/dev/null 2>"$WORK/err"
check "a bad switch: its value, the spellings and the default" \
    grep -qF "CONVGUARD_FALLBACK=maybe is not 1/0, yes/no, true/false or on/off; using the default (0)" "$WORK/err"
check "a bad size: its value, the range and the default" \
    grep -qF "CONVGUARD_MAX_MB=-5 is not a whole number of MiB from 0 to 1048576; using the default (256)" "$WORK/err"
check "a bad unwinder: its value and the default" grep -qF "CONVGUARD_UNWIND=best is not auto" "$WORK/err"
check "no literal <value>" bash -c "! grep -q '<value>' '$WORK/err'"
# once per run, not per process: the children of a process that had the shim and the same value are silent
env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/d LD_PRELOAD=$SHIM CONVGUARD_MAX_MB=-5 CONVGUARD_TYPO=1 \
    bash -c "$P echo a; $P echo b; ( $P echo c ) | cat" >/dev/null 2>"$WORK/err"
check "a shell and its 3 children: one warning for the bad value" test "$(grep -c 'CONVGUARD_MAX_MB=-5' "$WORK/err")" = 1
check "... and one for the unknown name" test "$(grep -c 'CONVGUARD_TYPO is not' "$WORK/err")" = 1
env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/d CONVGUARD_MAX_MB=-5 bash -c \
    "LD_PRELOAD=$SHIM $P echo a; LD_PRELOAD=$SHIM $P echo b" >/dev/null 2>"$WORK/err"
check "two processes whose parent had no shim: each warns" test "$(grep -c 'CONVGUARD_MAX_MB=-5' "$WORK/err")" = 2
env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/d LD_PRELOAD=$SHIM CONVGUARD_MAX_MB=-5 bash -c \
    "CONVGUARD_MAX_MB=-6 $P echo a" >/dev/null 2>"$WORK/err"
check "a child given another bad value warns for it" grep -q 'CONVGUARD_MAX_MB=-6' "$WORK/err"
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -x "$PY" ]; then
    printf 'import multiprocessing as mp\ndef f(x): return x\nif __name__ == "__main__":\n    mp.set_start_method("spawn")\n    with mp.Pool(4) as p: print(sum(p.map(f, range(8))))\n' > "$WORK/pool.py"
    out=$(env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/d LD_PRELOAD=$SHIM CONVGUARD_FALLBACK=maybe "$PY" "$WORK/pool.py" 2>"$WORK/err")
    check "a Pool(4) script (spawn): its output, and one warning (6 processes)" \
        test "$out" = 28 -a "$(grep -c 'CONVGUARD_FALLBACK=maybe' "$WORK/err")" = 1
fi
check "CONVGUARD_QUIET=2: one warning" warns_once CONVGUARD_QUIET 2
check "CONVGUARD_DIR='': one warning" warns_once CONVGUARD_DIR ""

dir_case() { # DIR -> program output unchanged, exit 0, exactly one warning
    local out
    out=$(CONVGUARD_DIR=$1 LD_PRELOAD=$SHIM "$P" echo same 2>"$WORK/err"); local rc=$?
    [ "$out" = same ] && [ $rc = 0 ] && [ "$(grep -c 'convguard: warning' "$WORK/err")" = 1 ]
}
touch "$WORK/afile"
check "trace dir is a file: warned, program unchanged" dir_case "$WORK/afile"
check "trace dir parent missing: warned, program unchanged" dir_case "$WORK/no/such/dir"
mkdir -p "$WORK/ro" && chmod 0555 "$WORK/ro"
if [ "$(id -u)" != 0 ]; then
    check "trace dir not writable: warned, program unchanged" dir_case "$WORK/ro"
fi
mkdir -p "$WORK/other" && ln -s "$WORK/other" "$WORK/link"
check "trace dir a symlink to our own dir: accepted" bash -c "CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/link LD_PRELOAD=$SHIM $P echo x >/dev/null 2>$WORK/e2 && ! test -s $WORK/e2 && ls $WORK/other/*.jsonl"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -p "$WORK/theirs" && chown nobody "$WORK/theirs" && ln -s "$WORK/theirs" "$WORK/theirlink"
    check "trace dir a symlink to another user's dir: refused with a warning" dir_case "$WORK/theirlink"
    check "nothing written into the other user's dir" bash -c "! ls $WORK/theirs/*.jsonl"
fi
check "RANK=3 puts the rank in the file name" bash -c "RANK=3 CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/rank LD_PRELOAD=$SHIM $P echo x >/dev/null && ls $WORK/rank | grep -qE -- '-r3-[0-9]+\.jsonl$'"
check "RANK=../x is not used in the name, one warning" bash -c "RANK=../x CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/rank2 LD_PRELOAD=$SHIM $P echo x >/dev/null 2>$WORK/e3; ls $WORK/rank2 | grep -qvE -- '-r' && [ \$(grep -c 'convguard: warning: RANK' $WORK/e3) = 1 ]"
finish
