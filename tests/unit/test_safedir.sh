# test_safedir.sh - the trace folder's rule (shim/core/safedir.c) on our own
# files: the refusals the shell tests do not reach (tests/unit/test_safedir.c),
# as root and, where a 'nobody' user can run it, as that user too (a folder
# we may not search or write means something only without root)
source "$(dirname "$0")/../lib.sh"
[ -x "$UNIT/test_safedir" ] || skip_all "test_safedir not built (make unit)"
mkdir -p "$WORK/r"
out=$("$UNIT/test_safedir" "$WORK/r"); rc=$?
echo "$out"
check "every case as expected (as $(id -un))" test $rc = 0
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null &&
    (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$UNIT/test_safedir") 2>/dev/null; then
    chmod 0711 "$WORK"
    mkdir -p "$WORK/n" && chown nobody:nogroup "$WORK/n"
    out=$(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$UNIT/test_safedir" "$WORK/n"); rc=$?
    echo "$out"
    check "every case as expected (as nobody: unsearchable and unwritable folders too)" test $rc = 0
else
    echo "  (skipped: the cases without root need root, setpriv and a 'nobody' user who can run $UNIT/test_safedir)"
fi
finish
