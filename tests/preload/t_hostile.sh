# t_hostile.sh - hostile or broken input: each case gets exactly one
# warning on stderr and the program runs on unchanged (same output, same
# status).  Settings with bad values, bad trace directories, a full disk
# (a write fault double, and a real 32 KiB tmpfs when we may mount one),
# the size cap.  (t_env.sh has the first, simpler cases.)
source "$(dirname "$0")/../lib.sh"
P=$UNIT/prog_basic
# a trace file is made for a process that touches a CUDA-family library: prog_basic loads the driver double
export PROG_CUDA_LIB=$DOUBLES/cuda/libcuda.so.1
T=$ROBUST/prog_threads
export LD_LIBRARY_PATH=$DOUBLES/cuda
export CG_FAIL_KIND=release # cuMemRelease(0): one call_failed event per call
FIRST=${CG_PRELOAD_FIRST:+$CG_PRELOAD_FIRST:}

# one_warning EXPECTED_OUT CMD...: output and status unchanged, one warning
one_warning() {
    local want=$1; shift
    local out rc
    out=$("$@" 2>"$WORK/err"); rc=$?
    [ "$out" = "$want" ] && [ $rc = 0 ] && [ "$(grep -c '^convguard: warning' "$WORK/err")" = 1 ] &&
        [ "$(grep -vc '^convguard: warning' "$WORK/err")" = 0 ]
}
setting() { one_warning same env CONVGUARD_QUIET=1 CONVGUARD_DIR="$WORK/d" LD_PRELOAD="$SHIM" "$1=$2" "$P" echo same; }

huge=99999999999999999999999999
for v in CONVGUARD_WORKSPACE_LIMIT_MB CONVGUARD_RESERVE_MB CONVGUARD_MAX_MB; do
    for bad in abc -5 $huge 1.5 " 5" 0x10 17179869185; do
        check "$v='$bad': one warning, program unchanged" setting "$v" "$bad"
    done
done
for v in CONVGUARD_FALLBACK CONVGUARD_CRASH CONVGUARD_NO_LIBUNWIND; do
    for bad in maybe -1 $huge; do # yes, true, on: accepted (issue 29)
        check "$v='$bad': one warning, program unchanged" setting "$v" "$bad"
    done
done
check "CONVGUARD_QUIET=$huge: one warning (and the exit line: not quiet)" \
    bash -c "out=\$(CONVGUARD_DIR=$WORK/d LD_PRELOAD=$SHIM CONVGUARD_QUIET=$huge $P echo same 2>$WORK/err) && [ \"\$out\" = same ] && [ \$(grep -c '^convguard: warning' $WORK/err) = 1 ]"
check "CONVGUARD_EXTRA_LIBS with a path: one warning" setting CONVGUARD_EXTRA_LIBS "libcufft,../../etc/passwd"
check "CONVGUARD_EXTRA_LIBS too long: one warning" setting CONVGUARD_EXTRA_LIBS "$(printf 'libx,%.0s' $(seq 200))"
check "CONVGUARD_DIR too long: one warning" setting CONVGUARD_DIR "$WORK/$(printf 'x%.0s' $(seq 3000))"
check "CONVGUARD_MAXMB (a typo): one warning naming it" \
    bash -c "$(declare -f one_warning setting); WORK=$WORK P=$P SHIM=$SHIM; setting CONVGUARD_MAXMB 5 && grep -q 'CONVGUARD_MAXMB is not a convguard setting' $WORK/err"
# the report's own settings (read by the CLI, docs/env.md) are no typos for the shim either
for v in CONVGUARD_REPORT_THREADS CONVGUARD_REPORT_SHARE; do
    check "$v (a setting of the report): no warning from the shim" \
        bash -c "out=\$(CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/d LD_PRELOAD=$SHIM $v=1 $P echo same 2>$WORK/err) && [ \"\$out\" = same ] && ! grep -q warning $WORK/err"
done
touch "$WORK/afile"
check "control characters in a value are not echoed to the terminal" \
    bash -c "CONVGUARD_QUIET=1 CONVGUARD_DIR=\$'$WORK/afile/\e[31mred' LD_PRELOAD=$SHIM $P echo x 2>$WORK/err >/dev/null; ! grep -q \$'\e' $WORK/err && grep -q '?\[31mred' $WORK/err"

