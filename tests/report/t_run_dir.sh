# t_run_dir.sh - `convguard run`'s trace folder: checked and made before the
# launch with the shim's own rule (shim/core/safedir.c); refused or unusable
# (another user's link or folder, a read-only working folder, a missing
# parent): $TMPDIR/convguard-<uid>, said in one line; that too: the program
# runs untraced.  Never a reason to stop the job or to change its status.
# (The shim's side: tests/preload/t_tracedir.sh.)
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
P=$UNIT/prog_basic
[ -x "$P" ] && [ -x "$CG" ] || skip_all "test programs missing (make test builds them)"
export PROG_CUDA_LIB=$DOUBLES/cuda/libcuda.so.1 # prog_basic touches a CUDA-family library: a trace is due
export TMPDIR=$WORK/tmp # the fallback folder, kept inside the test's own
mkdir -p "$TMPDIR"
ALT=$TMPDIR/convguard-$(id -u)
ATT=1234
# a program that traces (prog_basic), then exits 5
prog=(sh -c '"$1" echo ran; exit 5' sh "$P")
warnings() { grep -c '^convguard: warning' "$1"; }

# ---- issue 29 item 6: a missing parent is refused as the shim refuses it, not made
"$CG" run --dir "$WORK/nonexistent/x" -- "${prog[@]}" >"$WORK/out" 2>"$WORK/err"; rc=$?
check "--dir under a missing folder: the program's status (5) and output" test $rc = 5 -a "$(cat "$WORK/out")" = ran
check "... the missing folder is not made" test ! -e "$WORK/nonexistent"
check "... one warning: missing, traces go to \$TMPDIR/convguard-<uid>" \
    bash -c "[ \$(grep -c '^convguard: warning' $WORK/err) = 1 ] && grep -q 'nonexistent: missing.*traces go to $ALT instead' $WORK/err"
check "... the trace is there" bash -c "ls $ALT/*.jsonl"
CONVGUARD_DIR=$WORK/nonexistent/y "$CG" run -- "${prog[@]}" >/dev/null 2>&1
check "CONVGUARD_DIR under a missing folder: not made either" test ! -e "$WORK/nonexistent"

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as_att() { (cd / && setpriv --reuid=$ATT --regid=$ATT --clear-groups "$@"); }
    chmod 0711 "$WORK"
    mkdir -p "$WORK/pub" "$WORK/victim"
    chmod 1777 "$WORK/pub"
    as_att mkdir "$WORK/pub/att"
    as_att ln -s "$WORK/victim" "$WORK/pub/att/logs"
    touch "$WORK/mark"
    trap 'find /etc -maxdepth 1 -newer "$WORK/mark" \( -name "*.jsonl" -o -name "*.stderr" \) -newer "$WORK/mark" -delete 2>/dev/null; rm -rf "$WORK"' EXIT
    as_att ln -s /etc "$WORK/pub/att/etc"
    # ---- item 2: run --dir into the attacker's folder (logs -> a folder of root's, etc -> /etc)
    for d in logs etc; do
        rm -rf "$ALT"
        "$CG" run --dir "$WORK/pub/att/$d" -- "${prog[@]}" >"$WORK/out" 2>"$WORK/err"; rc=$?
        check "run --dir <uid $ATT's folder>/$d: the program's status (5) and output" test $rc = 5 -a "$(cat "$WORK/out")" = ran
        check "... one warning naming the folder, traces elsewhere" \
            bash -c "[ \$(grep -c '^convguard: warning' $WORK/err) = 1 ] && grep -q 'pub/att: a folder another user can change.*uid $ATT; traces go to $ALT' $WORK/err"
        check "... the trace (and the captured stderr) in $ALT" bash -c "ls $ALT/*.jsonl"
    done
    check "nothing written through the links (a folder of root's, /etc)" \
        bash -c "[ -z \"\$(ls -A $WORK/victim)\" ] && [ -z \"\$(find /etc -maxdepth 1 -newer $WORK/mark \( -name '*.jsonl' -o -name '*.stderr' \))\" ]"
    # ---- item 2: a parent others can write, by --dir and by CONVGUARD_DIR
    mkdir -p "$WORK/open/logs"
    chmod 0777 "$WORK/open"
    "$CG" run --dir "$WORK/open/logs" -- "${prog[@]}" >"$WORK/out" 2>"$WORK/err"; rc=$?
    check "run --dir <a world-writable folder>/logs: status 5, refused, nothing written there" \
        bash -c "[ $rc = 5 ] && grep -q 'open: a folder other users can write' $WORK/err && [ -z \"\$(ls -A $WORK/open/logs)\" ]"
    CONVGUARD_DIR=$WORK/open/logs "$CG" run -- "${prog[@]}" >/dev/null 2>"$WORK/err"; rc=$?
    check "CONVGUARD_DIR=<a world-writable folder>/logs: the same" \
        bash -c "[ $rc = 5 ] && grep -q 'open: a folder other users can write' $WORK/err && [ -z \"\$(ls -A $WORK/open/logs)\" ]"
    # ---- item 10: warned once per run, whatever the number of processes
    # (main's run took uid $ATT's folder itself, and the shim of every process refused it)
    for d in open/logs pub/att; do
        for quiet in "" "--quiet"; do
            "$CG" run $quiet --dir "$WORK/$d" -- sh -c '"$1" echo a | cat >/dev/null; ls | wc -l >/dev/null; "$1" echo b' sh "$P" \
                >/dev/null 2>"$WORK/err"
            check "refused $d, a shell pipeline of 6 processes (2 touch CUDA) ${quiet:-(not quiet)}: one warning" \
                test "$(warnings "$WORK/err")" = 1
        done
    done
