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
check "CONVGUARD_FALLBACK=yes: one warning" warns_once CONVGUARD_FALLBACK yes
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