# ---- trace directories: tracing off, one warning, program unchanged
dir_case() { one_warning same env CONVGUARD_DIR="$1" LD_PRELOAD="$SHIM" "$P" echo same; }
ln -s "$WORK/nowhere" "$WORK/dangling"
check "trace dir a dangling symlink: one warning" dir_case "$WORK/dangling"
touch "$WORK/afile"
ln -s "$WORK/afile" "$WORK/filelink"
check "trace dir a symlink to a file: one warning" dir_case "$WORK/filelink"
check "trace dir under a file: one warning" dir_case "$WORK/afile/sub"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -p "$WORK/theirs" "$WORK/theirs-sticky" "$WORK/root-sticky"
    chown nobody "$WORK/theirs" "$WORK/theirs-sticky"
    chmod 0777 "$WORK/theirs"
    chmod 1777 "$WORK/theirs-sticky" "$WORK/root-sticky"
    ln -s "$WORK/theirs" "$WORK/theirlink"
    chmod 0711 "$WORK"
    check "another user's directory, even world-writable: refused, one warning" dir_case "$WORK/theirs"
    check "a symlink to another user's directory: refused, one warning" dir_case "$WORK/theirlink"
    check "another user's sticky directory (not root's): refused, one warning" dir_case "$WORK/theirs-sticky"
    check "nothing written into another user's directories" bash -c "! ls $WORK/theirs/* $WORK/theirs-sticky/* 2>/dev/null | grep -q ."
    if command -v setpriv >/dev/null && ! nobody_reads "$SHIM_SO"; then
        echo "  (skipped: 'nobody' cannot read $SHIM_SO: a checkout under a private directory)"
    elif command -v setpriv >/dev/null; then
        # as_nobody DIR ARGS...: prog_basic ARGS as nobody, shim preloaded
        # into it alone (sh sets the variables for the exec'd program only)
        as_nobody() {
            (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/sh -c \
                'd=$1; shift; CONVGUARD_QUIET=1 CONVGUARD_DIR=$d LD_PRELOAD=$SHIM exec "$@"' sh "$@")
        }
        export SHIM
        check "root's sticky directory (as /tmp) for a non-root user: accepted, file 0600 of that user" \
            bash -c "$(declare -f as_nobody); as_nobody $WORK/root-sticky $P echo x >/dev/null 2>$WORK/e4 && ! test -s $WORK/e4 && [ \"\$(stat -c '%a %U' $WORK/root-sticky/*.jsonl)\" = '600 nobody' ]"
        mkdir -p "$WORK/ro" && chown nobody "$WORK/ro" && chmod 0555 "$WORK/ro"
        check "our own directory, but not writable: one warning" \
            bash -c "$(declare -f one_warning as_nobody); WORK=$WORK; one_warning same as_nobody $WORK/ro $P echo same && grep -q 'not writable' $WORK/err"
    fi
else
    echo "  (skipped: other users' directories need root and a 'nobody' user)"
fi

# ---- a full disk, by a write(2) fault double preloaded before the shim:
# ENOSPC from the first byte, and a partial line when the disk fills mid-write.
# (Here and below the program fails the same call again and again: every one
# written, CONVGUARD_REPEATS=0, so that the lines fill the disk and the cap;
# what the shim folds is t_repeat.sh's.)
export CONVGUARD_REPEATS=0
for mode in enospc short; do
    D=$WORK/full-$mode
    mkdir -p "$D"
    check "disk full ($mode): one warning, program unchanged" \
        one_warning "calls=2000 fails=2000 wrong=0" env CONVGUARD_QUIET=1 CONVGUARD_DIR="$D" \
        CGTEST_WRITE_FAULT=$mode CGTEST_WRITE_OK_BYTES=20000 LD_PRELOAD="$FIRST$ROBUST/libfaultwrite.so:$SHIM_SO" "$T" 1 2000 1
    check "disk full ($mode): the warning says events are counted, not written" grep -q "cannot write the trace" "$WORK/err"
    F=$(trace_of "$D")
    # complete lines: all valid; a partial one only at the very end
    check "disk full ($mode): every complete line is valid JSON, only the last may be cut" \
        bash -c "n=\$(grep -c '' $F); w=\$(wc -l < $F); [ \$(head -n \$w $F | jq -c . | wc -l) = \$w ] && [ \$((n - w)) -le 1 ]"
    [ $mode = short ] && check "disk full (short): the file ends in the cut line, nothing glued after it" \
        bash -c "[ \$(grep -c '' $F) = \$((\$(wc -l < $F) + 1)) ] && [ \$(stat -c %s $F) = 20000 ]"