else
    echo "  (skipped: another user's folders and links need root and setpriv)"
fi

# ---- item 9: a read-only working folder (a container's root, a read-only project mount)
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    mkdir -p "$WORK/ro"
    # ro_run TMPDIR: convguard run -- sh -c 'exit 5' in a read-only tmpfs as cwd, in a private mount namespace
    ro_run() {
        unshare -m sh -c 'mount -t tmpfs -o ro cgtest "$1" && cd "$1" && TMPDIR=$2 "$3" run -- sh -c "echo ran >\"\$1\"; echo \"preload=\${LD_PRELOAD:-}\"; exit 5" sh "$4"' \
            sh "$WORK/ro" "$1" "$CG" "$WORK/ran" >"$WORK/out" 2>"$WORK/err"
    }
    rm -f "$WORK/ran"; rm -rf "$ALT"
    ro_run "$TMPDIR"; rc=$?
    check "read-only cwd: convguard run -- sh -c 'exit 5' returns 5 (was 2)" test $rc = 5
    check "... and the program ran" test -s "$WORK/ran"
    check "... one warning: read-only, traces go to \$TMPDIR/convguard-<uid>" \
        bash -c "[ \$(grep -c '^convguard: warning' $WORK/err) = 1 ] && grep -q 'read-only file system; traces go to $ALT instead' $WORK/err"
    check "... the program ran under the shim" grep -q "preload=$SHIM" "$WORK/out"
    rm -f "$WORK/ran"
    ro_run "$WORK/ro"; rc=$? # the fallback is read-only too
    check "read-only cwd and \$TMPDIR: still 5, the program ran" test $rc = 5 -a -s "$WORK/ran"
    check "... untraced: no shim, its environment as it was" grep -qx "preload=" "$WORK/out"
    check "... one warning at the start, one line at the end: tracing was off because ..." \
        bash -c "[ \$(grep -c '^convguard: warning: tracing is off for this run' $WORK/err) = 1 ] && grep -q '^convguard: no report: tracing was off because ./convguard-logs: .*read-only file system' $WORK/err && [ \$(grep -c . $WORK/err) = 2 ]"
    check "... never 'the GPU was never used', never 'no problem found'" \
        bash -c "! grep -qE 'never used|no problem found' $WORK/err"
else
    echo "  (skipped: a read-only working folder needs root and unshare -m)"
fi

# ---- no shim next to the binary: the program runs untraced, its status kept (was 127, not run)
mkdir -p "$WORK/lone"
cp "$CG" "$WORK/lone/convguard"
(cd "$WORK" && env -u CONVGUARD_SHIM "$WORK/lone/convguard" run --dir "$WORK/l" -- sh -c 'echo ran; exit 5' >"$WORK/out" 2>"$WORK/err"); rc=$?
check "no libconvguard.so to be found: the program's status (5) and output" test $rc = 5 -a "$(cat "$WORK/out")" = ran
check "... one warning saying so, and the end line" \
    bash -c "grep -q 'untraced: libconvguard.so is neither next to this program' $WORK/err && grep -q '^convguard: no report: tracing was off because libconvguard.so' $WORK/err"
finish