done
mkdir -p "$WORK/r2"
a=$(CONVGUARD_QUIET=1 run_shim "$WORK/r1" "$ROBUST/prog_routes" 2>/dev/null)
b=$(CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/r2 CGTEST_WRITE_FAULT=enospc LD_PRELOAD="$FIRST$ROBUST/libfaultwrite.so:$SHIM_SO" "$ROBUST/prog_routes" 2>/dev/null)
check "disk full: errno and dlerror() still unchanged across every hook" test -n "$a" -a "$a" = "$b"

# A real full file system: a 32 KiB tmpfs (root only).
FS=$WORK/tmpfs
mkdir -p "$FS"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=32k,mode=0700 cgtest "$FS" 2>/dev/null; then
    trap 'umount "$FS" 2>/dev/null; rm -rf "$WORK"' EXIT
    check "full tmpfs: one warning, program unchanged" \
        one_warning "calls=2000 fails=2000 wrong=0" env CONVGUARD_QUIET=1 CONVGUARD_DIR="$FS" LD_PRELOAD="$SHIM" "$T" 1 2000 1
    F=$(trace_of "$FS")
    check "full tmpfs: every complete line is valid JSON, only the last may be cut" \
        bash -c "n=\$(grep -c '' $F); w=\$(wc -l < $F); [ \$(head -n \$w $F | jq -c . | wc -l) = \$w ] && [ \$((n - w)) -le 1 ] && [ \$w -gt 100 ]"
    umount "$FS"
else
    echo "  (skipped: a real full tmpfs needs root and mount; the fault double above covers it)"
fi

# ---- hosts built with a sanitizer: their runtime resolves what it intercepts
# with dlsym (the shim's) before it can forward anything; the shim's first
# dlsym must call nothing such a runtime intercepts (dl_iterate_phdr, strcmp)
if [ -x "$ROBUST/prog_threads_tsan" ]; then
    check "a ThreadSanitizer-built program runs under the shim, unchanged, no report" \
        bash -c "[ \"\$(CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/tsan LD_PRELOAD=$SHIM TSAN_OPTIONS=halt_on_error=1 $ROBUST/prog_threads_tsan 4 1000 10 2>&1)\" = 'calls=4000 fails=400 wrong=0' ]"
fi
if [ -x "$ROBUST/prog_threads_asan" ]; then
    # (ASan itself refuses any preloaded library before its runtime unless told)
    check "an AddressSanitizer-built program runs under the shim, unchanged, no report" \
        bash -c "[ \"\$(CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/asan LD_PRELOAD=$SHIM ASAN_OPTIONS=verify_asan_link_order=0 $ROBUST/prog_threads_asan 4 1000 10 2>&1)\" = 'calls=4000 fails=400 wrong=0' ]"
fi

# ---- the size cap: past CONVGUARD_MAX_MB events are counted, not written
# (CONVGUARD_REPEATS=0 still)
D=$WORK/cap
mkdir -p "$D"
check "CONVGUARD_MAX_MB=1: one warning, program unchanged" \
    one_warning "calls=20000 fails=20000 wrong=0" env CONVGUARD_QUIET=1 CONVGUARD_DIR="$D" CONVGUARD_MAX_MB=1 LD_PRELOAD="$SHIM" "$T" 1 20000 1
F=$(trace_of "$D")
check "cap: the warning names CONVGUARD_MAX_MB" grep -q "CONVGUARD_MAX_MB" "$WORK/err"
check "cap: the file stays within 1 MiB plus its last lines" test "$(stat -c %s "$F")" -le $((1048576 + 4096))
check "cap: one trace_capped line, then exit with events_dropped counting the rest" \
    jqt "$F" '(map(select(.ev=="trace_capped")) | length == 1 and .[0].max_mb == 1) and .[-1].ev == "exit" and .[-1].events_dropped == (20000 - (map(select(.ev | endswith("_failed"))) | length)) and .[-1].events_dropped > 0'
check "cap: the default is 256 MiB (start.max_mb)" \
    bash -c "CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/dflt LD_PRELOAD=$SHIM $P echo x >/dev/null 2>&1; jq -e -s '.[0].max_mb == 256' $WORK/dflt/*.jsonl"
finish
